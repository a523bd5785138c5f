package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// limitedServer is a TimingNone server with rate limits on a fake clock.
func limitedServer(t *testing.T, c Config) (*fakeClock, string) {
	t.Helper()
	s, ts := start(t, c)
	clock := newFakeClock()
	s.lim.now = clock.now
	return clock, ts.URL
}

// call sends messages with max_tokens out (ignore_eos) and returns the
// response (body read) and its body.
func call(t *testing.T, url string, messages []map[string]any, out int) (*http.Response, []byte) {
	t.Helper()
	resp := post(t.Context(), t, url, req{"messages": messages, "max_tokens": out, "ignore_eos": true})
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

type rlStep struct {
	after    time.Duration // clock advance before the request
	words    int           // user message words: prompt = words + 5 + 3
	extend   bool          // messages: the previous request's, an answer, then this one's
	out      int
	status   int
	retry    string            // Retry-After on a 429
	headers  map[string]string // x-ratelimit-* wanted
	bucketIn string            // the 429 message's bucket
}

func TestRateLimitBuckets(t *testing.T) {
	on := true
	for _, tc := range []struct {
		name    string
		limits  RateLimits
		caching bool
		scale   float64
		steps   []rlStep
	}{
		{
			name:   "requests per minute",
			limits: RateLimits{RequestsPerMinute: 2},
			steps: []rlStep{
				{words: 2, out: 1, status: 200, headers: map[string]string{"x-ratelimit-limit-requests-minute": "2", "x-ratelimit-remaining-requests-minute": "1", "x-ratelimit-reset-requests-minute": "60.000"}},
				{after: 10 * time.Second, words: 2, out: 1, status: 200, headers: map[string]string{"x-ratelimit-remaining-requests-minute": "0"}},
				// The first request leaves the window at 60 s: 40 s from now.
				{after: 10 * time.Second, words: 2, out: 1, status: 429, retry: "40", bucketIn: "Requests per minute",
					headers: map[string]string{"x-ratelimit-remaining-requests-minute": "0", "x-ratelimit-reset-requests-minute": "50.000"}},
				{after: 40 * time.Second, words: 2, out: 1, status: 200},
			},
		},
		{
			// Total tokens: prompt (10 + 8) then output (20) count.
			name:   "tokens per minute",
			limits: RateLimits{TokensPerMinute: 60},
			steps: []rlStep{
				{words: 10, out: 20, status: 200, headers: map[string]string{"x-ratelimit-limit-tokens-minute": "60", "x-ratelimit-remaining-tokens-minute": "42"}},
				// 38 used: 22 more fit, 23 do not.
				{after: time.Second, words: 15, out: 1, status: 429, retry: "59", bucketIn: "Tokens per minute",
					headers: map[string]string{"x-ratelimit-remaining-tokens-minute": "22"}},
				{words: 10, out: 1, status: 200, headers: map[string]string{"x-ratelimit-remaining-tokens-minute": "4"}},
			},
		},
		{
			// Output tokens are counted at completion; a bucket at its
			// limit refuses even a request that adds nothing yet.
			name:   "output tokens per minute",
			limits: RateLimits{OutputTokensPerMinute: 30},
			steps: []rlStep{
				{words: 2, out: 20, status: 200, headers: map[string]string{"x-ratelimit-remaining-output-tokens-minute": "30"}},
				{after: 5 * time.Second, words: 2, out: 10, status: 200, headers: map[string]string{"x-ratelimit-remaining-output-tokens-minute": "10"}},
				{after: 5 * time.Second, words: 2, out: 1, status: 429, retry: "50", bucketIn: "Output tokens per minute"},
			},
		},
		{
			// The field report's session: cached reads count in full
			// against total tokens, and that bucket trips first. The
			// second prompt (108 + an empty answer's 5 + 105 = 218 tokens)
			// finds the first (108 tokens) cached as 6 blocks: 96 tokens,
			// 122 uncached.
			name:    "uncached and total",
			limits:  RateLimits{UncachedTokensPerMinute: 300, TokensPerMinute: 400},
			caching: true,
			steps: []rlStep{
				{words: 100, out: 10, status: 200, headers: map[string]string{"x-ratelimit-remaining-uncached-tokens-minute": "192", "x-ratelimit-remaining-tokens-minute": "292"}},
				{words: 100, extend: true, out: 10, status: 200, headers: map[string]string{"x-ratelimit-remaining-uncached-tokens-minute": "70", "x-ratelimit-remaining-tokens-minute": "64"}},
				// 346 tokens used: the next 328-token prompt is over both
				// (its 208 cached tokens do not help the total); the
				// refusal names tokens per minute.
				{words: 100, extend: true, out: 10, status: 429, bucketIn: "Tokens per minute", retry: "60"},
			},
		},
		{
			name:    "uncached alone",
			limits:  RateLimits{UncachedTokensPerMinute: 200},
			caching: true,
			steps: []rlStep{
				{words: 100, out: 10, status: 200},
				{words: 100, extend: true, out: 10, status: 429, bucketIn: "Uncached tokens per minute", retry: "60"},
			},
		},
		{
			// A day's window: two minutes later the tokens still count.
			name:   "tokens per day",
			limits: RateLimits{TokensPerDay: 100},
			steps: []rlStep{
				{words: 40, out: 30, status: 200, headers: map[string]string{"x-ratelimit-limit-tokens-day": "100"}},
				{after: 2 * time.Minute, words: 40, out: 1, status: 429, bucketIn: "Tokens per day", retry: "86280",
					headers: map[string]string{"x-ratelimit-remaining-tokens-day": "22", "x-ratelimit-reset-tokens-day": "86280.000"}},
			},
		},
		{
			name:   "requests per day",
			limits: RateLimits{RequestsPerDay: 1},
			steps: []rlStep{
				{words: 1, out: 1, status: 200, headers: map[string]string{"x-ratelimit-limit-requests-day": "1", "x-ratelimit-remaining-requests-day": "0"}},
				{after: time.Hour, words: 1, out: 1, status: 429, bucketIn: "Requests per day", retry: "82800"},
			},
		},
		{
			// A prompt larger than the limit can never pass: a whole window.
			name:   "larger than the limit",
			limits: RateLimits{TokensPerMinute: 50},
			steps:  []rlStep{{words: 100, out: 1, status: 429, bucketIn: "Tokens per minute", retry: "60"}},
		},
		{
			// time_scale shrinks the windows and Retry-After with them
			// (never below 1 s).
			name:   "scaled windows",
			limits: RateLimits{RequestsPerMinute: 1},
			scale:  0.05,
			steps: []rlStep{
				{words: 1, out: 1, status: 200, headers: map[string]string{"x-ratelimit-reset-requests-minute": "3.000"}},
				{after: time.Second, words: 1, out: 1, status: 429, retry: "2"},
				{after: 1900 * time.Millisecond, words: 1, out: 1, status: 429, retry: "1"},
				{after: 100 * time.Millisecond, words: 1, out: 1, status: 200},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Timing: TimingNone, RateLimits: tc.limits, TimeScale: tc.scale}
			if tc.caching {
				c.PrefixCaching = &on
			}
			clock, url := limitedServer(t, c)
			var prev []map[string]any
			for i, st := range tc.steps {
				clock.advance(st.after)
				user := msg("user", text(i*10000, st.words))
				messages := []map[string]any{user}
				if st.extend {
					messages = append(append(prev[:len(prev):len(prev)], msg("assistant", text(500000+i, 0))), user)
				}
				resp, body := call(t, url, messages, st.out)
				if resp.StatusCode != st.status {
					t.Fatalf("step %d: status %d, want %d: %s", i, resp.StatusCode, st.status, body)
				}
				if resp.StatusCode == 200 {
					prev = messages
				}
				for k, v := range st.headers {
					if got := resp.Header.Get(k); got != v {
						t.Errorf("step %d: %s = %q, want %q", i, k, got, v)
					}
				}
				if got := resp.Header.Get("Retry-After"); got != st.retry {
					t.Errorf("step %d: Retry-After %q, want %q", i, got, st.retry)
				}
				if st.status == 429 {
					checkRateLimitBody(t, body, st.bucketIn)
				}
			}
		})
	}
}

