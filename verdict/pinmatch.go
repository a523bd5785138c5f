package verdict

import (
	"fmt"
	"math"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Pin tolerances used to decide whether two runs are comparable. Token
// counts use the tolerance_pct recorded in the pins; these cover the rest
// and match what results uses to verify a run.
const (
	// ParamsTolPct bounds the difference in model parameters (declared, or
	// reported by the server when both runs have it).
	ParamsTolPct = results.ParamsTolerancePct
	// MixTolPct bounds the difference in input:output ratio.
	MixTolPct = results.MixTolerancePct
)

// Mismatch is a pin on which two runs differ beyond its tolerance:
// "concurrency: 1 vs 8".
type Mismatch struct {
	// Pin names what differs: "concurrency", "prompt p50", "kv_cache max_num_seqs".
	Pin string
	// A and B are the two values, as people read them.
	A, B string
}

// String formats m as "pin: A vs B".
func (m Mismatch) String() string { return m.Pin + ": " + m.A + " vs " + m.B }

// JoinMismatches formats ms as "pin: A vs B; pin: A vs B".
func JoinMismatches(ms []Mismatch) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, "; ")
}

// PinMismatches lists the pins on which b differs from a beyond their
// tolerances: the model (declared name, size and dtype, and the size the
// servers reported), concurrency (mode, streams or rate and arrival
// process), prompt and output lengths (the declared distributions, and the
// observed medians within the pin's tolerance_pct once sampling noise is
// allowed for), the declared KV-cache settings, and the mix (declared
// classes and the input:output ratio). Runs with no mismatch measure the
// same workload, and their figures may be compared. st sets the intervals
// used for the observed medians.
func PinMismatches(a, b *results.Run, st stats.Settings) []Mismatch {
	var ms []Mismatch
	add := func(pin, x, y string) { ms = append(ms, Mismatch{pin, x, y}) }
	pa, pb := a.Pins, b.Pins

	// 1 model
	ma, mb := pa.Model.Declared, pb.Model.Declared
	if ma.Name != mb.Name {
		add("model", ma.Name, mb.Name)
	}
	if pctOff(ma.ParamsB, mb.ParamsB) > ParamsTolPct {
		add("model params", paramsB(ma.ParamsB), paramsB(mb.ParamsB))
	}
	if pctOff(ma.ActiveParamsB, mb.ActiveParamsB) > ParamsTolPct {
		add("model active params", paramsB(ma.ActiveParamsB), paramsB(mb.ActiveParamsB))
	}
	if ma.Dtype != mb.Dtype {
		add("model dtype", orNone(ma.Dtype), orNone(mb.Dtype))
	}
	oa, ob := pa.Model.Observed.ParamsB, pb.Model.Observed.ParamsB
	if oa > 0 && ob > 0 && pctOff(oa, ob) > ParamsTolPct {
		add("model params (served)", paramsB(oa), paramsB(ob))
	}

	// 2, 3 prompt and output
	ms = append(ms, tokensMismatch("prompt", pa.Prompt.Declared, pb.Prompt.Declared, a, b, results.HistPrompt, st)...)
	ms = append(ms, tokensMismatch("output", pa.Output.Declared.TokensDeclared, pb.Output.Declared.TokensDeclared, a, b, results.HistOutput, st)...)
	if pa.Output.Declared.Exact != pb.Output.Declared.Exact {
		add("output exact", fmt.Sprint(pa.Output.Declared.Exact), fmt.Sprint(pb.Output.Declared.Exact))
	}

	// 4 concurrency
	ca, cb := pa.Concurrency.Declared, pb.Concurrency.Declared
	switch {
	case ca.Mode != cb.Mode || ca.Sessions != cb.Sessions:
		add("concurrency", scenario.ConcurrencyWords(ca), scenario.ConcurrencyWords(cb))
	case ca.Mode == scenario.ModeClosed:
		if ca.Streams != cb.Streams {
			add("concurrency", fmt.Sprint(ca.Streams), fmt.Sprint(cb.Streams))
		}
	default:
		if !same(ca.RateRPS, cb.RateRPS) {
			add("concurrency rate", numfmt.Plain(ca.RateRPS)+" req/s", numfmt.Plain(cb.RateRPS)+" req/s")
		}
		if ca.Arrival != cb.Arrival || !same(ca.Burstiness, cb.Burstiness) {
			add("concurrency arrival", scenario.ArrivalWords(ca), scenario.ArrivalWords(cb))
		}
		if ca.MaxInFlight != cb.MaxInFlight {
			add("concurrency max_in_flight", intOrNone(ca.MaxInFlight), intOrNone(cb.MaxInFlight))
		}
	}

	if a, b := scenario.AffinityWords(ca), scenario.AffinityWords(cb); a != b && ca.Mode == cb.Mode && ca.Sessions == cb.Sessions {
		add("concurrency session_affinity", a, b) // a router places the sessions differently
	}

	// 5 KV cache, as declared
	ka, kb := pa.KVCache.Declared, pb.KVCache.Declared
	if ka.MaxModelLen != kb.MaxModelLen {
		add("kv_cache max_model_len", intOrNone(ka.MaxModelLen), intOrNone(kb.MaxModelLen))
	}
	if !same(ka.GPUMemoryUtilization, kb.GPUMemoryUtilization) {
		add("kv_cache gpu_memory_utilization", floatOrNone(ka.GPUMemoryUtilization), floatOrNone(kb.GPUMemoryUtilization))
	}
	if ka.MaxNumSeqs != kb.MaxNumSeqs {
		add("kv_cache max_num_seqs", intOrNone(ka.MaxNumSeqs), intOrNone(kb.MaxNumSeqs))
	}
	if ka.Batching != kb.Batching {
		add("kv_cache batching", orNone(ka.Batching), orNone(kb.Batching))
	}
	if scenario.SwitchWords(ka.PrefixCaching) != scenario.SwitchWords(kb.PrefixCaching) {
		add("kv_cache prefix_caching", scenario.SwitchWords(ka.PrefixCaching), scenario.SwitchWords(kb.PrefixCaching))
	}

	// 6 mix
	xa, xb := pa.Mix.Declared, pb.Mix.Declared
	if scenario.ClassesWords(xa.Classes) != scenario.ClassesWords(xb.Classes) {
		add("mix classes", scenario.ClassesWords(xa.Classes), scenario.ClassesWords(xb.Classes))
	}
	if pctOff(xa.InputOutputRatio, xb.InputOutputRatio) > MixTolPct {
		add("mix ratio", numfmt.Sig(xa.InputOutputRatio), numfmt.Sig(xb.InputOutputRatio))
	} else if ra, rb := pa.Mix.Observed.InputOutputRatio, pb.Mix.Observed.InputOutputRatio; ra > 0 && rb > 0 && pctOff(ra, rb) > MixTolPct {
		add("mix ratio (observed)", numfmt.Sig(ra), numfmt.Sig(rb))
	}
	return ms
}

