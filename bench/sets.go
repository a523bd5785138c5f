package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// sweep runs one point per value of the scenario's swept pin, the other
// five held, and writes them as one set file with an HTML page of its
// plots beside it.
func sweep(ctx, hard context.Context, cfg Config, sc *scenario.Scenario) (*Outcome, error) {
	set := &results.Set{Schema: results.SetSchema, Kind: results.SetSweep, Scenario: sc.Name, Pin: sc.Sweep.Pin}
	var failed []error
	for _, v := range sc.Sweep.Values {
		if ctx.Err() != nil {
			break
		}
		point := sc.At(v)
		run, err := execute(ctx, hard, cfg, point)
		if err != nil {
			return nil, err
		}
		set.Values = append(set.Values, v)
		set.Runs = append(set.Runs, run)
		if err := verdict(point, run); err != nil {
			failed = append(failed, fmt.Errorf("%s = %s: %w", sc.Sweep.Pin, numfmt.Plain(v), err))
		}
	}
	path := setPath(cfg, sc.Name, "sweep")
	if err := results.WriteSetFile(path, set); err != nil {
		return nil, err
	}
	page := strings.TrimSuffix(path, filepath.Ext(path)) + ".html"
	if err := report.WriteFile(page, func(w io.Writer) error { return report.WriteSweepHTML(w, set) }); err != nil {
		return nil, err
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteSweep(cfg.Out, set, false); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (every point's full results) and %s (table and plots)\n", path, page)
	return &Outcome{Set: set, Path: path}, setVerdict(ctx, len(set.Runs), len(sc.Sweep.Values), failed)
}

// repeat runs the scenario cfg.Repeat times with seeds seed, seed+1, …
// and reports means with confidence intervals across the runs.
func repeat(ctx, hard context.Context, cfg Config, sc *scenario.Scenario) (*Outcome, error) {
	set := &results.Set{Schema: results.SetSchema, Kind: results.SetRepeat, Scenario: sc.Name}
	var failed []error
	for i := range cfg.Repeat {
		if ctx.Err() != nil {
			break
		}
		one := *sc
		one.Seed = sc.Seed + int64(i)
		run, err := execute(ctx, hard, cfg, &one)
		if err != nil {
			return nil, err
		}
		set.Runs = append(set.Runs, run)
		if err := verdict(&one, run); err != nil {
			failed = append(failed, fmt.Errorf("run %d (seed %d): %w", i+1, one.Seed, err))
		}
	}
	path := setPath(cfg, sc.Name, "repeat")
	if err := results.WriteSetFile(path, set); err != nil {
		return nil, err
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteRepeat(cfg.Out, set, false); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s\n", path)
	return &Outcome{Set: set, Path: path}, setVerdict(ctx, len(set.Runs), cfg.Repeat, failed)
}

// setVerdict is a set's error: interrupted, or the failures of its runs.
func setVerdict(ctx context.Context, done, planned int, failed []error) error {
	switch {
	case ctx.Err() != nil || done < planned:
		return fmt.Errorf("%w after %d of %d runs", ErrInterrupted, done, planned)
	case len(failed) > 0:
		return fmt.Errorf("%w: %w", ErrRunFailed, errors.Join(failed...))
	}
	return nil
}

func setPath(cfg Config, name, kind string) string {
	if cfg.Output != "" {
		return cfg.Output
	}
	return fmt.Sprintf("sixpin-%s-%s-%s.json", name, kind, time.Now().UTC().Format("20060102-150405"))
}

// BakeoffConfig is one `sixpin bakeoff`: a scenario against each profile.
type BakeoffConfig struct {
	Config
	// Profiles are run in turn, each against the same scenario.
	Profiles []string
	// Dir receives each profile's results, bakeoff.json and bakeoff.md.
	Dir string
	// Gates are the user's intelligence verdicts by profile ("pass" or
	// "fail"): a gate, not a multiplier.
	Gates map[string]string
}

// Bakeoff runs one scenario against each profile in turn and writes one
// report: the shared pins, each vendor's figures, and the usable view
// (the intelligence gate, then throughput, context lifetime, cost and
// reliability, each its own column).
func Bakeoff(ctx, hard context.Context, bc BakeoffConfig) (*Outcome, error) {
	cfg := withDefaults(bc.Config)
	if len(bc.Profiles) < 2 {
		return nil, fmt.Errorf("%w: a bake-off needs at least two --profile", ErrBadInput)
	}
	for name, g := range bc.Gates {
		if g != "pass" && g != "fail" {
			return nil, fmt.Errorf("%w: --intelligence %s=%s: want pass or fail", ErrBadInput, name, g)
		}
	}
	sc, err := loadScenario(cfg)
	if err != nil {
		return nil, err
	}
	if sc.Sweep != nil {
		return nil, fmt.Errorf("%w: a bake-off runs one scenario, not a sweep", ErrBadInput)
	}
	dir := bc.Dir
	if dir == "" {
		dir = fmt.Sprintf("sixpin-bakeoff-%s-%s", sc.Name, time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bake-off: %w", err)
	}
	set := &results.Set{Schema: results.SetSchema, Kind: results.SetBakeoff, Scenario: sc.Name, Gates: bc.Gates}
	var failed []error
	for _, prof := range bc.Profiles {
		if ctx.Err() != nil {
			break
		}
		one := cfg
		one.Profile, one.Endpoint, one.Model = prof, "", ""
		run, err := execute(ctx, hard, one, sc)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", prof, err)
		}
		name := run.Target.Profile
		if err := results.WriteFile(filepath.Join(dir, name+".json"), run); err != nil {
			return nil, err
		}
		set.Profiles = append(set.Profiles, name)
		set.Runs = append(set.Runs, run)
		if err := verdict(sc, run); err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
		}
	}
	path := filepath.Join(dir, "bakeoff.json")
	if err := results.WriteSetFile(path, set); err != nil {
		return nil, err
	}
	md := filepath.Join(dir, "bakeoff.md")
	if err := report.WriteFile(md, func(w io.Writer) error { return report.WriteBakeoff(w, set, true) }); err != nil {
		return nil, err
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteBakeoff(cfg.Out, set, false); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (each profile's results, bakeoff.json and bakeoff.md)\n", dir)
	return &Outcome{Set: set, Path: dir}, setVerdict(ctx, len(set.Runs), len(bc.Profiles), failed)
}
