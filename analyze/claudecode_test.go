package analyze

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/trace"
)

// The fixtures under testdata/claude-code are three transcript files as
// Claude Code writes them: session 0b5c… (three calls, a summary, tool
// results, a system line, a file-history snapshot, a <synthetic> notice
// and a truncated last line), its subagent 7f3e, and session 5d2e…, a
// resumed one whose first exchange is 0b5c…'s copied.
const ccS1, ccS2 = "0b5c6a3e-1f2d-4c1e-9a7b-2f4e8d9c1a01", "5d2e7a10-3b4c-4d5e-8f60-718293a4b502"

func analyzeClaude(t *testing.T, opts Options) *Report {
	t.Helper()
	opts.Source = SourceClaudeCode
	if len(opts.Paths) == 0 {
		opts.Paths = []string{filepath.Join("testdata", "claude-code")}
	}
	return analyzeDB(t, opts)
}

// TestClaudeCodeByHand works the fixtures' figures out by hand.
//
// Session 0b5c…: the prompt at :00; msg_01A1's lines at :03, :04, :05
// (400 output tokens at the last) → 400 / 5 s = 80 tok/s; a tool result
// at :09, msg_01A2 at :11–:12 (250) → 250 / 3 s = 83.33; a tool result
// at :20, msg_01A3 at :22 (100) → 50. Subagent 7f3e: prompt :06, haiku
// at :07–:08 (120) → 60. Session 5d2e…: msg_01A1 again (a copy, counted
// once), a prompt at 1:00, msg_01C1 at 1:02–1:04 (300, the largest
// usage) → 75.
func TestClaudeCodeByHand(t *testing.T) {
	r := analyzeClaude(t, Options{Trace: true})
	c := r.Counts
	if c.Files != 3 || c.Lines != 24 || c.Messages != 15 || c.Generations != 5 || c.Samples != 5 || c.Duplicates != 1 || c.User != 4 || c.Assistant != 5 {
		t.Errorf("counts %+v", c)
	}
	wantOther := map[string]int{"type=summary": 1, "user.tool_result": 2, "type=system": 1, "type=file-history-snapshot": 1, "assistant.model=<synthetic>": 1}
	if !reflect.DeepEqual(c.Other, wantOther) {
		t.Errorf("other %v, want %v", c.Other, wantOther)
	}
	if c.Skipped.MalformedLines != 1 || len(c.Skipped.Examples) != 1 || !strings.Contains(c.Skipped.Examples[0], ccS1+".jsonl:14: ") {
		t.Errorf("skipped %+v", c.Skipped)
	}
	son := model(t, r, "anthropic/claude-sonnet-4-5-20250929")
	checkDist(t, "sonnet effective tok/s", son.EffectiveTokS, Dist{N: 4, Min: 50, P10: 57.5, P25: 68.75, P50: 77.5, P75: 80 + 0.25*10.0/3, P90: 80 + 0.7*10.0/3, Max: 250.0 / 3})
	checkDist(t, "sonnet context", son.ContextTokens, Dist{N: 4, Min: 15003, P10: 15003 + 0.3*801, P25: 15003 + 0.75*801, P50: 15804.5, P75: 15805 + 0.25*597, P90: 15805 + 0.7*597, Max: 16402})
	if want := 56300.0 / 63014; !near(son.CacheReadShare, want) {
		t.Errorf("cache read share %v, want %v", son.CacheReadShare, want)
	}
	if son.Usage.CacheWriteTokens != 6700 || son.Usage.OutputTokens != 1050 {
		t.Errorf("usage %+v", son.Usage)
	}
	hai := model(t, r, "anthropic/claude-haiku-4-5-20251001")
	checkDist(t, "haiku effective tok/s", hai.EffectiveTokS, Dist{N: 1, Min: 60, P10: 60, P25: 60, P50: 60, P75: 60, P90: 60, Max: 60})
	if son.TTFTS != nil || son.DecodeTokS != nil || r.Unavailable["ttft_s"] == "" || r.Unavailable["decode_tok_s"] == "" {
		t.Errorf("TTFT %v, decode %v, unavailable %v: want none, and said why", son.TTFTS, son.DecodeTokS, r.Unavailable)
	}
	if r.Sessions.Sessions != 3 {
		t.Errorf("sessions %d, want 3", r.Sessions.Sessions)
	}
	var s1 *trace.Session
	for i := range r.Trace.Sessions {
		if r.Trace.Sessions[i].ID == ccS1 {
			s1 = &r.Trace.Sessions[i]
		}
	}
	want := []trace.Turn{
		{InputTokens: 15003, CachedTokens: 10000, OutputTokens: 400},
		{Offset: 9 * time.Second, Think: 4 * time.Second, InputTokens: 15805, CachedTokens: 15000, OutputTokens: 250},
		{Offset: 20 * time.Second, Think: 8 * time.Second, InputTokens: 16402, CachedTokens: 15800, OutputTokens: 100},
	}
	if s1 == nil || !reflect.DeepEqual(s1.Turns, want) {
		t.Errorf("session %s in the trace:\n got %+v\nwant %+v", ccS1, s1, want)
	}
}

func TestClaudeCodeFiltersAndFiles(t *testing.T) {
	// One file alone, and --model: the subagent's haiku only.
	r := analyzeClaude(t, Options{Models: []string{"haiku"}})
	if r.Counts.Samples != 1 || r.Counts.Filtered != 4 {
		t.Errorf("--model haiku: counts %+v", r.Counts)
	}
	one := filepath.Join("testdata", "claude-code", "-home-me-work", ccS2+".jsonl")
	r = analyzeClaude(t, Options{Paths: []string{one}})
	if r.Counts.Files != 1 || r.Counts.Generations != 2 || r.Counts.Duplicates != 0 {
		t.Errorf("%s alone: counts %+v (its copy of msg_01A1 is the first seen)", one, r.Counts)
	}
	// --since after the morning's work.
	r = analyzeClaude(t, Options{Since: time.Date(2026, 10, 1, 12, 0, 30, 0, time.UTC)})
	if r.Counts.Samples != 1 {
		t.Errorf("--since 12:00:30: %d samples, want 1 (msg_01C1)", r.Counts.Samples)
	}
}

func TestJSONLPathErrors(t *testing.T) {
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644)
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(empty, "nope"), "no such file or directory"},
		{empty, "no .jsonl files in it"},
	} {
		_, err := Analyze(context.Background(), Options{Source: SourceClaudeCode, Paths: []string{c.path}})
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want a one-line *FileError naming it and saying %q", c.path, err, c.want)
		}
	}
}

// TestLongLines: a line far longer than the read buffer is read whole.
func TestLongLines(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 1<<20)
	data := `{"type":"user","sessionId":"s","uuid":"u1","timestamp":"2026-10-01T12:00:00.000Z","message":{"role":"user","content":"` + big + `"}}` + "\n" +
		`{"type":"assistant","sessionId":"s","uuid":"a1","timestamp":"2026-10-01T12:00:02.000Z","requestId":"r","message":{"id":"m1","model":"claude-x","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":0,"output_tokens":200}}}` + "\r\n"
	os.WriteFile(filepath.Join(dir, "s.jsonl"), []byte(data), 0o644)
	r := analyzeClaude(t, Options{Paths: []string{dir}})
	if r.Counts.Lines != 2 || r.Counts.Samples != 1 || r.Models[0].EffectiveTokS.P50 != 100 {
		t.Errorf("counts %+v", r.Counts)
	}
}
