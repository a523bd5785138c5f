package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	verdicts "github.com/sixpin/sixpin/verdict"
)

// CapacityConfig is one `sixpin capacity`: the largest concurrency that
// meets each tier. The embedded Config names the scenario and the target;
// its Duration bounds each point (default: the scenario's duration), and
// Seed the first run's seed.
type CapacityConfig struct {
	Config
	// TiersFile is a tiers file (verdict.LoadTiers); Tiers are --tier
	// flags ("NAME: COND, COND"). Without either, the scenario's slo is
	// the one tier.
	TiersFile string
	Tiers     []string
	// Min and Max bound the values tried (0: the axis's defaults);
	// Resolution is a rate's relative step (0: capacity.DefaultResolution).
	Min, Max, Resolution float64
	// MaxRuns bounds the points run, Budget the search's wall time (0: no
	// bound); when either runs out the answer is an interval.
	MaxRuns int
	Budget  time.Duration
	// Points adds that many log-spaced points for the curve after the
	// search.
	Points int
	// MinSteady is the steady stretch a pass needs, in run time (0:
	// verdict.DefaultMinSteady).
	MinSteady time.Duration
	// Sharding splits the search across processes (with
	// Config.Distributed's Shard and RunID); its zero value runs it in
	// one.
	Sharding
}

// CapacityOutcome is what Capacity produced.
type CapacityOutcome struct {
	File *capacity.File
	Path string
}

// Capacity searches the concurrency pin of cc's scenario for each tier's
// largest passing value (capacity.Search), every point a full run against
// the same target through the run machinery — readiness, backoff, the
// server's metrics — judged as its records arrive and stopped once its
// tiers are decided. It prints the plan and budget first, a line per
// point, then the answers, and writes the file (every point's full
// results inside) atomically. An interrupt stops it as it stops a run;
// the file is then marked incomplete, the point cut short counting for
// nothing.
//
// Sharded (cc.Sharding, with Config.Distributed's shard and run id),
// shard 0 runs the search as above and leads the workers: every point is
// run by all the shards at once and their results merged
// (capacity_shard.go). A worker (shard I > 0) runs its share of each
// point the leader opens, writes no file, and returns a nil outcome when
// the leader ends the search.
func Capacity(ctx, hard context.Context, cc CapacityConfig) (*CapacityOutcome, error) {
	cc.Config = withDefaults(cc.Config)
	if err := checkSharding(cc); err != nil {
		return nil, err
	}
	obs, err := startObservers(cc.Config)
	if err != nil {
		return nil, err
	}
	cc.Config.obs = obs
	run := capacityObserved
	if cc.Distributed.Shard.I > 0 {
		run = capacityWorker
	}
	out, err := run(ctx, hard, cc)
	obs.done(ctx)
	return out, err
}

// capacityPlan loads cc's scenario and tiers and plans the search; a
// tier the run cannot measure is refused here, before any load.
func capacityPlan(cc CapacityConfig) (*scenario.Scenario, *capacity.File, error) {
	sc, err := loadScenario(cc.Config)
	if err != nil {
		return nil, nil, err
	}
	if sc.Workload.Agentic() && sc.Workload.Start == "" {
		// How many agents a deployment serves is a steady state's
		// answer: points start with their sessions mid-life, as deep as
		// a long run's, so a pass can be decided early (fresh sessions
		// would ramp from their first prompts, and their first minutes
		// flatter the point).
		sc.Workload.Start = scenario.StartStationary
	}
	var tiers []verdicts.Tier
	if cc.TiersFile != "" {
		if tiers, err = verdicts.LoadTiers(cc.TiersFile); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
	}
	for _, s := range cc.Tiers {
		t, err := verdicts.ParseTierFlag(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
		tiers = append(tiers, t)
	}
	if len(tiers) == 0 {
		t, ok := verdicts.SLOTier(sc.SLO)
		if !ok {
			return nil, nil, fmt.Errorf("%w: no tier: give --tiers FILE or --tier 'NAME: ttft_ms.p90<=2000, …', or an slo in %s", ErrBadInput, sc.Path)
		}
		tiers = []verdicts.Tier{t}
	}
	p, _, err := targetProfile(sc, cc.Config)
	if err != nil {
		return nil, nil, err
	}
	if err := verdicts.CheckTiers(tiers, measurable(sc, p)); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	axis, start, err := capacity.NewAxis(sc, cc.Min, cc.Max, cc.Resolution)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrBadInput, sc.Path, err)
	}
	if cc.MaxRuns < 0 || cc.Budget < 0 || cc.Points < 0 || cc.MinSteady < 0 {
		return nil, nil, fmt.Errorf("%w: --max-runs, --budget, --points and --min-steady must be ≥ 0", ErrBadInput)
	}
	minSteady := cc.MinSteady
	if minSteady == 0 {
		minSteady = verdicts.DefaultMinSteady
	}
	if d := sc.Duration.D(); d > 0 && d < sc.Windows.Warmup.D()+minSteady {
		return nil, nil, fmt.Errorf("%w: each point runs at most %s, too short for the %s warmup and the %s of steady state a pass needs (--min-steady): lengthen --duration",
			ErrBadInput, sc.Duration, sc.Windows.Warmup, minSteady)
	}
	f := &capacity.File{Schema: capacity.Schema, SixpinVersion: Version, Scenario: sc.Path, ScenarioName: sc.Name,
		Profile: p.Name, Simulated: p.Simulated(),
		Plan: capacity.Plan{Axis: axis, Tiers: tiers, Start: start, MaxRuns: cc.MaxRuns, BudgetS: cc.Budget.Seconds(), Points: cc.Points,
			MinSteadyS: minSteady.Seconds(), PointS: sc.Duration.D().Seconds(), Seed: sc.Seed, PassAtEnd: sc.Workload.Agentic() && !sc.Workload.Stationary(),
			SessionsStart: sc.Workload.Start},
		Deployment: capacity.Deployment{GPUs: p.GPUs, PowerWatts: p.PowerWatts, USDPerHour: p.USDPerHour}}
	if len(sc.AbortOn) > 0 {
		f.Notes = append(f.Notes, "the scenario's abort_on is not used: the tiers decide each point")
	}
	if err := planShards(cc, sc, p, f); err != nil {
		return nil, nil, err
	}
	return sc, f, nil
}

