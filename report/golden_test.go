package report

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/verdict"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The fixtures are results files of real runs against the built-in
// simulator, made once by the commands in testdata/gen/README.md.
const (
	fixBase    = "testdata/base.json"    // smoke, 20 s, seed 7, sim-local-27b
	fixNoise   = "testdata/noise.json"   // the same with seed 8: noise only
	fixSlow    = "testdata/slow.json"    // the same on a ~22% slower simulator: a regression
	fixC1      = "testdata/c1-8k.json"   // one stream, 8,000-token prompts: other pins
	fixInstant = "testdata/instant.json" // sim-instant: model and KV pins contradicted
	fixQueued  = "testdata/queued.json"  // smoke against `sixpin sim` running 2 sequences, profile openai-compatible: the server queues, no output control
	fixOpen    = "testdata/open.json"    // smoke as an open loop, Poisson at 3 req/s
	fixAgentic = "testdata/agentic.json" // agentic-120k against sim-cerebras-27b: sessions, context depths, 429s, cost
	fixC1000   = "testdata/c1000.json"   // a thousand streams against sim-instant
)

func load(t *testing.T, paths ...string) []Input {
	t.Helper()
	ins, err := verdict.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report/ -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %s\nwant: %s\n(run go test ./report/ -update if the change is intended)", path, i+1, g, w)
			}
		}
	}
}

func render(t *testing.T, r func(w io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestGoldenReports(t *testing.T) {
	for _, c := range []struct {
		name   string
		format Format
		files  []string
	}{
		{"report.md", FormatMarkdown, []string{fixBase}},
		{"report-contradicted.md", FormatMarkdown, []string{fixInstant}},
		{"report-queued.md", FormatMarkdown, []string{fixQueued}},
		{"summary-queued.txt", FormatText, []string{fixQueued}},
		{"report.csv", FormatCSV, []string{fixBase, fixNoise, fixC1}},
		{"report.junit.xml", FormatJUnit, []string{fixBase, fixInstant}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ins := load(t, c.files...)
			golden(t, c.name, render(t, func(w io.Writer) error { return RendererFor(c.format)(w, ins) }))
		})
	}
}

func TestGoldenCompareAndGate(t *testing.T) {
	st := stats.Default()
	t.Run("compare.txt", func(t *testing.T) {
		c, err := verdict.Compare(load(t, fixBase, fixNoise, fixSlow), st)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "compare.txt", render(t, func(w io.Writer) error { return WriteCompareText(w, c) }))
	})
	t.Run("compare-mismatch.md", func(t *testing.T) {
		c, err := verdict.Compare(load(t, fixBase, fixC1), st)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "compare-mismatch.md", render(t, func(w io.Writer) error { return WriteCompareMarkdown(w, c) }))
	})
	ins := load(t, fixBase, fixSlow)
	g, err := verdict.Gate(ins[0], ins[1], verdict.DefaultRules(), st)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer, *verdict.GateResult) error
	}{{"gate-regression.txt", WriteGateText}, {"gate-regression.md", WriteGateMarkdown}, {"gate-regression.junit.xml", WriteGateJUnit}} {
		t.Run(f.name, func(t *testing.T) {
			golden(t, f.name, render(t, func(w io.Writer) error { return f.write(w, g) }))
		})
	}
}

