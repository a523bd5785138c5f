package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/verdict"
)

// GateOptions are `sixpin gate`'s dependencies and flags.
type GateOptions struct {
	F *Factory
	// Baseline holds --baseline's values as given: files or globs.
	Baseline []string
	Current  string
	Rules    string
	JUnit    string
	Markdown string
	Stats    StatsFlags
}

// NewCmdGate builds `sixpin gate`. runF replaces the action in tests.
func NewCmdGate(f *Factory, runF func(*GateOptions) error) *cobra.Command {
	opts := &GateOptions{F: f}
	cmd := &cobra.Command{
		Use:   "gate --baseline BASE.json... CURRENT.json | --baseline BASE-set.json... CURRENT-set.json | --baseline BASE-capacity.json CURRENT-capacity.json",
		Short: "Fail on a statistically significant regression against a baseline (for CI)",
		Long: `Check a run against a baseline by rules. A rule names a window, a metric and
a tolerance; it fails only when the figure is beyond the tolerance AND the
difference is statistically significant.

The baseline may be several runs: --baseline repeated, a quoted glob
(--baseline 'base-*.json'), or a --repeat set file. Two unchanged runs
differ by more than either run's own resamples say, so with several runs
(on either side) every rule is judged against the spread between them:
Student's two-sample t-test with pooled variance on each run's figure —
for one current run, it must lie outside the baseline runs' prediction
interval (mean ± t·s·√(1+1/n)) and beyond the tolerance. A current
--repeat set is a sample of runs too.

With one run a side, intervals come from within the runs: percentiles by
bootstrap of the runs' HDR histograms (exact multinomial resampling of the
counts); aggregates by a block bootstrap of the per-second series; rates by
Jeffreys intervals. An extreme percentile of too few values (p99 of fewer
than 368) has no interval and cannot fail.

Rules file (--rules), strict YAML:

  steady.ttft_ms.p99: {max_increase: 50%}
  steady.aggregate_output_tok_s: {max_decrease: 5%}
  steady.tpot_ms.p50: {max_increase: 10%, max: 60}
  errors.rate: {max: 1%}

Without one, the defaults (derived from the noise between unchanged runs,
see docs/reports.md): steady TTFT p99 may rise by 55%, TPOT p50 by 15%, E2E p99 by
20%; the steady aggregate and effective tok/s p50 may fall by 5%; the error
rate stays at most 1%. The current run must always be valid and complete.

A rule is NOT EVALUATED when a run lacks its figure, or the histograms or
per-second series its interval needs: the gate never passes it.

Sweeps and bake-offs are gated point by point: every rule at every point
of the baseline set against the same point of the current one (several
baseline sets give several runs at each point). A point the current set
lacks fails; one the baseline lacks is not evaluated; sets of another kind
or sweeping another pin are incomparable.

Capacity files (sixpin capacity) are gated tier by tier against one
baseline search: a tier fails when its N* drops below the baseline's
beyond both answers' intervals ("interactive: 12 → 10 sessions"); files
that vary another pin, judge a tier by other conditions or hold other pins
are incomparable.

Exit 0 pass, 1 regression, 2 incomparable runs (pins differ, as in compare;
or an invalid baseline), a rule not evaluated (and none failed), or bad
input.`,
		Example: `  sixpin gate --baseline main.json pr.json
  sixpin gate --baseline 'main-*.json' pr.json --rules gates.yaml --junit gate.xml --markdown gate.md
  sixpin gate --baseline main-repeat.json pr.json`,
		Args: argsBadInput(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Current = args[0]
			if len(opts.Baseline) == 0 {
				return badInput(errors.New("--baseline BASE.json is required"))
			}
			if runF != nil {
				return runF(opts)
			}
			return gateRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Baseline, "baseline", nil, "results or set file to compare against (required); repeat it, or quote a glob, for several runs")
	fl.StringVar(&opts.Rules, "rules", "", "rules file (YAML); default rules without one")
	fl.StringVar(&opts.JUnit, "junit", "", "also write JUnit XML to FILE")
	fl.StringVar(&opts.Markdown, "markdown", "", "also write Markdown to FILE (replaced atomically)")
	opts.Stats.register(cmd)
	return cmd
}

func gateRun(opts *GateOptions) error {
	st, err := opts.Stats.stats()
	if err != nil {
		return err
	}
	paths, err := baselinePaths(opts.Baseline, opts.Current)
	if err != nil {
		return badInput(err)
	}
	files, err := report.LoadFiles(append(paths, opts.Current)...)
	if err != nil {
		return badInput(err)
	}
	if cur := files[len(paths)]; cur.Capacity != nil {
		return gateCapacity(opts, files[:len(paths)], cur, st)
	}
	in, err := report.SortGateFiles(strings.Join(opts.Baseline, ", "), files[:len(paths)], files[len(paths)])
	if err != nil {
		return badInput(err)
	}
	rules := verdict.DefaultRules()
	if opts.Rules != "" {
		if rules, err = verdict.LoadRules(opts.Rules); err != nil {
			return badInput(err)
		}
	}
	if in.CurrentSet != nil {
		return gateSets(opts, in.BaselineSets, *in.CurrentSet, rules, st)
	}
	g, err := verdict.GateRuns(in.Baseline, in.Current, rules, st)
	if err != nil {
		return badInput(err)
	}
	if err := report.WriteGateText(opts.F.IO.Out, g); err != nil {
		return err
	}
	if err := opts.writeFiles(func(w io.Writer) error { return report.WriteGateJUnit(w, g) },
		func(w io.Writer) error { return report.WriteGateMarkdown(w, g) }); err != nil {
		return err
	}
	switch {
	case !g.Comparable():
		return badInput(fmt.Errorf("%w: %s", verdict.ErrIncomparable, strings.Join(g.Incomparable, "; ")))
	case len(g.Failed()) > 0:
		return fmt.Errorf("gate: %w: %d of %d rules failed", verdict.ErrRegression, len(g.Failed()), len(g.Checks))
	case !g.Passed():
		return badInput(fmt.Errorf("gate: %d of %d rules could not be evaluated: the files lack what they need", len(g.NotEvaluated()), len(g.Checks)))
	}
	return nil
}

// baselinePaths expands --baseline's values: a glob to the files it
// matches (in order), a plain path to itself. A glob that matches
// nothing, a file given twice, or the current file among several baseline
// files is an error: each would quietly change what the baseline is.
func baselinePaths(values []string, current string) ([]string, error) {
	var paths []string
	seen := map[string]bool{}
	for _, v := range values {
		ps := []string{v}
		if strings.ContainsAny(v, "*?[") {
			m, err := filepath.Glob(v)
			if err != nil {
				return nil, fmt.Errorf("--baseline %s: %w", v, err)
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("--baseline %s: no file matches", v)
			}
			ps = m
		}
		for _, p := range ps {
			key := filepath.Clean(p)
			if seen[key] {
				return nil, fmt.Errorf("--baseline: %s given twice", p)
			}
			seen[key] = true
			paths = append(paths, p)
		}
	}
	if len(paths) > 1 && seen[filepath.Clean(current)] {
		return nil, fmt.Errorf("--baseline: %s is both a baseline and the current run", current)
	}
	return paths, nil
}

// gateSets gates a set against baseline sets point by point.
func gateSets(opts *GateOptions, base []verdict.SetInput, cur verdict.SetInput, rules []verdict.Rule, st stats.Settings) error {
	g, err := verdict.GateSets(strings.Join(opts.Baseline, ", "), base, cur, rules, st)
	if err != nil {
		return badInput(err)
	}
	if err := report.WriteSetGateText(opts.F.IO.Out, g); err != nil {
		return err
	}
	if err := opts.writeFiles(func(w io.Writer) error { return report.WriteSetGateJUnit(w, g) },
		func(w io.Writer) error { return report.WriteSetGateMarkdown(w, g) }); err != nil {
		return err
	}
	switch failed := g.Failed(); {
	case !g.Comparable():
		return badInput(fmt.Errorf("%w: sets are not comparable point by point: %s", verdict.ErrIncomparable, strings.Join(g.IncomparableReasons(), "; ")))
	case len(failed) > 0:
		return fmt.Errorf("gate: %w: %d of %d points failed", verdict.ErrRegression, len(failed), len(g.Points))
	case !g.Passed():
		return badInput(fmt.Errorf("gate: not every point could be evaluated: the files lack what they need"))
	}
	return nil
}

// writeFiles writes the gate's JUnit and Markdown files, each atomically,
// where --junit and --markdown ask for them.
func (opts *GateOptions) writeFiles(junit, md func(io.Writer) error) error {
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{{opts.JUnit, junit}, {opts.Markdown, md}} {
		if out.path == "" {
			continue
		}
		if err := report.WriteFile(out.path, out.write); err != nil {
			return err
		}
	}
	return nil
}

// gateCapacity gates a capacity search against one baseline search: a
// tier fails when its N* drops beyond both answers' intervals.
func gateCapacity(opts *GateOptions, base []report.File, cur report.File, st stats.Settings) error {
	if len(base) != 1 || base[0].Capacity == nil {
		return badInput(fmt.Errorf("%s is a capacity file: give one capacity file as --baseline", cur.Name))
	}
	switch {
	case opts.Rules != "":
		return badInput(errors.New("--rules judges runs; a capacity gate compares N* per tier"))
	case opts.JUnit != "":
		return badInput(errors.New("--junit: a capacity gate writes text and Markdown (--markdown)"))
	}
	b := base[0]
	g := capacity.Gate(b.Capacity, cur.Capacity, st)
	write := func(md bool) func(io.Writer) error {
		return func(w io.Writer) error {
			return report.WriteCapacityGate(w, b.Name, cur.Name, b.Capacity, cur.Capacity, g, md)
		}
	}
	if err := write(false)(opts.F.IO.Out); err != nil {
		return err
	}
	if err := opts.writeFiles(nil, write(true)); err != nil {
		return err
	}
	if len(g.Incomparable) > 0 {
		return badInput(fmt.Errorf("%w: %s", verdict.ErrIncomparable, strings.Join(g.Incomparable, "; ")))
	}
	if !g.Passed() {
		return fmt.Errorf("gate: %w: N* dropped or went unmeasured for a tier", verdict.ErrRegression)
	}
	return nil
}
