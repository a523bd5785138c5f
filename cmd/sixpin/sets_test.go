package main

import (
	"encoding/csv"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Set fixtures: sweeps, repeats and a bake-off run against the simulator
// (see report/testdata/gen/README.md).
const (
	fixSweep      = "../../report/testdata/sweep.json"       // concurrency.streams = 1, 4
	fixSweepNoise = "../../report/testdata/sweep-noise.json" // the same with seed 8
	fixSweepSlow  = "../../report/testdata/sweep-slow.json"  // the same on a ~22% slower simulator
	fixRepeat     = "../../report/testdata/repeat.json"      // two runs, seeds 7 and 8
	fixBakeoff    = "../../report/testdata/bakeoff.json"     // sim-local-27b against its slower twin
)

// dropPoint writes src without its last point, as an interrupted sweep
// that never ran it would be.
func dropPoint(t *testing.T, src, dst string) {
	t.Helper()
	editJSON(t, src, dst, func(m map[string]any) {
		runs := m["runs"].([]any)
		m["runs"] = runs[:len(runs)-1]
		if vs, ok := m["values"].([]any); ok {
			m["values"] = vs[:len(vs)-1]
		}
	})
}

func TestReportSets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		file   string
		format string
		want   []string
		not    []string
	}{
		{"sweep text", fixSweep, "text", []string{"SWEEP smoke-sweep: concurrency.streams = [1, 4]", "PINS SHARED BY THE 2 POINTS",
			"4 concurrency  ✓✓  varies: the swept pin", "concurrency.streams  requests ok"}, nil},
		{"sweep md", fixSweep, "md", []string{"# sixpin sweep: smoke-sweep, concurrency.streams = [1, 4]", "| 4 concurrency | ✓ ✓ | varies: the swept pin"}, nil},
		{"sweep html", fixSweep, "html", []string{"<h1>sixpin sweep: smoke-sweep</h1>", "<table", "<svg", ">concurrency.streams = 4<"},
			[]string{"<pre>", "| --- |", "**"}},
		{"repeat text", fixRepeat, "text", []string{"REPEATS smoke: 2 runs", "PINS SHARED BY THE 2 RUNS", "aggregate output tok/s"}, nil},
		{"repeat html", fixRepeat, "html", []string{"<h1>sixpin repeats: smoke</h1>", "seed 8", "95% CI"}, []string{"<pre>"}},
		{"bakeoff md", fixBakeoff, "md", []string{"# sixpin bake-off: smoke", "| sim-local-27b | pass |", "**Pins shared by the 2 profiles**"}, nil},
		{"bakeoff html", fixBakeoff, "html", []string{"<h1>sixpin bake-off: smoke</h1>", "sim-local-27b-slow", "<svg"}, []string{"<pre>"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, reportCmd, c.file, "--format", c.format)
			expectOutput(t, code, out, errOut, ExitOK, c.want, nil)
			for _, n := range c.not {
				if strings.Contains(out, n) {
					t.Errorf("output holds %q", n)
				}
			}
		})
	}
	t.Run("sweep html labels every point", func(t *testing.T) {
		t.Parallel()
		_, out, _ := runCmd(t, reportCmd, fixSweep, "--format", "html")
		labels := regexp.MustCompile(`<text [^>]*class="pl"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(out, -1)
		var got []string
		for _, l := range labels {
			got = append(got, l[1])
		}
		// Each chart (throughput, then latency against throughput)
		// names each point.
		if want := "concurrency.streams = 1,concurrency.streams = 4"; strings.Join(got, ",") != want+","+want {
			t.Errorf("point labels %q, want each point named on each chart", got)
		}
	})
	t.Run("sweep csv", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCmd(t, reportCmd, fixSweep, "--format", "csv")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 1+2*4 {
			t.Fatalf("%d rows (%v), want a header and 4 windows × 2 points", len(rows), err)
		}
		if rows[1][0] != fixSweep+"#concurrency.streams=1" || rows[8][0] != fixSweep+"#concurrency.streams=4" {
			t.Errorf("file column %q … %q, want the set and its point", rows[1][0], rows[8][0])
		}
	})
	t.Run("bakeoff junit", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := runCmd(t, reportCmd, fixBakeoff, "--format", "junit")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var ss struct {
			Suites []struct {
				Name string `xml:"name,attr"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal([]byte(out), &ss); err != nil || len(ss.Suites) != 2 || !strings.Contains(ss.Suites[1].Name, "profile=sim-local-27b-slow") {
			t.Errorf("junit suites %+v (%v), want one per profile", ss.Suites, err)
		}
	})
	t.Run("a set among runs is refused", func(t *testing.T) {
		t.Parallel()
		code, _, errOut := runCmd(t, reportCmd, fixBase, fixSweep)
		expectOutput(t, code, "", errOut, ExitBadInput, nil, []string{"sweep.json is a set of runs: report it on its own"})
	})
}