// tokensMismatch compares a token-count pin: the declared distributions
// (equal when described alike, else their bounds and means within the
// tolerance), then the observed medians: they differ when their intervals,
// each widened by the tolerance, do not overlap.
func tokensMismatch(pin string, da, db scenario.TokensDeclared, a, b *results.Run, m results.HistSpec, st stats.Settings) []Mismatch {
	var ms []Mismatch
	// Re-sent reasoning lengthens every later prompt of a session; a run
	// from before the option (nil) dropped it.
	if ra, rb := da.PreserveReasoning != nil && *da.PreserveReasoning, db.PreserveReasoning != nil && *db.PreserveReasoning; ra != rb {
		ms = append(ms, Mismatch{pin + " preserve_reasoning", scenario.ReasoningWords(ra), scenario.ReasoningWords(rb)})
	}
	// The text a drafter is asked to continue changes decode speed; a
	// run from before the content pin (empty) is not judged.
	if da.Content != "" && db.Content != "" && da.Content != db.Content {
		ms = append(ms, Mismatch{pin + " content", da.Content, db.Content})
	}
	tol := max(da.TolerancePct, db.TolerancePct)
	if da.Dist != db.Dist && (pctOff(da.Min, db.Min) > tol || pctOff(da.Max, db.Max) > tol || pctOff(da.Mean, db.Mean) > tol) {
		da.Tokenizer, db.Tokenizer = "", "" // how prompts were built is not the workload
		da.Content, db.Content = "", ""     // named above
		ms = append(ms, Mismatch{pin, scenario.TokensWords(da), scenario.TokensWords(db)})
	}
	ea, oka := observedMedian(a, m)
	eb, okb := observedMedian(b, m)
	if !oka || !okb {
		return ms
	}
	ia, ib := st.Interval(pin+"/a", ea), st.Interval(pin+"/b", eb)
	if !ia.Known {
		ia = stats.Interval{Lo: ea.Value, Hi: ea.Value}
	}
	if !ib.Known {
		ib = stats.Interval{Lo: eb.Value, Hi: eb.Value}
	}
	w := tol / 100
	if ia.Hi*(1+w) < ib.Lo*(1-w) || ib.Hi*(1+w) < ia.Lo*(1-w) {
		ms = append(ms, Mismatch{pin + " p50", numfmt.Thousands(ea.Value), numfmt.Thousands(eb.Value)})
	}
	return ms
}

// observedMedian is the median token count of the run's successful
// requests, from the whole-run histogram (else the pin's summary).
func observedMedian(run *results.Run, m results.HistSpec) (stats.Estimate, bool) {
	hc := histCache{}
	if h, err := hc.get(run, results.WindowAll, m.Name); err == nil && h != nil && h.TotalCount() > 0 {
		return stats.HistQuantile(h, 50, m.Scale), true
	}
	var obs results.TokensObserved
	if m.Name == results.HistPrompt.Name {
		obs = run.Pins.Prompt.Observed
	} else {
		obs = run.Pins.Output.Observed
	}
	if obs.PerRequest == nil {
		return stats.Estimate{}, false
	}
	return stats.Estimate{Value: obs.PerRequest.P50, Exact: true}, true
}

// pctOff is |a − b| as a percentage of the larger; 0 when both are 0.
func pctOff(a, b float64) float64 {
	m := math.Max(math.Abs(a), math.Abs(b))
	if m == 0 {
		return 0
	}
	return math.Abs(a-b) / m * 100
}

func same(a, b float64) bool { return pctOff(a, b) < 1e-9 }

func paramsB(v float64) string {
	if v == 0 {
		return "not declared"
	}
	return numfmt.Short(v) + "B"
}

func intOrNone(v int) string {
	if v == 0 {
		return "not declared"
	}
	return numfmt.Thousands(float64(v))
}

func floatOrNone(v float64) string {
	if v == 0 {
		return "not declared"
	}
	return numfmt.Plain(v)
}

// orNone is s, or "not declared".
func orNone(s string) string {
	if s == "" {
		return "not declared"
	}
	return s
}
