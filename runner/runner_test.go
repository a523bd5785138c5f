package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// hangGuard bounds how long a test waits for the runner to do something
// before calling it a hang. It is a deadlock detector, not a timing
// assertion: every test here normally finishes in well under a second.
const hangGuard = 20 * time.Second

// simOverhead is the simulator's default chat-template overhead for one
// user message: 5 per message plus 3 for the assistant prime.
const simOverhead = sim.DefaultTemplateOverheadTokens + 3

// mustPlan parses a scenario from YAML and returns its Plan.
func mustPlan(t testing.TB, yaml string) *scenario.Plan {
	t.Helper()
	s, err := scenario.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatalf("parse scenario: %v", err)
	}
	return scenario.NewPlan(s)
}

// newSim returns a simulator for cfg; serve it with serveSim.
func newSim(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	return srv
}

// serve serves h over HTTP for the test's lifetime. stop, if not nil, runs
// before the server closes, to release handlers that hold a response.
func serve(t testing.TB, h http.Handler, stop func()) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		if stop != nil {
			stop()
		}
		ts.Close()
	})
	return ts
}

// serveSim serves a simulator configured by cfg, wrapped by wrap when it is
// not nil.
func serveSim(t testing.TB, cfg sim.Config, wrap func(http.Handler) http.Handler) (*httptest.Server, *sim.Server) {
	t.Helper()
	srv := newSim(t, cfg)
	var h http.Handler = srv
	if wrap != nil {
		h = wrap(srv)
	}
	return serve(t, h, func() { srv.Close() }), srv
}

// simTarget addresses ts (a simulator) with exact output enforced by
// ignore_eos.
func simTarget(ts *httptest.Server) endpoint.Target {
	return endpoint.Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel, OutputControl: endpoint.ControlIgnoreEOS}
}

func newRunner(t testing.TB, p *scenario.Plan, tg endpoint.Target, opts ...Option) *Runner {
	t.Helper()
	return newRunnerWith(t, p, tg, endpoint.Options{}, opts...)
}

