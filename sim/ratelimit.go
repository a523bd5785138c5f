package sim

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// bucketKind is one kind of quota of RateLimits.
type bucketKind struct {
	field  string        // YAML key under rate_limits
	name   string        // header suffix: x-ratelimit-limit-<name>
	what   string        // in the 429 message: "<What> limit exceeded"
	window time.Duration // before TimeScale
	tokens bool          // counts tokens (else requests)
	limit  func(RateLimits) int
	// in is what an admitted request adds: its prompt tokens (cached ones
	// included) and cached of them; out whether output tokens add at
	// completion.
	in  func(prompt, cached int) int
	out bool
}

// bucketKinds in the order a refusal names them when several are over.
var bucketKinds = []*bucketKind{
	{field: "requests_per_minute", name: "requests-minute", what: "Requests per minute", window: time.Minute,
		limit: func(l RateLimits) int { return l.RequestsPerMinute }, in: func(int, int) int { return 1 }},
	{field: "tokens_per_minute", name: "tokens-minute", what: "Tokens per minute", window: time.Minute, tokens: true,
		limit: func(l RateLimits) int { return l.TokensPerMinute }, in: func(p, _ int) int { return p }, out: true},
	{field: "uncached_tokens_per_minute", name: "uncached-tokens-minute", what: "Uncached tokens per minute", window: time.Minute, tokens: true,
		limit: func(l RateLimits) int { return l.UncachedTokensPerMinute }, in: func(p, c int) int { return p - c }},
	{field: "output_tokens_per_minute", name: "output-tokens-minute", what: "Output tokens per minute", window: time.Minute, tokens: true,
		limit: func(l RateLimits) int { return l.OutputTokensPerMinute }, in: func(int, int) int { return 0 }, out: true},
	{field: "requests_per_day", name: "requests-day", what: "Requests per day", window: 24 * time.Hour,
		limit: func(l RateLimits) int { return l.RequestsPerDay }, in: func(int, int) int { return 1 }},
	{field: "tokens_per_day", name: "tokens-day", what: "Tokens per day", window: 24 * time.Hour, tokens: true,
		limit: func(l RateLimits) int { return l.TokensPerDay }, in: func(p, _ int) int { return p }, out: true},
}

// usage is n units counted at a moment.
type usage struct {
	at time.Time
	n  int
}

// bucket is one quota over a sliding window: the usage of the last window.
type bucket struct {
	kind   *bucketKind
	limit  int
	window time.Duration // scaled
	events []usage       // oldest first, all within the window after prune
	sum    int
}

// prune forgets usage older than the window. It slices old events off
// the front without copying (append later reallocates with the live ones
// only) and shrinks a slice that is mostly spare, so pruning costs O(1)
// per event, amortised.
func (b *bucket) prune(now time.Time) {
	i := 0
	for i < len(b.events) && !b.events[i].at.After(now.Add(-b.window)) {
		b.sum -= b.events[i].n
		i++
	}
	switch {
	case i == len(b.events):
		b.events = b.events[:0]
	case i > 0:
		b.events = b.events[i:]
		if cap(b.events) > 64 && len(b.events) < cap(b.events)/4 {
			b.events = append([]usage(nil), b.events...)
		}
	}
}

func (b *bucket) add(now time.Time, n int) {
	if n > 0 {
		b.events = append(b.events, usage{now, n})
		b.sum += n
	}
}

// need is what a request adding n must find free: at least one unit, so
// that a bucket at its limit refuses even requests that add nothing now
// (output tokens are counted at completion).
func need(n int) int { return max(n, 1) }

// wait is how long until the window has room for n more units: until
// enough of the oldest usage has left it. A request larger than the whole
// limit never fits; it waits a whole window.
func (b *bucket) wait(now time.Time, n int) time.Duration {
	over := b.sum + need(n) - b.limit
	if over <= 0 {
		return 0
	}
	if need(n) > b.limit {
		return b.window
	}
	freed := 0
	for _, e := range b.events {
		freed += e.n
		if freed >= over {
			return e.at.Add(b.window).Sub(now)
		}
	}
	return b.window
}

// reset is how long until the window is empty.
func (b *bucket) reset(now time.Time) time.Duration {
	if len(b.events) == 0 {
		return 0
	}
	return b.events[len(b.events)-1].at.Add(b.window).Sub(now)
}

// limiter enforces RateLimits. now is its clock (time.Now, or a test's).
// It is safe for concurrent use.
type limiter struct {
	now     func() time.Time
	mu      sync.Mutex
	buckets []*bucket
}

// newLimiter returns nil when l sets no limit.
func newLimiter(l RateLimits, scale float64, now func() time.Time) *limiter {
	lim := &limiter{now: now}
	for _, k := range bucketKinds {
		if v := k.limit(l); v > 0 {
			lim.buckets = append(lim.buckets, &bucket{kind: k, limit: v, window: scaleDuration(k.window, scale)})
		}
	}
	if len(lim.buckets) == 0 {
		return nil
	}
	return lim
}

// quota is the limiter's answer to one request: every bucket's state
// after it was counted (or refused), and the refusal, if any. Each
// protocol turns it into its own headers.
type quota struct {
	now     time.Time
	buckets []bucketState // in bucketKinds order
	// over is the first bucket the request would take over its limit
	// (nil: admitted); retry the longest wait until every such bucket
	// has room.
	over  *bucketState
	retry time.Duration
}

// bucketState is one bucket at a moment.
type bucketState struct {
	kind      *bucketKind
	limit     int
	remaining int
	reset     time.Duration // until the window is empty
}

// admit counts a request of prompt tokens, cached of them found in the
// prefix cache, or refuses it when it would take a bucket over its limit.
func (l *limiter) admit(prompt, cached int) quota {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := quota{now: l.now(), buckets: make([]bucketState, len(l.buckets))}
	over := -1
	for i, b := range l.buckets {
		b.prune(q.now)
		if w := b.wait(q.now, b.kind.in(prompt, cached)); w > 0 {
			if over < 0 {
				over = i
			}
			q.retry = max(q.retry, w)
		}
	}
	for i, b := range l.buckets {
		if over < 0 {
			b.add(q.now, b.kind.in(prompt, cached))
		}
		q.buckets[i] = bucketState{kind: b.kind, limit: b.limit, remaining: max(0, b.limit-b.sum), reset: b.reset(q.now)}
	}
	if over >= 0 {
		q.over = &q.buckets[over]
	}
	return q
}

// complete counts the output tokens of a request that was admitted.
func (l *limiter) complete(out int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, b := range l.buckets {
		if b.kind.out {
			b.prune(now)
			b.add(now, out)
		}
	}
}

// rateLimitError is Cerebras' 429 body for a bucket.
func rateLimitError(k *bucketKind) *apiError {
	type inner struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   string `json:"param"`
		Code    string `json:"code"`
	}
	e := inner{Message: k.what + " limit exceeded - too many requests sent.", Type: "too_many_requests_error",
		Param: "quota", Code: "request_quota_exceeded"}
	if k.tokens {
		e = inner{Message: k.what + " limit exceeded - too many tokens processed.", Type: "too_many_tokens_error",
			Param: "quota", Code: "token_quota_exceeded"}
	}
	b, _ := json.Marshal(struct {
		Error inner `json:"error"`
	}{e})
	return &apiError{http.StatusTooManyRequests, b}
}
