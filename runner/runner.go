// Package runner replays a scenario's Plan against an OpenAI-compatible
// streaming endpoint: arrival scheduling (closed and open loop), the worker
// pool, the streaming client (net/http and a lean Server-Sent Events
// reader), per-chunk monotonic timestamps, and failure classification.
package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/tokenizer"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"

	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Output controls: how an endpoint is told not to stop before max_tokens.
const (
	ControlIgnoreEOS = "ignore_eos"
	ControlMinTokens = "min_tokens"
	ControlNone      = "none"
)

// Target is an OpenAI-compatible endpoint.
type Target struct {
	// BaseURL ends in /v1 (e.g. http://127.0.0.1:8080/v1).
	BaseURL string
	// Model is the id sent in every request.
	Model string
	// BaseURL may carry a query, which every request keeps
	// (…/v1?api-key=K → …/v1/chat/completions?api-key=K), and user info
	// (http://user:pass@host/v1), sent as Basic credentials when there is
	// no APIKey. Both are secrets: shown redacted (DisplayURL), and
	// removed from whatever the server sends back.
	//
	// APIKey is sent as a bearer token. It is never logged, printed or
	// saved.
	APIKey string
	// Headers are added to every request.
	Headers map[string]string
	// ExtraBody members are added to every request body.
	ExtraBody map[string]any
	// MaxTokensField is "max_tokens" (default) or "max_completion_tokens".
	MaxTokensField string
	// OutputControl is how an exact output pin is enforced:
	// ControlIgnoreEOS, ControlMinTokens (both may be combined as
	// "ignore_eos+min_tokens"), or ControlNone.
	OutputControl string
}

// Defaults for the options.
const (
	DefaultRequestTimeout = 10 * time.Minute
	DefaultStallTimeout   = 2 * time.Minute
	DefaultBackoff        = time.Second
	maxBackoff            = time.Minute
	// DefaultConnectBackoff and DefaultConnectBackoffMax bound the wait
	// after a connect failure (WithConnectBackoff).
	DefaultConnectBackoff    = 50 * time.Millisecond
	DefaultConnectBackoffMax = 5 * time.Second
)

// Option configures a Runner.
type Option func(*Runner)

// WithRequestTimeout bounds one request from send to last byte.
func WithRequestTimeout(d time.Duration) Option { return func(r *Runner) { r.requestTimeout = d } }

// WithStallTimeout fails a stream that sends no token for d after its
// first token (class timeout); keep-alive comments do not count. Before
// the first token the request timeout bounds the wait.
func WithStallTimeout(d time.Duration) Option { return func(r *Runner) { r.stallTimeout = d } }

// WithMaxLineBytes bounds one line of a stream, and one event's data, in
// bytes (default DefaultMaxLineBytes): a longer one fails the request
// (class oversized_line), so that no stream holds more memory than that.
func WithMaxLineBytes(n int) Option {
	return func(r *Runner) {
		if n > 0 {
			r.maxLine = n
		}
	}
}

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

// WithTemplateOverhead sets the tokens the chat template adds, subtracted
// from every synthesised prompt (Probe measures and sets it).
func WithTemplateOverhead(n int) Option { return func(r *Runner) { r.overhead = n } }

// WithPricing prices requests, for agentic sessions' cost cap.
func WithPricing(p *results.Pricing) Option { return func(r *Runner) { r.pricing = p } }

// WithBackoff sets the first delay of the 429 backoff (default
// DefaultBackoff); it doubles per retry, with jitter, up to a minute.
func WithBackoff(d time.Duration) Option { return func(r *Runner) { r.backoff = d } }

// WithTimeScale runs the world k times faster (0 < k ≤ 1) against a
// simulator scaled the same way (sim.Config.TimeScale): every time the
// runner measures is divided by k and every wait (open-loop arrivals,
// think time, backoff) multiplied by it, so records are in simulated time.
// For tests that need minutes of simulated traffic in seconds.
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

// Runner replays one Plan against one Target. Create it with New; Run it
// once.
type Runner struct {
	plan   *scenario.Plan
	conc   scenario.ConcurrencyPin
	target Target
	httpc  *http.Client
	// ep is the target's URL taken apart; chatURL and header are every
	// chat request's URL and header (header is shared: read only).
	ep      endpoint
	chatURL string
	header  http.Header
	// extra is the request extensions as `,"k":v` pairs for the body.
	extra []byte
	// rd removes the target's secrets from the server's text.
	rd redactor
	// maxLine bounds a stream's line (WithMaxLineBytes).
	maxLine int
	// health records the endpoint's outages.
	health health
	// connectBackoff and connectBackoffMax bound the wait after a
	// connect failure (WithConnectBackoff).
	connectBackoff, connectBackoffMax time.Duration

	exact    bool
	duration time.Duration
	requests int

	requestTimeout time.Duration
	stallTimeout   time.Duration
	overhead       int
	// perMessage is what each message after the first adds (agentic).
	perMessage int
	prompts    *prompt.Builder
	// pricing prices requests for a session's cost cap (nil: unpriced).
	pricing *results.Pricing
	// backoff is the first 429 backoff delay; it doubles per retry, with
	// jitter, up to maxBackoff.
	backoff time.Duration
	// timeScale is run time's speed-up (1: real time; see WithTimeScale).
	timeScale float64
	// prefixes are the shared prompt prefixes, by group (nil: none).
	prefixes []string

	start time.Time
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
	// comes within liveStep of the stream's last add waits for its next
	// chunk, or its end.
	Streaming Counter
}