// newRunnerWith is newRunner with the endpoint client's timeouts and line
// limit taken from co where they are set.
func newRunnerWith(t testing.TB, p *scenario.Plan, tg endpoint.Target, co endpoint.Options, opts ...Option) *Runner {
	t.Helper()
	c := newClient(t, p, tg, func(o *endpoint.Options) {
		if co.StallTimeout != 0 {
			o.StallTimeout = co.StallTimeout
		}
		if co.RequestTimeout != 0 {
			o.RequestTimeout = co.RequestTimeout
		}
		if co.MaxLineBytes != 0 {
			o.MaxLineBytes = co.MaxLineBytes
		}
	})
	r, err := New(p, c, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// collect drains a record channel until it closes.
func collect(t testing.TB, ch <-chan *record.Record) []*record.Record {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	var recs []*record.Record
	for {
		select {
		case rec, ok := <-ch:
			if !ok {
				return recs
			}
			recs = append(recs, rec)
		case <-guard.C:
			t.Fatalf("the record channel did not close (%d records received)", len(recs))
		}
	}
}

// runAll runs r to completion and returns its records.
func runAll(t testing.TB, r *Runner) []*record.Record {
	t.Helper()
	return collect(t, r.Run(context.Background(), context.Background()))
}

// checkIndexes fails unless recs hold indexes 0..n-1 exactly once each.
func checkIndexes(t *testing.T, recs []*record.Record, n int) {
	t.Helper()
	if len(recs) != n {
		t.Errorf("got %d records, want %d", len(recs), n)
	}
	seen := make([]int, n)
	for _, rec := range recs {
		if rec.Index < 0 || rec.Index >= n {
			t.Errorf("record index %d out of [0, %d)", rec.Index, n)
			continue
		}
		seen[rec.Index]++
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("index %d seen %d times, want 1", i, c)
		}
	}
}

// checkTimeline checks the ordering of a record's timestamps: Scheduled ≤
// Sent ≤ each chunk (non-decreasing) ≤ End, and a non-negative client lag
// when the server stamps its chunks (-1 when it does not).
func checkTimeline(t *testing.T, rec *record.Record, stamped bool) {
	t.Helper()
	if rec.Sent < rec.Scheduled {
		t.Errorf("request %d: Sent %v < Scheduled %v", rec.Index, rec.Sent, rec.Scheduled)
	}
	prev := rec.Sent
	for j, c := range rec.Chunks {
		if c.At < prev {
			t.Errorf("request %d: chunk %d at %v is before %v (Sent or the previous chunk)", rec.Index, j, c.At, prev)
		}
		prev = c.At
		switch {
		case stamped && c.ClientLagUS < 0:
			t.Errorf("request %d: chunk %d ClientLagUS = %d, want ≥ 0 (the server stamps chunks)", rec.Index, j, c.ClientLagUS)
		case !stamped && c.ClientLagUS != -1:
			t.Errorf("request %d: chunk %d ClientLagUS = %d, want -1 (no server stamp)", rec.Index, j, c.ClientLagUS)
		}
		if c.Bytes <= 0 {
			t.Errorf("request %d: chunk %d has %d bytes", rec.Index, j, c.Bytes)
		}
	}
	if rec.End < prev {
		t.Errorf("request %d: End %v before its last chunk or Sent %v", rec.Index, rec.End, prev)
	}
}

// peakOverlap is the most [Sent, End) intervals that hold at one instant.
func peakOverlap(recs []*record.Record) int {
	type event struct {
		at    time.Duration
		delta int
	}
	evs := make([]event, 0, 2*len(recs))
	for _, r := range recs {
		evs = append(evs, event{r.Sent, +1}, event{r.End, -1})
	}
	// Half-open intervals: at equal times an end comes before a start.
	slices.SortFunc(evs, func(a, b event) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta
	})
	cur, peak := 0, 0
	for _, e := range evs {
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

func TestPeakOverlap(t *testing.T) {
	t.Parallel()
	iv := func(s, e time.Duration) *record.Record { return &record.Record{Sent: s, End: e} }
	cases := []struct {
		name string
		recs []*record.Record
		want int
	}{
		{"none", nil, 0},
		{"back to back", []*record.Record{iv(0, 10), iv(10, 20), iv(20, 30)}, 1},
		{"nested", []*record.Record{iv(0, 100), iv(10, 20), iv(15, 18), iv(50, 60)}, 3},
		{"staggered", []*record.Record{iv(0, 10), iv(5, 15), iv(9, 30), iv(12, 14)}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := peakOverlap(c.recs); got != c.want {
				t.Fatalf("peakOverlap = %d, want %d", got, c.want)
			}
		})
	}
}

const closedYAML = `
seed: 3
pins:
  model: {name: sim-model}
  prompt: {tokens: {dist: uniform, min: 20, max: 300}}
  output: {tokens: {dist: uniform, min: 1, max: 40}, exact: true}
  concurrency: {mode: closed, streams: 4}
requests: 40
`

// TestClosedLoop runs a whole closed-loop scenario against the simulator
// and checks every record: each request once, the pinned prompt and output
// lengths honoured by the server (after the probed template overhead),
// one chunk per token, and a consistent timeline.
func TestClosedLoop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		control        endpoint.OutputControl
		maxTokensField string
		reasoning      float64 // sim ReasoningShare
		perChunk       int     // sim TokensPerChunk
	}{
		{name: "ignore_eos", control: endpoint.ControlIgnoreEOS, perChunk: 1},
		{name: "min_tokens via max_completion_tokens", control: endpoint.ControlMinTokens, maxTokensField: "max_completion_tokens", perChunk: 1},
		{name: "both controls with reasoning", control: endpoint.ControlIgnoreEOS | endpoint.ControlMinTokens, reasoning: 0.5, perChunk: 1},
		{name: "three tokens per chunk", control: endpoint.ControlIgnoreEOS, perChunk: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serveSim(t, sim.Config{
				Timing: sim.TimingNone, MaxModelLen: 4096,
				ReasoningShare: c.reasoning, TokensPerChunk: c.perChunk,
			}, nil)
			tg := simTarget(ts)
			tg.OutputControl, tg.MaxTokensField = c.control, c.maxTokensField
			p := mustPlan(t, closedYAML)
			c2 := newClient(t, p, tg, nil)
			tmpl, ok, msg := probe(t, c2, false)
			if !ok || tmpl.Overhead != simOverhead {
				t.Fatalf("Probe = %+v, %v, %q; want overhead %d, true", tmpl, ok, msg, simOverhead)
			}
			r, err := New(p, c2, WithTemplate(tmpl))
			if err != nil {
				t.Fatal(err)
			}

			recs := runAll(t, r)
			checkIndexes(t, recs, 40)
			var outTokens int64
			for _, rec := range recs {
				want := p.Request(rec.Index)
				if rec.RequestedPromptTokens != want.PromptTokens || rec.RequestedOutputTokens != want.OutputTokens {
					t.Errorf("request %d: requested %d/%d tokens, plan says %d/%d", rec.Index,
						rec.RequestedPromptTokens, rec.RequestedOutputTokens, want.PromptTokens, want.OutputTokens)
				}
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
					continue
				}
				if !rec.HasUsage {
					t.Errorf("request %d: no usage", rec.Index)
				}
				if rec.Usage.PromptTokens != rec.RequestedPromptTokens {
					t.Errorf("request %d: usage prompt tokens %d, requested %d", rec.Index, rec.Usage.PromptTokens, rec.RequestedPromptTokens)
				}
				if rec.Usage.CompletionTokens != rec.RequestedOutputTokens {
					t.Errorf("request %d: usage completion tokens %d, requested %d", rec.Index, rec.Usage.CompletionTokens, rec.RequestedOutputTokens)
				}
				wantChunks := (rec.RequestedOutputTokens + c.perChunk - 1) / c.perChunk
				if c.reasoning > 0 { // chunks do not straddle the reasoning/answer boundary
					r := rec.Usage.ReasoningTokens
					wantChunks = (r+c.perChunk-1)/c.perChunk + (rec.RequestedOutputTokens-r+c.perChunk-1)/c.perChunk
				}
				if len(rec.Chunks) != wantChunks {
					t.Errorf("request %d: %d chunks, want %d", rec.Index, len(rec.Chunks), wantChunks)
				}
				if rec.FinishReason != "length" || rec.Model != sim.DefaultModel {
					t.Errorf("request %d: finish %q model %q, want length %s", rec.Index, rec.FinishReason, rec.Model, sim.DefaultModel)
				}
				if c.reasoning > 0 {
					wantR := int(float64(rec.RequestedOutputTokens)*c.reasoning + 0.5)
					if rec.Usage.ReasoningTokens != wantR {
						t.Errorf("request %d: %d reasoning tokens, want %d", rec.Index, rec.Usage.ReasoningTokens, wantR)
					}
					for j, ch := range rec.Chunks {
						if ch.Reasoning != (j < wantR) {
							t.Errorf("request %d: chunk %d Reasoning = %v, want %v", rec.Index, j, ch.Reasoning, j < wantR)
						}
					}
				}
				checkTimeline(t, rec, true)
				outTokens += int64(rec.Usage.CompletionTokens)
			}
			st := r.Stats()
			if st.Issued.Load() != 40 || st.Done.Load() != 40 || st.Failed.Load() != 0 || st.InFlight.Load() != 0 {
				t.Errorf("stats: issued %d done %d failed %d in flight %d; want 40 40 0 0",
					st.Issued.Load(), st.Done.Load(), st.Failed.Load(), st.InFlight.Load())
			}
			if st.OutputTokens.Load() != outTokens {
				t.Errorf("stats: %d output tokens, records say %d", st.OutputTokens.Load(), outTokens)
			}
			if r.Start().IsZero() {
				t.Error("Start() is zero after Run")
			}
		})
	}
}

