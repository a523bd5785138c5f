package analyze

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
	"github.com/sixpin/sixpin/scenario"
)

// writeScenario exports r's fit to a file and loads it back.
func writeScenario(t *testing.T, r *Report) (*scenario.Scenario, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteScenario(&buf, "prod"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "prod.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatalf("the exported scenario does not load: %v\n%s", err, buf.String())
	}
	return s, buf.String()
}

func empirical(vs ...float64) scenario.Dist {
	return scenario.Dist{Kind: scenario.DistEmpirical, Values: vs}
}

// TestExportScenarioByHand fits three sessions worked out by hand, in
// both opencode layouts.
//
// A (v1): prompts 10,000, 12,300, 13,000; outputs 300 (+100 reasoning),
// 200, 100; growth 12,300 − 10,000 − 300 = 2,000 and 13,000 − 12,300 −
// 200 = 500; think 10 − 4 = 6 s and 15 − 13 = 2 s. B (v2): prompts 8,000
// and 9,250 (growth 1,000), outputs 250 and 150, think 12 s. C: one turn
// of 20,000 in, 500 out, at 100 s. Sessions run A [0, 17 s], B [5, 22 s],
// C [100, 110 s]: two at once for 12 s, one for 20 s: peak 2, median 1.
func TestExportScenarioByHand(t *testing.T) {
	d := oc.NewV2(t, t.TempDir())
	add := func(v2 bool, id, ses, provider, model string, created, completed int64, input, read, out, reasoning int) {
		m := oc.Message{ID: id, Session: ses, Provider: provider, Model: model, Created: t0 + created*sec, Completed: t0 + completed*sec,
			Finish: "stop", Input: input, CacheRead: read, Output: out, Reasoning: reasoning}
		if v2 {
			d.AssistantV2(m)
		} else {
			d.Assistant(m)
		}
	}
	add(false, "msg_a0", "ses_a", "cloud", "big", 0, 4, 10000, 0, 300, 100)
	add(false, "msg_a1", "ses_a", "cloud", "big", 10, 13, 2300, 10000, 200, 0)
	add(false, "msg_a2", "ses_a", "cloud", "big", 15, 17, 1000, 12000, 100, 0)
	add(true, "msg_b0", "ses_b", "local", "small", 5, 8, 8000, 0, 250, 0)
	add(true, "msg_b1", "ses_b", "local", "small", 20, 22, 1250, 8000, 150, 0)
	add(false, "msg_c0", "ses_c", "cloud", "big", 100, 110, 20000, 0, 500, 0)
	path := d.Close()
	r := analyzeDB(t, Options{DBs: []string{path}, Scenario: true})
	f := r.Scenario
	if f.Sessions != 3 || f.Generations != 6 || f.PeakSessions != 2 || f.MedianSessions != 1 || f.MaxContext != 20500 || f.Shrinks != 0 {
		t.Errorf("fit %+v", f)
	}
	if !near(f.CacheShare, 30000.0/72550) {
		t.Errorf("cache share %v", f.CacheShare)
	}
	s, text := writeScenario(t, r)
	w := s.Workload
	for _, c := range []struct {
		what      string
		got, want scenario.Dist
	}{
		{"first prompt", s.Pins.Prompt.Tokens, empirical(8000, 10000, 20000)},
		{"output", s.Pins.Output.Tokens, empirical(100, 150, 200, 250, 400, 500)},
		{"turns", w.Turns, empirical(1, 2, 3)},
		{"growth", w.GrowthTokens, empirical(500, 1000, 2000)},
		{"think", w.ThinkSeconds, empirical(2, 6, 12)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
	if w.Kind != scenario.WorkloadAgentic || w.MaxContextTokens != 21000 || s.Pins.Concurrency.Streams != 1 || s.Pins.Model.Name != "big" ||
		!s.Pins.Output.Exact || s.Pins.KVCache.PrefixCaching == nil || !*s.Pins.KVCache.PrefixCaching || s.Duration.D() != DefaultScenarioDuration {
		t.Errorf("scenario %+v", s)
	}
	for _, want := range []string{"# From the opencode database " + path + " (immutable; 4 opencode 1 rows, 2 OpenCode 2 rows).",
		"# Filters: none (every completed generation).", "# Dates: 2026-10-01 12:00 → 2026-10-01 12:01.",
		"# Models seen, by generations: cloud/big 4, local/small 2.", "median 1, peak 2", "Cache reads were 41.4% of the prompt tokens."} {
		if !strings.Contains(text, want) {
			t.Errorf("the scenario lacks %q:\n%s", want, text)
		}
	}
	// Filters are named in the header.
	r = analyzeDB(t, Options{DBs: []string{path}, Scenario: true, Models: []string{"big"}})
	_, text = writeScenario(t, r)
	if !strings.Contains(text, "# Filters: model big.") || !strings.Contains(text, "from 2 sessions and 4 generations") {
		t.Errorf("filtered:\n%s", text)
	}
}

// TestExportScenarioLognormal: more than MaxEmpirical first prompts are
// fitted with a lognormal. Half 1,000 and half 4,000: ln x is ln 2,000
// ± ln 2, so the median is 2,000 and σ = ln 2 · √(60/59) = 0.699.
func TestExportScenarioLognormal(t *testing.T) {
	d := oc.New(t, t.TempDir())
	for i := range 60 {
		in := 1000
		if i%2 == 1 {
			in = 4000
		}
		at := t0 + int64(i)*60*sec
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_%02d", i), Session: fmt.Sprintf("ses_%02d", i), Provider: "p", Model: "m",
			Created: at, Completed: at + sec, Finish: "stop", Input: in, Output: 100})
	}
	r := analyzeDB(t, Options{DBs: []string{d.Close()}, Scenario: true})
	s, text := writeScenario(t, r)
	want := scenario.Dist{Kind: scenario.DistLognormal, Median: 2000, Sigma: 0.699, Min: 1000, Max: 4000}
	if got := s.Pins.Prompt.Tokens; !reflect.DeepEqual(got, want) {
		t.Errorf("first prompt %v, want %v", got, want)
	}
	if r.Scenario.FirstPrompt.Method != FitLognormal || !strings.Contains(text, "lognormal fitted to 60 values") {
		t.Errorf("method %s:\n%s", r.Scenario.FirstPrompt.Method, text)
	}
	// One turn each: growth is a placeholder, said so; no think time.
	if !reflect.DeepEqual(s.Workload.GrowthTokens, scenario.Fixed(1)) || !strings.Contains(text, "growth is a placeholder") || !s.Workload.ThinkSeconds.IsZero() {
		t.Errorf("growth %v, think %v:\n%s", s.Workload.GrowthTokens, s.Workload.ThinkSeconds, text)
	}
}

