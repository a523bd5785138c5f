// Package report holds every word and chart a person reads of sixpin.
//
// It holds the run summary `sixpin run` prints, the pin card and the one wording of the
// declared pins, validate's descriptions of scenarios, traces and
// profiles, results and set files rendered as text, Markdown,
// self-contained HTML with inline SVG charts (the one chart engine), CSV
// and JUnit XML, comparisons of runs (or sets, point by point) and the
// gate's verdicts, the waterfall, and `sixpin analyze`'s report and
// charts. The data it renders is computed elsewhere (results, scenario,
// verdict, waterfall, analyze); report only words it.
//
// Renderers take an io.Writer and never touch the file system; WriteFile
// writes any of them atomically (WriteAnalyzeCharts writes its SVG files
// the same way).
package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// Input is one results file to report on: verdict's Input, so that what a
// report shows and what a comparison or a gate judges are the same files.
type Input = verdict.Input

// SetInput is one set file (sixpin/set/v1) to report on: a sweep's
// points, repeats, or a bake-off's vendors (verdict's SetInput).
type SetInput = verdict.SetInput

// Format is an output format of `sixpin report`.
type Format string

// Formats.
const (
	FormatText     Format = "text"
	FormatMarkdown Format = "md"
	FormatHTML     Format = "html"
	FormatCSV      Format = "csv"
	FormatJUnit    Format = "junit"
)

// Formats lists the formats in help order.
var Formats = []Format{FormatText, FormatMarkdown, FormatHTML, FormatCSV, FormatJUnit}

// ParseFormat reads a format name ("markdown" and "xml" are accepted for
// md and junit).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case FormatText, FormatMarkdown, FormatHTML, FormatCSV, FormatJUnit:
		return f, nil
	case "markdown":
		return FormatMarkdown, nil
	case "xml":
		return FormatJUnit, nil
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Renderer writes a report of runs to w.
type Renderer func(w io.Writer, runs []Input) error

// RendererFor returns the renderer of format f.
func RendererFor(f Format) Renderer {
	switch f {
	case FormatMarkdown:
		return WriteMarkdown
	case FormatHTML:
		return WriteHTML
	case FormatCSV:
		return WriteCSV
	case FormatJUnit:
		return WriteJUnit
	}
	return WriteText
}

// WriteText writes each run's text summary (the one `sixpin run` prints),
// headed by its file name when there are several.
func WriteText(w io.Writer, runs []Input) error {
	for i, in := range runs {
		if len(runs) > 1 {
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if _, err := fmt.Fprintf(w, "══ %s ══\n", in.Name); err != nil {
				return err
			}
		}
		if err := WriteSummary(w, in.Run); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile renders into path atomically: the output goes to a temporary
// file in the same directory, which is synced and renamed over path only
// when render succeeded. A reader never sees half a report.
func WriteFile(path string, render func(io.Writer) error) error {
	return atomicfile.Write(path, render)
}

// windowTitle names a window in headings.
func windowTitle(name string) string {
	switch name {
	case results.WindowSteady:
		return "Steady window (headline)"
	case results.WindowBurst:
		return "Burst window (first seconds of load: the brochure number)"
	case results.WindowAll:
		return "All (whole run)"
	case results.WindowWarmup:
		return "Warmup (excluded from headline figures)"
	}
	return name
}

// reportWindows are the windows reports show, in order.
var reportWindows = []string{results.WindowSteady, results.WindowBurst, results.WindowAll}
