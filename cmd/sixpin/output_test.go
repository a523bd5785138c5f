package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputFormatRule runs report, compare and analyze with -o and
// without --format, with a --format that agrees with -o's extension and
// with one that does not: one rule for all three. The extension names the
// format (text when it names none); --format wins, with a warning when
// the extension names another; an extension naming a format the command
// does not write is bad input.
func TestOutputFormatRule(t *testing.T) {
	db := opencodeDB(t, t.TempDir())
	report := func(args ...string) []string { return append([]string{"report", fixBase}, args...) }
	compare := func(args ...string) []string { return append([]string{"compare", fixBase, fixNoise}, args...) }
	analyze := func(args ...string) []string { return append([]string{"analyze", "opencode", "--db", db}, args...) }
	const (
		text     = "PIN CARD — headline figures"
		markdown = "| ✓ | 4 concurrency |"
		html     = "<svg "
		csv      = "file,scenario,scenario_sha256"
		junit    = `<testsuites name="sixpin report"`
	)
	cases := []struct {
		name string
		args func(...string) []string
		file string   // -o's base name
		flag []string // --format, when given
		want string   // in the file written
		warn bool     // a warning that --format wins over the extension
		bad  string   // bad input (exit 2) whose message has this
	}{
		{name: "report .html", args: report, file: "r.html", want: html},
		{name: "report .htm", args: report, file: "r.htm", want: html},
		{name: "report .md", args: report, file: "r.md", want: markdown},
		{name: "report .markdown", args: report, file: "r.markdown", want: markdown},
		{name: "report .csv", args: report, file: "r.csv", want: csv},
		{name: "report .xml", args: report, file: "r.xml", want: junit},
		{name: "report .txt", args: report, file: "r.txt", want: text},
		{name: "report no extension", args: report, file: "r", want: text},
		{name: "report an unknown extension", args: report, file: "r.log", want: text},
		{name: "report .HTML", args: report, file: "R.HTML", want: html},
		{name: "report --format agrees", args: report, file: "r.html", flag: []string{"--format", "html"}, want: html},
		{name: "report --format wins", args: report, file: "r.html", flag: []string{"--format", "md"}, want: markdown, warn: true},
		{name: "report --format junit, .xml", args: report, file: "r.xml", flag: []string{"-f", "xml"}, want: junit},
		{name: "report .json", args: report, file: "r.json", bad: "-o " + "%DIR%/r.json names json, which this command does not write"},
		{name: "report --format bad", args: report, file: "r.md", flag: []string{"--format", "pdf"}, bad: `--format "pdf": want one of text, md, html, csv, junit`},

		{name: "compare .md", args: compare, file: "c.md", want: "| aggregate output tok/s"},
		{name: "compare .txt", args: compare, file: "c.txt", want: "All pins agree within their tolerances."},
		{name: "compare --format wins", args: compare, file: "c.md", flag: []string{"--format", "text"}, want: "All pins agree", warn: true},
		{name: "compare .html", args: compare, file: "c.html", bad: "names html, which this command does not write (want one of text, md)"},

		{name: "analyze .md", args: analyze, file: "a.md", want: "# Effective throughput"},
		{name: "analyze .json", args: analyze, file: "a.json", want: `"models": [`},
		{name: "analyze .csv", args: analyze, file: "a.csv", want: "provider,model,generations"},
		{name: "analyze no extension", args: analyze, file: "a", want: "PROVIDER/MODEL"},
		{name: "analyze --format wins", args: analyze, file: "a.md", flag: []string{"--format", "json"}, want: `"models": [`, warn: true},
		{name: "analyze .html", args: analyze, file: "a.html", bad: "names html, which this command does not write (want one of text, md, json, csv)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			code, out, errOut := sixpin(t, nil, c.args(append([]string{"-o", path}, c.flag...)...)...)
			if c.bad != "" {
				if want := strings.ReplaceAll(c.bad, "%DIR%", dir); code != ExitBadInput || !strings.Contains(errOut, want) {
					t.Fatalf("exit %d, stderr %q; want bad input saying %q", code, errOut, want)
				}
				if _, err := os.Stat(path); err == nil {
					t.Errorf("%s was written", path)
				}
				return
			}
			if code != ExitOK || out != "" {
				t.Fatalf("exit %d, stdout %.200q, stderr %s", code, out, errOut)
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), c.want) {
				t.Errorf("%s lacks %q (%v):\n%.400s", c.file, c.want, err, data)
			}
			if warned := strings.Contains(errOut, "as --format says, though its extension names"); warned != c.warn {
				t.Errorf("warning %v, want %v; stderr:\n%s", warned, c.warn, errOut)
			}
		})
	}
}
