package sim

import (
	"fmt"
	"math"
	"sort"
)

// Content classes, the keys of SpecDecode.Acceptance: what the simulator
// takes a request to ask for (see classify) and what its output then looks
// like.
const (
	ClassProse      = "prose"
	ClassCode       = "code"
	ClassJSON       = "json"
	ClassToolCalls  = "tool-calls"
	ClassRepetitive = "repetitive"
)

// contentClasses lists the content classes in a fixed order.
var contentClasses = []string{ClassProse, ClassCode, ClassJSON, ClassToolCalls, ClassRepetitive}

// SpecDecode is the speculative-decoding model (Config.SpecDecode; absent:
// none). A drafter proposes up to DraftTokens tokens for each decoding
// sequence at each engine step; the target model verifies them in that
// step and accepts a prefix of them, each draft token in turn with
// probability α (given that the ones before it were accepted), then adds
// its own token. A step therefore yields 1 + accepted tokens, on average
// (1 − α^(K+1)) / (1 − α) with K draft tokens, at the roofline cost of
// verifying K + 1 tokens (weights are read once, so at a small batch the
// step takes about as long as a plain decode step).
//
// α is the request's acceptance rate per draft token (the chance a draft
// token is accepted when those before it were): its content class's
// (Acceptance, the class from classify), raised by the repetitiveness r
// (0–1) of its own output (see outText.repetitiveness) towards the
// repetitive class's:
//
//	α = α_class + (α_repetitive − α_class) · r
//
// With SpecDecode the output text follows the request's class (code looks
// like code, repetitive repeats a short phrase), and /metrics carries
// vLLM's vllm:spec_decode_* counters and each response's llama.cpp
// timings its draft_n and draft_n_accepted. It needs timing roofline.
type SpecDecode struct {
	// DraftTokens is K, the draft tokens proposed per sequence and step
	// (vLLM's num_speculative_tokens, llama.cpp's --draft-max); ≥ 1. Near
	// the end of an output fewer are drafted: never more than the tokens
	// still to generate, less the target's own.
	DraftTokens int `yaml:"draft_tokens"`
	// Acceptance is α per content class, each in [0, 1]: prose, code,
	// json, tool-calls and repetitive, all required.
	Acceptance map[string]float64 `yaml:"acceptance"`
}

// validate reports SpecDecode's invalid fields under "spec_decode.".
func (d *SpecDecode) validate(timing string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("spec_decode.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if timing != TimingRoofline {
		errs = append(errs, fmt.Errorf("spec_decode: needs timing %q (only the engine's steps verify drafts), got timing %q", TimingRoofline, timing))
	}
	if d.DraftTokens < 1 {
		bad("draft_tokens", "must be ≥ 1, got %d", d.DraftTokens)
	}
	keys := make([]string, 0, len(d.Acceptance))
	for k := range d.Acceptance {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !isClass(k) {
			bad("acceptance."+k, "unknown content class (want one of %v)", contentClasses)
		} else if a := d.Acceptance[k]; !(a >= 0 && a <= 1) || math.IsNaN(a) {
			bad("acceptance."+k, "must be a rate in [0, 1], got %g", a)
		}
	}
	for _, c := range contentClasses {
		if _, ok := d.Acceptance[c]; !ok {
			bad("acceptance."+c, "missing: every content class needs its acceptance (%v)", contentClasses)
		}
	}
	return errs
}

func isClass(s string) bool {
	for _, c := range contentClasses {
		if c == s {
			return true
		}
	}
	return false
}

// acceptance is α for a request of class whose output has repetitiveness
// r (0–1): α_class + (α_repetitive − α_class) · r.
func (d *SpecDecode) acceptance(class string, r float64) float64 {
	a, rep := d.Acceptance[class], d.Acceptance[ClassRepetitive]
	return min(1, max(0, a+(rep-a)*r))
}

// ExpectedTokensPerStep is the mean tokens a verification step yields with
// acceptance α (0–1) and k draft tokens: (1 − α^(k+1)) / (1 − α), which is
// k + 1 at α = 1.
func ExpectedTokensPerStep(alpha float64, k int) float64 {
	if alpha >= 1 {
		return float64(k + 1)
	}
	return (1 - math.Pow(alpha, float64(k+1))) / (1 - alpha)
}
