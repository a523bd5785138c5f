package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// RecoverOptions are `sixpin recover`'s dependencies and flags.
type RecoverOptions struct {
	F      *Factory
	Spill  string
	Output string
	// Records, when set, also writes the spill's requests there, one row
	// each (.jsonl or .csv), as `sixpin run --records` does.
	Records string
}

// NewCmdRecover builds `sixpin recover`. runF replaces the action in tests.
func NewCmdRecover(f *Factory, runF func(*RecoverOptions) error) *cobra.Command {
	opts := &RecoverOptions{F: f}
	cmd := &cobra.Command{
		Use:   "recover SPILL",
		Short: "Rebuild the results file of a run that was killed from its record spill",
		Long: `While a run goes on, its records spill to a file beside its results file
(RESULTS.json.spill). A run that ends normally removes it; one that is
killed (SIGKILL, out of memory, a crash) leaves it, and recover rebuilds
an ordinary results file from it, marked incomplete, with every request
measured until then: report, compare and gate read it as any other. A
spill whose tail is damaged (cut mid-write, or zeros or garbage left by a
crash) gives every whole record before the damage, and recover says how
many bytes it skipped.

--records also writes the spill's requests one row each, as JSON Lines
(.jsonl) or CSV (.csv), the rows sixpin run --records writes.`,
		Example: `  sixpin recover results.json.spill
  sixpin recover results.json.spill -o recovered.json
  sixpin recover results.json.spill -o recovered.json --records requests.csv`,
		Args: argsBadInput(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Spill = args[0]
			if runF != nil {
				return runF(opts)
			}
			return recoverRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "results file to write (default: SPILL without .spill, or SPILL.json)")
	cmd.Flags().StringVar(&opts.Records, "records", "", "also write one row per request to FILE: JSON Lines (.jsonl) or CSV (.csv)")
	return cmd
}

func recoverRun(opts *RecoverOptions) error {
	out := opts.Output
	if out == "" {
		out = strings.TrimSuffix(opts.Spill, ".spill")
		if !strings.HasSuffix(out, ".json") {
			out += ".json"
		}
	}
	if opts.Records != "" {
		if _, err := export.RecordsFormatOf(opts.Records); err != nil {
			return badInput(fmt.Errorf("--records: %w", err))
		}
	}
	rec, err := results.Recover(opts.Spill, "the run did not finish (killed, out of memory or crashed)")
	if err != nil {
		return badInput(err)
	}
	if err := results.WriteFile(out, rec.Run); err != nil {
		return err
	}
	fmt.Fprintf(opts.F.IO.Out, "sixpin: rebuilt %d measured requests from %s into %s (marked incomplete); the spill may now be removed\n",
		rec.Requests, opts.Spill, out)
	if rec.SkippedBytes > 0 {
		fmt.Fprintf(opts.F.IO.Out, "sixpin: skipped the last %s bytes of the spill, which hold no whole record (%s)\n", numfmt.Int(rec.SkippedBytes), rec.Damage)
	}
	if opts.Records != "" {
		read, err := export.SpillRecords(opts.Spill, opts.Records)
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.F.IO.Out, "sixpin: wrote %s to %s\n", numfmt.Count(read.Records, "per-request row", ""), opts.Records)
	}
	return nil
}