// LiveOutputTokens is the output so far, chunk by chunk: the ended
// requests' tokens and the chunks of those still streaming. Two loads,
// not one snapshot: a request ending between them is briefly missing.
func (s *Stats) LiveOutputTokens() int64 { return s.OutputTokens.Load() + s.Streaming.Load() }

// counterStripes is how many cache lines a Counter spreads over.
const counterStripes = 16

// liveStep is how long (wall-clock time) a stream keeps its new chunks
// to itself before it adds them to Stats.Streaming: a stream pays one
// atomic add per liveStep, not one per chunk.
const liveStep = 50 * time.Millisecond

// Counter is a count that many streams add to at once without sharing a
// cache line: each adds to its own stripe (by request index), and Load
// sums the stripes. Safe for concurrent use.
type Counter struct {
	stripes [counterStripes]struct {
		n atomic.Int64
		_ [56]byte // one stripe per 64-byte cache line
	}
}

// stripe is request index i's share of c.
func (c *Counter) stripe(i int) *atomic.Int64 { return &c.stripes[uint(i)%counterStripes].n }

// Load is the count: the stripes' sum.
func (c *Counter) Load() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}

// New prepares a Runner. It fails only on a target it cannot address: a
// base URL that is not http(s), or one with user info when an API key is
// set too (both would be the Authorization header).
func New(plan *scenario.Plan, t Target, opts ...Option) (*Runner, error) {
	s := plan.Scenario()
	r := &Runner{
		plan:           plan,
		conc:           s.Pins.Concurrency,
		target:         t,
		exact:          s.Pins.Output.Exact || s.Workload.Replay(), // a replay keeps the recorded lengths
		duration:       s.Duration.D(),
		requests:       s.Requests,
		requestTimeout: DefaultRequestTimeout,
		stallTimeout:   DefaultStallTimeout,
		backoff:        DefaultBackoff,
		timeScale:      1,
		maxLine:        DefaultMaxLineBytes,

		connectBackoff:    DefaultConnectBackoff,
		connectBackoffMax: DefaultConnectBackoffMax,
	}
	if s.RequestTimeout > 0 {
		r.requestTimeout = s.RequestTimeout.D()
	}
	for _, o := range opts {
		o(r)
	}
	if r.prompts == nil {
		b, err := wordPrompts()
		if err != nil {
			return nil, err
		}
		r.prompts = b
	}
	if pp := s.Pins.Prompt; pp.SharedPrefixTokens > 0 {
		for g := range max(pp.PrefixGroups, 1) {
			n, seed := plan.SharedPrefix(g)
			r.prefixes = append(r.prefixes, r.prompts.Build(seed, n))
		}
	}
	conns := r.conc.Streams
	switch r.conc.Mode {
	case scenario.ModeOpen:
		conns = max(r.conc.MaxInFlight, int(r.conc.Rate*4), 64)
	case scenario.ModeTrace:
		conns = 64
	}
	var err error
	extra := map[string]any{}
	for k, v := range t.ExtraBody {
		extra[k] = v
	}
	if r.exact && hasControl(t.OutputControl, ControlIgnoreEOS) {
		extra["ignore_eos"] = true
	}
	if r.extra, err = encodeExtra(extra); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	ep, auth, err := parseEndpoint(t.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if auth != "" && t.APIKey != "" {
		return nil, fmt.Errorf("target: the base URL %s carries a user name and password and an API key is set too; "+
			"both would be the Authorization header: drop one (the key comes from the profile's api_key_env)", DisplayURL(t.BaseURL))
	}
	r.ep, r.chatURL = ep, ep.api("/chat/completions")
	r.header = requestHeader(t, auth)
	r.rd = newRedactor(t, auth)
	r.httpc = &http.Client{Transport: newTransport(conns)}
	return r, nil
}

// hasControl reports whether an output control ("ignore_eos+min_tokens")
// includes want.
func hasControl(ctl, want string) bool { return strings.Contains(ctl, want) }

// Stats returns the live counters.
func (r *Runner) Stats() *Stats { return &r.stats }

// Start returns the wall-clock time load started (zero before Run).
func (r *Runner) Start() time.Time { return r.start }

// Outages returns the times the endpoint could not be reached, in order:
// from a request that failed to connect to the first answer to a request
// sent after it. Call it after the run.
func (r *Runner) Outages() []results.Outage { return r.health.list() }

// Close releases the runner's idle connections.
func (r *Runner) Close() { r.httpc.CloseIdleConnections() }

// Run issues the Plan's requests and returns their records on a channel
// that Run's goroutines own and close when every request has finished.
// Cancelling issue stops issuing new requests; requests in flight go on
// until they finish or inflight is cancelled, which cuts them off (class
// interrupted). The caller must drain the channel.
func (r *Runner) Run(issue, inflight context.Context) <-chan *results.Record {
	out := make(chan *results.Record, 1024)
	r.start = time.Now()
	go func() {
		defer close(out)
		switch w := r.plan.Scenario().Workload; {
		case w.Agentic():
			r.sessionLoop(issue, inflight, out)
		case w.Replay():
			r.traceLoop(issue, inflight, out)
		case r.conc.Mode == scenario.ModeOpen:
			r.openLoop(issue, inflight, out)
		default:
			r.closedLoop(issue, inflight, out)
		}
	}()
	return out
}

// since is the monotonic offset from the start of load, in run time.
func (r *Runner) since() time.Duration { return r.runTime(time.Since(r.start)) }

// runTime converts a wall-clock duration to run time (see WithTimeScale).
func (r *Runner) runTime(d time.Duration) time.Duration {
	if r.timeScale == 1 {
		return d
	}
	return time.Duration(float64(d) / r.timeScale)
}

// wallTime converts a run-time duration to the wall-clock time to wait.
func (r *Runner) wallTime(d time.Duration) time.Duration {
	return time.Duration(float64(d) * r.timeScale)
}

// more reports whether request i may still be issued at offset t.
func (r *Runner) more(i int, t time.Duration) bool {
	return (r.requests <= 0 || i < r.requests) && (r.duration <= 0 || t < r.duration)
}

// closedLoop keeps Streams requests in flight: each worker issues its next
// request as soon as its last one ends.
//
// A worker whose request could not connect waits before its next one
// (WithConnectBackoff), so that a dead endpoint is not hammered.
func (r *Runner) closedLoop(issue, inflight context.Context, out chan<- *results.Record) {
	var next atomic.Int64
	var g errgroup.Group
	for w := 0; w < r.conc.Streams; w++ {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(uint64(r.plan.Scenario().Seed), uint64(w)))
			fails := 0
			for issue.Err() == nil {
				i := int(next.Add(1) - 1)
				req := r.plan.Request(i)
				text := r.promptText(req)
				at := r.since()
				if !r.more(i, at) || issue.Err() != nil {
					return nil
				}
				rec := r.do(inflight, req, text, at)
				out <- rec
				if rec.Err != results.ErrConnect {
					fails = 0
					continue
				}
				if !sleep(issue, r.connectDelay(rng, fails)) {
					return nil
				}
				fails++
			}
			return nil
		})
	}
	_ = g.Wait()
}