func TestCompareSets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	dropPoint(t, fixSweepNoise, short)
	prompt := filepath.Join(dir, "prompt.json")
	editJSON(t, fixSweepNoise, prompt, func(m map[string]any) { m["pin"] = "prompt.tokens" })
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"point by point", []string{fixSweep, fixSweepNoise}, ExitOK,
			[]string{"sixpin compare — 2 sweeps, point by point", "══ concurrency.streams = 1 ══", "══ concurrency.streams = 4 ══", "All pins agree"}, nil},
		{"md", []string{fixSweep, fixSweepSlow, "--format", "md"}, ExitOK, []string{"## concurrency.streams = 4", "**worse**"}, nil},
		{"a missing point", []string{fixSweep, short}, ExitBadInput, nil,
			[]string{"sets are not comparable point by point", "short.json has no point concurrency.streams = 4"}},
		{"another swept pin", []string{fixSweep, prompt}, ExitBadInput, nil,
			[]string{"sweep.json sweeps concurrency.streams, ", "prompt.json sweeps prompt.tokens"}},
		{"another kind", []string{fixSweep, fixRepeat}, ExitBadInput, nil, []string{"sweep.json is a sweep, ", "repeat.json is a repeat"}},
		{"a set and a run", []string{fixSweep, fixBase}, ExitBadInput, nil, []string{"compare sets with sets"}},
		{"repeats by seed", []string{fixRepeat, fixRepeat}, ExitOK, []string{"══ seed 7 ══", "══ seed 8 ══"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, compareCmd, c.args...)
			expectOutput(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}
}

func TestGateSets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short.json")
	dropPoint(t, fixSweepNoise, short)
	damaged := filepath.Join(dir, "damaged.json")
	editJSON(t, fixSweepNoise, damaged, func(m map[string]any) {
		run := m["runs"].([]any)[1].(map[string]any)
		run["histograms"].(map[string]any)["steady"].(map[string]any)["ttft_ms"].(map[string]any)["hdr"] = "HISTFAAAAbroken"
	})
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"noise passes at every point", []string{"--baseline", fixSweep, fixSweepNoise}, ExitOK,
			[]string{"══ concurrency.streams = 1 ══", "══ concurrency.streams = 4 ══", "RESULT: PASS — 2 points, 7 rules each, no regression"}, nil},
		{"a regression fails its points", []string{"--baseline", fixSweep, fixSweepSlow}, ExitFailed,
			[]string{"FAIL  steady.tpot_ms.p50", "RESULT: FAIL — 2 of 2 points regressed"}, []string{"gate: regression: 2 of 2 points"}},
		{"a missing point fails", []string{"--baseline", fixSweep, short}, ExitFailed,
			[]string{"══ concurrency.streams = 4 ══", "FAIL  the current set has no point concurrency.streams = 4", "RESULT: FAIL — 1 of 2 points"}, nil},
		{"a damaged point is refused", []string{"--baseline", fixSweep, damaged}, ExitBadInput, nil,
			[]string{"damaged.json:", ": runs[1].histograms.steady.ttft_ms.hdr: not a histogram sixpin wrote"}},
		{"another kind is incomparable", []string{"--baseline", fixSweep, fixRepeat}, ExitBadInput, nil,
			[]string{"sets are not comparable point by point"}},
		{"a set against a run", []string{"--baseline", fixSweep, fixBase}, ExitBadInput, nil, []string{"gate sets with sets"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, gateCmd, c.args...)
			expectOutput(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}
	t.Run("junit and markdown per point", func(t *testing.T) {
		t.Parallel()
		junit, md := filepath.Join(dir, "gate.xml"), filepath.Join(dir, "gate.md")
		code, _, errOut := runCmd(t, gateCmd, "--baseline", fixSweep, short, "--junit", junit, "--markdown", md)
		if code != ExitFailed {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		data, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var ss struct {
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Name string `xml:"name,attr"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(data, &ss); err != nil || len(ss.Suites) != 2 || ss.Failures != 1 ||
			!strings.Contains(ss.Suites[1].Name, "concurrency.streams = 4") {
			t.Errorf("junit: %+v (%v), want a suite per point and the missing point failed", ss, err)
		}
		mdata, _ := os.ReadFile(md)
		if !strings.HasPrefix(string(mdata), "## sixpin gate: ❌ FAIL (1 of 2 points)") || !strings.Contains(string(mdata), "### concurrency.streams = 4") {
			t.Errorf("markdown:\n%s", mdata)
		}
	})
}
