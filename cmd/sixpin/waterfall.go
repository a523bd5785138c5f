package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/waterfall"
)

// WaterfallOptions are `sixpin waterfall`'s dependencies and flags.
type WaterfallOptions struct {
	F          *Factory
	Config     harness.WaterfallConfig
	Seed       int64
	SeedSet    bool
	NoProgress bool
}

// NewCmdWaterfall builds `sixpin waterfall`. runF replaces the action in
// tests.
func NewCmdWaterfall(f *Factory, runF func(*cobra.Command, *WaterfallOptions) error) *cobra.Command {
	opts := &WaterfallOptions{F: f}
	cmd := &cobra.Command{
		Use:   "waterfall --from brochure|START.yaml --to PRODUCTION.yaml",
		Short: "Move one pin at a time from a brochure's conditions to yours, and say what each pin cost",
		Long: `Measure the start (a scenario, or the built-in brochure preset: concurrency 1,
a 128-token prompt, 32 tokens out, read in the burst window), then move one
pin at a time to its value in --to, each step a full run against the same
target, ending at exactly the --to scenario. Pins equal in both are
skipped and said so. The content step moves the prompts' content class
(pins.prompt.content, prose by default: prose → code), which decides how
well a speculative drafter guesses; only independent requests have one,
so beside an agentic or trace workload it moves with the workload. The window (burst → steady) and the metric (decode
tok/s → effective tok/s, unless --metric holds one) are steps too; they
read the runs again.

Default order: ` + strings.Join(waterfall.DefaultOrder, ", ") + `.
--order names pins to move first; the rest follow in that order. Each
step's change is the pin's cost in this order, and pins that interact
cost differently in another: by default the waterfall runs every subset
of the moved pins (2^k configurations) for exact Shapley values, which
depend on no order, whenever those runs fit --max-runs; otherwise it runs
the order and its reverse and says how much they disagree. --orders 1|2
and --exact choose explicitly.
Every run uses the --to scenario's duration, windows and SLO unless
--step-duration / --step-requests bound it.`,
		Example: `  sixpin waterfall --from brochure --to scenarios/agentic-120k.yaml --profile sim-cerebras-27b -o waterfall.json
  sixpin waterfall --from vendor.yaml --to prod.yaml --endpoint https://… --model … --repeat 3 --claim 1500
  sixpin report waterfall.json --format html -o waterfall.html`,
		Annotations: trapSignals,
		Args:        argsBadInput(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.SeedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(cmd, opts)
			}
			return waterfallRun(cmd, opts)
		},
	}
	c := &opts.Config
	fl := cmd.Flags()
	fl.StringVar(&c.From, "from", "", "the start: a scenario file, or brochure (concurrency 1, 128-token prompt, 32 tokens out, burst window)")
	fl.StringVar(&c.To, "to", "", "the production scenario (any workload kind, agentic included)")
	addTargetFlags(fl, &c.Config)
	fl.StringVarP(&c.Output, "output", "o", "", "waterfall file (default sixpin-waterfall-NAME-TIMESTAMP.json)")
	fl.Int64Var(&opts.Seed, "seed", 0, "override the scenarios' seed")
	fl.StringSliceVar(&c.Order, "order", nil, "pins to move first, in this order (comma-separated; the rest follow in the default order)")
	fl.StringVar(&c.Metric, "metric", "", "hold one metric through every step: "+strings.Join(waterfall.Metrics, ", ")+" (default: decode at the start, effective at the end)")
	fl.IntVar(&c.Orders, "orders", 0, "1: the order alone; 2: also the reverse order, and per pin both costs and their mean (default: exact Shapley values when their runs fit --max-runs, else 2)")
	fl.BoolVar(&c.Exact, "exact", false, "run every subset of the moved pins (2^k configurations) and report exact Shapley values (the default when they fit --max-runs)")
	fl.IntVar(&c.MaxRuns, "max-runs", harness.DefaultWaterfallMaxRuns, "the budget of exact attribution: within it exact is the default, beyond it --exact is refused")
	fl.IntVar(&c.Repeat, "repeat", 1, "runs per configuration (seeds seed, seed+1, …): each step gets a 95% confidence interval")
	fl.Float64Var(&c.Claim, "claim", 0, "the vendor's published figure, compared to the start")
	fl.DurationVar(&c.Duration, "step-duration", 0, "bound each step's run in time (default: the --to scenario's duration)")
	fl.IntVar(&c.Requests, "step-requests", 0, "bound each step's run by a request count (default: the --to scenario's)")
	fl.DurationVar(&c.Grace, "grace", harness.DefaultGrace, "after an interrupt, how long in-flight requests may finish")
	addReadyFlag(fl, &c.Config)
	fl.BoolVar(&opts.NoProgress, "no-progress", false, "no progress bar")
	fl.Float64Var(&c.TimeScale, "time-scale", 0, "run the built-in simulator and the client this much faster (0 < k < 1), figures in simulated time (for tests and demos)")
	_ = fl.MarkHidden("time-scale")
	addLiveFlags(fl, &c.Config)
	return cmd
}

func waterfallRun(cmd *cobra.Command, opts *WaterfallOptions) error {
	c := opts.Config
	if opts.SeedSet {
		c.Seed = &opts.Seed
	}
	switch {
	case c.From == "" || c.To == "":
		return badInput(fmt.Errorf("give --from (a scenario, or brochure) and --to (the production scenario)"))
	case c.Duration < 0:
		return badInput(errNegative("--step-duration", c.Duration))
	case c.ReadyTimeout < 0:
		return badInput(errNegative("--ready-timeout", c.ReadyTimeout))
	case c.Requests < 0 || c.Repeat < 1 || c.Claim < 0:
		return badInput(fmt.Errorf("--step-requests and --claim must be ≥ 0, --repeat ≥ 1"))
	case c.TimeScale < 0 || c.TimeScale > 1:
		return badInput(fmt.Errorf("--time-scale must be in (0, 1]"))
	}
	c.Getenv = opts.F.Getenv
	c.SetGCPercent = opts.F.SetGCPercent
	c.Out, c.ErrOut = opts.F.IO.Out, opts.F.IO.ErrOut
	c.Progress = opts.F.IO.ErrTTY && !opts.NoProgress
	_, err := harness.Waterfall(cmd.Context(), opts.F.Hard, c)
	return err
}