// TestClosedLoopConcurrency checks from the records that a closed loop of
// N streams never has more than N requests in flight (and does use more
// than one stream when it has several).
func TestClosedLoopConcurrency(t *testing.T) {
	t.Parallel()
	for _, streams := range []int{1, 3} {
		t.Run(fmt.Sprintf("streams=%d", streams), func(t *testing.T) {
			t.Parallel()
			ts, _ := serveSim(t, sim.Config{Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond}}, nil)
			p := mustPlan(t, fmt.Sprintf(`
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 4, exact: true}
  concurrency: {mode: closed, streams: %d}
requests: 12
`, streams))
			recs := runAll(t, newRunner(t, p, simTarget(ts), WithTemplate(endpoint.Template{Overhead: simOverhead})))
			checkIndexes(t, recs, 12)
			for _, rec := range recs {
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
			}
			peak := peakOverlap(recs)
			if peak > streams {
				t.Errorf("%d requests in flight at once, want ≤ %d streams", peak, streams)
			}
			if peak < min(streams, 2) {
				t.Errorf("at most %d request in flight with %d streams", peak, streams)
			}
		})
	}
}

// TestBounds checks that the Bounds option overrides the scenario's: a
// request count stops the run at exactly that many, a duration stops
// issuing (every request is issued before it).
func TestBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		duration time.Duration
		requests int
		wantN    int // -1: any number
	}{
		{"requests", 0, 5, 5},
		{"duration", 150 * time.Millisecond, 0, -1},
		{"requests before duration", time.Hour, 3, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serveSim(t, sim.Config{Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 10 * time.Millisecond, ITL: 5 * time.Millisecond}}, nil)
			p := mustPlan(t, `
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 3, exact: true}
  concurrency: {mode: closed, streams: 2}
requests: 40
`)
			r := newRunner(t, p, simTarget(ts), Bounds(c.duration, c.requests))
			recs := runAll(t, r)
			if c.wantN >= 0 {
				checkIndexes(t, recs, c.wantN)
			} else {
				checkIndexes(t, recs, len(recs))
			}
			for _, rec := range recs {
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
				if c.duration > 0 && rec.Scheduled >= c.duration {
					t.Errorf("request %d issued at %v, after the %v bound", rec.Index, rec.Scheduled, c.duration)
				}
			}
		})
	}
}

