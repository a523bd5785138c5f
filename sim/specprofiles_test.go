package sim

import (
	"strings"
	"testing"
)

// TestSpecTwinProfiles runs profiles/sim-spec-healthy.yaml and
// sim-spec-degenerate.yaml on the same forced-length prose request (a
// tenth of their time): the degenerate twin's output loops, so it must
// yield about 2× the tokens per verification step and decode about 2×
// as fast (1.8–2.4×), by the stream's chunk stamps and by its own
// timings, while the healthy twin's output does not loop.
func TestSpecTwinProfiles(t *testing.T) {
	const out = 512
	body := func() req {
		return req{"messages": userMsg("Write about the sea, the harbour and the boats that come and go with the tide."),
			"max_tokens": out, "ignore_eos": true}
	}
	type twin struct {
		tokS, serverTokS, repetitiveness float64
		// acceptance is accepted / drafted (vLLM's draft acceptance
		// rate); perStep the tokens a decode step yields (its mean
		// acceptance length): decode tokens over decode steps, each step
		// a token not accepted from a draft.
		acceptance, perStep float64
	}
	twins := map[string]twin{}
	for _, name := range []string{"sim-spec-healthy", "sim-spec-degenerate"} {
		c := loadProfileSim(t, name)
		c.TimeScale = 0.1
		_, ts := start(t, c)
		// The fastest of three streams: at a tenth of real time a loaded
		// machine's late timer wake-ups slow a stream's stamps (one
		// `.ci/run` measured 1.37× for one stream), and they only ever
		// slow it.
		tokS := 0.0
		for range 3 {
			_, s := stream(t, ts.URL, body())
			tokS = max(tokS, decodeTokS(t, s))
		}
		_, cm := nonStream(t, ts.URL, body())
		tm := cm.Timings
		if tm == nil || tm.DraftN == 0 || tm.DraftNAccepted == nil {
			t.Fatalf("%s: timings %+v", name, tm)
		}
		text := cm.Choices[0].Message.Content
		twins[name] = twin{
			tokS:           tokS,
			serverTokS:     tm.PredictedPerSecond,
			acceptance:     float64(*tm.DraftNAccepted) / float64(tm.DraftN),
			perStep:        float64(tm.PredictedN-1) / float64(tm.PredictedN-1-*tm.DraftNAccepted),
			repetitiveness: textRepetitiveness(text),
		}
	}
	h, d := twins["sim-spec-healthy"], twins["sim-spec-degenerate"]
	t.Logf("healthy %+v\ndegenerate %+v\nratios: decode %.2f (server %.2f), tokens per step %.2f, acceptance rate %.2f",
		h, d, d.tokS/h.tokS, d.serverTokS/h.serverTokS, d.perStep/h.perStep, d.acceptance/h.acceptance)
	if r := d.perStep / h.perStep; r < 1.8 || r > 2.4 {
		t.Errorf("degenerate yields %.2f× the healthy twin's tokens per step, want about 2×", r)
	}
	if r := d.tokS / h.tokS; r < 1.8 || r > 2.4 {
		t.Errorf("degenerate decodes %.2f× the healthy twin, want about 2× (1.8–2.4)", r)
	}
	if r := d.serverTokS / h.serverTokS; r < 1.8 || r > 2.4 {
		t.Errorf("degenerate's predicted_per_second is %.2f× the healthy twin's, want about 2×", r)
	}
	if h.repetitiveness > 0.05 || d.repetitiveness < 0.8 {
		t.Errorf("repetitiveness: healthy %.2f, degenerate %.2f; want ≤ 0.05 and ≥ 0.8", h.repetitiveness, d.repetitiveness)
	}
}

// textRepetitiveness is the share of a text's words that end an 8-word
// sequence seen earlier in it: outText.repetitiveness, measured on what
// was sent.
func textRepetitiveness(s string) float64 {
	w := strings.Fields(s)
	seen := map[string]bool{}
	rep := 0
	for i := repeatNgram - 1; i < len(w); i++ {
		g := strings.Join(w[i-repeatNgram+1:i+1], " ")
		if seen[g] {
			rep++
		}
		seen[g] = true
	}
	return float64(rep) / float64(max(1, len(w)))
}
