package main

import (
	"errors"
	"fmt"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/report"
)

// formatBR is `sixpin report --format br0.2`: the llm-d Benchmark Report
// v0.2, written by package export rather than report (it is data for
// another tool, not words).
const formatBR = "br0.2"

// reportBR writes the Benchmark Reports of files: to standard output, or
// to -o's file (a file per report when there are several).
func reportBR(opts *ReportOptions, files []report.File) error {
	if opts.Metric != "" {
		return badInput(errors.New("--metric re-renders a waterfall, which has no Benchmark Report"))
	}
	var reports []*export.BenchmarkReport
	for _, f := range files {
		switch {
		case f.Waterfall != nil:
			return badInput(fmt.Errorf("%s is a waterfall: it has no Benchmark Report (export the results of its steps)", f.Name))
		case f.Capacity != nil:
			reports = append(reports, export.BenchmarkReportsOfCapacity(f.Capacity)...)
		case f.Set != nil:
			reports = append(reports, export.BenchmarkReportsOfSet(f.Set)...)
		default:
			reports = append(reports, export.BenchmarkReportOf(f.Run))
		}
	}
	if len(reports) == 0 {
		return badInput(errors.New("no run to report: the files hold no measured run"))
	}
	if opts.Output == "" || opts.Output == "-" {
		return export.WriteBenchmarkReports(opts.F.IO.Out, reports)
	}
	paths, err := export.WriteBenchmarkReportFiles(opts.Output, reports)
	for _, p := range paths {
		fmt.Fprintf(opts.F.IO.ErrOut, "sixpin: wrote %s\n", p)
	}
	return err
}
