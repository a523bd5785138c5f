package harness

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/waterfall"
)

// DefaultWaterfallMaxRuns bounds the runs of an exact waterfall (2^k
// configurations for k moved scenario pins, times the repeats): within
// it exact attribution is the default.
const DefaultWaterfallMaxRuns = waterfall.DefaultMaxRuns

// WaterfallConfig is one `sixpin waterfall`: from a start (a scenario
// file, or waterfall.Brochure) to a production scenario, one pin at a
// time. The embedded Config names the target and its flags; its
// ScenarioPath is unused, Duration and Requests bound each step's runs,
// Repeat is how many runs measure each configuration.
type WaterfallConfig struct {
	Config
	From, To string
	// Order, Metric, Orders and Exact are waterfall.Options': Orders 0
	// and Exact false choose exact attribution whenever it fits MaxRuns,
	// else the order and its reverse.
	Order  []string
	Metric string
	Orders int
	Exact  bool
	// Claim is the vendor's published figure (0: none), checked against
	// the start.
	Claim float64
	// MaxRuns bounds an exact waterfall's runs (0: DefaultWaterfallMaxRuns).
	MaxRuns int
}

// WaterfallOutcome is what Waterfall produced.
type WaterfallOutcome struct {
	File *waterfall.File
	Path string
}

// Waterfall runs the waterfall wc plans: it prints the plan, runs every
// configuration (each a full run against the same target, the way
// `sixpin run` runs one), prints the waterfall and writes it, with every
// run's results, to one file atomically. An interrupt stops it between
// runs as a run stops; the file is then marked incomplete.
func Waterfall(ctx, hard context.Context, wc WaterfallConfig) (*WaterfallOutcome, error) {
	wc.Config = withDefaults(wc.Config)
	obs, err := startObservers(wc.Config)
	if err != nil {
		return nil, err
	}
	wc.Config.obs = obs
	out, err := waterfallObserved(ctx, hard, wc)
	obs.done(ctx)
	return out, err
}

// waterfallObserved is Waterfall with its observers started.
func waterfallObserved(ctx, hard context.Context, wc WaterfallConfig) (*WaterfallOutcome, error) {
	cfg := wc.Config
	plan, err := planWaterfall(wc, cfg)
	if err != nil {
		return nil, err
	}
	path := cfg.Output
	if path == "" {
		path = fmt.Sprintf("sixpin-waterfall-%s-%s.json", plan.To.Name, time.Now().UTC().Format("20060102-150405"))
	}
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	// Every run's scenario is valid before the first request.
	scs := make([][]*scenario.Scenario, len(plan.Configs))
	for i, c := range plan.Configs {
		for r := range plan.Repeat {
			sc, err := plan.Scenario(c, r)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
			}
			scs[i] = append(scs[i], sc)
		}
	}
	from := wc.From
	f := plan.File(from, plan.To.Path)
	f.SixpinVersion = Version
	if wc.Claim > 0 {
		f.Claim = &waterfall.Claim{Value: wc.Claim}
	}
	if err := report.WriteWaterfallPlan(cfg.Out, f, plan.Runs(), stepBound(plan.To)); err != nil {
		return nil, err
	}

	// The runs' own lines go with the progress, the waterfall to Out.
	runCfg := cfg
	runCfg.Out = cfg.ErrOut
	var failed []error
	var spills spills
	defer func() { spills.release() }() // those gathered by the time it returns
	n := 0
	for i, c := range plan.Configs {
		whole := true
		for _, sc := range scs[i] {
			n++
			if ctx.Err() != nil {
				break
			}
			fmt.Fprintf(cfg.ErrOut, "sixpin: waterfall run %d of %d: %s (seed %d)\n", n, plan.Runs(), report.WaterfallConfigLabel(c), sc.Seed)
			one := runCfg
			one.step = stepLabel(n-1, plan.Runs(), report.WaterfallConfigLabel(c))
			run, sp, err := execute(ctx, hard, one, sc, "", spillBeside(path, "."+strconv.Itoa(n)), 0)
			if err != nil {
				return nil, err
			}
			spills = append(spills, sp)
			f.Configs[i].Runs = append(f.Configs[i].Runs, len(f.Runs))
			f.Configs[i].Seeds = append(f.Configs[i].Seeds, sc.Seed)
			f.Configs[i].Meas = append(f.Configs[i].Meas, waterfall.MeasureRun(run))
			f.Runs = append(f.Runs, run)
			if err := verdict(run); err != nil && !errors.Is(err, ErrInterrupted) {
				failed = append(failed, fmt.Errorf("%s, seed %d: %w", report.WaterfallConfigLabel(c), sc.Seed, err))
			}
			whole = whole && !run.Incomplete
		}
		if !whole || len(f.Configs[i].Meas) < plan.Repeat {
			// A configuration measured only in part (an interrupt) is
			// not measured; its runs stay in the file.
			f.Configs[i].Runs, f.Configs[i].Seeds, f.Configs[i].Meas = nil, nil, nil
		}
	}
	if err := waterfall.Fill(f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunFailed, err)
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteWaterfallText(cfg.Out, f, false); err != nil {
		return nil, err
	}
	written, err := saveWithSpills(cfg, path, func(p string) error { return waterfall.WriteFile(p, f) }, spills)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (every step's full results; `sixpin report %s --format html` draws the chart)\n", written, written)
	out := &WaterfallOutcome{File: f, Path: written}
	switch {
	case ctx.Err() != nil || f.Incomplete:
		return out, fmt.Errorf("%w: %s", ErrInterrupted, f.IncompleteReason)
	case len(failed) > 0:
		return out, fmt.Errorf("%w: %w", ErrRunFailed, errors.Join(failed...))
	}
	return out, nil
}

// planWaterfall loads the production scenario and the start (each with
// cfg's overrides) and plans the waterfall between them.
func planWaterfall(wc WaterfallConfig, cfg Config) (*waterfall.Plan, error) {
	if wc.To == "" || wc.From == "" {
		return nil, fmt.Errorf("%w: a waterfall needs --from (a scenario, or brochure) and --to (the production scenario)", ErrBadInput)
	}
	one := cfg
	one.ScenarioPath = wc.To
	to, err := loadScenario(one)
	if err != nil {
		return nil, err
	}
	var from *scenario.Scenario
	if wc.From == waterfall.Brochure {
		from = waterfall.NewBrochure(to)
	} else {
		one.ScenarioPath = wc.From
		if from, err = loadScenario(one); err != nil {
			return nil, err
		}
	}
	plan, err := waterfall.NewPlan(from, to, waterfall.Options{
		Order: wc.Order, Metric: wc.Metric, Orders: wc.Orders, Exact: wc.Exact, Repeat: cfg.Repeat, MaxRuns: wc.MaxRuns,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return plan, nil
}

// stepBound is what bounds each run ("30s", "200 requests", "30s or 200
// requests"; "the trace" for a replay).
func stepBound(sc *scenario.Scenario) string {
	d, n := sc.Duration, sc.Requests
	switch {
	case d > 0 && n > 0:
		return fmt.Sprintf("%s or %d requests", d, n)
	case d > 0:
		return d.String()
	case n > 0:
		return fmt.Sprintf("%d requests", n)
	}
	return "the trace"
}
