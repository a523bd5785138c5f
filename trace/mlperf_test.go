package trace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const mlperfSample = "testdata/mlperf/agentic.jsonl"

// mlperfSampleSHA is `sha256sum testdata/mlperf/agentic.jsonl`.
const mlperfSampleSHA = "cb435a3b7e515da5305046edb46f4bc38122cd0f935a0a1cf2baa14d5da02ad8"

func TestReadMLPerfAgentic(t *testing.T) {
	d, err := ReadMLPerfAgentic(mlperfSample, strings.ToUpper(mlperfSampleSHA))
	if err != nil {
		t.Fatal(err)
	}
	if d.SHA256 != mlperfSampleSHA {
		t.Errorf("SHA256 = %s", d.SHA256)
	}
	if len(d.Conversations) != 2 {
		t.Fatalf("%d conversations, want 2", len(d.Conversations))
	}
	c := d.Conversations[0]
	if c.ID != "c1" || len(c.Rows) != 6 || c.ClientTurns() != 3 || !strings.HasPrefix(c.System, "You are a careful coding agent") {
		t.Errorf("conversation 1: id %q, %d rows, %d client turns, system %.20q", c.ID, len(c.Rows), c.ClientTurns(), c.System)
	}
	if r := c.Rows[1]; r.Role != "assistant" || r.HasContent || !strings.Contains(string(r.ToolCalls), `"functions.bash:0"`) || !strings.HasPrefix(r.Reasoning, "The failure") {
		t.Errorf("row 2: %+v", r)
	}
	if r := c.Rows[2]; len(r.ToolResults) != 1 || r.ToolResults[0].ToolCallID != "functions.bash:0" || r.Delay != 400*time.Millisecond {
		t.Errorf("row 3: %+v", r)
	}
	if r := c.Rows[0]; !strings.HasPrefix(string(r.Tools), `[{"type":"function"`) {
		t.Errorf("row 1 tools: %s", r.Tools)
	}
	// Counted in words, the trace's prompts grow by the answers, and by
	// their reasoning only when it is kept.
	words := func(s string) int { return len(strings.Fields(s)) }
	kept, dropped := d.Trace(words, true), d.Trace(words, false)
	k, dr := kept.Sessions[0].Turns, dropped.Sessions[0].Turns
	if len(k) != 3 || k[0].InputTokens != dr[0].InputTokens {
		t.Fatalf("turns %+v vs %+v", k, dr)
	}
	r1, r2 := words(c.Rows[1].Reasoning), words(c.Rows[3].Reasoning)
	if got := k[1].InputTokens - dr[1].InputTokens; got != r1 {
		t.Errorf("turn 2 keeps %d tokens more, want the first reasoning's %d", got, r1)
	}
	if got := k[2].InputTokens - dr[2].InputTokens; got != r1+r2 {
		t.Errorf("turn 3 keeps %d tokens more, want both reasonings' %d", got, r1+r2)
	}
	if k[0].ReasoningTokens != r1 || k[1].Think != 400*time.Millisecond || k[2].Think != 300*time.Millisecond {
		t.Errorf("turns %+v", k)
	}
}

// A file that is not the declared one is refused before a row is read,
// naming both digests.
func TestMLPerfSHA256Mismatch(t *testing.T) {
	want := strings.Repeat("ab", 32)
	_, err := ReadMLPerfAgentic(mlperfSample, want)
	var te *Error
	if !errors.As(err, &te) || te.Field != "sha256" || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), mlperfSampleSHA) {
		t.Fatalf("err = %v", err)
	}
}

// The salts are MLPerf's reference's: Python's
// hashlib.blake2b(s.encode(), digest_size=2).hexdigest().
func TestMLPerfSalts(t *testing.T) {
	for s, want := range map[string]string{"1": "4461", "2": "ba75", "3": "0967", "c1": "6d82",
		"django__django-16899": "edc0", "": "b1fe", strings.Repeat("x", 200): "6c19"} {
		if got := blake2b2(s); got != want {
			t.Errorf("blake2b2(%.20q) = %s, want %s", s, got, want)
		}
	}
	if got := MLPerfSaltedSystem("SYS", 2, "c1"); got != "[salt: ba75]\n\nSYS\n\n[salt: 6d82]" {
		t.Errorf("salted system %q", got)
	}
	if MLPerfSessionID("c1", 1) != "c1" || MLPerfSessionID("c1", 3) != "c1__repeat_3" {
		t.Error("session ids")
	}
}

func TestBadMLPerfCorpus(t *testing.T) {
	for file, want := range map[string]string{
		"mlperf-unknown-key.jsonl":       "1:85: temprature: unknown key",
		"mlperf-turn-gap.jsonl":          "2:35: turn: must be 2: turns run 1, 2, 3, … without gaps or repeats (got 3)",
		"mlperf-tool-without-call.jsonl": "3:46: role: a tool row must follow an assistant row with tool_calls (line 2 has none)",
		"mlperf-interleaved.jsonl":       `3:21: conversation_id: rows of conversation "c1" are not together: it began at line 1 (MLPerf requires a conversation's rows consecutive)`,
		"mlperf-tool-call-unknown.jsonl": "2:164: tool_calls[0].function.strict: unknown key",
		"mlperf-negative-delay.jsonl":    "1:88: delay_seconds: must be ≥ 0 s (got -1)",
		"mlperf-starts-assistant.jsonl":  "1:46: role: assistant cannot come at a conversation's start: want user",
		"mlperf-model.jsonl":             "1:80: model: a per-turn model is not replayed: sixpin pins one model per run (pin 1)",
	} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", file)
			_, err := ReadMLPerfAgentic(path, "")
			if err == nil {
				t.Fatal("read succeeded")
			}
			if got, want := err.Error(), path+":"+want; got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// FuzzReadMLPerfAgentic feeds the MLPerf reader arbitrary bytes: a
// dataset or an error, never a panic; a dataset it returns keeps the
// format's invariants.
func FuzzReadMLPerfAgentic(f *testing.F) {
	seed(f, "testdata/mlperf/*.jsonl", "testdata/bad/mlperf-*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeMLPerfAgentic("fuzz", data)
		if err != nil {
			return
		}
		for _, c := range d.Conversations {
			if c.ID == "" || len(c.Rows) == 0 || c.Rows[0].Role != "user" {
				t.Fatalf("conversation %q: %d rows", c.ID, len(c.Rows))
			}
			for k, r := range c.Rows {
				if r.Turn != k+1 || r.Delay < 0 {
					t.Fatalf("conversation %q row %d: %+v", c.ID, k, r)
				}
			}
		}
		_ = d.Trace(func(s string) int { return len(s) }, true)
	})
}
