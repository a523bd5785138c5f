package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/verdict"
)

// StatsFlags are the confidence-interval settings compare and gate share.
type StatsFlags struct {
	Confidence float64
	Resamples  int
	Seed       uint64
}

func (s *StatsFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Float64Var(&s.Confidence, "confidence", stats.DefaultConfidence, "two-sided confidence level of the intervals (a fraction)")
	fl.IntVar(&s.Resamples, "resamples", stats.DefaultResamples, "bootstrap resamples per interval")
	fl.Uint64Var(&s.Seed, "stats-seed", stats.DefaultSeed, "seed of the resampling (the same seed gives the same intervals)")
}

func (s StatsFlags) stats() (stats.Settings, error) {
	st := stats.Settings{Confidence: s.Confidence, Resamples: s.Resamples, Seed: s.Seed}
	if err := st.Validate(); err != nil {
		return st, badInput(fmt.Errorf("--%w", err))
	}
	return st, nil
}

// CompareOptions are `sixpin compare`'s dependencies and flags.
type CompareOptions struct {
	F      *Factory
	Paths  []string
	Format string
	// FormatSet is set when --format was given (else -o's extension
	// names the format: outputFormat).
	FormatSet        bool
	Output           string
	AllowPinMismatch bool
	Stats            StatsFlags
}

// NewCmdCompare builds `sixpin compare`. runF replaces the action in tests.
func NewCmdCompare(f *Factory, runF func(*CompareOptions) error) *cobra.Command {
	opts := &CompareOptions{F: f}
	cmd := &cobra.Command{
		Use:   "compare A.json B.json... | A-set.json B-set.json... | A-capacity.json B-capacity.json...",
		Short: "Compare runs (sets point by point, capacity searches tier by tier) side by side; refuses runs whose pins differ",
		Long: `Compare results files side by side, each against the first: every figure
with its change, the change's confidence interval, and its direction (better
or worse knowing which way is good for that figure; noise when the interval
includes no change).

Runs are comparable only when their six pins agree within their tolerances:
the model, concurrency (mode, streams or rate), prompt and output lengths
(declared distributions and observed medians within the pins'
tolerance_pct), the declared KV-cache settings and the mix. Otherwise compare
refuses (exit 2) and names the pins that differ; --allow-pin-mismatch shows
the comparison with the mismatches marked at the top.

Set files (sweeps, repeats, bake-offs) compare point by point: each point of
a set against the same point of the first (a sweep's value, a repeat's seed,
a bake-off's profile). Sets of another kind, sweeping another pin or lacking
a point are refused (exit 2) with the reason.

Capacity files (sixpin capacity) compare tier by tier: each tier's N* (or
the interval or bound its search reached) side by side with its change
("interactive: 12 → 10 sessions — lower"), what binds one step above in
each, then the throughput–interactivity curve value by value. Searches are
comparable when they vary the same concurrency pin, judge tiers of the same
name by the same conditions, and hold every other pin alike (as runs are
compared, on a point of each); otherwise compare refuses (exit 2) naming
the difference, unless --allow-pin-mismatch. A capacity file is compared
with capacity files only.`,
		Example: `  sixpin compare base.json candidate.json
  sixpin compare vllm.json sglang.json llamacpp.json --format md
  sixpin compare main-sweep.json pr-sweep.json
  sixpin compare capacity-vllm.json capacity-sglang.json`,
		Args: argsBadInput(cobra.MinimumNArgs(2)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			opts.FormatSet = c.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			return compareRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Format, "format", "f", "text", "output format: text or md (default from -o's extension, else text)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to FILE (atomically) instead of standard output")
	fl.BoolVar(&opts.AllowPinMismatch, "allow-pin-mismatch", false, "compare even when pins differ (mismatches are marked at the top)")
	opts.Stats.register(cmd)
	return cmd
}

func compareRun(opts *CompareOptions) error {
	format, err := outputFormat(opts.F.IO.ErrOut, opts.Format, opts.FormatSet, opts.Output, []string{"text", "md"})
	if err != nil {
		return err
	}
	md := format == "md"
	st, err := opts.Stats.stats()
	if err != nil {
		return err
	}
	files, err := report.LoadFiles(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	caps, err := capacityInputs(files)
	if err != nil {
		return err
	}
	if caps != nil {
		return compareCapacity(opts, caps, st, md)
	}
	ins, sets, err := runsOrSets(files, "compare")
	if err != nil {
		return err
	}
	if sets != nil {
		return compareSets(opts, sets, st, md)
	}
	write := report.WriteCompareText
	if md {
		write = report.WriteCompareMarkdown
	}
	c, err := verdict.Compare(ins, st)
	if err != nil {
		return badInput(err)
	}
	if err := opts.refuseMismatch(c); err != nil {
		return err
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return write(w, c) })
}

// compareSets compares set files point by point.
func compareSets(opts *CompareOptions, sets []report.SetInput, st stats.Settings, md bool) error {
	c, err := verdict.CompareSets(sets, st)
	if err != nil {
		return badInput(err)
	}
	if err := opts.refuseMismatch(c); err != nil {
		return err
	}
	write := report.WriteSetCompareText
	if md {
		write = report.WriteSetCompareMarkdown
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return write(w, c) })
}

