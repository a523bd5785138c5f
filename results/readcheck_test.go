package results

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/record"
)

// The bad-results corpus: a results file sixpin did not write whole, or
// whose parts contradict each other, is refused with file:line:col and the
// field (before, damaged histograms were dropped silently and negative
// counts, missing windows, a headline window that does not exist and
// contradicting histograms were accepted).
func TestBadResultsCorpus(t *testing.T) {
	t.Parallel()
	for file, want := range map[string][]string{
		"completed-contradicts.json": {
			"testdata/bad/completed-contradicts.json:666:17: windows.steady.e2e_ms: counts 20 requests, but the window completed 17: the file contradicts itself",
		},
		"content-check.json": {
			"testdata/bad/content-check.json:1075:22: content_check.threshold_pct: must be ≥ 0 (got -1)",
			"testdata/bad/content-check.json:1078:27: content_check.classes[0].class: must name a content class",
		},
		"dist-order.json": {
			"testdata/bad/dist-order.json:623:16: windows.steady.ttft_ms.p99: must be ≥ p95 (got 0.254 < 2.321)",
			"testdata/bad/dist-order.json:1058:18: histograms.steady.ttft_ms: puts p99 at 2.751, but windows.steady.ttft_ms.p99 is 0.254: the file contradicts itself",
		},
		// A summary edited by hand, and a histogram of another metric in
		// place of the window's own (as many values, the same unit): each
		// counts what the other does, and says something else.
		"summary-edited.json": {
			"testdata/bad/summary-edited.json:1058:18: histograms.steady.ttft_ms: puts p50 at 0.508, but windows.steady.ttft_ms.p50 is 0.9: the file contradicts itself",
		},
		"hist-foreign.json": {
			"testdata/bad/hist-foreign.json:1058:18: histograms.steady.ttft_ms: puts min at 0.003, but windows.steady.ttft_ms.min is 0.275: the file contradicts itself",
		},
		"empty.json": {
			"testdata/bad/empty.json:1:1: invalid JSON: unexpected end of JSON input",
		},
		"errors-failed.json": {
			"testdata/bad/errors-failed.json:778:15: errors.failed: must be ≤ requests (got 23 > 20)",
		},
		"headline-missing.json": {
			"testdata/bad/headline-missing.json:775:22: headline_window: names window \"stable\", which the file does not hold",
		},
		"hist-count.json": {
			"testdata/bad/hist-count.json:1058:18: histograms.steady.ttft_ms: counts 620 values, but windows.steady.ttft_ms.count (20): the file contradicts itself",
		},
		"hist-damaged.json": {
			"testdata/bad/hist-damaged.json:1061:16: histograms.steady.ttft_ms.hdr: not a histogram sixpin wrote: illegal base64 data at input byte 44",
		},
		"hist-missing-metric.json": {
			"testdata/bad/hist-missing-metric.json:1012:15: histograms.steady: lacks e2e_ms, which windows.steady.e2e_ms counts (20 values)",
		},
		"hist-unit.json": {
			"testdata/bad/hist-unit.json:924:17: histograms.all.itl_ms: unit \"us\" and scale 1, want \"us\" and 1000 for itl_ms",
		},
		"hist-unknown-window.json": {
			"testdata/bad/hist-unknown-window.json:1065:16: histograms.nightly: belongs to no window of the file",
		},
		"missing-pins.json": {
			"testdata/bad/missing-pins.json:1:1: pins: missing: sixpin writes it in every results file",
		},
		"missing-window.json": {
			"testdata/bad/missing-window.json:286:14: windows.burst: missing: sixpin writes warmup, burst, steady and all",
		},
		"negative-requests.json": {
			"testdata/bad/negative-requests.json:597:19: windows.steady.requests: must be ≥ 0 (got -5)",
		},
		"series-length.json": {
			"testdata/bad/series-length.json:809:16: series.started: has 0 seconds, output_tokens 1: the file was not written whole",
		},
		"set.json": {
			"testdata/bad/set.json:2:13: schema: a set of runs (sixpin/set/v1), not one run: give its runs' own results files",
		},
		"started-yesterday.json": {
			"testdata/bad/started-yesterday.json:4:17: started_at: want a time like \"2026-11-30T18:49:28Z\" (RFC 3339), got \"yesterday\"",
		},
		"truncated.json": {
			"testdata/bad/truncated.json:556:39: invalid JSON: unexpected end of JSON input",
		},
		"window-span.json": {
			"testdata/bad/window-span.json:442:16: windows.burst.end_s: must be ≥ start_s (got -1 < 0)",
		},
		"wrong-schema.json": {
			"testdata/bad/wrong-schema.json:2:13: schema: want \"sixpin/result/v1\", got \"vegeta/v1\": not a sixpin results file",
		},
		"yaml.json": {
			"testdata/bad/yaml.json:1:1: invalid JSON: invalid character 's' looking for beginning of value",
		},
	} {
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			run, err := ReadFile(filepath.Join("testdata", "bad", file))
			var list fielderr.List
			if !errors.As(err, &list) {
				t.Fatalf("ReadFile = %v, %v; want a fielderr.List", run != nil, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// Every results file sixpin wrote reads back; one without histograms
// reads too, and says what it lacks.
func TestReadFileAcceptsWhatSixpinWrote(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../report/testdata/*.json")
	files = append(files, "testdata/good.json")
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil && SchemaOf(data) == "sixpin/capacity/v1" {
			continue // a capacity file: capacity.ReadFile reads it (report's tests)
		}
		if _, _, err := ReadAnyFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	run, err := ReadFile("testdata/no-histograms.json")
	if err != nil || !slices.Contains(run.Notes, NoteNoHistograms) {
		t.Errorf("no histograms: %v, notes %q", err, run.Notes)
	}
	data, _ := os.ReadFile("testdata/good.json")
	if run, err := Read("good.json", data); err != nil || len(run.Notes) != 0 {
		t.Errorf("Read(good) = notes %v, %v", run.Notes, err)
	}
}

// A set file is read with the same damage checks per run, each problem
// positioned under its run (runs[i]); its own parts must agree with its
// runs. The fixture is a sweep sixpin wrote; each case damages a copy.
func TestReadSetRefusesDamage(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile("../report/testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	set, err := ReadSet("sweep.json", good)
	if err != nil || len(set.Runs) != 2 || set.Values[1] != 4 {
		t.Fatalf("ReadSet(sweep) = %+v, %v", set, err)
	}
	if _, err := ReadSet("base.json", mustRead(t, "testdata/good.json")); err == nil || !strings.Contains(err.Error(), "schema: one run (sixpin/result/v1), not a set of runs") {
		t.Errorf("a results file read as a set: %v", err)
	}
	// nth replaces the n-th (from 0) occurrence of old in good.
	nth := func(old, repl string, n int) []byte {
		s := string(good)
		at := 0
		for range n + 1 {
			i := strings.Index(s[at:], old)
			if i < 0 {
				t.Fatalf("no %d-th %q in the fixture", n, old)
			}
			at += i + len(old)
		}
		return []byte(s[:at-len(old)] + repl + s[at:])
	}
	// edit re-encodes the fixture after changing it.
	edit := func(change func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		change(m)
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, c := range []struct {
		name string
		data []byte
		want string // the error's field and message; its line must hold at
		at   string
	}{
		{"a damaged histogram in the second run", edit(func(m map[string]any) {
			walk(m, "runs", 1, "histograms", "steady", "ttft_ms")["hdr"] = "HISTFAAAAbroken"
		}), "runs[1].histograms.steady.ttft_ms.hdr: not a histogram sixpin wrote", `"hdr"`},
		{"a negative count in the first run", edit(func(m map[string]any) {
			walk(m, "runs", 0, "windows", "steady")["requests"] = -5
		}), "runs[0].windows.steady.requests: must be ≥ 0 (got -5)", `"requests"`},
		{"a type error in a run", nth(`"headline_window": "steady"`, `"headline_window": 7`, 1),
			"runs[1].headline_window: want string, got a JSON number", `"headline_window"`},
		{"values and runs disagree", []byte(strings.Replace(string(good), `"values": [
    1,
    4
  ]`, `"values": [1]`, 1)), "values: has 1 values for 2 runs: the file was not written whole", `"values"`},
		{"an unknown kind", []byte(strings.Replace(string(good), `"kind": "sweep"`, `"kind": "waterfall"`, 1)),
			`kind: want sweep, repeat or bakeoff, got "waterfall"`, `"kind"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadSet("sweep.json", c.data)
			var list fielderr.List
			if !errors.As(err, &list) {
				t.Fatalf("ReadSet = %v, want a fielderr.List", err)
			}
			e := list[0]
			if !strings.Contains(e.Error(), c.want) {
				t.Fatalf("error %q, want %q", e.Error(), c.want)
			}
			line := strings.Split(string(c.data), "\n")[e.Line-1]
			if !strings.Contains(line, c.at) {
				t.Errorf("%d:%d is %q, want the line of %s", e.Line, e.Col, line, c.at)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// walk walks m by keys and array indices to an object.
func walk(m map[string]any, path ...any) map[string]any {
	var v any = m
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v.(map[string]any)
}

// Every summary the collector writes agrees with its histogram, the token
// lengths too (summarised from exact counts, whose percentiles may fall a
// rank away from HDR's and in another bucket); the histogram of another
// window does not.
func TestSummariesAgreeWithTheirHistograms(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 8))
	for seed := range 6 {
		var recs []*record.Record
		for i := range 50 + rnd.IntN(200) {
			r := stream(i, time.Duration(i)*100*ms, time.Duration(1+rnd.IntN(5000))*ms, time.Duration(1+rnd.IntN(90))*ms, 1+rnd.IntN(40), 1+rnd.IntN(3))
			r.Usage.PromptTokens = 1 + rnd.IntN(1+rnd.IntN(300_000))
			r.Usage.CompletionTokens = 1 + rnd.IntN(20_000)
			recs = append(recs, r)
		}
		m := finish(t, WindowSpec{Warmup: 3 * time.Second, Burst: 5 * time.Second}, SLO{}, recs...)
		for wname, w := range m.Windows {
			for _, d := range windowDists(w) {
				e, ok := m.Histograms[wname][d.metric.Name]
				if *d.dist == nil || !ok {
					continue
				}
				h, err := decodePacked(e) // as a read decodes it
				if err != nil {
					t.Fatal(err)
				}
				c := newCheck("r.json", nil)
				c.agrees([]string{"histograms", wname, d.metric.Name}, "windows."+wname+"."+d.key, d.metric, *d.dist, h)
				if len(*c.errs) > 0 {
					t.Errorf("seed %d: %v", seed, c.errs)
				}
			}
		}
		// The warmup window's TTFT histogram, given to the steady window.
		h, err := m.Histograms[WindowWarmup][HistTTFT.Name].Decode()
		if err != nil {
			t.Fatal(err)
		}
		c := newCheck("r.json", nil)
		c.agrees([]string{"histograms", WindowSteady, HistTTFT.Name}, "windows.steady.ttft_ms", HistTTFT, m.Windows[WindowSteady].TTFTMs, h)
		if len(*c.errs) != 1 {
			t.Errorf("seed %d: the warmup window's histogram passed for the steady window's", seed)
		}
	}
}