func checkRateLimitBody(t *testing.T, body []byte, bucket string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Param   string `json:"param"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("429 body %s: %v", body, err)
	}
	if bucket == "" {
		return
	}
	want := e.Error
	if strings.HasPrefix(bucket, "Requests") {
		want.Message, want.Type, want.Param, want.Code = bucket+" limit exceeded - too many requests sent.", "too_many_requests_error", "quota", "request_quota_exceeded"
	} else {
		want.Message, want.Type, want.Param, want.Code = bucket+" limit exceeded - too many tokens processed.", "too_many_tokens_error", "quota", "token_quota_exceeded"
	}
	if e.Error != want {
		t.Errorf("429 error %+v, want %+v", e.Error, want)
	}
}

func TestRateLimitExactBody(t *testing.T) {
	// Byte for byte, the body the field report met.
	_, url := limitedServer(t, Config{Timing: TimingNone, RateLimits: RateLimits{TokensPerMinute: 5}})
	resp, body := call(t, url, []map[string]any{msg("user", "hello")}, 1)
	want := `{"error":{"message":"Tokens per minute limit exceeded - too many tokens processed.","type":"too_many_tokens_error","param":"quota","code":"token_quota_exceeded"}}`
	if resp.StatusCode != 429 || strings.TrimSpace(string(body)) != want || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%d %q\n%s\nwant %s", resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
	}
}

func TestRateLimitHeadersOnStreams(t *testing.T) {
	_, url := limitedServer(t, Config{Timing: TimingNone, RateLimits: RateLimits{RequestsPerMinute: 450, TokensPerMinute: 450000}})
	resp, res := stream(t, url, req{"messages": userMsg("hi"), "max_tokens": 3, "ignore_eos": true})
	if !res.done {
		t.Fatal("stream not done")
	}
	for k, v := range map[string]string{
		"x-ratelimit-limit-requests-minute": "450", "x-ratelimit-remaining-requests-minute": "449",
		"x-ratelimit-limit-tokens-minute": "450000", "x-ratelimit-remaining-tokens-minute": "449991",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// Without limits, no headers.
	_, ts := start(t, Config{Timing: TimingNone})
	resp, _ = stream(t, ts.URL, req{"messages": userMsg("hi"), "max_tokens": 3})
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
			t.Errorf("header %s without rate limits", k)
		}
	}
}

func TestBucketWait(t *testing.T) {
	// Sliding-window arithmetic on given timestamps.
	t0 := time.Unix(1000, 0)
	b := &bucket{kind: bucketKinds[1], limit: 100, window: time.Minute}
	b.add(t0, 30)
	b.add(t0.Add(10*time.Second), 30)
	b.add(t0.Add(20*time.Second), 30)
	for _, tc := range []struct {
		at   time.Duration
		n    int
		want time.Duration
	}{
		{30 * time.Second, 10, 0},                // 90 + 10 fits
		{30 * time.Second, 11, 30 * time.Second}, // the first 30 must leave: at 60 s
		{30 * time.Second, 40, 30 * time.Second}, // the first 30 is enough
		{30 * time.Second, 41, 40 * time.Second}, // 30 + 30 must leave: at 70 s
		{30 * time.Second, 100, 50 * time.Second},
		{30 * time.Second, 101, time.Minute}, // never fits: a whole window
		{60 * time.Second, 40, 0},            // the first left at 60 s exactly
	} {
		c := *b
		c.events = append([]usage(nil), b.events...)
		now := t0.Add(tc.at)
		c.prune(now)
		if got := c.wait(now, tc.n); got != tc.want {
			t.Errorf("at %v, %d more: wait %v, want %v", tc.at, tc.n, got, tc.want)
		}
	}
}

func TestRateLimitFieldSession(t *testing.T) {
	// The field report's first session against the developer tier: 13
	// requests in ~65 s, each re-sending a history that snowballs from 11K
	// to 99K tokens, 88% of it cached, ~230 tokens out. Cached reads count
	// in full against the total bucket, which refuses the session while
	// the uncached bucket still has room.
	clock := newFakeClock()
	lim := newLimiter(RateLimits{RequestsPerMinute: 450, TokensPerMinute: 450_000, UncachedTokensPerMinute: 150_000}, 1, clock.now)
	refusedAt := -1
	var body []byte
	h := http.Header{}
	for i := range 13 {
		prompt := 11_000 + i*(99_000-11_000)/12
		cached := prompt * 88 / 100
		q := lim.admit(prompt, cached)
		xRateLimitHeaders(h, &q)
		if q.over != nil {
			refusedAt, body = i, rateLimitError(q.over.kind).body
			break
		}
		lim.complete(230)
		clock.advance(5 * time.Second)
	}
	if refusedAt < 0 {
		t.Fatal("the session was never refused")
	}
	checkRateLimitBody(t, body, "Tokens per minute")
	if rem := h.Get("x-ratelimit-remaining-uncached-tokens-minute"); rem == "0" || rem == "" {
		t.Errorf("uncached bucket exhausted (%q): the total bucket should trip first", rem)
	}
	t.Logf("refused at request %d of 13; uncached tokens left %s, total left %s", refusedAt+1,
		h.Get("x-ratelimit-remaining-uncached-tokens-minute"), h.Get("x-ratelimit-remaining-tokens-minute"))
}
