package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Fixtures: results files of real runs against the simulator (see
// report/testdata/gen/README.md).
const (
	fixBase  = "../../report/testdata/base.json"
	fixNoise = "../../report/testdata/noise.json"
	fixSlow  = "../../report/testdata/slow.json"
	fixC1    = "../../report/testdata/c1-8k.json"
)

// runCmd runs cmd with args and buffers for streams, mapping its error to
// an exit code as execute does.
func runCmd(t *testing.T, build func(*Factory) *cobra.Command, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: func(string) string { return "" },
		Hard:   context.Background(),
	}
	cmd := build(f)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		return ExitOK, out.String(), errOut.String()
	}
	errOut.WriteString("sixpin: " + err.Error() + "\n")
	var bad errBadInput
	if errors.As(err, &bad) {
		return ExitBadInput, out.String(), errOut.String()
	}
	return ExitFailed, out.String(), errOut.String()
}

func reportCmd(f *Factory) *cobra.Command  { return NewCmdReport(f, nil) }
func compareCmd(f *Factory) *cobra.Command { return NewCmdCompare(f, nil) }
func gateCmd(f *Factory) *cobra.Command    { return NewCmdGate(f, nil) }

func TestReportFlags(t *testing.T) {
	t.Parallel()
	var got *ReportOptions
	code, _, errOut := runCmd(t, func(f *Factory) *cobra.Command {
		return NewCmdReport(f, func(o *ReportOptions) error { got = o; return nil })
	}, "a.json", "b.json", "-f", "html", "-o", "r.html")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Join(got.Paths, ",") != "a.json,b.json" || got.Format != "html" || got.Output != "r.html" {
		t.Errorf("options %+v", got)
	}
}

func TestReportFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		format string
		want   string
	}{
		{"text", "PIN CARD — headline figures from the steady window"},
		{"md", "| ✓ | 4 concurrency | closed loop, 4 concurrent streams"},
		{"markdown", "### Steady window (headline)"},
		{"html", "<svg "},
		{"csv", "file,scenario,scenario_sha256"},
		{"junit", `<testsuites name="sixpin report"`},
	} {
		t.Run(c.format, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, reportCmd, fixBase, "--format", c.format)
			if code != ExitOK || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, stdout lacks %q:\n%.600s\n%s", code, c.want, out, errOut)
			}
			path := filepath.Join(dir, "out."+c.format)
			code, out, errOut = runCmd(t, reportCmd, fixBase, "--format", c.format, "-o", path)
			if code != ExitOK || out != "" || !strings.Contains(errOut, "wrote "+path) {
				t.Fatalf("-o: exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), c.want) {
				t.Errorf("%s lacks %q (%v)", path, c.want, err)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestReportBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{fixBase, "--format", "pdf"},
		{"missing.json"},
		{"testdata/tiny.yaml"}, // not a results file
		{fixBase, "--nope"},
	} {
		if code, _, errOut := runCmd(t, reportCmd, args...); code != ExitBadInput {
			t.Errorf("report %v: exit %d, want %d (%s)", args, code, ExitBadInput, errOut)
		}
	}
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	t.Run("comparable", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCmd(t, compareCmd, fixBase, fixNoise)
		if code != ExitOK || !strings.Contains(out, "All pins agree within their tolerances.") || !strings.Contains(out, "B vs A") {
			t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("markdown", func(t *testing.T) {
		t.Parallel()
		code, out, _ := runCmd(t, compareCmd, fixBase, fixSlow, "--format", "md")
		if code != ExitOK || !strings.Contains(out, "| aggregate output tok/s (all streams) | 396 | 308 | −22.2% **worse** [") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("refuses differing pins", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCmd(t, compareCmd, fixBase, fixC1)
		if code != ExitBadInput || out != "" {
			t.Fatalf("exit %d, stdout %q", code, out)
		}
		for _, want := range []string{"runs are not comparable", "concurrency: 4 vs 1", "prompt p50: 505 vs 8,003", "--allow-pin-mismatch"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
	})
	t.Run("--allow-pin-mismatch", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCmd(t, compareCmd, fixBase, fixC1, "--allow-pin-mismatch")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		head := out[:strings.Index(out, "Steady window")]
		for _, want := range []string{"PIN MISMATCH", "✗ A vs B: concurrency: 4 vs 1", "✗ A vs B: prompt p50: 505 vs 8,003"} {
			if !strings.Contains(head, want) {
				t.Errorf("the top lacks %q:\n%s", want, head)
			}
		}
	})
	t.Run("refuses a file that contradicts itself", func(t *testing.T) {
		t.Parallel()
		edited, foreign := contradictions(t, t.TempDir())
		for _, bad := range []string{edited, foreign} {
			code, out, errOut := runCmd(t, compareCmd, fixBase, bad)
			if code != ExitBadInput || out != "" || !strings.Contains(errOut, bad+":") || !strings.Contains(errOut, ": histograms.steady.ttft_ms: puts ") {
				t.Errorf("compare with %s: exit %d\nstdout: %s\nstderr: %s", bad, code, out, errOut)
			}
		}
	})
	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{{fixBase}, {fixBase, fixNoise, "--format", "html"}, {fixBase, fixNoise, "--confidence", "2"}, {fixBase, "nope.json"}} {
			if code, _, _ := runCmd(t, compareCmd, args...); code != ExitBadInput {
				t.Errorf("compare %v: exit %d, want %d", args, code, ExitBadInput)
			}
		}
	})
}

func TestGateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(dir, "gates.yaml")
	if err := os.WriteFile(rules, []byte("steady.ttft_ms.p90: {max_increase: 10%}\nsteady.aggregate_output_tok_s: {max_decrease: 5%}\nerrors.rate: {max: 1%}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badRules := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badRules, []byte("steady.aggregate_output_tok_s: {max_decrease: 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The noise run without its histograms and series (an optional part a
	// file may lack), and with one histogram damaged (a file sixpin did
	// not write whole).
	bare, damaged := filepath.Join(dir, "bare.json"), filepath.Join(dir, "damaged.json")
	editJSON(t, fixNoise, bare, func(m map[string]any) { delete(m, "histograms"); delete(m, "series") })
	editJSON(t, fixNoise, damaged, func(m map[string]any) {
		m["histograms"].(map[string]any)["steady"].(map[string]any)["ttft_ms"].(map[string]any)["hdr"] = "HISTFAAAAbroken"
	})
	edited, foreign := contradictions(t, dir)
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"pass", []string{"--baseline", fixBase, fixBase}, ExitOK, []string{"RESULT: PASS — 7 rules, no regression"}, nil},
		{"not evaluated without histograms", []string{"--baseline", fixBase, bare}, ExitBadInput,
			[]string{"NOT EVALUATED  steady.ttft_ms.p99", "RESULT: NOT EVALUATED — 5 of 7 rules could not be evaluated"},
			[]string{"gate: 5 of 7 rules could not be evaluated"}},
		{"a damaged histogram is refused", []string{"--baseline", fixBase, damaged}, ExitBadInput, nil,
			[]string{"damaged.json:", ": histograms.steady.ttft_ms.hdr: not a histogram sixpin wrote"}},
		{"a summary edited by hand is refused", []string{"--baseline", fixBase, edited}, ExitBadInput, nil,
			[]string{"edited.json:", ": histograms.steady.ttft_ms: puts p50 at 249.215, but windows.steady.ttft_ms.p50 is 230: the file contradicts itself"}},
		{"a histogram of another run is refused", []string{"--baseline", fixBase, foreign}, ExitBadInput, nil,
			[]string{"foreign.json:", ": histograms.steady.ttft_ms: puts ", ", but windows.steady.ttft_ms."}},
		{"noise only passes", []string{"--baseline", fixBase, fixNoise}, ExitOK, []string{"RESULT: PASS"}, nil},
		{"regression fails", []string{"--baseline", fixBase, fixSlow}, ExitFailed,
			[]string{"FAIL  steady.aggregate_output_tok_s", "RESULT: FAIL — 3 of 7 rules regressed"}, []string{"gate: regression: 3 of 7 rules failed"}},
		{"rules file", []string{"--baseline", fixBase, fixSlow, "--rules", rules}, ExitFailed,
			[]string{"FAIL  steady.ttft_ms.p90", "RESULT: FAIL — 2 of 4 rules regressed"}, nil},
		{"pin mismatch", []string{"--baseline", fixBase, fixC1}, ExitBadInput,
			[]string{"✗ concurrency: 4 vs 1"}, []string{"runs are not comparable: prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens; prompt p50: 505 vs 8,003; concurrency: 4 vs 1"}},
		{"bad rules", []string{"--baseline", fixBase, fixSlow, "--rules", badRules}, ExitBadInput, nil,
			[]string{"bad.yaml:1:47: steady.aggregate_output_tok_s.max_decrease: must be a percentage like \"10%\" (got 5)"}},
		{"no baseline", []string{fixSlow}, ExitBadInput, nil, []string{"--baseline BASE.json is required"}},
		{"missing file", []string{"--baseline", "nope.json", fixSlow}, ExitBadInput, nil, nil},
		{"two currents", []string{"--baseline", fixBase, fixSlow, fixNoise}, ExitBadInput, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, gateCmd, c.args...)
			expectOutput(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}
}

func TestGateWritesJUnitAndMarkdown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		current  string
		code     int
		failures int
		md       string
	}{
		{fixNoise, ExitOK, 0, "## sixpin gate: ✅ PASS"},
		{fixSlow, ExitFailed, 3, "## sixpin gate: ❌ FAIL (3 of 7 rules)"},
		{fixC1, ExitBadInput, 1, "## sixpin gate: ⚠️ INCOMPARABLE"},
	} {
		t.Run(filepath.Base(c.current), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			junit, md := filepath.Join(dir, "gate.xml"), filepath.Join(dir, "gate.md")
			code, _, errOut := runCmd(t, gateCmd, "--baseline", fixBase, c.current, "--junit", junit, "--markdown", md)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut)
			}
			data, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Failures int `xml:"failures,attr"`
				Tests    int `xml:"tests,attr"`
			}
			if err := xml.Unmarshal(data, &suites); err != nil {
				t.Fatal(err)
			}
			if suites.Failures != c.failures || suites.Tests == 0 {
				t.Errorf("junit: %d failures of %d tests, want %d failures", suites.Failures, suites.Tests, c.failures)
			}
			mdata, err := os.ReadFile(md)
			if err != nil || !strings.HasPrefix(string(mdata), c.md) || !strings.Contains(string(mdata), "Pin card of the current run") {
				t.Errorf("markdown:\n%s (%v)", mdata, err)
			}
		})
	}
}

