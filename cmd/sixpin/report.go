package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/report"
)

// ReportOptions are `sixpin report`'s dependencies and flags.
type ReportOptions struct {
	F      *Factory
	Paths  []string
	Format string
	Output string
}

// NewCmdReport builds `sixpin report`. runF replaces the action in tests.
func NewCmdReport(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{F: f}
	formats := make([]string, len(report.Formats))
	for i, ft := range report.Formats {
		formats[i] = string(ft)
	}
	cmd := &cobra.Command{
		Use:   "report RESULTS.json...",
		Short: "Render results files as text, Markdown, self-contained HTML, CSV or JUnit XML",
		Long: `Render one or more results files. Every form carries the pin card.

  text   the summary sixpin run prints
  md     GitHub-flavoured Markdown: pin card and a table per window; pastes
         into a pull request or $GITHUB_STEP_SUMMARY
  html   one self-contained page (no scripts, no network) with SVG charts:
         latency percentile curves, throughput over time with the windows
         shaded, per-stream vs aggregate, errors over time
  csv    one row per results file and window, a column per pin and metric
  junit  a testsuite per file: a testcase per pin (failed when contradicted)
         and per window validity and SLO check (p99 within the SLO)`,
		Example: `  sixpin report results.json --format md >> "$GITHUB_STEP_SUMMARY"
  sixpin report a.json b.json --format html -o report.html
  sixpin report runs/*.json --format csv -o runs.csv`,
		Args: argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Format, "format", "f", string(report.FormatText), "output format: "+strings.Join(formats, ", "))
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to FILE (atomically) instead of standard output")
	return cmd
}

func reportRun(opts *ReportOptions) error {
	format, err := report.ParseFormat(opts.Format)
	if err != nil {
		return badInput(fmt.Errorf("--format: %w", err))
	}
	ins, err := report.Load(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	render := report.RendererFor(format)
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return render(w, ins) })
}

// writeOutput renders to path atomically, or to standard output when path
// is empty or "-".
func writeOutput(f *Factory, path string, render func(io.Writer) error) error {
	if path == "" || path == "-" {
		return render(f.IO.Out)
	}
	if err := report.WriteFile(path, render); err != nil {
		return err
	}
	fmt.Fprintf(f.IO.ErrOut, "sixpin: wrote %s\n", path)
	return nil
}
