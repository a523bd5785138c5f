package analyze

import (
	"fmt"
	"testing"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
)

// mixedDB writes an OpenCode 2 database upgraded in place: old work in the
// frozen message and part tables, new work in session_message. old and
// fresh generations of 2 s each (400 tokens: 200 tok/s), ten to a session.
func mixedDB(t *testing.T, old, fresh int) string {
	t.Helper()
	d := oc.NewV2(t, t.TempDir())
	for i := range old + fresh {
		at := t0 + int64(i)*10*sec
		ses := fmt.Sprintf("ses_%03d", i/10)
		m := oc.Message{ID: fmt.Sprintf("msg_%04d", i), Session: ses, Provider: "cloud", Model: "m", Created: at, Completed: at + 2*sec,
			Finish: "stop", Input: 1000, Output: 400, Parts: []oc.Part{oc.Text(at+500, at+2*sec)}}
		if i < old {
			d.User(fmt.Sprintf("msg_%04du", i), ses, at-sec)
			d.Assistant(m)
		} else {
			d.UserV2(fmt.Sprintf("msg_%04du", i), ses, at-sec)
			d.AssistantV2(m)
		}
	}
	return d.Close()
}

// TestMixedLayouts is the case: 300 generations in the old
// tables and 300 in session_message are 600, not 300.
func TestMixedLayouts(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{mixedDB(t, 300, 300)}})
	if r.Counts.Generations != 600 || r.Counts.Samples != 600 || r.Counts.User != 600 || r.Counts.Assistant != 600 {
		t.Errorf("counts %+v, want 600 generations, samples, user and assistant messages", r.Counts)
	}
	if db := r.Databases[0]; db.V1Messages != 600 || db.V2Messages != 600 {
		t.Errorf("rows by layout: v1 %d, v2 %d; want 600 and 600", db.V1Messages, db.V2Messages)
	}
	m := model(t, r, "cloud/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 600, Min: 200, P10: 200, P25: 200, P50: 200, P75: 200, P90: 200, Max: 200})
	if r.Sessions.Sessions != 60 {
		t.Errorf("sessions %d, want 60", r.Sessions.Sessions)
	}
}

// TestV2Only reads a database whose every message is in session_message.
func TestV2Only(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{mixedDB(t, 0, 20)}})
	if r.Counts.Generations != 20 || r.Counts.Samples != 20 || r.Databases[0].V2Messages != 40 || r.Databases[0].V1Messages != 0 {
		t.Errorf("counts %+v, databases %+v", r.Counts, r.Databases)
	}
}

// TestMigratedRowsCountedOnce: OpenCode 2 may copy old messages into
// session_message, under their own ids or under new ones. Either way a
// message is counted once, from its v2 copy.
func TestMigratedRowsCountedOnce(t *testing.T) {
	d := oc.NewV2(t, t.TempDir())
	for i := range 4 {
		at := t0 + int64(i)*10*sec
		m := oc.Message{ID: fmt.Sprintf("msg_%d", i), Session: "ses_1", Provider: "cloud", Model: "m", Created: at, Completed: at + 2*sec,
			Finish: "stop", Input: 1000, Output: 400}
		d.Assistant(m)
		if i%2 == 0 {
			// The v2 copy under the same id was updated since (4 s): it
			// is the one read.
			m.Completed = at + 4*sec
		} else {
			m.ID = fmt.Sprintf("evt_legacy_backfill_m_%08d_abc", i) // a backfill id, the same message
		}
		d.AssistantV2(m)
	}
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	if r.Counts.Generations != 4 || r.Counts.Messages != 4 || r.Counts.Duplicates != 4 || r.Counts.LayoutDuplicates != 4 {
		t.Errorf("counts %+v, want 4 generations of 4 messages, 4 duplicates in both layouts", r.Counts)
	}
	m := model(t, r, "cloud/m")
	checkDist(t, "effective tok/s (the v2 copies' 4 s, and 2 s)", m.EffectiveTokS, Dist{N: 4, Min: 100, P10: 100, P25: 100, P50: 150, P75: 200, P90: 200, Max: 200})
}

