package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	verdicts "github.com/sixpin/sixpin/verdict"
)

// DefaultContentCheckSlice bounds each content class's slice of `run
// --content-check` (the scenario's own duration, when shorter).
const DefaultContentCheckSlice = 30 * time.Second

// checkContentCheck refuses, before any load, a content check the
// scenario cannot take: content classes are built for independent
// requests only (an agentic session's and a trace's turns are prose), a
// sweep or repeats are sets of runs, and a shard is part of one.
func checkContentCheck(cfg Config, sc *scenario.Scenario) error {
	if !cfg.ContentCheck {
		return nil
	}
	switch {
	case !sc.Workload.Independent():
		return fmt.Errorf("%w: --content-check needs workload kind requests: an agentic session's or a trace's turns are prose, not a content class (check the content on a requests scenario with the same pins)", ErrBadInput)
	case sc.Sweep != nil:
		return fmt.Errorf("%w: --content-check with a sweep: check one point's content as its own scenario", ErrBadInput)
	case cfg.Repeat > 1:
		return fmt.Errorf("%w: --content-check with --repeat: check the content in a run of its own", ErrBadInput)
	case cfg.Distributed.set():
		return fmt.Errorf("%w: --content-check in a distributed run (--shard, --run-id, --start-at): check the content from one machine", ErrBadInput)
	case cfg.ContentCheckSlice < 0:
		return fmt.Errorf("%w: --content-check-slice %s: must be > 0", ErrBadInput, cfg.ContentCheckSlice)
	case cfg.ContentSpreadPct < 0:
		return fmt.Errorf("%w: --content-spread %g: must be ≥ 0 (a percentage)", ErrBadInput, cfg.ContentSpreadPct)
	}
	for _, class := range contentClassesOf(sc) {
		if _, err := contentSlice(sc, class, sliceBound(cfg)); err != nil {
			return fmt.Errorf("%w: --content-check: %w", ErrBadInput, err)
		}
	}
	return nil
}

// sliceBound is each slice's duration bound.
func sliceBound(cfg Config) time.Duration {
	if cfg.ContentCheckSlice > 0 {
		return cfg.ContentCheckSlice
	}
	return DefaultContentCheckSlice
}

// contentSlice is sc with every prompt of class: the top-level content
// set, the mix classes' own contents dropped (a class that pinned only
// its content then pins nothing of the prompt), load bounded by d (or
// sc's duration when shorter) and by sc's request count, the windows
// fitted into d, the seed sc's (each class gets the same requests'
// lengths), validated.
func contentSlice(sc *scenario.Scenario, class string, d time.Duration) (*scenario.Scenario, error) {
	s := *sc
	s.Name = sc.Name + "+content-" + class
	s.Pins.Prompt.Content = scenario.Content{class: 1}
	if class != scenario.ContentFromLogs {
		s.Pins.Prompt.Logs = "" // sixpin's own classes read no logs
	}
	s.Pins.Mix.Classes = slices.Clone(sc.Pins.Mix.Classes)
	for i, c := range s.Pins.Mix.Classes {
		if c.Prompt == nil || len(c.Prompt.Content) == 0 {
			continue
		}
		p := *c.Prompt
		p.Content = nil
		if reflect.ValueOf(p).IsZero() {
			s.Pins.Mix.Classes[i].Prompt = nil
		} else {
			s.Pins.Mix.Classes[i].Prompt = &p
		}
	}
	if s.Duration == 0 || s.Duration.D() > d {
		s.Duration = scenario.Duration(d)
	}
	w := &s.Windows
	w.Warmup = min(w.Warmup, s.Duration/6)
	w.Burst = min(w.Burst, s.Duration/3)
	if !w.Steady.Auto && (w.Steady.Start >= s.Duration.D() || w.Steady.End > s.Duration.D()) {
		w.Steady = scenario.Steady{Auto: true}
	}
	sum := sha256.Sum256([]byte("sixpin content check\x00" + sc.SHA256 + "\x00" + class))
	s.SHA256 = hex.EncodeToString(sum[:])
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("the %s slice: %w", class, err)
	}
	return &s, nil
}

// contentClassesOf are the classes the content check slices sc into:
// sixpin's own, and the user's logs when sc builds prompts from them.
func contentClassesOf(sc *scenario.Scenario) []string {
	classes := slices.Clone(scenario.ContentClasses)
	if sc.Pins.Prompt.Logs != "" {
		classes = append(classes, scenario.ContentFromLogs)
	}
	return classes
}

// contentCheck runs, after the run, one slice per content class against
// the same target, one after another, and judges how far apart their
// decode speeds are. An interrupt stops it between slices (the slice
// under way ends as a run ends), leaving the rest missing.
func contentCheck(ctx, hard context.Context, cfg Config, sc *scenario.Scenario, path string) (*results.ContentCheck, error) {
	d := sliceBound(cfg)
	slice := d
	if sc.Duration > 0 {
		slice = min(d, sc.Duration.D())
	}
	cc := &results.ContentCheck{
		SliceS: slice.Seconds(), SliceRequests: sc.Requests,
		ThresholdPct: cfg.ContentSpreadPct, Metric: results.ContentCheckMetric, Base: scenario.ContentProse,
	}
	if cfg.ContentSpreadPct == 0 {
		cc.ThresholdPct = results.DefaultContentSpreadPct
	}
	if c := sc.Pins.Prompt.Content; len(c) == 1 && len(sc.Pins.Mix.Classes) == 0 {
		for k := range c {
			cc.Base = k
		}
	}
	classes := contentClassesOf(sc)
	// Each slice's decode median with its sampling model, for the
	// spread's interval.
	medians := map[string]stats.Estimate{}
	one := cfg
	one.Out = cfg.ErrOut
	one.Records = ""
	for i, class := range classes {
		if ctx.Err() != nil {
			cc.Missing = append(cc.Missing, class)
			continue
		}
		s, err := contentSlice(sc, class, d)
		if err != nil {
			return nil, fmt.Errorf("%w: --content-check: %w", ErrBadInput, err)
		}
		fmt.Fprintf(cfg.ErrOut, "sixpin: content check %d of %d: prompts of class %s, %s\n", i+1, len(classes), class, stepBound(s))
		one.step = stepLabel(i, len(classes), "content "+class)
		run, sp, err := execute(ctx, hard, one, s, "", spillBeside(path, ".content-"+class), 0)
		if err != nil {
			fmt.Fprintf(cfg.ErrOut, "sixpin: content check: the %s slice failed: %v\n", class, err)
			cc.Missing = append(cc.Missing, class)
			continue
		}
		sp.remove()
		if run.Incomplete {
			cc.Missing = append(cc.Missing, class)
			continue
		}
		cc.Classes = append(cc.Classes, results.NewContentSlice(class, run))
		if ref, err := verdicts.ParseFigure(run.Headline + "." + results.ContentCheckMetric); err == nil {
			if e, ok, _ := ref.Estimate(run); ok {
				medians[class] = e
			}
		}
	}
	cc.Incomplete = len(cc.Missing) > 0
	cc.Judge(func(fastest, slowest string) (lo, hi float64, ok bool) {
		f, okf := medians[fastest]
		s, oks := medians[slowest]
		if !okf || !oks {
			return 0, 0, false
		}
		i := stats.Default().RatioInterval("content "+fastest+"/"+slowest, s, f)
		return i.Lo, i.Hi, i.Known
	})
	return cc, nil
}
