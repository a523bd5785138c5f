package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
	"github.com/sixpin/sixpin/trace"
)

func tracePlan(t *testing.T, tr *trace.Trace) *scenario.Plan {
	t.Helper()
	return scenario.NewPlan(traceScenario(t, tr, ""))
}

// traceScenario writes tr as a trace file and loads a scenario replaying
// it at a hundredth of its time, with workload's further members
// (", session_affinity: {}").
func traceScenario(t *testing.T, tr *trace.Trace, workload string) *scenario.Scenario {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "t.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Write(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return loadScenarioSrc(t, dir, "pins:\n  model: {name: m}\nworkload: {kind: trace, file: t.jsonl, time_scale: 0.01"+workload+"}\n")
}

// loadScenarioSrc writes src as dir/s.yaml and loads it.
func loadScenarioSrc(t *testing.T, dir, src string) *scenario.Scenario {
	t.Helper()
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A replay keeps every session's turns in order with their recorded
// prompt and output lengths, and re-sends each session's history byte for
// byte, so the simulator's prefix cache hits as the recording's did.
func TestReplaySessions(t *testing.T) {
	tr := &trace.Trace{Sessions: []trace.Session{
		{ID: "a", Start: 0, Turns: []trace.Turn{
			{InputTokens: 2000, OutputTokens: 40},
			{Offset: 2 * time.Second, Think: time.Second, InputTokens: 2600, OutputTokens: 30, CachedTokens: 2000},
			{Offset: 4 * time.Second, Think: time.Second, InputTokens: 3900, OutputTokens: 50, CachedTokens: 2600},
			// The agent compacted its context: a fresh, shorter prompt.
			{Offset: 6 * time.Second, Think: time.Second, InputTokens: 1500, OutputTokens: 20},
		}},
		{ID: "b", Start: 500 * time.Millisecond, Turns: []trace.Turn{{InputTokens: 800, OutputTokens: 10}}},
	}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, PrefixCaching: boolp(true)}, nil)
	r := newProbedRunner(t, tracePlan(t, tr), simTarget(ts))
	recs := runAll(t, r)
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5", len(recs))
	}
	by := map[[2]int]*record.Record{}
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
		}
		by[[2]int{rec.Session, rec.Turn}] = rec
	}
	for si, s := range tr.Sessions {
		for k, u := range s.Turns {
			rec := by[[2]int{si, k}]
			if rec == nil {
				t.Fatalf("session %d turn %d missing", si, k)
			}
			if rec.Usage.PromptTokens != u.InputTokens || rec.Usage.CompletionTokens != u.OutputTokens {
				t.Errorf("session %d turn %d: %d in / %d out, recorded %d / %d", si, k, rec.Usage.PromptTokens, rec.Usage.CompletionTokens, u.InputTokens, u.OutputTokens)
			}
		}
	}
	if c := by[[2]int{0, 2}].Usage.CachedTokens; c < 2400 {
		t.Errorf("turn 2 re-sent its history but only %d tokens were cached", c)
	}
	if by[[2]int{0, 3}].SessionEnd != record.SessionEndTurns || by[[2]int{1, 0}].SessionEnd != record.SessionEndTurns {
		t.Error("sessions not marked ended after their last turn")
	}
}

// Mooncake hash ids become shared prompt blocks: a request whose leading
// blocks match an earlier one's is served from the prefix cache.
func TestReplayMooncakeBlocks(t *testing.T) {
	tr := &trace.Trace{Sessions: []trace.Session{
		{ID: "0", Turns: []trace.Turn{{InputTokens: 1500, OutputTokens: 5, HashIDs: []int{1, 2, 3}}}},
		// 10 s later (0.1 s at the test's time scale): after the first has finished.
		{ID: "1", Start: 10 * time.Second, Turns: []trace.Turn{{InputTokens: 1400, OutputTokens: 5, HashIDs: []int{1, 2, 9}}}},
	}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, PrefixCaching: boolp(true)}, nil)
	r := newRunner(t, tracePlan(t, tr), simTarget(ts), WithTemplate(endpoint.Template{Overhead: 8}))
	recs := runAll(t, r)
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	for _, rec := range recs {
		if rec.Usage.PromptTokens != tr.Sessions[rec.Session].Turns[0].InputTokens {
			t.Errorf("session %d: %d prompt tokens", rec.Session, rec.Usage.PromptTokens)
		}
		if rec.Session == 1 && rec.Usage.CachedTokens < 1000 {
			t.Errorf("the second request shares two 512-token blocks but %d tokens were cached", rec.Usage.CachedTokens)
		}
	}
}

func TestReplayValidation(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ src, want string }{
		{"pins:\n  model: {name: m}\nworkload: {kind: trace}\n", "workload.file: required for kind trace"},
		{"pins:\n  model: {name: m}\nworkload: {kind: trace, file: missing.jsonl}\n", "missing.jsonl"},
		{"pins:\n  model: {name: m}\n  prompt: {tokens: 10}\nworkload: {kind: trace, file: missing.jsonl}\n", "pins.prompt: not with kind trace"},
	} {
		path := filepath.Join(dir, "s.yaml")
		os.WriteFile(path, []byte(c.src), 0o644)
		if _, err := scenario.Load(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}
