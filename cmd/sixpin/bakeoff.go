package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
)

// BakeoffOptions are `sixpin bakeoff`'s dependencies and flags.
type BakeoffOptions struct {
	F            *Factory
	Config       harness.BakeoffConfig
	Intelligence []string
	NoProgress   bool
}

// NewCmdBakeoff builds `sixpin bakeoff`.
func NewCmdBakeoff(f *Factory, runF func(*cobra.Command, *BakeoffOptions) error) *cobra.Command {
	opts := &BakeoffOptions{F: f}
	cmd := &cobra.Command{
		Use:   "bakeoff SCENARIO.yaml --profile A --profile B...",
		Short: "Run one scenario against several profiles and compare vendors, dimension by dimension",
		Long: `Run one scenario against several profiles, one after the other, and write
each profile's results, bakeoff.json, bakeoff.md and bakeoff.html: a verdict
line, the pins the vendors shared, each vendor's figures and the usable view.
--repeat N runs every profile N times, in rounds, and gives every figure
its mean and 95% confidence interval across the runs.

Exit codes: 0 every vendor ran whole, valid and unthrottled; 3 the bake-off
ran and lost a vendor (invalid, failed or throttled) while another's figures
stand; 1 it failed (interrupted, or no vendor's figures stand); 2 bad input,
found before any vendor runs. 0, 3 and 1 write the results and the memo,
except that a vendor whose server cannot be run at all (never ready) stops
the bake-off with 1 and no memo.`,
		Example: `  sixpin bakeoff scenarios/agentic-120k.yaml --profile sim-local-27b --profile sim-cerebras-27b \
      --intelligence sim-local-27b=pass --intelligence sim-cerebras-27b=pass -o bakeoff/`,
		Annotations: trapSignals,
		Args:        argsBadInput(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Config.ScenarioPath = args[0]
			if runF != nil {
				return runF(cmd, opts)
			}
			return bakeoffRun(cmd, opts)
		},
	}
	c := &opts.Config
	fl := cmd.Flags()
	fl.StringArrayVar(&c.Profiles, "profile", nil, "a profile to run against (NAME or FILE; at least two)")
	fl.StringVarP(&c.Dir, "output", "o", "", "directory for the results and bakeoff.md (default sixpin-bakeoff-NAME-TIMESTAMP)")
	fl.StringArrayVar(&opts.Intelligence, "intelligence", nil, "PROFILE=pass|fail: your verdict on the model's intelligence, a gate (repeatable)")
	fl.StringVar(&c.Tokenizer, "tokenizer", "", "override every profile's tokenizer")
	fl.DurationVar(&c.Duration, "duration", 0, "override the scenario's duration")
	fl.IntVar(&c.Requests, "requests", 0, "override the scenario's request count")
	fl.IntVar(&c.Repeat, "repeat", 1, "run every profile N times, in rounds (seeds seed, seed+1, …): every figure gets its 95% confidence interval")
	fl.DurationVar(&c.Grace, "grace", harness.DefaultGrace, "after an interrupt, how long in-flight requests may finish")
	addReadyFlag(fl, &c.Config)
	addLiveFlags(fl, &c.Config)
	fl.Float64Var(&c.TimeScale, "time-scale", 0, "run built-in simulators this much faster (tests and demos)")
	_ = fl.MarkHidden("time-scale")
	fl.BoolVar(&opts.NoProgress, "no-progress", false, "no progress bar")
	return cmd
}

func bakeoffRun(cmd *cobra.Command, opts *BakeoffOptions) error {
	c := opts.Config
	if c.ReadyTimeout < 0 {
		return badInput(errNegative("--ready-timeout", c.ReadyTimeout))
	}
	if c.Repeat < 1 {
		return badInput(fmt.Errorf("--repeat %d: want 1 or more", c.Repeat))
	}
	c.Gates = map[string]string{}
	for _, kv := range opts.Intelligence {
		name, verdict, ok := strings.Cut(kv, "=")
		if !ok {
			return badInput(fmt.Errorf("--intelligence %q: want PROFILE=pass|fail", kv))
		}
		c.Gates[name] = verdict
	}
	c.Getenv = opts.F.Getenv
	c.SetGCPercent = opts.F.SetGCPercent
	c.Out, c.ErrOut = opts.F.IO.Out, opts.F.IO.ErrOut
	c.Progress = opts.F.IO.ErrTTY && !opts.NoProgress
	_, err := harness.Bakeoff(cmd.Context(), opts.F.Hard, c)
	return err
}