// TestOpenLoopSchedule checks that open-loop requests are scheduled at the
// Plan's arrival offsets, and never sent before them.
//
// The poisson case can fail on Sent < Scheduled: exponential gaps are
// sometimes shorter than openLoop's 50 µs no-wait threshold, the bug that
// TestOpenLoopNeverSendsEarly reproduces reliably.
func TestOpenLoopSchedule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, arrival string
		rate          float64
	}{
		{"constant", scenario.ArrivalConstant, 200},
		{"poisson", scenario.ArrivalPoisson, 300},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
			p := mustPlan(t, fmt.Sprintf(`
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: {dist: uniform, min: 2, max: 10}, exact: true}
  concurrency: {mode: open, rate: %g, arrival: %s}
requests: 100
`, c.rate, c.arrival))
			recs := runAll(t, newRunner(t, p, simTarget(ts), WithTemplate(endpoint.Template{Overhead: simOverhead})))
			checkIndexes(t, recs, 100)
			want := make([]time.Duration, 100)
			a := p.Arrivals()
			for i := range want {
				want[i] = a.Next()
			}
			for _, rec := range recs {
				if rec.Index < 0 || rec.Index >= len(want) {
					continue
				}
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
				if rec.Scheduled != want[rec.Index] {
					t.Errorf("request %d scheduled at %v, plan says %v", rec.Index, rec.Scheduled, want[rec.Index])
				}
				checkTimeline(t, rec, true)
			}
		})
	}
}

