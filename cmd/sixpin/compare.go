package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
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
	F                *Factory
	Paths            []string
	Format           string
	Output           string
	AllowPinMismatch bool
	Stats            StatsFlags
}

// NewCmdCompare builds `sixpin compare`. runF replaces the action in tests.
func NewCmdCompare(f *Factory, runF func(*CompareOptions) error) *cobra.Command {
	opts := &CompareOptions{F: f}
	cmd := &cobra.Command{
		Use:   "compare A.json B.json...",
		Short: "Compare runs side by side; refuses runs whose pins differ",
		Long: `Compare results files side by side, each against the first: every figure
with its change, the change's confidence interval, and its direction (better
or worse knowing which way is good for that figure; noise when the interval
includes no change).

Runs are comparable only when their six pins agree within their tolerances:
the model, concurrency (mode, streams or rate), prompt and output lengths
(declared distributions and observed medians within the pins'
tolerance_pct), the declared KV-cache settings and the mix. Otherwise compare
refuses (exit 2) and names the pins that differ; --allow-pin-mismatch shows
the comparison with the mismatches marked at the top.`,
		Example: `  sixpin compare base.json candidate.json
  sixpin compare vllm.json sglang.json llamacpp.json --format md`,
		Args: argsBadInput(cobra.MinimumNArgs(2)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return compareRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Format, "format", "f", "text", "output format: text or md")
	fl.StringVarP(&opts.Output, "output", "o", "", "write to FILE (atomically) instead of standard output")
	fl.BoolVar(&opts.AllowPinMismatch, "allow-pin-mismatch", false, "compare even when pins differ (mismatches are marked at the top)")
	opts.Stats.register(cmd)
	return cmd
}

func compareRun(opts *CompareOptions) error {
	var write func(io.Writer, *report.Comparison) error
	switch opts.Format {
	case "text":
		write = report.WriteCompareText
	case "md", "markdown":
		write = report.WriteCompareMarkdown
	default:
		return badInput(fmt.Errorf("--format: unknown format %q (want text or md)", opts.Format))
	}
	st, err := opts.Stats.stats()
	if err != nil {
		return err
	}
	ins, err := report.Load(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	c, err := report.Compare(ins, st)
	if err != nil {
		return badInput(err)
	}
	if !c.Comparable() && !opts.AllowPinMismatch {
		return badInput(fmt.Errorf("%w: their pins differ, so their figures measure different workloads (--allow-pin-mismatch compares anyway):\n%s",
			report.ErrIncomparable, c.MismatchSummary()))
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return write(w, c) })
}
