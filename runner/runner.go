// Package runner generates load: it replays a scenario's Plan through an
// endpoint.Client.
//
// It schedules arrivals (closed and open loop), the
// worker pool, agentic sessions and trace replay (the conversations they
// grow), and the backoff after connect failures and answers that ask to
// slow down (429, 503, 529). What one request does on the wire is the
// endpoint package's.
package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/tokenizer"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/scenario"
)

// Defaults for the options.
const (
	// DefaultBackoff is the first step of the backoff after an answer
	// that asks to slow down, without the server's hint (WithBackoff).
	DefaultBackoff = time.Second
	// DefaultConnectBackoff and DefaultConnectBackoffMax bound the wait
	// after a connect failure (WithConnectBackoff).
	DefaultConnectBackoff    = 50 * time.Millisecond
	DefaultConnectBackoffMax = 5 * time.Second
)

// Option configures a Runner.
type Option func(*Runner)

// WithConnectBackoff sets how long a closed-loop worker or an agentic
// session waits after a request that could not connect before it tries
// again: first, doubling with jitter for every failure in a row, up to
// ceiling (wall-clock time, whatever the time scale). Defaults
// DefaultConnectBackoff and DefaultConnectBackoffMax.
func WithConnectBackoff(first, ceiling time.Duration) Option {
	return func(r *Runner) {
		if first > 0 && ceiling >= first {
			r.connectBackoff, r.connectBackoffMax = first, ceiling
		}
	}
}

// WithTemplate sets what the chat template adds, subtracted from every
// synthesised prompt so that the server counts the pinned length
// (endpoint.Probe measures it).
func WithTemplate(t endpoint.Template) Option { return func(r *Runner) { r.tmpl = t } }

// WithPricing prices requests, for agentic sessions' cost cap.
func WithPricing(p *record.Pricing) Option { return func(r *Runner) { r.pricing = p } }

// WithBackoff sets the first delay of the backoff after an answer that
// asks to slow down (429, 503, 529) and gives no hint of its own (default
// DefaultBackoff, in run time); it doubles for each such answer in a row,
// with jitter (equal: the second half random), up to 8 s.
func WithBackoff(d time.Duration) Option { return func(r *Runner) { r.backoff = d } }

// WithTimeScale runs the world k times faster (0 < k ≤ 1) against a
// simulator scaled the same way (sim.Config.TimeScale): every time the
// runner measures is divided by k and every wait (open-loop arrivals,
// think time, backoff) multiplied by it, so records are in simulated time.
// Time neither side models (the client's own work, the round trip, the
// simulator's parsing) is divided too, so it weighs 1/k times what it
// would in real time (results.Run.Compress says how much). For tests
// and demos that need minutes of simulated traffic in seconds.
func WithTimeScale(k float64) Option {
	return func(r *Runner) {
		if k > 0 {
			r.timeScale = k
		}
	}
}

// WithPrompts sets the prompt builder: it decides by whose tokenizer the
// pinned prompt lengths are exact. The default counts words, as sixpin's
// simulator does.
func WithPrompts(b *prompt.Builder) Option { return func(r *Runner) { r.prompts = b } }

// Bounds stops issuing at whichever comes first: duration (0 = none) or
// requests (0 = none). The scenario's bounds are the default.
func Bounds(duration time.Duration, requests int) Option {
	return func(r *Runner) { r.duration, r.requests = duration, requests }
}

