package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	mlperfSample    = "../trace/testdata/mlperf/agentic.jsonl"
	mlperfSampleSHA = "cb435a3b7e515da5305046edb46f4bc38122cd0f935a0a1cf2baa14d5da02ad8"
)

// loadMLPerf loads a scenario replaying data (the sample when empty)
// with the workload's further keys.
func loadMLPerf(t *testing.T, data, more string) (*Scenario, error) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "d.jsonl")
	if data == "" {
		b, err := os.ReadFile(mlperfSample)
		if err != nil {
			t.Fatal(err)
		}
		data = string(b)
	}
	os.WriteFile(file, []byte(data), 0o644)
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte("pins:\n  model: {name: m}\nworkload: {kind: trace, format: mlperf-agentic, file: d.jsonl"+more+"}\n"), 0o644)
	return Load(path)
}

func TestMLPerfScenario(t *testing.T) {
	s, err := loadMLPerf(t, "", ", sha256: "+mlperfSampleSHA)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(s)
	if p.MLPerfTrajectories() != 2 || p.Streams() != 2 || !p.KeepsReasoning() || p.ExactOutput() {
		t.Errorf("trajectories %d, streams %d, keeps reasoning %t, exact %t", p.MLPerfTrajectories(), p.Streams(), p.KeepsReasoning(), p.ExactOutput())
	}
	d := p.Declared(Wire{})
	if w := TokensWords(d.Prompt); !strings.Contains(w, "MLPerf agentic dataset") || !strings.HasSuffix(w, "earlier turns' reasoning re-sent (preserve_reasoning: true)") {
		t.Errorf("prompt pin: %s", w)
	}
	// MLPerf's rules require X-Session-ID on every request: declared or not.
	if w := ConcurrencyWords(d.Concurrency); w != "closed loop, 2 concurrent agentic sessions (think time between turns); each session's id in header X-Session-Id" {
		t.Errorf("concurrency pin: %s", w)
	}
	s, err = loadMLPerf(t, "", ", session_affinity: {headers: [x-user-id], echo: [x-session-token]}")
	if err != nil {
		t.Fatal(err)
	}
	if w := ConcurrencyWords(NewPlan(s).Declared(Wire{}).Concurrency); !strings.HasSuffix(w, "; each session's id in headers X-User-Id, X-Session-Id; each session sends back header X-Session-Token") {
		t.Errorf("declared session_affinity: concurrency pin: %s", w)
	}
	s, err = loadMLPerf(t, "", ", session_affinity: {headers: [x-session-id]}")
	if err != nil {
		t.Fatal(err)
	}
	if got := NewPlan(s).Affinity(); len(got) != 1 || got[0] != "X-Session-Id" {
		t.Errorf("X-Session-ID declared: headers %q, want it once", got)
	}
	// Agentic sessions drop reasoning unless told, and now say so.
	s, err = loadMLPerf(t, "", ", preserve_reasoning: false, sessions: 5")
	if err != nil {
		t.Fatal(err)
	}
	if p := NewPlan(s); p.KeepsReasoning() || p.MLPerfTrajectories() != 5 || !strings.HasSuffix(TokensWords(p.Declared(Wire{}).Prompt), "dropped (preserve_reasoning: false)") {
		t.Errorf("preserve_reasoning false: keeps %t, %d trajectories", p.KeepsReasoning(), p.MLPerfTrajectories())
	}
}

// The refusals: a file that is not the declared one (both digests), an
// unknown key (file:line:col), a conversation MLPerf could not salt, and
// the options that do not apply.
func TestMLPerfScenarioRefused(t *testing.T) {
	wrong := strings.Repeat("0", 64)
	for _, c := range []struct{ data, more, want string }{
		{"", ", sha256: " + wrong, "SHA-256 is " + mlperfSampleSHA + ", not the " + wrong},
		{"", ", sha256: abc", "workload.sha256: must be 64 hex digits"},
		{`{"conversation_id": "c", "turn": 1, "role": "user", "system": "s", "content": "hi", "delay": 1}` + "\n", "", `d.jsonl:1:94: delay: unknown key`},
		{`{"conversation_id": "c", "turn": 1, "role": "user", "content": "hi"}` + "\n", "", `d.jsonl:1: conversation "c" has no system prompt`},
	} {
		_, err := loadMLPerf(t, c.data, c.more)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q %q: %v\nwant %q", c.data, c.more, err, c.want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte("pins:\n  model: {name: m}\nworkload: {kind: trace, format: mooncake, file: t.jsonl}\n"), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "workload.format: must be mlperf-agentic or absent") {
		t.Errorf("format mooncake: %v", err)
	}
	os.WriteFile(path, []byte("pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 10}\n  concurrency: {streams: 1}\nduration: 1s\nworkload: {preserve_reasoning: true}\n"), 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "workload.preserve_reasoning: only for kind agentic or trace") {
		t.Errorf("kind requests: %v", err)
	}
}

// preserve_reasoning: true on a trace whose prompts are built from hash
// ids (Mooncake's, Weka's) is refused: each turn is its recorded blocks,
// whole, with no earlier answer in it to carry reasoning, and the pin
// card would say reasoning was re-sent. Without hash ids it is kept.
func TestPreserveReasoningHashIDs(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"../trace/testdata/weka.json", "workload.preserve_reasoning: the trace's prompts are built from its hash_ids"},
		{"../trace/testdata/mooncake-sessions.jsonl", "workload.preserve_reasoning: the trace's prompts are built from its hash_ids"},
		{"../trace/testdata/sixpin.jsonl", ""},
	} {
		abs, err := filepath.Abs(c.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []string{"true", "false"} {
			path := filepath.Join(t.TempDir(), "s.yaml")
			os.WriteFile(path, []byte("pins:\n  model: {name: m}\nworkload: {kind: trace, file: "+abs+", preserve_reasoning: "+keep+"}\n"), 0o644)
			_, err := Load(path)
			switch want := c.want; {
			case keep == "false" || want == "":
				if err != nil {
					t.Errorf("%s, preserve_reasoning %s: %v", c.file, keep, err)
				}
			case err == nil || !strings.Contains(err.Error(), want):
				t.Errorf("%s, preserve_reasoning %s: %v\nwant %q", c.file, keep, err, want)
			}
		}
	}
}
