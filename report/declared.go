package report

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/scenario"
)

// DeclaredPin is one of the six pins as declared, in words.
type DeclaredPin struct {
	N    int
	Pin  string
	Text string
}

// DeclaredPins words d's six pins, in pin order. It is the one wording of
// the declared pins: `sixpin validate`, the pin card (so every report
// format and the gate) and compare's pin table all print it, and compare's
// mismatches name values with its parts.
func DeclaredPins(d scenario.Declared) []DeclaredPin {
	return []DeclaredPin{
		{1, "model", declaredModel(d.Model)},
		{2, "prompt", declaredTokens(d.Prompt)},
		{3, "output", declaredOutput(d.Output)},
		{4, "concurrency", declaredConcurrency(d.Concurrency)},
		{5, "kv_cache", declaredKV(d.KVCache)},
		{6, "mix", declaredMix(d.Mix)},
	}
}

// declaredModel: "qwen3.8-27b, 27B params (3B active), bf16; requested as
// "qwen"" (the request only once a target is resolved).
func declaredModel(d scenario.ModelDeclared) string {
	s := d.Name
	if d.ParamsB > 0 {
		s += ", " + numfmt.Plain(d.ParamsB) + "B params"
		if d.ActiveParamsB > 0 {
			s += " (" + numfmt.Plain(d.ActiveParamsB) + "B active)"
		}
	}
	if d.Dtype != "" {
		s += ", " + d.Dtype
	}
	if d.Requested != "" {
		s += fmt.Sprintf("; requested as %q", d.Requested)
	}
	return s
}

// declaredTokens: "uniform [400, 600] tokens (mean 500)", "64 tokens" (a
// fixed length), an agentic history's mean over turns, a mix's mean over
// its classes; and the tokenizer the prompts are built to, once known.
func declaredTokens(d scenario.TokensDeclared) string {
	var s string
	switch {
	case strings.HasPrefix(d.Dist, "agentic"):
		s = fmt.Sprintf("%s (mean %s tokens over turns)", d.Dist, group(d.Mean))
	case d.Dist == scenario.PerClass:
		s = fmt.Sprintf("%s: mean %s tokens over the mix", d.Dist, group(d.Mean))
	case d.Min == d.Max && d.Min > 0 && d.Mean == d.Min && d.Dist == numfmt.Plain(d.Min):
		s = d.Dist + " tokens"
	default:
		s = fmt.Sprintf("%s tokens (mean %s)", d.Dist, group(d.Mean))
	}
	if d.Tokenizer != "" {
		s += ", built by tokenizer " + d.Tokenizer
	}
	return s
}

// noControl is how profiles and results files spell an endpoint without a
// don't-stop-early control (endpoint.ControlNone).
const noControl = "none"

// declaredOutput is declaredTokens, and whether (and how) it is exact.
func declaredOutput(d scenario.OutputDeclared) string {
	s := declaredTokens(d.TokensDeclared)
	switch {
	case d.Exact && d.Control == noControl:
		s += ", exact, not enforced (no don't-stop-early control)"
	case d.Exact && d.Control != "":
		s += ", exact via " + d.Control
	case d.Exact:
		s += ", exact"
	}
	return s
}

// declaredConcurrency: "closed loop, 16 concurrent streams", "open loop,
// 2.5 req/s gamma arrivals (burstiness 0.5), at most 64 in flight", agentic
// sessions, a trace's sessions.
func declaredConcurrency(d scenario.ConcurrencyDeclared) string {
	switch {
	case d.Mode == scenario.ModeTrace:
		return fmt.Sprintf("the trace's sessions at their recorded times (up to %d at once)", d.Streams)
	case d.Mode == scenario.ModeOpen:
		s := fmt.Sprintf("open loop, %s req/s %s", numfmt.Plain(d.RateRPS), arrivalWords(d))
		if d.MaxInFlight > 0 {
			return s + fmt.Sprintf(", at most %d in flight", d.MaxInFlight)
		}
		return s + ", no in-flight cap"
	case d.Sessions:
		return "closed loop, " + numfmt.Count(d.Streams, "concurrent agentic session", "concurrent agentic sessions") + " (think time between turns)"
	case d.Streams == 1:
		return "closed loop, a single stream: per-stream = aggregate"
	case d.Queueing == scenario.QueueingAllowed:
		return fmt.Sprintf("closed loop, %d concurrent streams; the server may queue them (queueing: allowed)", d.Streams)
	}
	return fmt.Sprintf("closed loop, %d concurrent streams", d.Streams)
}

// arrivalWords names an open loop's arrival process: "poisson arrivals",
// "gamma arrivals (burstiness 0.5)".
func arrivalWords(d scenario.ConcurrencyDeclared) string {
	switch d.Arrival {
	case "":
		return "not declared"
	case scenario.ArrivalGamma:
		return d.Arrival + " arrivals (burstiness " + numfmt.Plain(d.Burstiness) + ")"
	}
	return d.Arrival + " arrivals"
}

// declaredKV: "max_model_len 32,768, max_num_seqs 8, continuous
// batching, prefix caching on", or "not declared".
func declaredKV(d scenario.KVCachePin) string {
	var parts []string
	if d.MaxModelLen > 0 {
		parts = append(parts, "max_model_len "+group(float64(d.MaxModelLen)))
	}
	if d.GPUMemoryUtilization > 0 {
		parts = append(parts, "gpu_memory_utilization "+numfmt.Plain(d.GPUMemoryUtilization))
	}
	if d.MaxNumSeqs > 0 {
		parts = append(parts, fmt.Sprintf("max_num_seqs %d", d.MaxNumSeqs))
	}
	if d.Batching != "" {
		parts = append(parts, d.Batching+" batching")
	}
	if d.PrefixCaching != nil {
		parts = append(parts, "prefix caching "+boolLabel(d.PrefixCaching))
	}
	if len(parts) == 0 {
		return "not declared"
	}
	return strings.Join(parts, ", ")
}

// declaredMix: "input:output 7.80; classes chat×0.7 agent×0.3".
func declaredMix(d scenario.MixDeclared) string {
	s := "input:output " + num(d.InputOutputRatio)
	if len(d.Classes) > 0 {
		s += "; classes " + classesLabel(d.Classes)
	}
	return s
}

// classesLabel names a mix's classes with their weights: "chat×0.7
// agent×0.3", or "one class".
func classesLabel(cs []scenario.ClassWeights) string {
	if len(cs) == 0 {
		return "one class"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + "×" + numfmt.Plain(c.Weight)
	}
	return strings.Join(parts, " ")
}

// boolLabel is a declared switch: on, off or not declared.
func boolLabel(b *bool) string {
	switch {
	case b == nil:
		return "not declared"
	case *b:
		return "on"
	}
	return "off"
}

// orNone is s, or "not declared".
func orNone(s string) string {
	if s == "" {
		return "not declared"
	}
	return s
}
