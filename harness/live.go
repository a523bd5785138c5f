package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/harness/internal/exposition"
	"github.com/sixpin/sixpin/harness/internal/live"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/runner"
	"github.com/sixpin/sixpin/scenario"
)

// observers watch a command's runs from outside: the live page (--live)
// and sixpin's own metrics for Prometheus (--metrics-addr). One set spans
// the whole command, so every run of a sweep, repeat or bake-off shows on
// the same page and adds to the same series. A nil *observers observes
// nothing.
type observers struct {
	errOut io.Writer
	page   *live.Server
	prom   *exposition.Server
	keep   bool
	// cur is the run going on (nil between runs).
	cur atomic.Pointer[watch]

	mu sync.Mutex
	// last is the snapshot of the run that ended last, shown between runs.
	last   *live.Snapshot
	finals []report.Input
}

// startObservers starts what cfg asks for (nil when nothing).
func startObservers(cfg Config) (*observers, error) {
	if cfg.Live == "" && (cfg.LiveKeep || cfg.LiveRemote) {
		return nil, fmt.Errorf("%w: --live-keep and --live-remote need --live ADDR", ErrBadInput)
	}
	if cfg.MetricsAddr == "" && cfg.MetricsRemote {
		return nil, fmt.Errorf("%w: --metrics-remote needs --metrics-addr ADDR", ErrBadInput)
	}
	if cfg.Live == "" && cfg.MetricsAddr == "" {
		return nil, nil
	}
	o := &observers{errOut: cfg.ErrOut, keep: cfg.LiveKeep}
	if cfg.MetricsAddr != "" {
		p, err := exposition.Start(cfg.MetricsAddr, cfg.MetricsRemote)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		o.prom = p
		url, reach := p.Where()
		fmt.Fprintf(cfg.ErrOut, "sixpin: metrics for Prometheus at %s (%s)\n", url, reach)
	}
	if cfg.Live != "" {
		var opts []live.Option
		if cfg.LiveRemote {
			opts = append(opts, live.AllowRemote())
		}
		p, err := live.Start(cfg.Live, o.snapshot, opts...)
		if err != nil {
			o.close()
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		o.page = p
		url, reach := p.Where()
		fmt.Fprintf(cfg.ErrOut, "sixpin: live page at %s (%s)\n", url, reach)
	}
	return o, nil
}

// snapshot is the live page's source: the run going on, else the last
// one that ended.
func (o *observers) snapshot() live.Snapshot {
	if w := o.cur.Load(); w != nil {
		return w.snapshot()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last != nil {
		s := *o.last
		s.State = "between"
		return s
	}
	return live.Snapshot{State: "starting"}
}

// begin makes w the run going on.
func (o *observers) begin(w *watch, l exposition.Labels) {
	if o == nil {
		return
	}
	if o.prom != nil {
		w.prom = o.prom.Run(l, w.stats.InFlight.Load)
	}
	w.shown = true
	o.cur.Store(w)
}

// end records w's run, finished as run (nil: it failed to assemble).
func (o *observers) end(w *watch, run *results.Run, name string) {
	if o == nil {
		return
	}
	if w.prom != nil {
		w.prom.End()
	}
	w.finish(run)
	s := w.snapshot()
	o.mu.Lock()
	o.last = &s
	if run != nil {
		o.finals = append(o.finals, report.Input{Name: name, Run: run})
	}
	o.mu.Unlock()
	o.cur.CompareAndSwap(w, nil)
}

// done shows the final report on the live page; with LiveKeep it then
// waits for ctx (Ctrl-C) before closing everything.
func (o *observers) done(ctx context.Context) {
	if o == nil {
		return
	}
	defer o.close()
	if o.page == nil {
		return
	}
	o.mu.Lock()
	finals := o.finals
	o.mu.Unlock()
	if len(finals) > 0 {
		var b bytes.Buffer
		if err := report.WriteHTML(&b, finals); err == nil {
			o.page.SetFinal(b.Bytes())
		}
	}
	if o.keep && ctx.Err() == nil {
		fmt.Fprintf(o.errOut, "sixpin: the live page stays up at %s with the final report (--live-keep); Ctrl-C ends it\n", o.page.URL())
		<-ctx.Done()
	}
}

func (o *observers) close() {
	if o.page != nil {
		_ = o.page.Close()
	}
	if o.prom != nil {
		_ = o.prom.Close()
	}
}

// stepLabel places run i (from 0) of n in its set.
func stepLabel(i, n int, label string) string { return fmt.Sprintf("step %d of %d: %s", i+1, n, label) }

// runName names a run on the live page's final report: its step, else
// its results file.
func runName(cfg Config, path string) string {
	if cfg.step != "" {
		return cfg.step
	}
	return path
}

// metricLabels are a run's labels in the Prometheus exposition. RunID and Shard are
// the distributed run's (--run-id, --shard; empty for a run of the
// whole).
func metricLabels(cfg Config, sc *scenario.Scenario, h *results.Header) exposition.Labels {
	l := exposition.Labels{Scenario: sc.Name, Profile: h.Target.Profile, RunID: cfg.Distributed.RunID}
	if d := cfg.Distributed.Shard; !d.Whole() {
		l.Shard = d.String()
	}
	return l
}

// histMaxUS bounds the live histograms: an hour, in µs.
const histMaxUS = int64(time.Hour / time.Microsecond)

// watch follows one run as it goes: the runner's live counters, sampled
// once per second of run time, and every finished record, folded into
// histograms and tallies. It is what the progress line, the live page
// and the Prometheus exposition read. Its methods are safe for concurrent use.
type watch struct {
	stats *runner.Stats
	start time.Time
	// scale is wall time per run time (cfg.TimeScale, 1 when real time).
	scale float64
	// bound is what ends the run: a duration, or a number of requests.
	duration time.Duration
	requests int
	sessions int
	step     string
	spec     results.WindowSpec
	static   live.Snapshot
	prom     *exposition.Run
	// shown is set when the live page or the exposition follow the run
	// (observers.begin, before the first record): only they read the
	// records' histograms and tallies, so without them observe does not
	// build them (a record's every chunk would go through a lock and a
	// histogram for nobody).
	shown bool
	// server scrapes the server's own /metrics (nil: not scraped); set
	// before the watch is shown.
	server *endpoint.Scraper

	mu        sync.Mutex
	ttft, itl *hdrhistogram.Histogram // µs
	e2e, lag  *hdrhistogram.Histogram // µs
	errors    map[string]int64
	prompt    int64
	seconds   []live.Second
	// lastTokens is the live output count at the last sample.
	lastTokens int64
	lastAt     time.Duration
	// final is the assembled run, once it has ended.
	final *results.Run
	ended time.Duration

	stop          sync.Once
	quit, stopped chan struct{}
}

// newWatch starts following rn's run of sc, described by h. The run must
// have started (rn.Start is set).
func newWatch(cfg Config, sc *scenario.Scenario, plan *scenario.Plan, h *results.Header, rn *runner.Runner) *watch {
	w := &watch{
		stats: rn.Stats(), start: rn.Start(), scale: 1,
		duration: sc.Duration.D(), requests: max(plan.Len(), 0), sessions: sc.Workload.Sessions,
		step: cfg.step, spec: h.Windows,
		ttft: hdrhistogram.New(1, histMaxUS, 3), itl: hdrhistogram.New(1, histMaxUS, 3),
		e2e: hdrhistogram.New(1, histMaxUS, 3), lag: hdrhistogram.New(1, histMaxUS, 3),
		errors: map[string]int64{},
		quit:   make(chan struct{}), stopped: make(chan struct{}),
	}
	if scaled(cfg) {
		w.scale = cfg.TimeScale
	}
	w.static = live.Snapshot{Scenario: sc.Name, Target: report.TargetLabel(h.Target), Simulated: h.Target.Simulated,
		Step: cfg.step, DurationS: w.duration.Seconds(), Requests: w.requests}
	for _, p := range report.DeclaredPins(h.Declared.Declared) {
		w.static.Pins = append(w.static.Pins, live.Pin{N: p.N, Name: p.Pin, Declared: p.Text})
	}
	go w.sample()
	return w
}

// elapsed is the run's own clock: run time since its start.
func (w *watch) elapsed() time.Duration {
	return time.Duration(float64(time.Since(w.start)) / w.scale)
}

// sample appends one Second per second of run time (at most every 10 ms
// of wall time) until the run ends.
func (w *watch) sample() {
	defer close(w.stopped)
	tick := time.NewTicker(max(time.Duration(float64(time.Second)*w.scale), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-tick.C:
			w.tick(w.elapsed())
		}
	}
}

// tick records the second that ends at run time at.
func (w *watch) tick(at time.Duration) {
	tokens, inflight := w.stats.LiveOutputTokens(), w.stats.InFlight.Load()
	w.mu.Lock()
	defer w.mu.Unlock()
	dt := (at - w.lastAt).Seconds()
	if dt <= 0 {
		return
	}
	s := live.Second{AtS: at.Seconds(), AggregateTokS: max(float64(tokens-w.lastTokens), 0) / dt, InFlight: inflight}
	if inflight > 0 {
		s.PerStreamTokS = s.AggregateTokS / float64(inflight)
	}
	w.lastTokens, w.lastAt = tokens, at
	w.seconds = append(w.seconds, s)
	if n := len(w.seconds); n > 2*live.MaxSeconds {
		w.seconds = append(w.seconds[:0], w.seconds[n-live.MaxSeconds:]...)
	}
}

// observe folds one finished record in. Its chunks' tokens must be
// assigned (Collector.Add does).
func (w *watch) observe(rec *record.Record) {
	if !w.shown {
		return
	}
	us := func(d time.Duration) int64 { return min(max(d.Microseconds(), 1), histMaxUS) }
	w.mu.Lock()
	_ = w.lag.RecordValue(us(rec.Lag()))
	if rec.HasUsage {
		w.prompt += int64(rec.Usage.PromptTokens)
	}
	if rec.Failed() {
		w.errors[string(rec.Err)]++
	} else {
		_ = w.e2e.RecordValue(us(rec.E2E()))
		if ttft, ok := rec.TTFT(); ok {
			_ = w.ttft.RecordValue(us(ttft))
		}
		if rec.DecodeMeasured() {
			rec.ITLs(func(gap time.Duration, k int) { _ = w.itl.RecordValues(us(gap/time.Duration(k)), int64(k)) })
		}
	}
	w.mu.Unlock()
	if w.prom != nil {
		w.prom.Observe(rec)
	}
}

// finish stops the sampler and the clock (the first call does); run,
// when not nil, decides the windows. Safe to call more than once.
func (w *watch) finish(run *results.Run) {
	w.stop.Do(func() {
		close(w.quit)
		<-w.stopped
		w.mu.Lock()
		w.ended = w.elapsed()
		w.mu.Unlock()
	})
	if run != nil {
		w.mu.Lock()
		w.final = run
		w.mu.Unlock()
	}
}

// snapshot is the run as the live page shows it now.
func (w *watch) snapshot() live.Snapshot {
	s := w.static
	w.mu.Lock()
	defer w.mu.Unlock()
	s.State = "running"
	at := w.elapsed()
	if w.ended > 0 {
		s.State, at = "ended", w.ended
	}
	s.ElapsedS = at.Seconds()
	s.Issued, s.Done, s.Failed = w.stats.Issued.Load(), w.stats.Done.Load(), w.stats.Failed.Load()
	s.InFlight, s.OutputTokens, s.PromptTokens = w.stats.InFlight.Load(), w.stats.LiveOutputTokens(), w.prompt
	s.Seconds = append([]live.Second(nil), w.seconds[max(len(w.seconds)-live.MaxSeconds, 0):]...)
	s.TTFTMs, s.ITLMs, s.E2EMs, s.LagMs = percentiles(w.ttft), percentiles(w.itl), percentiles(w.e2e), percentiles(w.lag)
	s.Errors = make(map[string]int64, len(w.errors))
	for k, v := range w.errors {
		s.Errors[k] = v
	}
	s.Windows = w.windows(at)
	s.Server = serverSeries(w.server.Recent(live.MaxSeconds))
	return s
}

// serverSeries are the server's latest scrapes as the live page's
// series: KV usage, requests running and waiting, and its own token
// rates between scrapes (a series the server does not expose is left
// out).
func serverSeries(xs []record.ServerSample) []live.ServerSeries {
	out := []live.ServerSeries{}
	add := func(name, unit string, f func(i int) *float64) {
		s := live.ServerSeries{Name: name, Unit: unit, Values: []float64{}}
		for i := range xs {
			if v := f(i); v != nil {
				s.Values = append(s.Values, *v)
			}
		}
		if len(s.Values) > 0 {
			out = append(out, s)
		}
	}
	rate := func(get func(record.ServerSample) *float64) func(int) *float64 {
		return func(i int) *float64 {
			if i == 0 {
				return nil
			}
			a, b := get(xs[i-1]), get(xs[i])
			dt := (xs[i].T - xs[i-1].T).Seconds()
			if a == nil || b == nil || dt <= 0 || *b < *a {
				return nil
			}
			r := (*b - *a) / dt
			return &r
		}
	}
	add("KV cache usage", "%", func(i int) *float64 {
		if v := xs[i].KVUsage; v != nil {
			p := *v * 100
			return &p
		}
		return nil
	})
	add("requests running", "requests", func(i int) *float64 { return xs[i].Running })
	add("requests waiting", "requests", func(i int) *float64 { return xs[i].Waiting })
	add("server generation", "tok/s", rate(func(x record.ServerSample) *float64 { return x.GenerationTokens }))
	add("server prompt", "tok/s", rate(func(x record.ServerSample) *float64 { return x.PromptTokens }))
	return out
}

// percentiles of a µs histogram, in ms.
func percentiles(h *hdrhistogram.Histogram) live.Percentiles {
	ms := func(v int64) float64 { return float64(v) / 1e3 }
	return live.Percentiles{N: h.TotalCount(), P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)),
		P99: ms(h.ValueAtQuantile(99)), Max: ms(h.Max())}
}

