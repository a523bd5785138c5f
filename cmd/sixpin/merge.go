package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
)

// MergeOptions are `sixpin merge`'s dependencies and flags.
type MergeOptions struct {
	F              *Factory
	Paths          []string
	Output         string
	StartTolerance time.Duration
}

// NewCmdMerge builds `sixpin merge`. runF replaces the action in tests.
func NewCmdMerge(f *Factory, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{F: f}
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... -o MERGED.json",
		Short: "Merge the shards of a distributed run into one results file, losslessly",
		Long: `Merge the results files of every shard of one distributed run (sixpin run
--shard I/N --run-id ID) into the results of the whole: histograms add bucket
by bucket and every percentile is read from the sum, never averaged;
per-second series align on wall-clock time; counts, error classes, tokens,
costs and rate-limit meters sum; the pins are judged again for the whole.
The merged file is an ordinary results file for report, compare and gate.

Refused (exit 2) with the reason: a missing or duplicate shard, shards of
different scenarios, seeds, targets or run ids, or windows that do not line
up. The merged run lists each shard's start offset and schedule lag, and is
invalid (exit 1, the file written) if a shard fell behind its schedule or
started later than --start-tolerance.`,
		Example: `  sixpin merge shards/*.json -o merged.json
  sixpin report merged.json`,
		Args: argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return mergeRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "the merged results file (required)")
	fl.DurationVar(&opts.StartTolerance, "start-tolerance", results.DefaultStartTolerance, "how late a shard may start before the merged run is invalid")
	return cmd
}

func mergeRun(opts *MergeOptions) error {
	if opts.Output == "" {
		return badInput(errors.New("-o MERGED.json: say where the merged results go"))
	}
	if opts.StartTolerance < 0 {
		return badInput(errNegative("--start-tolerance", opts.StartTolerance))
	}
	run, err := results.MergeFiles(opts.Paths, results.MergeOptions{StartTolerance: opts.StartTolerance})
	if err != nil {
		return badInput(err)
	}
	if err := results.WriteFile(opts.Output, run); err != nil {
		return err
	}
	out := opts.F.IO.Out
	if err := report.WriteAttestation(out, run); err != nil {
		return err
	}
	fmt.Fprintf(out, "Results: %s\n", opts.Output)
	if !run.Valid {
		return fmt.Errorf("%w: %s", harness.ErrInvalid, strings.Join(run.Invalid, "; "))
	}
	return nil
}
