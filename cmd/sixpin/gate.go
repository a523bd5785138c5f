package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
)

// GateOptions are `sixpin gate`'s dependencies and flags.
type GateOptions struct {
	F        *Factory
	Baseline string
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
		Use:   "gate --baseline BASE.json CURRENT.json | --baseline BASE-set.json CURRENT-set.json",
		Short: "Fail on a statistically significant regression against a baseline (for CI)",
		Long: `Check a run against a baseline by rules. A rule names a window, a metric and
a tolerance; it fails only when the figure is beyond the tolerance AND the
difference is statistically significant, so noise never fails a build.

Intervals: percentiles by bootstrap of the runs' HDR histograms (exact
multinomial resampling of the counts); aggregates by a block bootstrap of the
per-second series; rates by Jeffreys intervals. An extreme percentile of too
few values (p99 of fewer than 368) has no interval and cannot fail.

Rules file (--rules), strict YAML:

  steady.ttft_ms.p99: {max_increase: 10%}
  steady.aggregate_output_tok_s: {max_decrease: 5%}
  steady.tpot_ms.p50: {max_increase: 10%, max: 60}
  errors.rate: {max: 1%}

Without one: steady TTFT p99, TPOT p50 and E2E p99 may rise by 10%, the
steady aggregate and effective tok/s p50 may fall by 5%, the error rate stays
at most 1%. The current run must always be valid and complete.

A rule is NOT EVALUATED when a run lacks its figure, or the histograms or
per-second series its interval needs: the gate never passes it.

Set files (sweeps, repeats, bake-offs) are gated point by point: every rule
at every point of the baseline set against the same point of the current
one. A point the current set lacks fails; one the baseline lacks is not
evaluated; sets of another kind or sweeping another pin are incomparable.

Exit 0 pass, 1 regression, 2 incomparable runs (pins differ, as in compare;
or an invalid baseline), a rule not evaluated (and none failed), or bad
input.`,
		Example: `  sixpin gate --baseline main.json pr.json
  sixpin gate --baseline main.json pr.json --rules gates.yaml --junit gate.xml --markdown gate.md`,
		Args: argsBadInput(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Current = args[0]
			if opts.Baseline == "" {
				return badInput(errors.New("--baseline BASE.json is required"))
			}
			if runF != nil {
				return runF(opts)
			}
			return gateRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Baseline, "baseline", "", "results file to compare against (required)")
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
	files, err := report.LoadFiles(opts.Baseline, opts.Current)
	if err != nil {
		return badInput(err)
	}
	ins, sets, err := runsOrSets(files, "gate")
	if err != nil {
		return err
	}
	rules := report.DefaultRules()
	if opts.Rules != "" {
		if rules, err = report.LoadRules(opts.Rules); err != nil {
			return badInput(err)
		}
	}
	if sets != nil {
		return gateSets(opts, sets[0], sets[1], rules, st)
	}
	g, err := report.Gate(ins[0], ins[1], rules, st)
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
		return badInput(fmt.Errorf("%w: %s", report.ErrIncomparable, strings.Join(g.Incomparable, "; ")))
	case len(g.Failed()) > 0:
		return fmt.Errorf("gate: %w: %d of %d rules failed", harness.ErrRegression, len(g.Failed()), len(g.Checks))
	case !g.Passed():
		return badInput(fmt.Errorf("gate: %d of %d rules could not be evaluated: the files lack what they need", len(g.NotEvaluated()), len(g.Checks)))
	}
	return nil
}

// gateSets gates a set against a baseline set point by point.
func gateSets(opts *GateOptions, base, cur report.SetInput, rules []report.Rule, st stats.Settings) error {
	g, err := report.GateSets(base, cur, rules, st)
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
		return badInput(fmt.Errorf("%w: sets are not comparable point by point: %s", report.ErrIncomparable, strings.Join(g.IncomparableReasons(), "; ")))
	case len(failed) > 0:
		return fmt.Errorf("gate: %w: %d of %d points failed", harness.ErrRegression, len(failed), len(g.Points))
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
