package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	verdicts "github.com/sixpin/sixpin/verdict"
)

// BakeoffConfig is one `sixpin bakeoff`: a scenario against each profile.
type BakeoffConfig struct {
	Config
	// Profiles are run in turn, each against the same scenario.
	Profiles []string
	// Dir receives each profile's results (NAME.json, or NAME.K.json for
	// run K of a repeat), bakeoff.json, bakeoff.md and bakeoff.html.
	// Config.Repeat, when above one, runs every profile that many times
	// in rounds (each round every profile once, with seed seed+round).
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
	bc.Config = withDefaults(bc.Config)
	obs, err := startObservers(bc.Config)
	if err != nil {
		return nil, err
	}
	bc.Config.obs = obs
	out, err := bakeoff(ctx, hard, bc)
	obs.done(ctx)
	return out, err
}

// bakeoff is Bakeoff with its observers started.
func bakeoff(ctx, hard context.Context, bc BakeoffConfig) (*Outcome, error) {
	cfg := bc.Config
	if len(bc.Profiles) < 2 {
		return nil, fmt.Errorf("%w: a bake-off needs at least two --profile", ErrBadInput)
	}
	if cfg.Repeat < 0 {
		return nil, fmt.Errorf("%w: --repeat %d: want 1 or more", ErrBadInput, cfg.Repeat)
	}
	// Every profile resolves before the first runs: a typo in the last
	// is bad input, not a vendor lost after the others ran.
	for _, prof := range bc.Profiles {
		if _, err := profiles.Resolve(prof); err != nil {
			return nil, fmt.Errorf("%w: --profile %s: %w", ErrBadInput, prof, err)
		}
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
	path := filepath.Join(dir, "bakeoff.json")
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	ms := &members{set: set, path: path}
	defer func() { ms.spills.release() }()
	repeats := max(cfg.Repeat, 1)
	total := repeats * len(bc.Profiles)
	for i := range total {
		round, prof := i/len(bc.Profiles), bc.Profiles[i%len(bc.Profiles)]
		one := cfg
		one.Profile, one.Endpoint, one.Model = prof, "", ""
		seeded, label := sc, "profile "+prof
		if repeats > 1 {
			s := *sc
			s.Seed = sc.Seed + int64(round)
			seeded, label = &s, fmt.Sprintf("profile %s, run %d (seed %d)", prof, round+1, s.Seed)
		}
		run, err := ms.run(ctx, hard, one, seeded, i, total, label)
		if err != nil {
			return nil, err
		}
		if run == nil {
			continue
		}
		name := run.Target.Profile
		file := name + ".json"
		if repeats > 1 {
			file = fmt.Sprintf("%s.%d.json", name, round+1)
		}
		if _, err := save(cfg, filepath.Join(dir, file), run); err != nil {
			return nil, err
		}
		set.Profiles = append(set.Profiles, name)
	}
	markIncomplete(set, map[bool]string{true: "runs", false: "profiles"}[repeats > 1])
	if _, err := saveSet(cfg, path, set, ms.spills); err != nil {
		return nil, err
	}
	md := filepath.Join(dir, "bakeoff.md")
	if err := report.WriteFile(md, func(w io.Writer) error { return report.WriteSetText(w, set, true) }); err != nil {
		return nil, err
	}
	page := filepath.Join(dir, "bakeoff.html")
	if err := report.WriteFile(page, func(w io.Writer) error { return report.WriteSetHTML(w, set) }); err != nil {
		return nil, err
	}
	fmt.Fprintln(cfg.Out)
	if err := report.WriteSetText(cfg.Out, set, false); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (each profile's results, bakeoff.json, bakeoff.md and bakeoff.html)\n", dir)
	return &Outcome{Set: set, Path: dir}, bakeoffOutcome(ctx, total, set)
}

// bakeoffOutcome is a bake-off's error: interrupted (some profile not
// run or cut short); ErrRunFailed when no vendor's figures stand (each
// failed, invalid or interrupted); ErrVendorLost, naming what each lost,
// when some vendor was lost (invalid, failed or throttled) and another
// stands; nil when every vendor ran whole, valid and unthrottled.
func bakeoffOutcome(ctx context.Context, planned int, set *results.Set) error {
	if ctx.Err() != nil || len(set.Runs) < planned || set.Incomplete {
		return fmt.Errorf("%w: %s", ErrInterrupted, set.IncompleteReason)
	}
	var lost []string
	standing := 0
	for _, v := range verdicts.Vendors(set) {
		stands := true
		var why []string
		for _, l := range v.Losses {
			why = append(why, l.Kind+" ("+l.Why+")")
			stands = stands && l.Kind == verdicts.LossThrottled
		}
		if stands {
			standing++
		}
		if v.Lost() {
			lost = append(lost, v.Profile+": "+strings.Join(why, ", "))
		}
	}
	switch {
	case standing == 0:
		return fmt.Errorf("%w: no vendor's figures stand: %s", ErrRunFailed, strings.Join(lost, "; "))
	case len(lost) > 0:
		return fmt.Errorf("%w: %s", ErrVendorLost, strings.Join(lost, "; "))
	}
	return nil
}