// Runner replays one Plan through one endpoint.Client. Create it with New;
// Run it once.
type Runner struct {
	plan   *scenario.Plan
	client *endpoint.Client
	// connectBackoff and connectBackoffMax bound the wait after a
	// connect failure (WithConnectBackoff).
	connectBackoff, connectBackoffMax time.Duration

	duration time.Duration
	requests int

	// tmpl is what the chat template adds (WithTemplate).
	tmpl    endpoint.Template
	prompts *prompt.Builder
	// pricing prices requests for a session's cost cap (nil: unpriced).
	pricing *record.Pricing
	// backoff is the first step of the backoff after an answer that asks
	// to slow down; it doubles per such answer in a row, with jitter, up
	// to maxBackoff.
	backoff time.Duration
	// timeScale is run time's speed-up (1: real time; see WithTimeScale).
	timeScale float64
	// prefixes are the shared prompt prefixes, by content class and group
	// (none: no shared prefix): requests share a prefix when they share
	// both.
	prefixes map[string][]string

	// pending holds the requests in flight (WithPending; nil: not kept).
	pending *Pending

	// clock is the run's: started by Run, scaled by timeScale.
	clock endpoint.Clock
	stats Stats
}

// Stats are live counters for progress display and live metrics, safe to
// read from any goroutine while the run goes on. All but Streaming are
// updated once per request.
type Stats struct {
	Issued   atomic.Int64
	Done     atomic.Int64
	Failed   atomic.Int64
	InFlight atomic.Int64
	// OutputTokens counts the output tokens of the requests that have
	// ended (the server's usage, else their chunks).
	OutputTokens atomic.Int64
	// Streaming counts the token-bearing chunks of the requests still
	// being read: a stream adds its chunks as they arrive and takes them
	// back when its request ends. A stream adds in batches: a chunk that
	// comes within endpoint.LiveStep of the stream's last add waits for its next
	// chunk, or its end.
	Streaming endpoint.Counter
}

// LiveOutputTokens is the output so far, chunk by chunk: the ended
// requests' tokens and the chunks of those still streaming. Two loads,
// not one snapshot: a request ending between them is briefly missing.
func (s *Stats) LiveOutputTokens() int64 { return s.OutputTokens.Load() + s.Streaming.Load() }

// New prepares a Runner for plan through c. It fails only when the
// default prompt builder cannot be made.
func New(plan *scenario.Plan, c *endpoint.Client, opts ...Option) (*Runner, error) {
	r := &Runner{
		plan:      plan,
		client:    c,
		backoff:   DefaultBackoff,
		timeScale: 1,

		connectBackoff:    DefaultConnectBackoff,
		connectBackoffMax: DefaultConnectBackoffMax,
	}
	r.duration, r.requests = plan.Bounds()
	for _, o := range opts {
		o(r)
	}
	switch p := c.Target().Protocol; {
	case p == endpoint.ProtocolChat:
	case plan.MLPerf() != nil:
		return nil, fmt.Errorf("MLPerf's agentic dataset is replayed over chat completions (its tool calls, tool results and reasoning are that API's), not %s", p)
	case plan.KeepsReasoning():
		return nil, fmt.Errorf("preserve_reasoning: true re-sends reasoning as chat completions' reasoning_content with chat_template_kwargs, not over %s", p)
	}
	if r.prompts == nil {
		b, err := wordPrompts()
		if err != nil {
			return nil, err
		}
		r.prompts = b
	}
	for _, c := range plan.Contents() {
		if err := r.prompts.Supports(prompt.Content(c)); err != nil {
			return nil, fmt.Errorf("pins.prompt.content %s: %w", c, err)
		}
	}
	r.prefixes = map[string][]string{}
	for g := range plan.PrefixGroups() {
		n, seed := plan.SharedPrefix(g)
		for _, c := range plan.Contents() {
			r.prefixes[c] = append(r.prefixes[c], r.prompts.BuildContent(prompt.Content(c), seed, n))
		}
	}
	return r, nil
}