func TestCSVShape(t *testing.T) {
	ins := load(t, fixBase, fixC1)
	rows, err := csv.NewReader(bytes.NewReader(render(t, func(w io.Writer) error { return WriteCSV(w, ins) }))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*4 {
		t.Fatalf("%d rows, want a header and 4 windows × 2 files", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		if _, dup := col[h]; dup {
			t.Errorf("duplicate column %q", h)
		}
		col[h] = i
	}
	for _, want := range []string{"file", "window", "concurrency_streams", "prompt_verified", "kv_max_model_len", "mix_verified",
		"aggregate_output_tok_s", "ttft_ms_p99", "effective_tok_s_p50", "goodput_rps", "error_rate"} {
		if _, ok := col[want]; !ok {
			t.Errorf("no column %q", want)
		}
	}
	if got := rows[5][col["concurrency_streams"]]; got != "1" {
		t.Errorf("c1 run: concurrency_streams %q, want 1", got)
	}
	if got := rows[3][col["window"]]; got != "steady" {
		t.Errorf("third row's window %q, want steady (warmup, burst, steady, all)", got)
	}
}

func TestJUnitMarksContradictedPins(t *testing.T) {
	ins := load(t, fixInstant)
	var ss junitSuites
	if err := xml.Unmarshal(render(t, func(w io.Writer) error { return WriteJUnit(w, ins) }), &ss); err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, c := range ss.Suites[0].Cases {
		if c.Failure != nil {
			failed[c.Name] = true
		}
	}
	for _, want := range []string{"pin 1 model", "pin 5 kv_cache"} {
		if !failed[want] {
			t.Errorf("%q did not fail (failed: %v)", want, failed)
		}
	}
	if failed["pin 2 prompt"] || failed["steady: SLO TTFT p99 ≤ 2,000 ms"] {
		t.Errorf("unexpected failures: %v", failed)
	}
	if ss.Failures != len(failed) || ss.Tests != len(ss.Suites[0].Cases) {
		t.Errorf("totals: %d tests, %d failures; suite has %d cases, %d failed", ss.Tests, ss.Failures, len(ss.Suites[0].Cases), len(failed))
	}
}

// Set fixtures: sweeps, repeats and a bake-off run against the built-in
// simulator, made by the commands in testdata/gen/README.md.
const (
	fixSweep      = "testdata/sweep.json"       // concurrency.streams = 1, 4
	fixSweepNoise = "testdata/sweep-noise.json" // the same with seed 8
	fixSweepSlow  = "testdata/sweep-slow.json"  // the same on the slower simulator
	fixRepeat     = "testdata/repeat.json"      // gen/smoke.yaml twice, seeds 7 and 8
	fixBakeoff    = "testdata/bakeoff.json"     // sim-local-27b against its slower twin
)

func loadSet(t *testing.T, path string) SetInput {
	t.Helper()
	fs, err := LoadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	if fs[0].Set == nil {
		t.Fatalf("%s is not a set", path)
	}
	return SetInput{Name: path, Set: fs[0].Set}
}

func TestGoldenSets(t *testing.T) {
	for _, c := range []struct {
		name   string
		file   string
		format Format
	}{
		{"set-sweep.txt", fixSweep, FormatText},
		{"set-repeat.md", fixRepeat, FormatMarkdown},
		{"set-bakeoff.txt", fixBakeoff, FormatText},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := loadSet(t, c.file)
			golden(t, c.name, render(t, func(w io.Writer) error { return RenderSet(w, c.format, in) }))
		})
	}
	st := stats.Default()
	t.Run("set-compare.md", func(t *testing.T) {
		sc, err := verdict.CompareSets([]SetInput{loadSet(t, fixSweep), loadSet(t, fixSweepSlow)}, st)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "set-compare.md", render(t, func(w io.Writer) error { return WriteSetCompareMarkdown(w, sc) }))
	})
	g, err := verdict.GateSets(fixSweep, []SetInput{loadSet(t, fixSweep)}, loadSet(t, fixSweepSlow), verdict.DefaultRules(), st)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name  string
		write func(io.Writer, *verdict.SetGateResult) error
	}{{"set-gate-regression.txt", WriteSetGateText}, {"set-gate-regression.md", WriteSetGateMarkdown}, {"set-gate-regression.junit.xml", WriteSetGateJUnit}} {
		t.Run(f.name, func(t *testing.T) {
			golden(t, f.name, render(t, func(w io.Writer) error { return f.write(w, g) }))
		})
	}
}
