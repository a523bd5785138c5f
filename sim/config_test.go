package sim

import (
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c := Defaults(Config{})
	if c.Model != DefaultModel || c.Timing != TimingRoofline || c.Batching != BatchingContinuous ||
		c.MaxModelLen != 32768 || c.MaxNumSeqs != 256 || c.KVBudgetTokens != 256*32768 ||
		c.MaxBatchedTokens != 8192 || c.TokensPerChunk != 1 || *c.TemplateOverheadTokens != 5 ||
		c.NaturalOutputTokens != 200 || c.Seed != 1 || !*c.SendStamps || c.GPUMemoryUtilization != 0.9 ||
		c.Roofline != DefaultRoofline() || c.Fixed != (Fixed{DefaultFixedTTFT, DefaultFixedITL}) {
		t.Errorf("Defaults(Config{}) = %+v", c)
	}
	// Given fields stay; a partly given roofline is completed, not replaced.
	zero := 0
	c = Defaults(Config{MaxNumSeqs: 4, MaxModelLen: 1000, TemplateOverheadTokens: &zero,
		Roofline: Roofline{ParamsB: 27, Heads: 40}, Fixed: Fixed{TTFT: time.Second}})
	if c.KVBudgetTokens != 4000 || *c.TemplateOverheadTokens != 0 || c.Fixed.ITL != 0 {
		t.Errorf("given fields changed: %+v", c)
	}
	if r := c.Roofline; r.ParamsB != 27 || r.KVHeads != 40 || r.BytesPerParam != 2 || r.KVBytes != 2 ||
		r.ComputeUtil != 1 || r.MemUtil != 1 || r.Layers != 0 {
		t.Errorf("partial roofline = %+v", r)
	}
}

func TestValidate(t *testing.T) {
	neg := -1
	for _, tc := range []struct {
		name string
		c    Config
		want []string // substrings of the error; none means valid
	}{
		{"zero config", Config{}, nil},
		{"fixed timing", Config{Timing: TimingFixed, Fixed: Fixed{TTFT: time.Second}}, nil},
		{"partial roofline for timing none", Config{Timing: TimingNone, Roofline: Roofline{ParamsB: 8}}, nil},
		{"unknown timing", Config{Timing: "warp"}, []string{`timing: must be "roofline", "fixed" or "none", got "warp"`}},
		{"unknown batching", Config{Batching: "dynamic"}, []string{"batching:"}},
		{"partial roofline", Config{Roofline: Roofline{ParamsB: 8, Layers: 32, Heads: 32, HeadDim: 128, PeakTFLOPS: 100}},
			[]string{"roofline.mem_bandwidth_gbs: must be > 0 for timing roofline"}},
		{"utilisation above 1", Config{Roofline: func() Roofline { r := DefaultRoofline(); r.MemUtil = 1.5; return r }()},
			[]string{"roofline.mem_util: must be in (0, 1]"}},
		{"negatives", Config{MaxNumSeqs: -2, TokensPerChunk: -1, TemplateOverheadTokens: &neg, Fixed: Fixed{ITL: -time.Second}},
			[]string{"max_num_seqs: must be > 0", "tokens_per_chunk: must be > 0", "template_overhead_tokens: must be ≥ 0", "fixed.itl: must be ≥ 0"}},
		{"reasoning share", Config{ReasoningShare: 1.5}, []string{"reasoning_share: must be in [0, 1]"}},
		{"gpu memory utilisation", Config{GPUMemoryUtilization: 1.2}, []string{"gpu_memory_utilization: must be in (0, 1]"}},
		{"unknown fault", Config{Faults: map[string]float64{"explode": 0.1}}, []string{"faults.explode: unknown fault class"}},
		{"fault probability", Config{Faults: map[string]float64{FaultCut: 2}}, []string{"faults.cut: must be a probability"}},
		{"fault sum", Config{Faults: map[string]float64{FaultCut: 0.6, FaultStall: 0.6}}, []string{"faults: probabilities must sum to ≤ 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestFaultBands(t *testing.T) {
	bands := faultBands(map[string]float64{FaultStall: 0.1, FaultHTTP429: 0.2, FaultCut: 0})
	for _, tc := range []struct {
		u    float64
		want string
	}{
		{0, FaultHTTP429}, {0.199, FaultHTTP429}, {0.2, FaultStall}, {0.299, FaultStall}, {0.3001, ""}, {0.999, ""},
	} {
		if got := pickFault(bands, tc.u); got != tc.want {
			t.Errorf("pickFault(%v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}