// capacityObserved is Capacity with its observers started.
func capacityObserved(ctx, hard context.Context, cc CapacityConfig) (*CapacityOutcome, error) {
	cfg := cc.Config
	sc, f, err := capacityPlan(cc)
	if err != nil {
		return nil, err
	}
	path := cfg.Output
	if path == "" {
		path = fmt.Sprintf("sixpin-capacity-%s-%s.json", sc.Name, time.Now().UTC().Format("20060102-150405"))
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	if err := report.WriteCapacityPlan(cfg.Out, f); err != nil {
		return nil, err
	}
	c := &capacityRun{cc: cc, sc: sc, f: f, path: path, began: time.Now(),
		search: capacity.NewSearch(f.Plan.Axis, f.Plan.Start, capacity.TierNames(f.Plan.Tiers))}
	defer func() { c.spills.release() }()
	if f.Sharded != nil {
		if c.lead, err = lead(ctx, cc, sc, f); err != nil {
			return nil, err
		}
		defer func() { c.lead.finish(f, c.err) }()
	}
	f.Stop = c.loop(ctx, hard)
	if f.Stop == capacity.StopDone && cc.Points > 0 {
		f.Stop = c.curve(ctx, hard)
	}
	f.ElapsedS = time.Since(c.began).Seconds()
	switch {
	case c.err != nil && len(f.Points) == 0:
		return nil, c.err
	case c.err != nil:
		// What was measured before the error is kept.
		f.Stop, f.Incomplete = capacity.StopError, true
		f.IncompleteReason = fmt.Sprintf("stopped by an error after %d points (%v): the answers are what they had measured", len(f.Points), c.err)
	case ctx.Err() != nil:
		f.Stop, f.Incomplete = capacity.StopInterrupted, true
		f.IncompleteReason = fmt.Sprintf("interrupted after %d points: the answers are what they had measured", len(f.Points))
	}
	capacity.Fill(f)
	fmt.Fprintln(cfg.Out)
	if err := report.WriteCapacityText(cfg.Out, f, false); err != nil {
		return nil, err
	}
	written, err := saveWithSpills(cfg, path, func(p string) error { return capacity.WriteFile(p, f) }, c.spills)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (every point's full results; `sixpin report %s` renders it)\n", written, written)
	out := &CapacityOutcome{File: f, Path: written}
	if c.err != nil {
		return out, c.err
	}
	if f.Incomplete {
		return out, fmt.Errorf("%w: %s", ErrInterrupted, f.IncompleteReason)
	}
	return out, nil
}

// capacityRun is a search under way.
type capacityRun struct {
	cc     CapacityConfig
	sc     *scenario.Scenario
	f      *capacity.File
	path   string
	began  time.Time
	search *capacity.Search
	spills spills
	// runs counts the runs at each value, for their seeds.
	runs map[float64]int
	err  error
	// lead leads the workers of a sharded search (nil: one process).
	lead *leading
}

// loop runs the points the search asks for until it is done or a bound
// stops it, and says why it stopped.
func (c *capacityRun) loop(ctx, hard context.Context) string {
	for {
		v, role, judged, ok := c.search.Next()
		if !ok {
			return capacity.StopDone
		}
		if why := c.bounded(ctx); why != "" {
			return why
		}
		if !c.point(ctx, hard, v, role, judged, judged) {
			return capacity.StopInterrupted
		}
	}
}

// curve runs the log-spaced points asked for, not yet measured, within
// the bounds.
func (c *capacityRun) curve(ctx, hard context.Context) string {
	var have []float64
	for _, p := range c.f.Points {
		have = append(have, p.Value)
	}
	for _, v := range capacity.CurveValues(c.f.Plan.Axis, c.cc.Points, have) {
		if why := c.bounded(ctx); why != "" {
			return why
		}
		var judged []string
		for _, t := range c.f.Plan.Tiers {
			if c.search.Informs(t.Name, v) {
				judged = append(judged, t.Name)
			}
		}
		if !c.point(ctx, hard, v, capacity.RoleCurve, judged, nil) {
			return capacity.StopInterrupted
		}
	}
	return capacity.StopDone
}

// bounded says which bound stops the search before another point ("":
// none).
func (c *capacityRun) bounded(ctx context.Context) string {
	switch {
	case ctx.Err() != nil:
		return capacity.StopInterrupted
	case c.cc.MaxRuns > 0 && len(c.f.Points) >= c.cc.MaxRuns:
		return capacity.StopMaxRuns
	case c.cc.Budget > 0 && time.Since(c.began)+c.least() > c.cc.Budget:
		// What is left could not earn a pass: the warmup and the steady
		// stretch would not fit.
		return capacity.StopBudget
	}
	return ""
}

// least is the shortest point that can earn a pass, in wall time: the
// warmup and the steady stretch.
func (c *capacityRun) least() time.Duration {
	run := c.sc.Windows.Warmup.D() + time.Duration(c.f.Plan.MinSteadyS*float64(time.Second))
	return time.Duration(float64(run) * timeScale(c.cc.Config))
}

// point runs one point at value v, judged for the tiers judged and
// stopped once the tiers in wait are decided (nil: every tier); it
// reports whether the search may go on.
func (c *capacityRun) point(ctx, hard context.Context, v float64, role string, judged, wait []string) bool {
	cfg, f := c.cc.Config, c.f
	if c.runs == nil {
		c.runs = map[float64]int{}
	}
	psc := pointScenario(c.sc, f.Plan.Axis.Pin, v, c.sc.Seed+int64(c.runs[v]))
	c.runs[v]++
	k := len(f.Points) + 1
	label := report.CapacityPointLabel(f, v)
	one := cfg
	one.Out = cfg.ErrOut // the runs' own lines go with the progress
	one.step = fmt.Sprintf("point %d: %s", k, label)
	if c.cc.Budget > 0 {
		// A point ends by the budget, at the latest (bounded has seen
		// that it can still earn a pass).
		left := time.Duration(float64(c.cc.Budget-time.Since(c.began)) / timeScale(cfg))
		if d := psc.Duration.D(); d == 0 || left < d {
			psc.Duration = scenario.Duration(left)
		}
	}
	o := judgeOptions(psc, psc.Pins.Concurrency.Streams) // the leader judges every shard's records
	o.MinSteady, o.PassAtEnd = time.Duration(f.Plan.MinSteadyS*float64(time.Second)), f.Plan.PassAtEnd
	one.judge = &judging{judge: verdicts.NewJudge(f.Plan.Tiers, o), only: wait}
	fmt.Fprintf(cfg.ErrOut, "sixpin: capacity point %d (%s): %s, seed %d, for %s\n", k, role, label, psc.Seed, forWhom(judged))
	run, sp, err := c.execute(ctx, hard, one, psc, pointID{k: k, v: v, role: role, label: label}, spillBeside(c.path, "."+strconv.Itoa(k)))
	if err != nil {
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return false
		}
		c.err = fmt.Errorf("capacity point %d (%s): %w", k, label, err)
		return false
	}
	c.spills = append(c.spills, sp)
	p := capacity.Point{Value: v, Seed: psc.Seed, Role: role, Judged: judged, Run: run, Curve: capacity.CurveOf(run)}
	p.Verdicts = one.judge.judge.Finish(run)
	p.Valid, p.Invalid = capacity.Validity(run)
	if w := run.Windows["all"]; w != nil {
		p.LoadS = w.DurationS
	}
	f.Points = append(f.Points, p)
	f.LoadS += p.LoadS
	c.search.Record(p)
	fmt.Fprintf(cfg.ErrOut, "sixpin: %s\n", report.CapacityProgress(f, k-1, time.Since(c.began)))
	return ctx.Err() == nil
}

// pointScenario is sc at value v of the search's pin, run with seed: its
// queue allowed (the queue is what a capacity search measures), its
// abort_on dropped (the tiers decide the point).
func pointScenario(sc *scenario.Scenario, pin string, v float64, seed int64) *scenario.Scenario {
	at := *sc
	at.Sweep = &scenario.Sweep{Pin: pin, Values: []float64{v}}
	psc := at.At(v)
	psc.Seed = seed
	psc.Pins.Concurrency.Queueing = scenario.QueueingAllowed
	psc.AbortOn = nil
	return psc
}

// timeScale is cfg's run time per wall time: 1 in real time.
func timeScale(cfg Config) float64 {
	if scaled(cfg) {
		return cfg.TimeScale
	}
	return 1
}

// forWhom names the tiers a point is run for.
func forWhom(judged []string) string {
	if len(judged) == 0 {
		return "the curve"
	}
	return strings.Join(judged, ", ")
}