// windows are the run's windows as far as they are decided at run time
// at: warmup and burst once the clock passes their end, steady and all
// when the run has ended (from its results). Called with w.mu held.
func (w *watch) windows(at time.Duration) []live.Window {
	if w.final != nil {
		var out []live.Window
		names := make([]string, 0, len(w.final.Windows))
		for n := range w.final.Windows {
			names = append(names, n)
		}
		order := map[string]int{results.WindowWarmup: 0, results.WindowBurst: 1, results.WindowSteady: 2, results.WindowAll: 3}
		sort.Slice(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
		for _, n := range names {
			win := w.final.Windows[n]
			out = append(out, live.Window{Name: n, StartS: win.StartS, EndS: win.EndS, Decided: true})
		}
		return out
	}
	sec := func(d time.Duration) float64 { return d.Seconds() }
	var out []live.Window
	if wu := w.spec.Warmup; wu > 0 {
		out = append(out, live.Window{Name: results.WindowWarmup, EndS: sec(wu), Decided: at >= wu, Note: "until the clock passes its end"})
	}
	b := w.spec.BurstLen()
	out = append(out, live.Window{Name: results.WindowBurst, EndS: sec(b), Decided: at >= b, Note: "the first " + b.String() + " of load"})
	st := live.Window{Name: results.WindowSteady, StartS: sec(max(w.spec.Warmup, w.spec.SteadyStart)), EndS: sec(w.spec.SteadyEnd)}
	switch {
	case w.spec.SteadyAuto:
		st.Note = "decided at the end: MSER-5 trims its start; it ends at the last scheduled arrival"
	case w.spec.SteadyEnd == 0:
		st.Note = "decided at the end: it ends at the last scheduled arrival"
	default:
		st.Note = "fixed bounds; figures at the end"
	}
	out = append(out, st, live.Window{Name: results.WindowAll, EndS: sec(at), Note: "ends at the last response"})
	for i := range out {
		if out[i].Decided {
			out[i].Note = ""
		}
	}
	return out
}
