package capacity

import (
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

func f(v float64) *float64 { return &v }

// failed is a valid point at v whose tier t failed first on cond, with a
// steady window w and the server's steady window sw (nil: not scraped).
func failed(t *testing.T, cond string, w *results.Window, sw *results.ServerWindow) *Point {
	t.Helper()
	c, err := verdict.ParseCondition(cond)
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Valid: true, Windows: map[string]*results.Window{results.WindowSteady: w}}
	if sw != nil {
		run.Server = &results.Server{Windows: map[string]*results.ServerWindow{results.WindowSteady: sw}}
	}
	if w.ErrorsByClass == nil {
		w.ErrorsByClass = map[string]int{}
	}
	return &Point{Value: 7, Valid: true, Judged: []string{"t"}, Run: run, Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: verdict.Failed, First: 0,
		Conditions: []verdict.CondVerdict{{Condition: c, Outcome: verdict.Failed, Decided: true, Value: 2800, HasValue: true, AtS: 41}}}}}
}

// The binding constraint is read from the evidence of the failing run.
func TestBindCauses(t *testing.T) {
	t.Parallel()
	ttft := func(mean, queue, prefill float64) *results.Window {
		w := &results.Window{Requests: 100, TTFTMs: &results.Dist{Mean: mean}}
		if queue >= 0 {
			w.ServerQueueMs, w.ServerPrefillMs = &results.Dist{Mean: queue}, &results.Dist{Mean: prefill}
		}
		return w
	}
	for _, c := range []struct {
		name  string
		p     *Point
		cause string
	}{
		{"the server's own queue time", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 2000, 300), nil), CauseQueue},
		{"a queue the server only counts", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, -1, 0),
			&results.ServerWindow{Waiting: &results.MeanPeak{Peak: 3}, KVRegime: results.RegimeFits}), CauseQueue},
		{"a saturated KV cache", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 2000, 300),
			&results.ServerWindow{KVUsagePct: &results.MeanPeak{Peak: 97}, KVRegime: results.RegimeSaturated}), CauseKV},
		{"preemptions", failed(t, "tpot_ms.p90 <= 50", ttft(100, 0, 90),
			&results.ServerWindow{Preemptions: f(4), KVRegime: results.RegimePreempting}), CausePreemption},
		{"prefill", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 100, 2200), nil), CausePrefill},
		{"decode", failed(t, "decode_tok_s.p10 >= 30", ttft(100, 0, 90), &results.ServerWindow{KVRegime: results.RegimeFits}), CauseDecode},
		{"the rest", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 100, 200), nil), CauseRest},
		{"429s", failed(t, "error_rate <= 1%", &results.Window{Requests: 100, Failed: 30, ErrorsByClass: map[string]int{"http_429": 30}}, nil), CauseRateLimit},
		{"500s", failed(t, "error_rate <= 1%", &results.Window{Requests: 100, Failed: 30, ErrorsByClass: map[string]int{"http_5xx": 30}}, nil), CauseErrors},
	} {
		b := Bind("t", c.p)
		if b.Cause != c.cause || b.Condition == nil || b.At != 7 || !b.Decided || b.AtS != 41 {
			t.Errorf("%s: cause %q, want %q (%+v)", c.name, b.Cause, c.cause, b)
		}
	}
	// sixpin saturated: the point is invalid, whatever failed.
	p := failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 2000, 300), nil)
	p.Valid, p.Invalid = false, []string{"sixpin saturated: its own floor is 9% of the TTFT p50"}
	if b := Bind("t", p); b.Cause != CauseClient || len(b.Evidence.Invalid) != 1 {
		t.Errorf("saturated: %+v", b)
	}
	// A broken pin with no condition failed: invalid, named.
	p = &Point{Value: 3, Valid: false, Invalid: []string{"prompt: drift"}, Run: &results.Run{}, Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: verdict.Passed, First: -1}}}
	if b := Bind("t", p); b.Cause != CauseInvalid || b.Condition != nil {
		t.Errorf("invalid: %+v", b)
	}
	e := Bind("t", failed(t, "ttft_ms.p90 <= 2000", ttft(2500, 2000, 300),
		&results.ServerWindow{Waiting: &results.MeanPeak{Peak: 3}, KVUsagePct: &results.MeanPeak{Peak: 97}, KVRegime: results.RegimeSaturated})).Evidence
	if *e.WaitingPeak != 3 || *e.KVPeakPct != 97 || *e.QueueMeanMs != 2000 || *e.TTFTMeanMs != 2500 || e.Requests != 100 {
		t.Errorf("evidence %+v", e)
	}
}

func TestNormalise(t *testing.T) {
	t.Parallel()
	n := Normalise(6, Deployment{GPUs: 2, PowerWatts: 500}, &results.Run{Cost: &results.Cost{Basis: "energy", PerHourUSD: 0.09}})
	if n.PerGPU != 3 || n.PerKW != 12 || n.CostBasis != "energy" || n.CostPerAgentHourUSD != 0.015 || n.PerUSDHour < 66 || n.PerUSDHour > 67 {
		t.Errorf("%+v", n)
	}
	n = Normalise(6, Deployment{USDPerHour: 12}, &results.Run{Cost: &results.Cost{Basis: "tokens", PerHourUSD: 30}})
	if n.CostBasis != "deployment" || n.CostPerAgentHourUSD != 2 || n.PerGPU != 0 {
		t.Errorf("%+v", n)
	}
	if Normalise(6, Deployment{}, &results.Run{}) != nil || Normalise(0, Deployment{GPUs: 1}, nil) != nil {
		t.Error("nothing declared or nothing passed is no normalisation")
	}
}

// A tier the point could not judge is not a pass, and what binds says so.
func TestBindUndecided(t *testing.T) {
	t.Parallel()
	p := failed(t, "ttft_ms.p90 <= 2000", &results.Window{Requests: 12, TTFTMs: &results.Dist{Mean: 900}}, nil)
	v := &p.Verdicts[0]
	v.Outcome, v.Conditions[0].Outcome, v.Conditions[0].Decided = verdict.Undecided, verdict.Undecided, false
	if p.Passed("t") {
		t.Error("an undecided tier passed")
	}
	if b := Bind("t", p); b.Cause != CauseUndecided || b.Condition == nil || b.Decided {
		t.Errorf("%+v", b)
	}
}

// In compressed time (--time-scale) the client's own time — the TTFT
// outside the server's queue and prefill — weighs 1/scale what it would
// in real time: a queue of 160 ms in a TTFT of 400 ms whose rest is
// 200 ms at scale 0.2 is a queue of 160 in 240 ms of real time, and binds.
func TestBindInCompressedTime(t *testing.T) {
	t.Parallel()
	w := &results.Window{Requests: 100, TTFTMs: &results.Dist{Mean: 400}, ServerQueueMs: &results.Dist{Mean: 160},
		ServerPrefillMs: &results.Dist{Mean: 40}, TTFTRestMs: &results.Dist{Mean: 200}}
	p := failed(t, "ttft_ms.p90 <= 150", w, nil)
	if b := Bind("t", p); b.Cause != CauseRest {
		t.Errorf("real time: %s", b.Cause)
	}
	p.Run.Compressed = &results.Compressed{Scale: 0.2}
	if b := Bind("t", p); b.Cause != CauseQueue {
		t.Errorf("compressed: %s", b.Cause)
	}
}
