package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// sweep runs one point per value of the scenario's swept pin, the other
// five held, and writes them as one set file with an HTML page of its
// plots beside it. An interrupted sweep's set is marked incomplete and
// names its missing and partial points.
func sweep(ctx, hard context.Context, cfg Config, sc *scenario.Scenario) (*Outcome, error) {
	path := setPath(cfg, sc.Name, "sweep")
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	set := &results.Set{Schema: results.SetSchema, Kind: results.SetSweep, Scenario: sc.Name, Pin: sc.Sweep.Pin}
	ms := &members{set: set, path: path}
	defer func() { ms.spills.release() }()
	for i, v := range sc.Sweep.Values {
		label := fmt.Sprintf("%s = %s", sc.Sweep.Pin, numfmt.Plain(v))
		run, err := ms.run(ctx, hard, cfg, sc.At(v), i, len(sc.Sweep.Values), label)
		if err != nil {
			return nil, err
		}
		if run != nil {
			set.Values = append(set.Values, v)
		}
	}
	written, err := ms.save(cfg, "points")
	if err != nil {
		return nil, err
	}
	page := strings.TrimSuffix(written, filepath.Ext(written)) + ".html"
	if err := report.WriteFile(page, func(w io.Writer) error { return report.WriteSetHTML(w, set) }); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s (every point's full results) and %s (table and plots)\n", written, page)
	return &Outcome{Set: set, Path: written}, setVerdict(ctx, len(set.Runs), len(sc.Sweep.Values), set, ms.failed)
}

// repeat runs the scenario cfg.Repeat times with seeds seed, seed+1, …
// and reports means with confidence intervals across the runs.
func repeat(ctx, hard context.Context, cfg Config, sc *scenario.Scenario) (*Outcome, error) {
	path := setPath(cfg, sc.Name, "repeat")
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	set := &results.Set{Schema: results.SetSchema, Kind: results.SetRepeat, Scenario: sc.Name}
	ms := &members{set: set, path: path}
	defer func() { ms.spills.release() }()
	for i := range cfg.Repeat {
		one := *sc
		one.Seed = sc.Seed + int64(i)
		if _, err := ms.run(ctx, hard, cfg, &one, i, cfg.Repeat, fmt.Sprintf("run %d (seed %d)", i+1, one.Seed)); err != nil {
			return nil, err
		}
	}
	written, err := ms.save(cfg, "runs")
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "\nResults: %s\n", written)
	return &Outcome{Set: set, Path: written}, setVerdict(ctx, len(set.Runs), cfg.Repeat, set, ms.failed)
}

// members runs a set's members one after the other, each a full run
// whose spill is kept until the set is saved, and records them in set:
// the run, whether it is partial, missing once the set was interrupted,
// and the verdicts that failed.
type members struct {
	set    *results.Set
	path   string // the set file: the members' spills go beside it
	spills spills
	failed []error
}

// run runs member i of n, labelled label: sc with cfg. It returns nil
// (and no error) for a member not run because the set was interrupted.
func (m *members) run(ctx, hard context.Context, cfg Config, sc *scenario.Scenario, i, n int, label string) (*results.Run, error) {
	if ctx.Err() != nil {
		m.set.Missing = append(m.set.Missing, label)
		return nil, nil
	}
	cfg.step = stepLabel(i, n, label)
	if cfg.Records != "" {
		cfg.Records = numbered(cfg.Records, i+1)
	}
	run, sp, err := execute(ctx, hard, cfg, sc, "", spillBeside(m.path, "."+strconv.Itoa(i+1)), 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	m.spills = append(m.spills, sp)
	m.set.Runs = append(m.set.Runs, run)
	if run.Incomplete {
		m.set.Partial = append(m.set.Partial, label)
	}
	if err := verdict(run); err != nil {
		m.failed = append(m.failed, fmt.Errorf("%s: %w", label, err))
	}
	return run, nil
}

// save marks the set incomplete where its members (what they are) are
// missing or partial, prints it and writes it beside its members'
// spills; it returns where it was written.
func (m *members) save(cfg Config, what string) (string, error) {
	markIncomplete(m.set, what)
	fmt.Fprintln(cfg.Out)
	if err := report.WriteSetText(cfg.Out, m.set, false); err != nil {
		return "", err
	}
	return saveSet(cfg, m.path, m.set, m.spills)
}

// markIncomplete marks set incomplete when some of its members are
// missing or partial, and says which.
func markIncomplete(set *results.Set, what string) {
	if len(set.Missing) == 0 && len(set.Partial) == 0 {
		return
	}
	set.Incomplete = true
	done := len(set.Runs) - len(set.Partial)
	reason := fmt.Sprintf("interrupted: %d of %d %s measured whole", done, len(set.Runs)+len(set.Missing), what)
	if len(set.Partial) > 0 {
		reason += "; partial: " + strings.Join(set.Partial, ", ")
	}
	if len(set.Missing) > 0 {
		reason += "; not run: " + strings.Join(set.Missing, ", ")
	}
	set.IncompleteReason = reason
}

// spills are a set's record spills, one per run.
type spills []*spillFile

func (ss spills) release() {
	for _, s := range ss {
		s.release()
	}
}

// saveSet writes set (falling back as save does) and then removes its
// runs' spills, or keeps them when it could not be written.
func saveSet(cfg Config, path string, set *results.Set, ss spills) (string, error) {
	return saveWithSpills(cfg, path, func(p string) error { return results.WriteSetFile(p, set) }, ss)
}

// saveWithSpills writes a file of several runs with write (falling back
// as save does) and then removes their spills, or keeps them when it could
// not be written.
func saveWithSpills(cfg Config, path string, write func(path string) error, ss spills) (string, error) {
	written, err := saveWith(cfg, path, write)
	if err != nil {
		for _, s := range ss {
			s.keep(cfg.Out)
		}
		return "", err
	}
	for _, s := range ss {
		s.remove()
	}
	return written, nil
}

// setVerdict is a set's error: interrupted, or the failures of its runs.
func setVerdict(ctx context.Context, done, planned int, set *results.Set, failed []error) error {
	switch {
	case ctx.Err() != nil || done < planned || set.Incomplete:
		return fmt.Errorf("%w: %s", ErrInterrupted, set.IncompleteReason)
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
