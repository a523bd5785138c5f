package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/waterfall"
)

// ReportOptions are `sixpin report`'s dependencies and flags.
type ReportOptions struct {
	F      *Factory
	Paths  []string
	Format string
	// FormatSet is set when --format was given (else -o's extension
	// names the format: outputFormat).
	FormatSet bool
	Output    string
	// Metric re-renders a waterfall for another metric ("" as written).
	Metric string
	// Dialect prints each run's figures under a peer's metric
	// definitions ("" for sixpin's own).
	Dialect string
}

// NewCmdReport builds `sixpin report`. runF replaces the action in tests.
func NewCmdReport(f *Factory, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{F: f}
	cmd := &cobra.Command{
		Use:   "report RESULTS.json... | SET.json | WATERFALL.json | CAPACITY.json",
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
runs' rows and suites named FILE#POINT (sweep.json#concurrency.streams=4).

A waterfall (sixpin waterfall) renders as its steps: text draws it in the
terminal, md adds its tables, html an SVG waterfall chart, csv a row per
step, junit its runs' suites. --metric re-renders it for another metric
(effective, decode, aggregate, ttft; "default" the decode → effective
switch) from what every step recorded, without running anything.

A capacity file (sixpin capacity) renders as its answers — N* per tier, what
binds at N*+1, its confirmation and normalised figures — and its points:
text and md, csv a row per point and tier, junit a case per tier (failed
when it fails at the smallest value), html a page with the
throughput–interactivity curve (aggregate tok/s against sixpin's effective
tok/s per stream and MLPerf's tps_per_user, a Pareto staircase without
interpolation, each point marked by each tier's verdict and labelled with
its concurrency, N* ringed per tier) and each tier's conditions against
the concurrency.

  br0.2  the llm-d Benchmark Report v0.2 (JSON) llm-d-benchmark reads: one
         per run, one per point of a set or a capacity search (stages of one
         experiment); several go to stdout as JSON Lines, to -o FILE as
         FILE_0.json, FILE_1.json, …

--dialect vllm|aiperf|guidellm|mlperf prints a run's figures under that
tool's metric definitions, each labelled with its definition, over every
request of the run as the tool counts its own: vLLM's TPOT (first token
excluded) and per-chunk ITL, AIPerf's inter_token_latency and
output_token_throughput_per_user, GuideLLM's time_per_output_token_ms
(first token included, token-weighted), MLPerf's tps_per_user = 1000 /
TPOT p90 and e2e_interactivity; request throughput and goodput (against
the scenario's slo) as each defines them. Text (with the pin card) or
--format json.`,
		Example: `  sixpin report results.json --format md >> "$GITHUB_STEP_SUMMARY"
  sixpin report a.json b.json --format html -o report.html
  sixpin report runs/*.json --format csv -o runs.csv
  sixpin report sweep.json --format html -o sweep.html
  sixpin report capacity.json --format html -o capacity.html
  sixpin report results.json --format br0.2 -o br.json
  sixpin report results.json --dialect vllm
  sixpin report results.json --dialect mlperf --format json`,
		Args: argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Paths = args
			opts.FormatSet = c.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			return reportRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Format, "format", "f", string(report.FormatText), "output format: "+strings.Join(reportFormats(), ", ")+" (default from -o's extension, else text)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "", "write to FILE (atomically) instead of standard output")
	cmd.Flags().StringVar(&opts.Dialect, "dialect", "", "print each run's figures under a peer's metric definitions: "+strings.Join(results.Dialects, ", ")+" (text or --format json)")
	cmd.Flags().StringVar(&opts.Metric, "metric", "", "a waterfall only: re-render it for this metric (effective, decode, aggregate, ttft, or default)")
	return cmd
}

// reportFormats are the formats report writes, in help order.
func reportFormats() []string {
	names := make([]string, len(report.Formats))
	for i, f := range report.Formats {
		names[i] = string(f)
	}
	return append(names, formatBR)
}

func reportRun(opts *ReportOptions) error {
	if opts.Dialect != "" {
		return reportDialect(opts)
	}
	name, err := outputFormat(opts.F.IO.ErrOut, opts.Format, opts.FormatSet, opts.Output, reportFormats())
	if err != nil {
		return err
	}
	format := report.Format(name)
	files, err := report.LoadFiles(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	if name == formatBR {
		return reportBR(opts, files)
	}
	var ins []report.Input
	for _, f := range files {
		switch {
		case f.Capacity != nil && len(files) > 1:
			return badInput(fmt.Errorf("%s is a capacity file: report it on its own", f.Name))
		case f.Capacity != nil:
			return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return report.RenderCapacity(w, format, f.Name, f.Capacity) })
		case f.Waterfall != nil && len(files) > 1:
			return badInput(fmt.Errorf("%s is a waterfall: report it on its own", f.Name))
		case f.Waterfall != nil:
			return reportWaterfall(opts, format, f)
		case opts.Metric != "":
			return badInput(fmt.Errorf("--metric re-renders a waterfall; %s is not one", f.Name))
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

// reportWaterfall renders a waterfall file, for --metric when given.
func reportWaterfall(opts *ReportOptions, format report.Format, f report.File) error {
	wf := f.Waterfall
	if opts.Metric != "" {
		m := opts.Metric
		if m == "default" {
			m = ""
		}
		var err error
		if wf, err = waterfall.Rebuild(wf, m); err != nil {
			return badInput(fmt.Errorf("--metric: %w", err))
		}
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return report.RenderWaterfall(w, format, f.Name, wf) })
}

// reportDialect prints each run's figures under the peer's definitions
// (--dialect).
func reportDialect(opts *ReportOptions) error {
	if !slices.Contains(results.Dialects, opts.Dialect) {
		return badInput(fmt.Errorf("--dialect %q: want one of %s", opts.Dialect, strings.Join(results.Dialects, ", ")))
	}
	if opts.Metric != "" {
		return badInput(errors.New("--metric re-renders a waterfall; --dialect reports results files"))
	}
	format, err := outputFormat(opts.F.IO.ErrOut, opts.Format, opts.FormatSet, opts.Output, []string{report.DialectText, report.DialectJSON})
	if err != nil {
		return err
	}
	files, err := report.LoadFiles(opts.Paths...)
	if err != nil {
		return badInput(err)
	}
	var ins []report.DialectInput
	add := func(name string, run *results.Run) {
		d, _ := results.DialectOf(run, opts.Dialect) // the dialect is known
		ins = append(ins, report.DialectInput{Name: name, Run: run, Report: d})
	}
	for _, f := range files {
		switch {
		case f.Set != nil:
			for i, run := range f.Set.Runs {
				add(fmt.Sprintf("%s#%d", f.Name, i), run)
			}
		case f.Run != nil:
			add(f.Name, f.Run)
		default:
			return badInput(fmt.Errorf("%s is not a results or set file: --dialect reports runs (give a search's or a waterfall's own results files)", f.Name))
		}
	}
	return writeOutput(opts.F, opts.Output, func(w io.Writer) error { return report.WriteDialect(w, format, ins) })
}