// capacityInputs are files as capacity searches (nil when none is one);
// a capacity file beside a results or set file is refused.
func capacityInputs(files []report.File) ([]capacity.Input, error) {
	var caps []capacity.Input
	other := ""
	for _, f := range files {
		switch {
		case f.Capacity != nil:
			caps = append(caps, capacity.Input{Name: f.Name, File: f.Capacity})
		case other == "":
			other = f.Name
		}
	}
	if len(caps) > 0 && other != "" {
		return nil, badInput(fmt.Errorf("%s is a capacity file and %s is not: compare capacity files with capacity files (and results with results, sets with sets)",
			caps[0].Name, other))
	}
	return caps, nil
}

// compareCapacity compares capacity searches: N* per tier, then the
// curve value by value.
func compareCapacity(opts *CompareOptions, caps []capacity.Input, st stats.Settings, md bool) error {
	c, err := capacity.Compare(caps, st)
	if err != nil {
		return badInput(err)
	}
	if err := opts.refuseMismatch(c); err != nil {
		return err
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return report.WriteCapacityCompare(w, c, md) })
}

// runsOrSets splits files into results files or set files: a command
// takes the one kind or the other, never both (verb names it in the
// refusal).
func runsOrSets(files []report.File, verb string) ([]report.Input, []report.SetInput, error) {
	var ins []report.Input
	var sets []report.SetInput
	for _, f := range files {
		if f.Waterfall != nil {
			return nil, nil, badInput(fmt.Errorf("%s is a waterfall: %s takes results and set files (`sixpin report` renders a waterfall)", f.Name, verb))
		}
		if f.Capacity != nil {
			return nil, nil, badInput(fmt.Errorf("%s is a capacity file: %s takes results and set files (`sixpin report` renders a capacity search)", f.Name, verb))
		}
		if f.Set != nil {
			sets = append(sets, report.SetInput{Name: f.Name, Set: f.Set})
		} else {
			ins = append(ins, report.Input{Name: f.Name, Run: f.Run})
		}
	}
	if len(sets) > 0 && len(ins) > 0 {
		return nil, nil, badInput(fmt.Errorf("%s is a set of runs and %s one run: %s sets with sets, results files with results files",
			sets[0].Name, ins[0].Name, verb))
	}
	return ins, sets, nil
}

// refuseMismatch is the refusal of runs (or points) whose pins differ,
// unless --allow-pin-mismatch.
func (opts *CompareOptions) refuseMismatch(c interface {
	Comparable() bool
	MismatchSummary() string
}) error {
	if c.Comparable() || opts.AllowPinMismatch {
		return nil
	}
	return badInput(fmt.Errorf("%w: their pins differ, so their figures measure different workloads (--allow-pin-mismatch compares anyway):\n%s",
		verdict.ErrIncomparable, c.MismatchSummary()))
}
