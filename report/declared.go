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
// format and the gate) and compare's pin table all print it. The parts a
// mismatch between two runs names (token counts, concurrency, arrivals,
// classes, switches) are scenario's words (scenario.TokensWords …), which
// verdict.PinMismatches names the values with too.
func DeclaredPins(d scenario.Declared) []DeclaredPin {
	return []DeclaredPin{
		{1, "model", declaredModel(d.Model)},
		{2, "prompt", scenario.TokensWords(d.Prompt)},
		{3, "output", declaredOutput(d.Output)},
		{4, "concurrency", scenario.ConcurrencyWords(d.Concurrency)},
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

// noControl is how profiles and results files spell an endpoint without a
// don't-stop-early control (endpoint.ControlNone).
const noControl = "none"

// declaredOutput is scenario.TokensWords, and whether (and how) it is exact.
func declaredOutput(d scenario.OutputDeclared) string {
	s := scenario.TokensWords(d.TokensDeclared)
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
		parts = append(parts, "prefix caching "+scenario.SwitchWords(d.PrefixCaching))
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
		s += "; classes " + scenario.ClassesWords(d.Classes)
	}
	return s
}
