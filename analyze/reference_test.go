package analyze

import (
	"fmt"
	"strconv"
	"testing"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
)

// referenceDB holds the two shapes on which sixpin and the field
// report's tool once differed on the tool cut. The reference is
// src/opencode_skill/throughput.py at grapeot/opencode_skill@
// 73e353aa351ae3fa82b678d2de8d4080ac77506b.
func referenceDB(t *testing.T) string {
	d := oc.New(t, t.TempDir())
	// (a) finished with tool calls, but its tool never started (pending,
	// no state.time): 200 tokens over the whole 10 s would be 20 tok/s.
	d.Assistant(oc.Message{ID: "msg_a", Session: "ses_1", Provider: "p", Model: "m", Created: t0, Completed: t0 + 10*sec,
		Finish: "tool-calls", Input: 100, Output: 200, Parts: []oc.Part{oc.ToolNoStart()}})
	// (b) no finish stored, a tool ran from 2 s: 200 tokens over the 10 s
	// span is 20 tok/s, cut at the tool 100 tok/s.
	d.Assistant(oc.Message{ID: "msg_b", Session: "ses_1", Provider: "p", Model: "m", Created: t0 + 20*sec, Completed: t0 + 30*sec,
		Input: 100, Output: 200, Parts: []oc.Part{oc.Tool(t0+22*sec, t0+29*sec)}})
	// Common shape: finished with tool calls, cut at the tool (2 s): 100.
	d.Assistant(oc.Message{ID: "msg_c", Session: "ses_1", Provider: "p", Model: "m", Created: t0 + 40*sec, Completed: t0 + 50*sec,
		Finish: "tool-calls", Input: 100, Output: 200, Parts: []oc.Part{oc.Tool(t0+42*sec, t0+49*sec)}})
	return d.Close()
}

// TestReferenceEdgeCases: by default sixpin does what throughput.py
// does: (a) is no sample, (b) is not cut.
func TestReferenceEdgeCases(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{referenceDB(t)}})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 2, Min: 20, P10: 28, P25: 40, P50: 60, P75: 80, P90: 92, Max: 100})
	if r.Counts.Skipped.ToolCallsWithoutStart != 1 || r.Counts.Generations != 3 {
		t.Errorf("counts %+v, want (a) skipped as tool calls without a tool start, 3 generations", r.Counts)
	}
	if r.Filters.ToolCut != ToolCutReference {
		t.Errorf("filters %+v, want tool cut %q", r.Filters, ToolCutReference)
	}
}

// TestAnyToolCut: --tool-cut any-tool is sixpin's first rule: (a) keeps
// its tool time, (b) is cut at its tool start.
func TestAnyToolCut(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{referenceDB(t)}, ToolCut: ToolCutAnyTool})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 3, Min: 20, P10: 36, P25: 60, P50: 100, P75: 100, P90: 100, Max: 100})
	if r.Counts.Skipped.ToolCallsWithoutStart != 0 {
		t.Errorf("skipped %+v", r.Counts.Skipped)
	}
}

// The three shapes below are where sixpin once differed from
// throughput.py without saying so.

// malformedPartDB: a message with one part row that is not JSON beside a
// tool that started at 2 s.
func malformedPartDB(t *testing.T) string {
	d := oc.New(t, t.TempDir())
	d.Assistant(oc.Message{ID: "msg_a", Session: "ses_1", Provider: "p", Model: "m", Created: t0, Completed: t0 + 10*sec,
		Finish: "tool-calls", Input: 100, Output: 200, Parts: []oc.Part{oc.Reasoning(t0+500, t0+1000), oc.Tool(t0+2*sec, t0+9*sec)}})
	d.RawPart("msg_a", "ses_1", t0+1500, `{"type":"tool","state":`)
	return d.Close()
}

// TestReferenceMalformedPart: an unreadable part row is ignored, as
// throughput.py ignores it (its json.loads fails: continue); its message
// is still a sample, cut at the readable tool's start (200 tokens in 2 s).
// Its first token is not timed: the unreadable part may have been first.
func TestReferenceMalformedPart(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{malformedPartDB(t)}})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 1, Min: 100, P10: 100, P25: 100, P50: 100, P75: 100, P90: 100, Max: 100})
	if m.TTFTS != nil || m.DecodeTokS != nil {
		t.Errorf("ttft %+v, decode %+v: want none from a message with an unreadable part", m.TTFTS, m.DecodeTokS)
	}
	if r.Counts.Samples != 1 || r.Counts.Generations != 1 || r.Counts.MalformedParts != 1 || r.Counts.MalformedPartMessages != 1 {
		t.Errorf("counts %+v, want 1 generation, 1 sample, 1 unreadable part in 1 message", r.Counts)
	}
}