// TestOpenLoopMaxInFlight checks from the records that max_in_flight caps
// the open loop, whatever the arrival rate.
func TestOpenLoopMaxInFlight(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2} {
		t.Run(fmt.Sprintf("max_in_flight=%d", limit), func(t *testing.T) {
			t.Parallel()
			ts, _ := serveSim(t, sim.Config{Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 25 * time.Millisecond, ITL: 5 * time.Millisecond}}, nil)
			p := mustPlan(t, fmt.Sprintf(`
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 3, exact: true}
  concurrency: {mode: open, rate: 500, arrival: constant, max_in_flight: %d}
requests: 12
`, limit))
			recs := runAll(t, newRunner(t, p, simTarget(ts), WithTemplate(endpoint.Template{Overhead: simOverhead})))
			checkIndexes(t, recs, 12)
			for _, rec := range recs {
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
				if rec.Sent < rec.Scheduled {
					t.Errorf("request %d sent at %v, before its arrival %v", rec.Index, rec.Sent, rec.Scheduled)
				}
			}
			if peak := peakOverlap(recs); peak > limit {
				t.Errorf("%d requests in flight at once, want ≤ %d", peak, limit)
			}
		})
	}
}

// TestOpenLoopNeverSendsEarly checks Sent ≥ Scheduled at arrival gaps
// shorter than the loop's 50 µs "close enough, don't wait" threshold.
//
// It fails today: openLoop issues a request at once when its arrival is
// less than 50 µs away, so Sent lands up to 50 µs before Scheduled (a
// negative schedule lag, and latencies measured from Scheduled shortened
// by as much). Without -race it shows on every run; under -race the loop is
// slower and rarely gets ahead of its schedule.
func TestOpenLoopNeverSendsEarly(t *testing.T) {
	t.Parallel()
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
	p := mustPlan(t, `
pins:
  model: {name: sim-model}
  prompt: {tokens: 10}
  output: {tokens: 1, exact: true}
  concurrency: {mode: open, rate: 20000, arrival: constant}
requests: 500
`)
	recs := runAll(t, newRunner(t, p, simTarget(ts), WithTemplate(endpoint.Template{Overhead: simOverhead})))
	checkIndexes(t, recs, 500)
	early, worst := 0, time.Duration(0)
	for _, rec := range recs {
		if rec.Sent < rec.Scheduled {
			early++
			worst = max(worst, rec.Scheduled-rec.Sent)
		}
	}
	if early > 0 {
		t.Errorf("%d of %d requests sent before their scheduled arrival, up to %v early", early, len(recs), worst)
	}
}

// gate holds every chat request at the server until opened (or until the
// client leaves), counting arrivals, then hands it to next.
type gate struct {
	next     http.Handler
	arrivals chan struct{}
	open     chan struct{}
	once     sync.Once
	n        atomic.Int64
}

func newGate(next http.Handler) *gate {
	return &gate{next: next, arrivals: make(chan struct{}, 1024), open: make(chan struct{})}
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		g.next.ServeHTTP(w, r)
		return
	}
	// Read the body to EOF so that the server notices a client that leaves.
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.n.Add(1)
	g.arrivals <- struct{}{}
	select {
	case <-g.open:
	case <-r.Context().Done():
		return
	}
	g.next.ServeHTTP(w, r)
}

// wait returns once n requests have arrived.
func (g *gate) wait(t *testing.T, n int) {
	t.Helper()
	guard := time.NewTimer(hangGuard)
	defer guard.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-g.arrivals:
		case <-guard.C:
			t.Fatalf("%d of %d requests arrived", i, n)
		}
	}
}