// TestV2RowsNamed: session_message rows that are not user or assistant
// messages are counted by type, and unknown types or data named as
// skipped.
func TestV2RowsNamed(t *testing.T) {
	d := oc.NewV2(t, t.TempDir())
	d.AssistantV2(oc.Message{ID: "msg_1", Session: "ses_1", Provider: "p", Model: "m", Created: t0, Completed: t0 + 2*sec, Finish: "stop", Input: 10, Output: 100})
	d.RawV2("msg_2", "ses_1", "model-switched", t0+1, `{"model":{"id":"m","providerID":"p"},"time":{"created":1}}`)
	d.RawV2("msg_3", "ses_1", "compaction", t0+2, `{"reason":"auto","summary":"s","recent":"","time":{"created":1}}`)
	d.RawV2("msg_4", "ses_1", "hologram", t0+3, `{"time":{"created":1}}`)
	d.RawV2("msg_5", "ses_1", "assistant", t0+4, `{"model":`)
	d.RawV2("msg_6", "ses_1", "assistant", t0+5, `{"agent":"build","model":{"id":"m","providerID":"p"},"content":[],"time":{"created":1}}`)
	d.Raw("msg_7", "ses_1", t0+6, `{"role":"system"}`)
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	if r.Counts.Other["session_message.type=model-switched"] != 1 || r.Counts.Other["session_message.type=compaction"] != 1 || len(r.Counts.Other) != 2 {
		t.Errorf("other rows %v", r.Counts.Other)
	}
	sk := r.Counts.Skipped
	if sk.UnknownTypes["session_message.type=hologram"] != 1 || sk.UnknownTypes["message.role=system"] != 1 || len(sk.UnknownTypes) != 2 {
		t.Errorf("unknown types %v", sk.UnknownTypes)
	}
	if sk.MalformedMessages != 1 || sk.Incomplete != 1 || r.Counts.Generations != 1 {
		t.Errorf("counts %+v", r.Counts)
	}
}

// TestV2Timings: OpenCode 2 times no text; a message's first token is
// its first content item's start when that item is reasoning or a tool
// call, and a tool starts running at its time.ran.
func TestV2Timings(t *testing.T) {
	d := oc.NewV2(t, t.TempDir())
	// Reasoning first: TTFT 0.5 s; cut at the tool's ran (2 s): 200 tokens
	// in 2 s = 100 tok/s; decode 200 / 1.5 s.
	d.AssistantV2(oc.Message{ID: "msg_1", Session: "ses_1", Provider: "p", Model: "m", Created: t0, Completed: t0 + 10*sec, Finish: "tool-calls",
		Input: 100, Output: 150, Reasoning: 50,
		Parts: []oc.Part{oc.Reasoning(t0+500, t0+1000), oc.Text(0, 0), {Type: "tool", Input: t0 + 1500, Start: t0 + 2*sec, End: t0 + 9*sec}}})
	// Text first: no first-token time.
	d.AssistantV2(oc.Message{ID: "msg_2", Session: "ses_1", Provider: "p", Model: "m", Created: t0 + 20*sec, Completed: t0 + 22*sec, Finish: "stop",
		Input: 100, Output: 200, Parts: []oc.Part{oc.Text(0, 0), oc.Reasoning(t0+20*sec+500, t0+21*sec)}})
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 2, Min: 100, P10: 100, P25: 100, P50: 100, P75: 100, P90: 100, Max: 100})
	checkDist(t, "ttft", m.TTFTS, Dist{N: 1, Min: 0.5, P10: 0.5, P25: 0.5, P50: 0.5, P75: 0.5, P90: 0.5, Max: 0.5})
	checkDist(t, "decode", m.DecodeTokS, Dist{N: 1, Min: 400.0 / 3, P10: 400.0 / 3, P25: 400.0 / 3, P50: 400.0 / 3, P75: 400.0 / 3, P90: 400.0 / 3, Max: 400.0 / 3})
}