// connectDelay is the wait after the (fails+1)-th connect failure in a
// row: jittered exponential backoff within the WithConnectBackoff bounds.
func (r *Runner) connectDelay(rng *rand.Rand, fails int) time.Duration {
	return jittered(rng, r.connectBackoff, r.connectBackoffMax, fails)
}

// jittered is an exponential backoff with "equal jitter": first·2^n capped
// at ceiling, of which the second half is random.
func jittered(rng *rand.Rand, first, ceiling time.Duration, n int) time.Duration {
	d := ceiling
	if n < 30 && first<<n < ceiling {
		d = first << n
	}
	return d/2 + time.Duration(rng.Int64N(int64(d/2)+1))
}

// openLoop issues requests at the Plan's arrival times, whatever is in
// flight (up to MaxInFlight when set). Latencies count from the scheduled
// arrival, so a client that falls behind shows it as schedule lag and
// latency rather than hiding it (no coordinated omission).
func (r *Runner) openLoop(issue, inflight context.Context, out chan<- *results.Record) {
	var g errgroup.Group
	var sem *semaphore.Weighted
	if r.conc.MaxInFlight > 0 {
		sem = semaphore.NewWeighted(int64(r.conc.MaxInFlight))
	}
	arrivals := r.plan.Arrivals()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
loop:
	for i := 0; ; i++ {
		at := arrivals.Next()
		if !r.more(i, at) {
			break
		}
		req := r.plan.Request(i)
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
		if sem != nil {
			if err := sem.Acquire(issue, 1); err != nil {
				break
			}
		}
		g.Go(func() error {
			if sem != nil {
				defer sem.Release(1)
			}
			out <- r.do(inflight, req, text, at)
			return nil
		})
	}
	_ = g.Wait()
}

// promptText synthesises the request's prompt: its shared prefix, if any,
// then text unique to the request, together exactly the pinned length
// minus the template's overhead.
func (r *Runner) promptText(req scenario.Request) string {
	n := max(req.PromptTokens-r.overhead, 1)
	if req.PrefixGroup < 0 || req.PrefixGroup >= len(r.prefixes) {
		return r.prompts.Build(req.Seed, n)
	}
	shared, _ := r.plan.SharedPrefix(req.PrefixGroup)
	return r.prefixes[req.PrefixGroup] + r.prompts.Build(req.Seed, max(n-shared, 1))
}

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
