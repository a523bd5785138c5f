// Package harness is sixpin's composition root: it runs a scenario end to
// end, as `sixpin run` does. It resolves the target (the built-in simulator
// when none is given), probes and discovers the endpoint, drives the runner
// into the collector, binds every figure to its pins, and writes the results
// file atomically; sweeps, repeats and bake-offs run through it too.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/internal/rusage"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/runner"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/trace"
	verdicts "github.com/sixpin/sixpin/verdict"
)

// Version is sixpin's version, recorded in every results file.
var Version = "0.1.0-dev"

// DefaultGrace is how long in-flight requests may finish after an
// interrupt before they are cut off.
const DefaultGrace = 10 * time.Second

// Config is one `sixpin run`.
type Config struct {
	ScenarioPath string
	// Profile is a profile name or file; Endpoint and Model override it.
	Profile  string
	Endpoint string
	Model    string
	// Output is the results file path ("" = DefaultOutput).
	Output string
	// Records, when set, is where one row per request goes as the run
	// consumes its records: JSON Lines (.jsonl) or CSV (.csv), by its
	// extension (export.RecordsFormatOf). The members of a sweep or of
	// repeats each write their own, numbered as their spills are
	// (rows.jsonl → rows.1.jsonl).
	Records string
	// Seed overrides the scenario's seed when non-nil.
	Seed *int64
	// Duration overrides the scenario's duration when > 0.
	Duration time.Duration
	// Requests overrides the scenario's request count when > 0.
	Requests int
	// Tokenizer overrides the profile's tokenizer ("server", a name, or
	// "hf:PATH").
	Tokenizer string
	// Repeat runs the scenario that many times (seeds seed, seed+1, …) and
	// reports means with confidence intervals; 0 or 1: once.
	Repeat int
	// TimeScale, in (0, 1], runs the built-in simulator and the client
	// that many times faster, with every figure reported in simulated
	// time (for tests and demos; 0 or 1: real time). Simulator only.
	TimeScale float64
	// Grace bounds how long in-flight requests may finish after an
	// interrupt (default DefaultGrace).
	Grace time.Duration
	// StallTimeout overrides the runner's stall timeout when > 0.
	StallTimeout time.Duration
	// NoEventLoop reads every answer on its own goroutine
	// (endpoint.Options.NoEventLoop).
	NoEventLoop bool
	// ReadyTimeout is how long a run waits, before load, for a server
	// still starting (not listening yet, or answering 503 Loading model)
	// to be ready; 0: it does not wait (the CLI's default is
	// DefaultReadyTimeout).
	ReadyTimeout time.Duration
	// Getenv reads the environment (API keys); nil means os.Getenv.
	Getenv func(string) string
	// Out receives the first line and the summary; ErrOut progress and
	// warnings.
	Out, ErrOut io.Writer
	// Progress shows a live progress bar on ErrOut.
	Progress bool
	// AllowOverContext sends planned prompts longer than the server's
	// context on purpose (to measure how it refuses them); without it they
	// are sent too, but the prompt pin is ✗ and the run invalid.
	AllowOverContext bool
	// AllowPinMismatch names pins (results.PinNames) whose contradiction
	// the user accepts knowingly: still ✗ on the card and recorded in the
	// results, but the run stays valid.
	AllowPinMismatch []string
	// PromptSalt reuses a run's prompt salt (16 hex digits, as its results
	// file records in scenario.prompt_salt), for warm-cache studies; "" is
	// a fresh salt, so no run is served from an earlier one's prefix cache.
	PromptSalt string
	// Checkpoint rewrites the results file (marked incomplete) this often
	// once a run has gone on for CheckpointAfter; 0 never.
	Checkpoint time.Duration
	// CheckpointAfter overrides CheckpointAfter when > 0 (for tests).
	CheckpointAfter time.Duration
	// WriteResults writes a results file atomically (nil:
	// results.WriteFile); tests inject failures through it.
	WriteResults func(path string, run *results.Run) error
	// FallbackDirs are where the results go when their path cannot be
	// written after the run (nil: the working directory, then the system's
	// temporary directory).
	FallbackDirs []string
	// SpillMemory bounds the records, in bytes, a run keeps in memory
	// while its record spill cannot be written (a full disk); past it the
	// run stops issuing and ends incomplete (0: DefaultSpillMemory).
	SpillMemory int
	// SetGCPercent, when set, is given the collector's target before load
	// for a run of thousands of connections (see leanGCPercent): the CLI
	// passes runtime/debug.SetGCPercent unless GOGC is set. A library
	// caller, or a test running many runs at once, leaves it nil.
	SetGCPercent func(percent int)
	// Distributed makes the run one shard of a distributed run.
	Distributed Distributed
	// Live serves the live page at this address (HOST:PORT; "" none), a
	// loopback one unless LiveRemote; LiveKeep keeps it up at the end,
	// showing the final report, until ctx ends (Ctrl-C).
	Live       string
	LiveRemote bool
	LiveKeep   bool
	// MetricsAddr serves sixpin's own metrics for Prometheus at
	// http://MetricsAddr/metrics ("" none), on a loopback address unless
	// MetricsRemote (see listen.Listen).
	MetricsAddr   string
	MetricsRemote bool
	// ServerMetrics is how often the server's own /metrics is scraped
	// during the run, in run time (0: endpoint.DefaultScrapeEvery;
	// ServerMetricsOff: never).
	ServerMetrics time.Duration
	// KVFit is KVFitWarn ("" too) or KVFitStrict: what the KV-fit
	// preflight does when the planned concurrency does not fit.
	KVFit string
	// Calibrate measures sixpin's own floor before the run (calibrate).
	Calibrate bool
	// ContentCheck runs, after the run, a slice per content class at its
	// pins (ContentCheckSlice long each, DefaultContentCheckSlice when 0)
	// and marks the run content-sensitive when their decode tok/s spread
	// passes ContentSpreadPct (0: results.DefaultContentSpreadPct).
	ContentCheck      bool
	ContentCheckSlice time.Duration
	ContentSpreadPct  float64
	// AbortOn are conditions (--abort-on, each "COND, COND, …") added to
	// the scenario's abort_on: the run stops as soon as one is broken at
	// 95% confidence, marked as stopped early, and fails.
	AbortOn []string

	// obs watch the command's runs (the live page, the Prometheus
	// exposition); set by Run and Bakeoff, nil when neither is asked for.
	obs *observers
	// step places a run in its sweep, repeat or bake-off ("step k of n:
	// LABEL"; "" for a single run), for the progress line and live page.
	step string
	// judge judges a capacity point's records as they arrive and stops it
	// once every tier is decided (nil: the run's own abort_on, if any).
	judge *judging
}