// ClientOptions are the endpoint options a run of plan needs: as many
// kept-alive connections as it has streams in closed loop, and never
// more open (room for the arrival rate in open loop, unbounded), the
// output pin enforced when it is exact (a replay keeps the recorded
// lengths) and the scenario's request timeout.
func ClientOptions(plan *scenario.Plan) endpoint.Options {
	o := endpoint.Options{
		Conns:          plan.Streams(),
		MaxConns:       plan.Streams(),
		Exact:          plan.ExactOutput(),
		RequestTimeout: plan.RequestTimeout(),
	}
	switch plan.Mode() {
	case scenario.ModeOpen:
		o.Conns, o.MaxConns = max(plan.MaxInFlight(), int(plan.Rate()*4), 64), 0
	case scenario.ModeTrace:
		o.Conns, o.MaxConns = max(64, plan.Streams()), 0
	}
	return o
}

// Stats returns the live counters.
func (r *Runner) Stats() *Stats { return &r.stats }

// Start returns the wall-clock time load started (zero before Run).
func (r *Runner) Start() time.Time { return r.clock.Start }

// Clock is the run's clock: started by Run, in run time (WithTimeScale).
func (r *Runner) Clock() endpoint.Clock { return r.clock }

// Run issues the Plan's requests and returns their records on a channel
// that Run's goroutines own and close when every request has finished.
// Cancelling issue stops issuing new requests; requests in flight go on
// until they finish or inflight is cancelled, which cuts them off (class
// interrupted). The caller must drain the channel.
func (r *Runner) Run(issue, inflight context.Context) <-chan *record.Record {
	out := make(chan *record.Record, 1024)
	r.clock = endpoint.Clock{Start: time.Now(), Scale: r.timeScale}
	go func() {
		defer close(out)
		switch r.plan.Mode() {
		case scenario.ModeSessions:
			r.sessionLoop(issue, inflight, out)
		case scenario.ModeTrace:
			r.traceLoop(issue, inflight, out)
		case scenario.ModeOpen:
			r.openLoop(issue, inflight, out)
		default:
			r.closedLoop(issue, inflight, out)
		}
	}()
	return out
}

// since is the monotonic offset from the start of load, in run time.
func (r *Runner) since() time.Duration { return r.clock.Since() }

// wallTime converts a run-time duration to the wall-clock time to wait.
func (r *Runner) wallTime(d time.Duration) time.Duration {
	return time.Duration(float64(d) * r.timeScale)
}

// more reports whether the plan's request i (counted from 0 in this
// plan, or its shard) may still be issued at offset t.
func (r *Runner) more(i int, t time.Duration) bool {
	return (r.requests <= 0 || i < r.requests) && (r.duration <= 0 || t < r.duration)
}

// closedLoop keeps Streams requests in flight: each worker issues its next
// request as soon as its last one ends.
//
// A worker whose request could not connect, or was answered with a
// request to slow down (429, 503, 529), waits before its next one (its
// pacer), so that a server is not hammered; the wait is recorded on the
// record (Backoff), whose emission waits for it.
func (r *Runner) closedLoop(issue, inflight context.Context, out chan<- *record.Record) {
	var next atomic.Int64
	var g errgroup.Group
	for w := 0; w < r.plan.Streams(); w++ {
		g.Go(func() error {
			p := r.newPacer(uint64(w))
			for issue.Err() == nil {
				i := int(next.Add(1) - 1)
				req := r.plan.Request(r.plan.Unit(i))
				text := r.promptText(req)
				at := r.since()
				if !r.more(i, at) || issue.Err() != nil {
					return nil
				}
				rec := r.do(inflight, req, text, at)
				ok := r.wait(issue, rec, p.delay(rec), r.more(int(next.Load()), r.since()))
				out <- rec
				if !ok {
					return nil
				}
			}
			return nil
		})
	}
	_ = g.Wait()
}

// connectDelay is the wait after the (fails+1)-th connect failure in a
// row: jittered exponential backoff within the WithConnectBackoff bounds.
func (r *Runner) connectDelay(rng *rand.Rand, fails int) time.Duration {
	return backoff.Jittered(rng, r.connectBackoff, r.connectBackoffMax, fails)
}

