package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// formatNames reads every name of an output format into the one the
// commands use; the names are also the file extensions that name the
// format (report.md, report.markdown, runs.xml).
var formatNames = map[string]string{
	"text": "text", "txt": "text",
	"md": "md", "markdown": "md",
	"html": "html", "htm": "html",
	"csv":   "csv",
	"json":  "json",
	"junit": "junit", "xml": "junit",
	formatBR: formatBR,
}

// outputFormat is the one rule for the commands that take --format and -o
// (report, compare, analyze): an explicit --format wins, and a warning on
// errOut says so when -o's extension names another format; without
// --format, -o's extension names the format (text when it names none).
// format is the flag's value and given whether it was set; writes are the
// formats the command writes. It returns the format's name in writes, or
// a bad-input error naming the flag, or -o, that asks for another.
func outputFormat(errOut io.Writer, format string, given bool, output string, writes []string) (string, error) {
	byExt := formatNames[strings.ToLower(strings.TrimPrefix(filepath.Ext(output), "."))]
	want := strings.Join(writes, ", ")
	if !given {
		switch {
		case byExt == "":
			return "text", nil
		case !slices.Contains(writes, byExt):
			return "", badInput(fmt.Errorf("-o %s names %s, which this command does not write (want one of %s); give --format", output, byExt, want))
		}
		return byExt, nil
	}
	f := formatNames[strings.ToLower(format)]
	if !slices.Contains(writes, f) {
		return "", badInput(fmt.Errorf("--format %q: want one of %s", format, want))
	}
	if byExt != "" && byExt != f && (f != formatBR || byExt != "json") { // a Benchmark Report is JSON
		fmt.Fprintf(errOut, "sixpin: writing %s to %s, as --format says, though its extension names %s\n", f, output, byExt)
	}
	return f, nil
}
