package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/analyze/opencodetest"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/trace"
)

// A trace exported from an opencode database replays against the
// simulator with the same sessions, turns and token counts, and the
// replay's results carry the pins derived from the trace.
func TestExportedTraceReplays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := opencodetest.New(t, dir)
	base := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).UnixMilli()
	turns := 0
	for s := 0; s < 2; s++ {
		sid := fmt.Sprintf("ses_%d", s)
		db.Session(sid, base)
		at := base + int64(s)*30_000
		ctx := 3000 + 1000*s
		for k := 0; k < 3; k++ {
			out := 60 + 10*k
			db.Assistant(opencodetest.Message{
				ID: fmt.Sprintf("msg_%d_%d", s, k), Session: sid, Provider: "local", Model: "qwen",
				Created: at, Completed: at + 4000, Finish: "stop",
				Input: ctx / 5, CacheRead: ctx - ctx/5, Output: out,
				Parts: []opencodetest.Part{opencodetest.Text(at+500, at+4000)},
			})
			turns++
			at += 4000 + 2000 // two seconds of tool time
			ctx += out + 700
		}
	}
	path := db.Close()

	rep, err := analyze.Analyze(context.Background(), analyze.Options{DBs: []string{path}, MinOutputTokens: 1, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	tracePath := filepath.Join(dir, "sessions.jsonl")
	f, err := os.Create(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.Write(f, rep.Trace); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tr, err := trace.Read(tracePath)
	if err != nil || len(tr.Sessions) != 2 || tr.Turns() != turns {
		t.Fatalf("exported trace: %v, %+v", err, tr)
	}

	scenarioPath := filepath.Join(dir, "replay.yaml")
	os.WriteFile(scenarioPath, []byte("name: replay\npins:\n  model: {name: qwen}\nworkload: {kind: trace, file: sessions.jsonl, time_scale: 0.05}\n"), 0o644)
	o, err := run(t, Config{ScenarioPath: scenarioPath, Profile: simProfile(t, "qwen2")})
	if err != nil {
		t.Fatal(err)
	}
	r := o.Run
	if r.Sessions == nil || len(r.Sessions.All) != 2 {
		t.Fatalf("sessions %+v", r.Sessions)
	}
	if r.Errors.Requests != turns || r.Errors.Failed != 0 {
		t.Errorf("%d requests (%d failed), want %d", r.Errors.Requests, r.Errors.Failed, turns)
	}
	for _, s := range r.Sessions.All {
		if s.Turns != 3 || s.EndReason != record.SessionEndTurns {
			t.Errorf("session %d: %d turns, ended %q", s.Index, s.Turns, s.EndReason)
		}
	}
	if !r.Valid || r.Pins.Prompt.Verified != results.Verified || r.Pins.Output.Verified != results.Verified {
		t.Errorf("valid %v %v; prompt %s (%s); output %s (%s)", r.Valid, r.Invalid, r.Pins.Prompt.Verified, r.Pins.Prompt.Reason,
			r.Pins.Output.Verified, r.Pins.Output.Reason)
	}
	// The recorded token counts, turn by turn.
	var wantIn, wantOut int64
	for _, s := range tr.Sessions {
		for _, u := range s.Turns {
			wantIn += int64(u.InputTokens)
			wantOut += int64(u.OutputTokens)
		}
	}
	if r.Tokens.Input != wantIn || r.Tokens.Output != wantOut {
		t.Errorf("replayed %d in / %d out, recorded %d / %d", r.Tokens.Input, r.Tokens.Output, wantIn, wantOut)
	}
	if d := r.Pins.Prompt.Declared.Dist; !strings.Contains(d, "from the trace") || r.Pins.Concurrency.Declared.Mode != "trace" {
		t.Errorf("derived pins: prompt %q, concurrency %+v", d, r.Pins.Concurrency.Declared)
	}
}
