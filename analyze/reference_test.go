package analyze

import (
	"testing"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
)

// referenceDB holds the two shapes on which sixpin and the field
// report's tool (grapeot/opencode_skill, throughput.py) once differed.
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