// noInputDB: assistant messages whose tokens lack input, or output.
func noInputDB(t *testing.T) string {
	d := oc.New(t, t.TempDir())
	// No tokens.input: 200 tokens in 4 s, 50 tok/s; its prompt is its
	// cache reads.
	d.Raw("msg_b", "ses_1", t0, fmt.Sprintf(`{"role":"assistant","providerID":"p","modelID":"m","finish":"stop",`+
		`"time":{"created":%d,"completed":%d},"tokens":{"output":200,"reasoning":0,"cache":{"read":1000,"write":0}}}`, t0, t0+4*sec))
	// No tokens.output, 100 reasoning tokens in 1 s: 100 tok/s.
	d.Raw("msg_c", "ses_1", t0+10*sec, fmt.Sprintf(`{"role":"assistant","providerID":"p","modelID":"m","finish":"stop",`+
		`"time":{"created":%d,"completed":%d},"tokens":{"input":1000,"reasoning":100}}`, t0+10*sec, t0+11*sec))
	return d.Close()
}

// TestReferenceNoInputTokens: a message without tokens.input (or
// tokens.output) is a generation, the missing count taken as 0, as
// throughput.py reads it (_as_int).
func TestReferenceNoInputTokens(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{noInputDB(t)}})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 2, Min: 50, P10: 55, P25: 62.5, P50: 75, P75: 87.5, P90: 95, Max: 100})
	checkDist(t, "context tokens", m.ContextTokens, Dist{N: 2, Min: 1000, P10: 1000, P25: 1000, P50: 1000, P75: 1000, P90: 1000, Max: 1000})
	if r.Counts.Skipped.MissingFields != 0 || r.Counts.MissingTokens != 2 {
		t.Errorf("counts %+v, want none skipped for missing fields, 2 with a missing token count", r.Counts)
	}
}

// fractionalDB: times and token counts with fractions.
func fractionalDB(t *testing.T) string {
	d := oc.New(t, t.TempDir())
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	add := func(id string, created, completed, output, reasoning float64) {
		d.Raw(id, "ses_1", int64(created), fmt.Sprintf(`{"role":"assistant","providerID":"p","modelID":"m","finish":"stop",`+
			`"time":{"created":%s,"completed":%s},"tokens":{"input":100,"output":%s,"reasoning":%s,"cache":{"read":0,"write":0}}}`,
			num(created), num(completed), num(output), num(reasoning)))
	}
	at := float64(t0)
	add("msg_1", at, at+199.5, 100, 0)             // 199 ms: too short
	add("msg_2", at+10000.6, at+10200.4, 100, 0)   // 200 ms: 500 tok/s
	add("msg_3", at+20000, at+21000, 60.9, 0.9)    // 60 tokens in 1 s
	add("msg_4", at+30000, at+31000, 49.6, 0)      // 49 tokens: below 50
	add("msg_5", at+40000.9, at+41000.9, 100.5, 0) // 100 tokens in 1 s
	return d.Close()
}

// TestReferenceTruncates: milliseconds and token counts are whole
// numbers as throughput.py makes them, by int() (truncation), so 199.5
// ms is 199 ms and fails the 0.2 s bound.
func TestReferenceTruncates(t *testing.T) {
	r := analyzeDB(t, Options{DBs: []string{fractionalDB(t)}})
	m := model(t, r, "p/m")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 3, Min: 60, P10: 68, P25: 80, P50: 100, P75: 300, P90: 420, Max: 500})
	sk := r.Counts.Skipped
	if sk.DurationOutOfRange != 1 || sk.BelowMinOutput != 1 || r.Counts.Samples != 3 {
		t.Errorf("counts %+v, want msg_1 out of range, msg_4 below min output, 3 samples", r.Counts)
	}
	if m.Tokens != 260 {
		t.Errorf("sample tokens %d, want 100 + 60 + 100", m.Tokens)
	}
}