// TestInterrupt cancels the issue context once a known set of requests is
// in flight (held at the server): no further request may be issued, those
// in flight finish normally, or, when inflight is cancelled too, end as
// interrupted. The record channel closes in every case.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	const closed4 = `
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 5, exact: true}
  concurrency: {mode: closed, streams: 4}
requests: 100
`
	const openCapped = `
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 5, exact: true}
  concurrency: {mode: open, rate: 1000, arrival: constant, max_in_flight: 3}
requests: 100
`
	// The second arrival is 10 s after the first: the loop is waiting on
	// its timer when issuing stops.
	const openSlow = `
pins:
  model: {name: sim-model}
  prompt: {tokens: 30}
  output: {tokens: 5, exact: true}
  concurrency: {mode: open, rate: 0.1, arrival: constant}
requests: 100
`
	cases := []struct {
		name     string
		yaml     string
		inFlight int  // requests in flight when issuing stops
		cut      bool // cancel inflight as well
		stall    bool // requests stall mid-stream instead of waiting at the gate
		want     record.ErrorClass
	}{
		{"closed: issue stops, in flight finish", closed4, 4, false, false, record.OK},
		{"closed: inflight cut before headers", closed4, 4, true, false, record.ErrInterrupted},
		{"closed: inflight cut mid-stream", closed4, 4, true, true, record.ErrInterrupted},
		{"open capped: issue stops while waiting for a slot", openCapped, 3, false, false, record.OK},
		{"open capped: inflight cut", openCapped, 3, true, false, record.ErrInterrupted},
		{"open: issue stops while waiting for the next arrival", openSlow, 1, false, false, record.OK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := sim.Config{Timing: sim.TimingNone}
			if c.stall {
				cfg.Faults = map[string]float64{sim.FaultStall: 1}
			}
			var g *gate
			ts, _ := serveSim(t, cfg, func(h http.Handler) http.Handler { g = newGate(h); return g })
			t.Cleanup(g.release) // runs before the server closes
			if c.stall {
				g.release()
			}
			r := newRunnerWith(t, mustPlan(t, c.yaml), simTarget(ts), endpoint.Options{StallTimeout: -1}, WithTemplate(endpoint.Template{Overhead: simOverhead}))

			issue, stopIssue := context.WithCancel(context.Background())
			inflight, cut := context.WithCancel(context.Background())
			defer stopIssue()
			defer cut()
			ch := r.Run(issue, inflight)
			g.wait(t, c.inFlight)
			stopIssue()
			if c.cut {
				cut()
			} else {
				g.release()
			}
			recs := collect(t, ch)

			if len(recs) != c.inFlight {
				t.Errorf("got %d records, want the %d in flight when issuing stopped", len(recs), c.inFlight)
			}
			if n := g.n.Load(); n != int64(c.inFlight) {
				t.Errorf("the server saw %d requests, want %d", n, c.inFlight)
			}
			if n := r.Stats().Issued.Load(); n != int64(c.inFlight) {
				t.Errorf("stats: %d issued, want %d", n, c.inFlight)
			}
			if n := r.Stats().InFlight.Load(); n != 0 {
				t.Errorf("stats: %d in flight after the channel closed", n)
			}
			for _, rec := range recs {
				if rec.Err != c.want {
					t.Errorf("request %d: class %q (%s), want %q", rec.Index, rec.Err, rec.ErrMsg, c.want)
				}
				if rec.Failed() && rec.ErrMsg == "" {
					t.Errorf("request %d: empty ErrMsg", rec.Index)
				}
				if rec.End < rec.Sent {
					t.Errorf("request %d: End %v before Sent %v", rec.Index, rec.End, rec.Sent)
				}
				if !rec.Failed() && rec.Usage.CompletionTokens != rec.RequestedOutputTokens {
					t.Errorf("request %d: %d tokens, want %d", rec.Index, rec.Usage.CompletionTokens, rec.RequestedOutputTokens)
				}
			}
		})
	}
}