func TestExportScenarioFromJSONL(t *testing.T) {
	for _, c := range []struct {
		source, dir, model string
		streams            int
	}{
		// Claude Code: 0b5c… [0, 22 s], its subagent [6, 8 s], 5d2e…
		// [60, 64 s] (its copy of msg_01A1 is not its own): two at once
		// for 2 s, one for 24 s.
		{SourceClaudeCode, "claude-code", "claude-sonnet-4-5-20250929", 1},
		// Codex: two generations each; the tie goes as the report's order.
		{SourceCodex, "codex", "gpt-5", 1},
	} {
		t.Run(c.source, func(t *testing.T) {
			r := analyzeDB(t, Options{Source: c.source, Paths: []string{filepath.Join("testdata", c.dir)}, Scenario: true})
			s, text := writeScenario(t, r)
			if s.Pins.Model.Name != c.model || s.Pins.Concurrency.Streams != c.streams || !strings.Contains(text, "# From ") {
				t.Errorf("model %q, streams %d:\n%s", s.Pins.Model.Name, s.Pins.Concurrency.Streams, text)
			}
		})
	}
	r := analyzeDB(t, Options{Source: SourceClaudeCode, Paths: []string{filepath.Join("testdata", "claude-code")}, Scenario: true})
	if r.Scenario.PeakSessions != 2 || r.Scenario.MedianSessions != 1 || r.Scenario.Sessions != 3 {
		t.Errorf("claude-code fit %+v", r.Scenario)
	}
}

func TestExportScenarioNothing(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{mixedDB(t, 10, 0)}, Scenario: true, Models: []string{"nope"}})
	if err := r.WriteScenario(&bytes.Buffer{}, "x"); !errors.Is(err, ErrNoSessions) {
		t.Errorf("err = %v, want ErrNoSessions", err)
	}
}

func TestConcurrency(t *testing.T) {
	for _, c := range []struct {
		spans        []span
		peak, median int
	}{
		{[]span{{0, 10}}, 1, 1},
		{[]span{{0, 10}, {10, 20}}, 1, 1}, // back to back
		{[]span{{0, 10}, {0, 10}, {0, 10}, {5, 6}}, 4, 3},
		{[]span{{0, 100}, {10, 90}, {20, 80}}, 3, 3}, // 1 for 20, 2 for 20, 3 for 60 of the 100
		{[]span{{0, 100}, {40, 60}}, 2, 1},           // 1 for 80, 2 for 20
		{[]span{{0, 5}, {0, 5}}, 2, 2},
		{[]span{{7, 7}}, 1, 1}, // a session of no length
	} {
		peak, median := concurrency(c.spans)
		if peak != c.peak || median != c.median {
			t.Errorf("%v: peak %d, median %d; want %d, %d", c.spans, peak, median, c.peak, c.median)
		}
	}
}

func TestFitEmpiricalWeights(t *testing.T) {
	f := fit(sample{3, 1, 3, 2, 3}, true, 1)
	want := scenario.Dist{Kind: scenario.DistEmpirical, Values: []float64{1, 2, 3}, Weights: []float64{1, 1, 3}}
	if f.Method != FitEmpirical || !reflect.DeepEqual(f.Dist, want) || f.P50 != 3 {
		t.Errorf("fit %+v, want %v", f, want)
	}
	if f := fit(sample{5, 5}, true, 1); f.Method != FitFixed || !reflect.DeepEqual(f.Dist, scenario.Fixed(5)) {
		t.Errorf("fixed: %+v", f)
	}
}
