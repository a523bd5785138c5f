package analyze

import (
	"sort"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/trace"
)

// SessionReport meters each session's traffic per minute, as a vendor's
// rate limiter would: per bucket, the most any 60 s window of the session
// held, summarised over sessions.
type SessionReport struct {
	Sessions int `json:"sessions"`
	// WindowS is the sliding window, s.
	WindowS float64         `json:"window_s"`
	Buckets []SessionBucket `json:"buckets"`
}

// SessionBucket is one rate-limit bucket over the sessions.
type SessionBucket struct {
	// Bucket is a record.Bucket* name: requests_per_minute,
	// tokens_per_minute (prompt with cache reads, plus generated),
	// uncached_tokens_per_minute, output_tokens_per_minute,
	// tokens_per_day (a 24 h window, only with that limit).
	Bucket string `json:"bucket"`
	// Limit is the profile's (0: none given).
	Limit int `json:"limit,omitempty"`
	// Peak is each session's most in any window, over sessions.
	Peak *Dist `json:"peak"`
	// PeakSession is the session with the highest peak.
	PeakSession string `json:"peak_session"`
	// PeakShare and PeakShareP50 are the highest and the median session
	// peak over Limit; Over counts the sessions whose peak passed it.
	PeakShare    float64 `json:"peak_share,omitempty"`
	PeakShareP50 float64 `json:"peak_share_p50,omitempty"`
	Over         int     `json:"sessions_over,omitempty"`
}

// sessGen is what a session keeps of one generation until it ends.
type sessGen struct {
	created, completed                    int64
	prompt, uncached, cached, gen, reason int64
}

// sessionAcc holds the current session's generations.
type sessionAcc struct {
	id string
	// msgs are the session's messages as read, until it ends.
	msgs []msg
	gens []sessGen
}

func (s *sessionAcc) add(g *generation) {
	s.gens = append(s.gens, sessGen{
		created: g.created, completed: g.completed,
		prompt: g.prompt(), uncached: g.input + g.cacheWrite, cached: g.cacheRead,
		gen: g.generated(), reason: g.reasoning,
	})
}

func (s *sessionAcc) reset() {
	s.id = ""
	clear(s.msgs)
	s.msgs = s.msgs[:0]
	s.gens = s.gens[:0]
}

// sorted orders the session's generations by creation.
func (s *sessionAcc) sorted() {
	sort.SliceStable(s.gens, func(i, j int) bool { return s.gens[i].created < s.gens[j].created })
}

// trace is the session as a trace session; Start is still absolute (Unix
// time as a Duration) until the trace is assembled.
func (s *sessionAcc) trace() trace.Session {
	s.sorted()
	out := trace.Session{ID: s.id, Start: time.Duration(s.gens[0].created) * time.Millisecond, Turns: make([]trace.Turn, len(s.gens))}
	start := s.gens[0].created
	for k, g := range s.gens {
		u := trace.Turn{
			Offset:      time.Duration(g.created-start) * time.Millisecond,
			InputTokens: int(g.prompt), CachedTokens: int(g.cached),
			OutputTokens: int(g.gen), ReasoningTokens: int(g.reason),
		}
		if k > 0 {
			if think := g.created - s.gens[k-1].completed; think > 0 {
				u.Think = time.Duration(think) * time.Millisecond
			}
		}
		out.Turns[k] = u
	}
	return out
}

// meter is one bucket's window over a session's events.
type meter struct {
	bucket string
	limit  int
	window int64 // ms
	// what one event adds to the bucket
	amount func(e *event) int64
	peaks  sample
	max    float64
	maxID  string
	over   int
}

// event is a moment of a session's traffic: a request sent (at created)
// or a response finished (at completed).
type event struct {
	at                                    int64
	requests, tokens, uncached, generated int64
}

// sessionsAcc meters every session.
type sessionsAcc struct {
	n      int
	meters []*meter
	events []event
}

func (a *sessionsAcc) init(l *results.RateLimits) {
	var lim results.RateLimits
	if l != nil {
		lim = *l
	}
	minute := Window.Milliseconds()
	a.meters = []*meter{
		{bucket: record.BucketRequests, limit: lim.RequestsPerMinute, window: minute, amount: func(e *event) int64 { return e.requests }},
		{bucket: record.BucketTokens, limit: lim.TokensPerMinute, window: minute, amount: func(e *event) int64 { return e.tokens }},
		{bucket: record.BucketUncachedTokens, limit: lim.UncachedTokensPerMinute, window: minute, amount: func(e *event) int64 { return e.uncached }},
		{bucket: record.BucketOutputTokens, limit: lim.OutputTokensPerMinute, window: minute, amount: func(e *event) int64 { return e.generated }},
	}
	if lim.TokensPerDay > 0 {
		a.meters = append(a.meters, &meter{bucket: record.BucketTokensPerDay, limit: lim.TokensPerDay, window: (24 * time.Hour).Milliseconds(), amount: func(e *event) int64 { return e.tokens }})
	}
}

// add meters one finished session.
func (a *sessionsAcc) add(s *sessionAcc) {
	a.n++
	ev := a.events[:0]
	for _, g := range s.gens {
		ev = append(ev,
			event{at: g.created, requests: 1, tokens: g.prompt, uncached: g.uncached},
			event{at: g.completed, tokens: g.gen, generated: g.gen})
	}
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at < ev[j].at })
	a.events = ev
	for _, m := range a.meters {
		p := float64(peak(ev, m.window, m.amount))
		m.peaks.add(p)
		if p > m.max || m.maxID == "" {
			m.max, m.maxID = p, s.id
		}
		if m.limit > 0 && p > float64(m.limit) {
			m.over++
		}
	}
}

// peak is the most any window (t−w, t] of sorted events holds.
func peak(ev []event, w int64, amount func(*event) int64) int64 {
	var sum, best int64
	i := 0
	for j := range ev {
		sum += amount(&ev[j])
		for ev[i].at <= ev[j].at-w {
			sum -= amount(&ev[i])
			i++
		}
		best = max(best, sum)
	}
	return best
}

func (a *sessionsAcc) report() SessionReport {
	r := SessionReport{Sessions: a.n, WindowS: Window.Seconds()}
	for _, m := range a.meters {
		b := SessionBucket{Bucket: m.bucket, Limit: m.limit, Peak: m.peaks.dist(), PeakSession: m.maxID}
		if m.limit > 0 && b.Peak != nil {
			b.PeakShare = b.Peak.Max / float64(m.limit)
			b.PeakShareP50 = b.Peak.P50 / float64(m.limit)
			b.Over = m.over
		}
		r.Buckets = append(r.Buckets, b)
	}
	return r
}