// openLoop issues requests at the Plan's arrival times, whatever is in
// flight (up to MaxInFlight when set). Latencies count from the scheduled
// arrival, so a client that falls behind shows it as schedule lag and
// latency rather than hiding it (no coordinated omission).
//
// An answer that asks to slow down pauses every arrival (pause): those
// that fall inside the pause are withheld, never sent late, and the
// records that made the pause come out when it is over.
func (r *Runner) openLoop(issue, inflight context.Context, out chan<- *record.Record) {
	var sem *semaphore.Weighted
	if n := r.plan.MaxInFlight(); n > 0 {
		sem = semaphore.NewWeighted(int64(n))
	}
	pause := r.newPause()
	admit := func(at time.Duration) bool {
		ok, over := pause.admit(at)
		for _, rec := range over {
			out <- rec
		}
		return ok
	}
	workers := newWorkers(func(a arrival) {
		if rec := r.do(inflight, a.req, a.text, a.at); !pause.hold(rec) {
			out <- rec
		}
		if sem != nil {
			sem.Release(1)
		}
	})
	arrivals := r.plan.Arrivals()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
loop:
	for i := 0; ; i++ {
		at := arrivals.Next()
		if !r.more(i, at) {
			break
		}
		req := r.plan.Request(arrivals.Unit())
		text := r.promptText(req)
		// Sleep until the arrival; the last few tens of µs are spun, since a
		// timer can't wake that precisely and a request must never go early.
		if wait := r.wallTime(at - r.since()); wait > 50*time.Microsecond {
			timer.Reset(wait - 20*time.Microsecond)
			select {
			case <-issue.Done():
				break loop
			case <-timer.C:
			}
		}
		for r.since() < at {
			runtime.Gosched()
		}
		if issue.Err() != nil {
			break
		}
		if !admit(at) {
			continue
		}
		if sem != nil {
			if err := sem.Acquire(issue, 1); err != nil {
				break
			}
			if !admit(at) { // a pause began while it waited for a slot
				sem.Release(1)
				continue
			}
		}
		workers.send(arrival{req, text, at})
	}
	stop := r.since()
	workers.wait()
	if issue.Err() == nil && r.duration > 0 {
		stop = max(stop, min(r.since(), r.duration))
	}
	for _, rec := range pause.end(stop) {
		out <- rec
	}
}

// promptText synthesises the request's prompt: its shared prefix, if any,
// then text unique to the request, together exactly the pinned length
// minus the template's overhead.
func (r *Runner) promptText(req record.Request) string {
	n := max(req.PromptTokens-r.tmpl.Overhead, 1)
	c := prompt.Content(contentOf(req))
	prefixes := r.prefixesOf(req)
	if req.PrefixGroup < 0 || req.PrefixGroup >= len(prefixes) {
		return r.prompts.BuildContent(c, req.Seed, n)
	}
	shared, _ := r.plan.SharedPrefix(req.PrefixGroup)
	return prefixes[req.PrefixGroup] + r.prompts.BuildContent(c, req.Seed, max(n-shared, 1))
}

// contentOf is the request's content class (empty: prose).
func contentOf(req record.Request) string {
	if req.Content == "" {
		return scenario.ContentProse
	}
	return req.Content
}

// prefixesOf returns the shared prefixes of the request's content class,
// by group.
func (r *Runner) prefixesOf(req record.Request) []string { return r.prefixes[contentOf(req)] }

var (
	wordsOnce    sync.Once
	wordsBuilder *prompt.Builder
	wordsErr     error
)

// wordPrompts is the default prompt builder, by sixpin's word-level count.
func wordPrompts() (*prompt.Builder, error) {
	wordsOnce.Do(func() {
		tok, err := tokenizer.Get("words")
		if err != nil {
			wordsErr = err
			return
		}
		wordsBuilder, wordsErr = prompt.NewBuilder(func(s string) (int, error) { return tok.Count(s), nil })
	})
	return wordsBuilder, wordsErr
}
