package analyze

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/sixpin/sixpin/trace"
)

// The fixtures under testdata/codex are two rollouts. 0199a1b2…: the
// user's message at :01.000, a function call, token_count at :06.100
// (510 output tokens) → 510 / 5.1 s = 100 tok/s; the tool's output at
// :16.100, token_count at :18.100 (last_token_usage 200) → 100; a repeat
// of that token_count (no call). 0199a1b7… (an older Codex: no
// model_provider, no last_token_usage): the user at 5:01, token_count at
// 5:05 (total 600 out) → 150; the user at 5:30, token_count at 5:33
// (total 800: 200 more) → 66.67.
const cxS1, cxS2 = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", "0199a1b7-0e1f-7a2b-9c3d-4e5f6a7b8c9d"

func TestCodexByHand(t *testing.T) {
	r := analyzeDB(t, Options{Source: SourceCodex, Paths: []string{filepath.Join("testdata", "codex")}, Trace: true})
	c := r.Counts
	if c.Files != 2 || c.Lines != 26 || c.Generations != 4 || c.Samples != 4 || c.Duplicates != 1 || c.User != 3 {
		t.Errorf("counts %+v", c)
	}
	for name, n := range map[string]int{"event_msg.task_complete": 1, "compacted": 1, "response_item.function_call": 1, "event_msg.token_count": 1, "session_meta": 2} {
		if c.Other[name] != n {
			t.Errorf("other[%s] = %d, want %d (%v)", name, c.Other[name], n, c.Other)
		}
	}
	codex := model(t, r, "openai/gpt-5-codex")
	checkDist(t, "gpt-5-codex", codex.EffectiveTokS, Dist{N: 2, Min: 100, P10: 100, P25: 100, P50: 100, P75: 100, P90: 100, Max: 100})
	gpt5 := model(t, r, "openai/gpt-5")
	checkDist(t, "gpt-5", gpt5.EffectiveTokS, Dist{N: 2, Min: 200.0 / 3, P10: 200.0/3 + 0.1*(150-200.0/3), P25: 200.0/3 + 0.25*(150-200.0/3), P50: (150 + 200.0/3) / 2,
		P75: 200.0/3 + 0.75*(150-200.0/3), P90: 200.0/3 + 0.9*(150-200.0/3), Max: 150})
	// The cached tokens are part of the input, the reasoning of the output.
	if u := gpt5.Usage; u.InputTokens != 17000 || u.CacheReadTokens != 9500 || u.OutputTokens != 800 || u.ReasoningTokens != 100 {
		t.Errorf("gpt-5 usage %+v", u)
	}
	if !near(codex.CacheReadShare, 11000.0/24600) {
		t.Errorf("cache share %v", codex.CacheReadShare)
	}
	wantLimits := []ReportedLimit{{Name: "primary", WindowMinutes: 300, MaxUsedPercent: 7.5, Samples: 4}, {Name: "secondary", WindowMinutes: 10080, MaxUsedPercent: 2, Samples: 2}}
	if !reflect.DeepEqual(r.ReportedLimits, wantLimits) {
		t.Errorf("reported limits %+v, want %+v", r.ReportedLimits, wantLimits)
	}
	want := []trace.Session{
		{ID: cxS1, Start: 0, Turns: []trace.Turn{
			{InputTokens: 12000, OutputTokens: 510, ReasoningTokens: 320},
			{Offset: 15100 * time.Millisecond, Think: 10 * time.Second, InputTokens: 12600, CachedTokens: 11000, OutputTokens: 200},
		}},
		{ID: cxS2, Start: 300 * time.Second, Turns: []trace.Turn{
			{InputTokens: 8000, CachedTokens: 2000, OutputTokens: 600, ReasoningTokens: 100},
			{Offset: 29 * time.Second, Think: 25 * time.Second, InputTokens: 9000, CachedTokens: 7500, OutputTokens: 200},
		}},
	}
	if !reflect.DeepEqual(r.Trace.Sessions, want) {
		t.Errorf("trace:\n got %+v\nwant %+v", r.Trace.Sessions, want)
	}
	if r.Unavailable["ttft_s"] == "" {
		t.Errorf("unavailable %v", r.Unavailable)
	}
}