func TestGateFlags(t *testing.T) {
	t.Parallel()
	var got *GateOptions
	code, _, errOut := runCmd(t, func(f *Factory) *cobra.Command {
		return NewCmdGate(f, func(o *GateOptions) error { got = o; return nil })
	}, "--baseline", "b.json", "--baseline", "b-*.json", "c.json", "--rules", "g.yaml", "--junit", "j.xml", "--markdown", "m.md",
		"--confidence", "0.9", "--resamples", "2000", "--stats-seed", "7")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := GateOptions{F: got.F, Baseline: []string{"b.json", "b-*.json"}, Current: "c.json", Rules: "g.yaml", JUnit: "j.xml", Markdown: "m.md",
		Stats: StatsFlags{Confidence: 0.9, Resamples: 2000, Seed: 7}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("options %+v, want %+v", *got, want)
	}
	if _, err := (StatsFlags{Confidence: 0.95, Resamples: 10, Seed: 1}).stats(); !errors.As(err, new(errBadInput)) {
		t.Errorf("10 resamples: %v", err)
	}
}

// editJSON writes to dst the JSON file src as edit changes it.
// contradictions writes into dir two copies of the noise run whose steady
// TTFT histogram and summary count the same values and say different
// things: edited.json, its p50 edited by hand (still between p10 and
// p90), and foreign.json, the histogram of another run (the base run's,
// as many values).
func contradictions(t *testing.T, dir string) (edited, foreign string) {
	t.Helper()
	edited, foreign = filepath.Join(dir, "edited.json"), filepath.Join(dir, "foreign.json")
	editJSON(t, fixNoise, edited, func(m map[string]any) {
		m["windows"].(map[string]any)["steady"].(map[string]any)["ttft_ms"].(map[string]any)["p50"] = 230
	})
	data, err := os.ReadFile(fixBase)
	if err != nil {
		t.Fatal(err)
	}
	var base struct {
		Histograms map[string]map[string]any `json:"histograms"`
	}
	if err := json.Unmarshal(data, &base); err != nil {
		t.Fatal(err)
	}
	editJSON(t, fixNoise, foreign, func(m map[string]any) {
		m["histograms"].(map[string]any)["steady"].(map[string]any)["ttft_ms"] = base.Histograms["steady"]["ttft_ms"]
	})
	return edited, foreign
}

func editJSON(t *testing.T, src, dst string, edit func(map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectOutput checks a command's exit code and that its outputs hold
// the wanted pieces.
func expectOutput(t *testing.T, code int, out, errOut string, wantCode int, stdout, stderr []string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("exit %d, want %d\n%s\n%.2000s", code, wantCode, out, errOut)
	}
	for _, w := range stdout {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	for _, w := range stderr {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%.2000s", w, errOut)
		}
	}
}
