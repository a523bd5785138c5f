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
		Use:   "report RESULTS.json... | SET.json",
		Short: "Render results files or a set file as text, Markdown, self-contained HTML, CSV or JUnit XML",
		Long: `Render one or more results files, or one set file (a sweep, repeats or a
bake-off). Every form carries the pin card; a set's, the pins its points
share with each point's verdict.

  text   the summary sixpin run prints
  md     GitHub-flavoured Markdown: pin card and a table per window; pastes
         into a pull request or $GITHUB_STEP_SUMMARY
  html   one self-contained page (no scripts, no network) with SVG charts:
         latency percentile curves, throughput over time with the windows
         shaded, per-stream vs aggregate, errors over time
  csv    one row per results file and window, a column per pin and metric
  junit  a testsuite per file: a testcase per pin (failed when contradicted)
         and per window validity and SLO check (p99 within the SLO)

A set renders the same way point by point: text and md its tables (a row
per point, a repeat's means with intervals, a bake-off's usable view), html
a page with those tables and charts of labelled points, csv and junit its
runs' rows and suites named FILE#POINT (sweep.json#concurrency.streams=4).`,
		Example: `  sixpin report results.json --format md >> "$GITHUB_STEP_SUMMARY"
  sixpin report a.json b.json --format html -o report.html
  sixpin report runs/*.json --format csv -o runs.csv
  sixpin report sweep.json --format html -o sweep.html`,
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
	files, err := report.LoadFiles(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	var ins []report.Input
	for _, f := range files {
		switch {
		case f.Set != nil && len(files) > 1:
			return badInput(fmt.Errorf("%s is a set of runs: report it on its own", f.Name))
		case f.Set != nil:
			set := report.SetInput{Name: f.Name, Set: f.Set}
			return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return report.RenderSet(w, format, set) })
		}
		ins = append(ins, report.Input{Name: f.Name, Run: f.Run})
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