// DefaultCheckpoint is `sixpin run`'s checkpoint interval.
const DefaultCheckpoint = 10 * time.Second

// CheckpointAfter is how long a run goes before its first checkpoint: a
// shorter run never writes one.
const CheckpointAfter = time.Minute

// Outcome is what Run produced.
type Outcome struct {
	// Run is a single run's results; Set a sweep's or repeats' (one of
	// the two is set).
	Run  *results.Run
	Set  *results.Set
	Path string
}

// target is a resolved endpoint, possibly the in-process simulator.
type target struct {
	endpoint.Target
	profile *profiles.Profile
	keyEnv  string
	keySet  bool
	// stop shuts the in-process simulator down (nil otherwise).
	stop func()
}

// Run executes cfg. Cancelling ctx (the first interrupt) stops issuing;
// requests in flight get cfg.Grace to finish, or until hard is cancelled
// (a second interrupt); the results are then written marked incomplete.
func Run(ctx, hard context.Context, cfg Config) (*Outcome, error) {
	cfg = withDefaults(cfg)
	obs, err := startObservers(cfg)
	if err != nil {
		return nil, err
	}
	cfg.obs = obs
	out, err := runObserved(ctx, hard, cfg)
	obs.done(ctx)
	return out, err
}

// runObserved is Run with its observers started.
func runObserved(ctx, hard context.Context, cfg Config) (*Outcome, error) {
	sc, err := loadScenario(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Records != "" {
		if _, err := export.RecordsFormatOf(cfg.Records); err != nil {
			return nil, fmt.Errorf("%w: --records: %w", ErrBadInput, err)
		}
	}
	if err := checkDistributed(cfg, sc); err != nil {
		return nil, err
	}
	if err := checkContentCheck(cfg, sc); err != nil {
		return nil, err
	}
	switch {
	case sc.Sweep != nil && cfg.Repeat > 1:
		return nil, fmt.Errorf("%w: --repeat with a sweep: repeat each point as its own scenario", ErrBadInput)
	case sc.Sweep != nil:
		return sweep(ctx, hard, cfg, sc)
	case cfg.Repeat > 1:
		return repeat(ctx, hard, cfg, sc)
	}
	path := cfg.Output
	if path == "" {
		path = DefaultOutput(sc.Name, time.Now())
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	run, sp, err := execute(ctx, hard, cfg, sc, path, spillBeside(path, ""), cfg.Checkpoint)
	if err != nil {
		return nil, err
	}
	if cfg.ContentCheck && !run.Incomplete {
		if run.ContentCheck, err = contentCheck(ctx, hard, cfg, sc, path); err != nil {
			sp.keep(cfg.Out)
			return nil, err
		}
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteSummary(cfg.Out, run); err != nil {
		return nil, err
	}
	written, err := save(cfg, path, run)
	if err != nil {
		sp.keep(cfg.Out)
		return nil, err
	}
	sp.remove()
	fmt.Fprintf(cfg.Out, "\nResults: %s\n", written)
	err = verdict(run)
	if cc := run.ContentCheck; err == nil && cc != nil && cc.Incomplete && ctx.Err() != nil {
		err = fmt.Errorf("%w: the content check was interrupted (%s not measured)", ErrInterrupted, strings.Join(cc.Missing, ", "))
	}
	return &Outcome{Run: run, Path: written}, err
}

// verdict maps a finished run to Run's error: interrupted, invalid (a pin
// broken, or the error budget exceeded), or no success.
func verdict(run *results.Run) error {
	switch {
	case run.Incomplete:
		return ErrInterrupted
	case run.StoppedEarly != nil && run.StoppedEarly.Aborted:
		return fmt.Errorf("%w: stopped early at %s s by abort_on: %s", ErrRunFailed, verdicts.Seconds(run.StoppedEarly.AtS), run.StoppedEarly.Reason)
	case !run.Valid:
		return fmt.Errorf("%w: %s", ErrInvalid, strings.Join(run.Invalid, "; "))
	case run.Errors.Requests-run.Errors.Failed == 0:
		return fmt.Errorf("%w: no request succeeded", ErrRunFailed)
	}
	return nil
}

// withDefaults fills cfg's unset dependencies.
func withDefaults(cfg Config) Config {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	return cfg
}

// loadScenario reads cfg's scenario and applies its overrides.
func loadScenario(cfg Config) (*scenario.Scenario, error) {
	sc, err := scenario.Load(cfg.ScenarioPath)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if err := applyOverrides(sc, cfg); err != nil {
		return nil, err
	}
	return sc, nil
}

// prepared is a run made ready before load: the client and the runner
// built, the server discovered and probed, the KV fit checked, the
// header written. close releases the client and the target (a simulator
// started for the run).
type prepared struct {
	client *endpoint.Client
	rn     *runner.Runner
	plan   *scenario.Plan
	h      *results.Header
	ids    *results.RequestIDs
	cal    *results.Calibration
	stop   func() // the target's (nil: none)
	// judge follows the run for abort_on or a capacity point (nil: none).
	judge *judging
	// pending holds the requests in flight for the judge to count those
	// past a TTFT or E2E bound (nil: it has no such bound).
	pending *runner.Pending
}

func (p *prepared) close() {
	if p.client != nil {
		p.client.Close()
	}
	if p.plan != nil {
		p.plan.Close() // a replay's trace file
	}
	if p.stop != nil {
		p.stop()
	}
}

// prepare makes sc ready to run against cfg's target: everything
// execute does before it waits for the start and begins the load. On an
// error what it opened is released.
func prepare(ctx context.Context, cfg Config, sc *scenario.Scenario) (_ *prepared, err error) {
	salt, err := promptSalt(cfg)
	if err != nil {
		return nil, err
	}
	tg, err := resolveTarget(sc, cfg)
	if err != nil {
		return nil, err
	}
	p := &prepared{stop: tg.stop}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if tg.profile.Simulated() {
		fmt.Fprintf(cfg.Out, "sixpin: running %s against the built-in simulator (profile %s) — simulated figures, not a measurement of real hardware\n",
			sc.Path, tg.profile.Name)
	} else {
		fmt.Fprintf(cfg.Out, "sixpin: running %s against %s (model %q, profile %s)\n", sc.Path, redact.URL(tg.BaseURL), tg.Model, tg.profile.Name)
	}

	logs, err := logLines(ctx, sc)
	if err != nil {
		return nil, err
	}
	whole := scenario.NewPlan(sc, scenario.PromptSalt(salt))
	plan, err := shardPlan(cfg, whole)
	if err != nil {
		return nil, err
	}
	if pct := gcPercent(connections(plan)); pct > 0 && cfg.SetGCPercent != nil {
		cfg.SetGCPercent(pct)
	}
	if err := checkDescriptors(plan, tg.stop != nil); err != nil {
		return nil, err
	}
	co := runner.ClientOptions(plan)
	co.StallTimeout, co.NoEventLoop = cfg.StallTimeout, cfg.NoEventLoop
	ids := &results.RequestIDs{Prefix: fmt.Sprintf("sixpin-%08x", salt>>32)}
	co.RequestIDPrefix = ids.Prefix
	client, err := endpoint.New(tg.Target, co)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	p.client = client
	// Everything from here on asks the server: a server still loading
	// its model would answer 503 to all of it.
	if err := waitReady(ctx, cfg, client); err != nil {
		return nil, err
	}

	var notes []string
	prompts, tok, err := promptBuilder(ctx, cfg, tg, logs)
	if err != nil {
		return nil, err
	}
	if tok.warning != "" {
		notes = append(notes, tok.warning)
		fmt.Fprintf(cfg.ErrOut, "sixpin: warning: %s\n", tok.warning)
	}
	opts := []runner.Option{runner.WithPrompts(prompts)}
	if tg.profile.Pricing.Set() {
		opts = append(opts, runner.WithPricing(tg.profile.Pricing))
	}
	if scaled(cfg) {
		opts = append(opts, runner.WithTimeScale(cfg.TimeScale))
	}

	disc := endpoint.Discover(ctx, client)
	tmpl, ok, msg, refused := endpoint.Probe(ctx, client, endpoint.ProbeRequest{
		One: prompts.Build(endpoint.ProbeSeed, 1), Conversation: sc.Workload.Agentic() || sc.Workload.Replay(),
		Backoff: 4 * runner.DefaultConnectBackoff, MaxBackoff: runner.DefaultConnectBackoffMax})
	if refused != 0 {
		return nil, fmt.Errorf("%w: the server refused sixpin's first request (%s); every request of the run would be refused alike, so no load was sent: %s",
			ErrRunFailed, msg, refusalHint(refused, client, tg))
	}
	opts = append(opts, runner.WithTemplate(tmpl))
	overhead := tmpl.Overhead
	judge := cfg.judge
	if judge == nil {
		if judge, err = abortJudging(cfg, sc, tg.profile, plan.Streams()); err != nil {
			return nil, err
		}
	}
	if judge.censors() {
		p.pending = runner.NewPending()
		opts = append(opts, runner.WithPending(p.pending))
	}
	rn, err := runner.New(plan, client, opts...)
	if err != nil {
		return nil, err
	}
	probeFailure := ""
	if !ok {
		probeFailure = msg
		notes = append(notes, "prompt lengths are not corrected for the chat template: "+msg)
		fmt.Fprintf(cfg.ErrOut, "sixpin: warning: %s\n", msg)
	}
	if sc.Pins.Output.Exact && tg.OutputControl == endpoint.ControlNone {
		notes = append(notes, fmt.Sprintf("output.exact is declared but profile %s has no don't-stop-early control: output lengths are verified, not enforced", tg.profile.Name))
	}
	if sc.Workload.Agentic() && sc.Workload.CostCapUSD > 0 && !tg.profile.Pricing.Set() {
		notes = append(notes, "workload.cost_cap_usd is set but the profile has no pricing: no session was capped")
	}
	d := results.Declared{Declared: plan.Declared(scenario.Wire{Model: tg.Model, OutputControl: tg.OutputControl.String(), Tokenizer: tok.label})}
	d.OverContext = overContext(sc, plan, disc.KV.MaxModelLen, cfg.AllowOverContext)
	if oc := d.OverContext; oc != nil && oc.Exceeding > 0 {
		if oc.Allowed {
			fmt.Fprintf(cfg.ErrOut, "sixpin: warning: %s; sent on purpose (--allow-over-context)\n", oc)
		} else {
			fmt.Fprintf(cfg.ErrOut, "sixpin: warning: %s: the server will refuse them, so the prompt pin is ✗ and the run invalid (--allow-over-context sends them on purpose)\n", oc)
		}
	}
	h := header(sc, tg, d, disc, overhead, tok, notes)
	h.AllowPinMismatch = cfg.AllowPinMismatch
	if scaled(cfg) {
		h.TimeScale = cfg.TimeScale
	}
	h.KVFit = kvFit(sc, plan, disc)
	if sc.Workload.Stationary() {
		h.Windows.WarmSessions = plan.Streams() // this shard's
	}
	if err := preflightKV(cfg.ErrOut, cfg.KVFit, h.KVFit); err != nil {
		return nil, err
	}
	var cal *results.Calibration
	if cfg.Calibrate {
		if cal, err = calibrate(ctx, sc, plan); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.ErrOut, "sixpin: calibration: %s\n", report.CalibrationLine(cal))
	}
	h.ProbeFailure = probeFailure
	if n := whole.Len(); n > 0 {
		h.Planned = results.Planned(whole.Sequence(n))
	}
	h.Scenario.PromptSalt = fmt.Sprintf("%016x", salt)
	if sc.Workload.Stationary() {
		h.Scenario.SessionsStart = scenario.StartStationary
	}
	h.Shard = shardIdentity(cfg, sc, whole)
	p.rn, p.plan, p.h, p.ids, p.cal, p.judge = rn, plan, h, ids, cal, judge
	return p, nil
}

// execute runs sc against cfg's target and returns the assembled results
// (not yet written) and the record spill, at spillPath, that it was
// measured into: the caller removes it once the results are safe. Every
// checkpoint (0: none) the results so far are written to out, marked
// incomplete. The run is interrupted as Run describes; an interrupted run
// comes back marked incomplete.
func execute(ctx, hard context.Context, cfg Config, sc *scenario.Scenario, out, spillPath string, checkpoint time.Duration) (*results.Run, *spillFile, error) {
	p, err := prepare(ctx, cfg, sc)
	if err != nil {
		return nil, nil, err
	}
	defer p.close()
	client, rn, plan, h, ids, cal := p.client, p.rn, p.plan, p.h, p.ids, p.cal
	if err := waitStart(ctx, cfg, h); err != nil {
		return nil, nil, err
	}

	rows, err := createRecords(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer rows.close()
	col, err := results.NewCollector(spillPath)
	if err != nil {
		return nil, nil, err
	}
	sp := &spillFile{col: col}
	// A panic or an error leaves the spill for `sixpin recover`.
	defer sp.release()

	// Issuing stops at the first interrupt (ctx), or when the records
	// can be kept neither on disk nor in memory (stopIssuing).
	issue, stopIssuing := context.WithCancelCause(ctx)
	defer stopIssuing(nil)
	inflight, cancelCause := context.WithCancelCause(context.Background())
	cancelInflight := func() { cancelCause(nil) }
	defer cancelInflight()
	cpu0 := clientInfo().CPUSeconds
	var scraper *endpoint.Scraper
	if cfg.ServerMetrics != ServerMetricsOff {
		scraper = client.NewScraper(cfg.ServerMetrics)
		scraper.Baseline(ctx)
		defer func() {
			if scraper != nil {
				scraper.Stop()
			}
		}()
	}
	records := rn.Run(issue, inflight)
	h.StartedAt = rn.Start()
	p.judge.begin(rn.Clock(), stopIssuing)
	defer p.judge.end()
	if scraper != nil {
		scraper.Start(ctx, rn.Clock())
	}
	if err := col.Begin(h); err != nil {
		stopIssuing(err)
		cancelInflight()
		for range records {
		}
		return nil, nil, err
	}
	rows.begin(h)
	fmt.Fprintf(cfg.ErrOut, "sixpin: recording to %s (if this run dies, `sixpin recover %s` rebuilds its results)\n", col.SpillPath(), col.SpillPath())
	// Once issuing stops, in-flight requests get the grace period. The
	// run waits for this goroutine before it goes on (graceDone), so that
	// its line is never written beside the caller's next.
	graceDone := make(chan struct{})
	go func() {
		defer close(graceDone)
		select {
		case <-issue.Done():
		case <-inflight.Done():
			return
		}
		fmt.Fprintf(cfg.ErrOut, "sixpin: stopping — no new requests; in-flight requests have %s to finish\n", cfg.Grace)
		select {
		case <-time.After(cfg.Grace):
			cancelCause(endpoint.ErrCutAfterGrace)
		case <-hard.Done():
			cancelCause(endpoint.ErrCutBySecondInterrupt)
		case <-inflight.Done():
		}
	}()

	w := newWatch(cfg, sc, plan, h, rn)
	w.server = scraper
	defer w.finish(nil) // its sampler stops on every way out
	cfg.obs.begin(w, metricLabels(cfg, sc, h))
	bar := startProgress(cfg, w)
	consume(records, col, newSpillWatch(cfg, stopIssuing), newCheckpointer(cfg, col, out, checkpoint, h.StartedAt, scraper), func(rec *record.Record) {
		ids.Count(rec)
		rows.write(rec)
		w.observe(rec)
		p.judge.observe(rec, stopIssuing)
	}, func() { p.judge.censor(p.pending, rn.Clock(), stopIssuing) })
	interrupted := ctx.Err() != nil
	stopped := context.Cause(issue)
	cancelInflight()
	<-graceDone
	cut := context.Cause(inflight) // the first cancel's: what cut the requests in flight, if anything did
	rows.finish()

	p.judge.pin(&h.Windows)
	m, err := col.Finish(h.Windows, h.SLO, h.Tol)
	if err != nil {
		bar.finish()
		cfg.obs.end(w, nil, "")
		return nil, nil, err
	}
	end := results.Ending{}
	switch {
	case interrupted:
		end = results.Ending{Incomplete: true, Interrupted: true, Reason: interruptReason(cut, hard, cfg.Grace)}
	case p.judge.ending(stopped) != nil:
		end = results.Ending{StoppedEarly: p.judge.ending(stopped)}
	case stopped != nil:
		end = results.Ending{Incomplete: true,
			Reason: "stopped early: " + stopped.Error() + "; issuing stopped and in-flight requests had " + cfg.Grace.String() + " to finish"}
	}
	if scraper != nil {
		m.Server = serverSide(scraper.Stop(), m.Windows)
		scraper = nil
	}
	run := results.Assemble(h, m, end)
	if run.Parity.Planned == nil && h.Shard == nil {
		// A closed loop bounded by its duration alone: its plan is the
		// requests it issued.
		run.Parity.Planned = results.Planned(plan.Sequence(run.Errors.Requests))
	}
	if err := plan.TraceErr(); err != nil {
		run.Valid, run.Invalid = false, append(run.Invalid, fmt.Sprintf("the trace could not be read again while it was replayed: %v", err))
	}
	run.RequestIDs = ids
	run.Calibration = cal
	judgeCalibration(run, cfg.TimeScale)
	run.Compress(cfg.TimeScale)
	run.Errors.Outages = client.Outages()
	run.Client = clientInfo()
	run.Client.Connections = client.Connections()
	run.Client.Wire = client.Wire()
	run.Client.EventLoopStreams = client.EventLoopStreams()
	if off, at, why := client.KeepAliveOff(); off {
		run.Client.KeepAliveOff = &results.KeepAliveOff{AtS: rn.Clock().Run(at.Sub(rn.Start())).Seconds(), Reason: why}
	}
	if run.Shard != nil {
		run.Shard.CPUSaturation = cpuSaturation(run.Client, cpu0, h.StartedAt)
	}
	bar.finish()
	cfg.obs.end(w, run, runName(cfg, out))
	return run, sp, nil
}

// interruptReason says how an interrupted run ended: cut is what
// cancelled its in-flight requests (context.Cause), hard the second
// interrupt's context, grace the period the requests had.
func interruptReason(cut error, hard context.Context, grace time.Duration) string {
	const stopped = "interrupted by a signal; issuing stopped"
	switch {
	case errors.Is(cut, endpoint.ErrCutBySecondInterrupt) || hard.Err() != nil:
		return stopped + ", then a second interrupt cut off the requests still in flight before their " + grace.String() + " grace period ran out"
	case errors.Is(cut, endpoint.ErrCutAfterGrace):
		return stopped + ", and the requests still in flight were cut off when their " + grace.String() + " grace period ran out"
	}
	return stopped + " and the requests in flight finished within their " + grace.String() + " grace period"
}

// promptSalt is cfg's prompt salt, or a fresh one.
func promptSalt(cfg Config) (uint64, error) {
	if cfg.PromptSalt == "" && cfg.Distributed.RunID != "" {
		return runSalt(cfg.Distributed.RunID), nil
	}
	if cfg.PromptSalt == "" {
		for {
			if s := rand.Uint64(); s != 0 {
				return s, nil
			}
		}
	}
	s, err := strconv.ParseUint(cfg.PromptSalt, 16, 64)
	if err != nil || s == 0 {
		return 0, fmt.Errorf("%w: --prompt-salt %q: want the 16 hex digits a results file records as scenario.prompt_salt", ErrBadInput, cfg.PromptSalt)
	}
	return s, nil
}

// maxContextChecks bounds how many planned requests are checked against
// the server's context.
const maxContextChecks = 1_000_000

// overContext counts the planned requests whose prompt and output do not
// fit the server's context (limit, in tokens; 0 unknown): the requests of
// a plain or classed workload (the plan's, or its first
// ExpectationSamples when only a duration bounds it) and every turn of a
// trace. Agentic sessions end at the context window by design and are not
// counted. nil when the context is unknown or nothing is checked.
func overContext(sc *scenario.Scenario, plan *scenario.Plan, limit int, allowed bool) *results.OverContext {
	if limit <= 0 || sc.Workload.Agentic() {
		return nil
	}
	oc := &results.OverContext{ContextTokens: limit, Allowed: allowed}
	if w := sc.Workload; w.Replay() {
		if w.Trace == nil {
			return nil
		}
		err := w.Trace.Requests(func(u trace.Turn) {
			oc.Planned++
			if u.InputTokens+u.OutputTokens > limit {
				oc.Exceeding++
			}
		})
		if err != nil {
			return nil // the file changed since it was read: the replay will say so
		}
		return oc
	}
	n := plan.Len()
	switch {
	case n < 0:
		n, oc.Sampled = scenario.ExpectationSamples, true
	case n > maxContextChecks:
		n, oc.Sampled = maxContextChecks, true
	}
	for i := range n {
		if r := plan.Request(plan.Unit(i)); r.PromptTokens+r.OutputTokens > limit {
			oc.Exceeding++
		}
	}
	oc.Planned = n
	return oc
}

// DefaultOutput is the results path when none is given:
// sixpin-NAME-YYYYMMDD-HHMMSS.json in the working directory.
func DefaultOutput(name string, t time.Time) string {
	return fmt.Sprintf("sixpin-%s-%s.json", name, t.UTC().Format("20060102-150405"))
}

func applyOverrides(sc *scenario.Scenario, cfg Config) error {
	if cfg.Seed != nil {
		sc.Seed = *cfg.Seed
	}
	if cfg.Duration > 0 {
		sc.Duration = scenario.Duration(cfg.Duration)
	}
	if cfg.Requests > 0 {
		sc.Requests = cfg.Requests
	}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("%w: %s: after command-line overrides: %w", ErrBadInput, sc.Path, err)
	}
	return nil
}

// resolveTarget picks the endpoint: --endpoint/--model, else --profile,
// else the scenario's target, else the built-in simulator.
func resolveTarget(sc *scenario.Scenario, cfg Config) (*target, error) {
	p, base, err := targetProfile(sc, cfg)
	if err != nil {
		return nil, err
	}
	t := &target{profile: p}
	t.MaxTokensField = p.MaxTokensField
	if t.OutputControl, err = endpoint.ParseOutputControl(p.OutputControl); err != nil {
		return nil, fmt.Errorf("%w: profile %s: output_control %w", ErrBadInput, p.Name, err)
	}
	if t.Protocol, err = endpoint.ParseProtocol(p.Protocol); err != nil {
		return nil, fmt.Errorf("%w: profile %s: protocol %w", ErrBadInput, p.Name, err)
	}
	if t.HTTP, err = endpoint.ParseHTTPVersion(p.HTTP); err != nil {
		return nil, fmt.Errorf("%w: profile %s: http %w", ErrBadInput, p.Name, err)
	}
	t.ExtraBody = p.ExtraBody
	t.Headers = p.Headers
	model := cfg.Model
	if model == "" && cfg.Profile == "" {
		model = sc.Target.Model
	}
	if scaled(cfg) && !p.Simulated() {
		return nil, fmt.Errorf("%w: a time scale needs the built-in simulator (profile %s is %s)", ErrBadInput, p.Name, p.Kind)
	}
	if p.Simulated() {
		if base != "" {
			return nil, fmt.Errorf("%w: --endpoint cannot be used with simulator profile %s", ErrBadInput, p.Name)
		}
		sm, err := StartSimulator(p, "127.0.0.1:0", cfg.TimeScale)
		if err != nil {
			return nil, err
		}
		t.BaseURL, t.Model = sm.URL, sm.Model
		t.stop = func() { _ = sm.Close(2 * time.Second) }
		return t, nil
	}
	if base == "" {
		base = p.BaseURL
	}
	if base == "" {
		return nil, fmt.Errorf("%w: profile %s has no base_url: give --endpoint URL", ErrBadInput, p.Name)
	}
	t.BaseURL = strings.TrimSuffix(base, "/")
	switch {
	case model != "":
		t.Model = model
	case p.Model != "":
		t.Model = p.Model
	default:
		t.Model = sc.Pins.Model.Name
	}
	t.keyEnv = p.KeyEnv()
	t.APIKey = cfg.Getenv(t.keyEnv)
	if t.APIKey == "" && t.keyEnv != profiles.DefaultAPIKeyEnv {
		if k := cfg.Getenv(profiles.DefaultAPIKeyEnv); k != "" {
			t.keyEnv, t.APIKey = profiles.DefaultAPIKeyEnv, k
		}
	}
	t.keySet = t.APIKey != ""
	return t, nil
}

// targetProfile is the profile a run of sc with cfg targets, and the
// endpoint given (by --endpoint, or the scenario's target when no
// --profile is): --profile, else the scenario's, else the built-in
// simulator, or openai-compatible for an endpoint alone.
func targetProfile(sc *scenario.Scenario, cfg Config) (*profiles.Profile, string, error) {
	ref := cfg.Profile
	if ref == "" {
		ref = sc.Target.Profile
	}
	base := cfg.Endpoint
	if base == "" && cfg.Profile == "" {
		base = sc.Target.Endpoint
	}
	if ref == "" {
		ref = profiles.DefaultSimulator
		if base != "" {
			ref = profiles.KindOpenAICompatible
		}
	}
	p, err := profiles.Resolve(ref)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return p, base, nil
}

// scaled reports whether cfg compresses time.
func scaled(cfg Config) bool { return cfg.TimeScale > 0 && cfg.TimeScale < 1 }

// header gathers what the run knows before its first request (all but
// the start time): what the results file is assembled from, live or by
// `sixpin recover`.
func header(sc *scenario.Scenario, tg *target, d results.Declared, disc record.Discovery, overhead int,
	tok tokenizerChoice, notes []string) *results.Header {
	h := &results.Header{
		SixpinVersion: Version,
		Scenario:      scenarioInfo(sc),
		Declared:      d,
		Discovery:     disc,
		Windows: results.WindowSpec{
			Warmup:      sc.Windows.Warmup.D(),
			Burst:       sc.Windows.Burst.D(),
			SteadyAuto:  sc.Windows.Steady.Auto,
			SteadyStart: sc.Windows.Steady.Start,
			SteadyEnd:   sc.Windows.Steady.End,
		},
		SLO: results.SLO{
			TTFT: msDur(sc.SLO.TTFTMs),
			TPOT: msDur(sc.SLO.TPOTMs),
			E2E:  msDur(sc.SLO.E2EMs),
		},
		Tol: results.Tolerances{
			PromptPct: sc.Pins.Prompt.PromptTolerancePct(),
			OutputPct: sc.Pins.Output.OutputTolerancePct(),
		},
		Pricing:           tg.profile.Pricing,
		Energy:            tg.profile.Energy(),
		RateLimits:        tg.profile.RateLimits,
		FallbackTokenizer: tok.fallback,
		Notes:             notes,
	}
	h.Target = results.TargetInfo{
		Endpoint:               redact.URL(tg.BaseURL),
		Profile:                tg.profile.Name,
		Model:                  tg.Model,
		Simulated:              tg.profile.Simulated(),
		APIKeyEnv:              tg.keyEnv,
		APIKeySet:              tg.keySet,
		OutputControl:          tg.OutputControl.String(),
		Protocol:               tg.Protocol.String(),
		HTTP:                   tg.HTTP.String(),
		TemplateOverheadTokens: overhead,
	}
	if tg.profile.Simulated() {
		h.Target.Endpoint = "in-process simulator"
	}
	if c := sc.Pins.Concurrency; c.Mode == scenario.ModeOpen {
		h.OpenRateRPS = c.Rate
	}
	return h
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func scenarioInfo(sc *scenario.Scenario) results.ScenarioInfo {
	si := results.ScenarioInfo{
		Name: sc.Name, Description: sc.Description, Path: sc.Path, SHA256: sc.SHA256, Seed: sc.Seed,
		DurationS: sc.Duration.D().Seconds(), Requests: sc.Requests,
	}
	si.Windows.WarmupS = sc.Windows.Warmup.D().Seconds()
	si.Windows.BurstS = sc.Windows.Burst.D().Seconds()
	si.Windows.Steady = sc.Windows.Steady.String()
	si.SLO.TTFTMs, si.SLO.TPOTMs, si.SLO.E2EMs = sc.SLO.TTFTMs, sc.SLO.TPOTMs, sc.SLO.E2EMs
	si.SLO.MaxErrorRate = sc.SLO.MaxErrorRate
	si.SLO.MaxDegenerateShare = sc.SLO.MaxDegenerateShare
	return si
}

func clientInfo() results.ClientInfo {
	ci := results.ClientInfo{GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU()}
	if cpu, rss, ok := rusage.Self(); ok {
		ci.MaxRSSBytes, ci.CPUSeconds = rss, cpu.Seconds()
	}
	return ci
}
