package sim

import (
	"math"
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
		c.Roofline != DefaultRoofline() || c.Fixed != (Fixed{DefaultFixedTTFT, DefaultFixedITL}) ||
		c.BlockSize != 16 || *c.PrefixCaching || c.TimeScale != 1 || c.RateLimits != (RateLimits{}) {
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
		{"negative max_model_len", Config{MaxModelLen: -1}, []string{"max_model_len: must be > 0, got -1"}},
		{"negative kv budget", Config{KVBudgetTokens: -5}, []string{"kv_budget_tokens: must be > 0, got -5"}},
		{"reasoning share", Config{ReasoningShare: 1.5}, []string{"reasoning_share: must be in [0, 1]"}},
		{"gpu memory utilisation", Config{GPUMemoryUtilization: 1.2}, []string{"gpu_memory_utilization: must be in (0, 1]"}},
		{"unknown fault", Config{Faults: map[string]float64{"explode": 0.1}}, []string{"faults.explode: unknown fault class"}},
		{"fault probability", Config{Faults: map[string]float64{FaultCut: 2}}, []string{"faults.cut: must be a probability"}},
		{"fault sum", Config{Faults: map[string]float64{FaultCut: 0.6, FaultStall: 0.6}}, []string{"faults: probabilities must sum to ≤ 1"}},
		{"time scale", Config{TimeScale: -1}, []string{"time_scale: must be > 0"}},
		{"block size", Config{BlockSize: -16}, []string{"block_size: must be > 0"}},
		{"rate limits", Config{RateLimits: RateLimits{TokensPerMinute: -1, TokensPerDay: -5}},
			[]string{"rate_limits.tokens_per_minute: must be ≥ 0", "rate_limits.tokens_per_day: must be ≥ 0"}},
		{"prefill util", Config{Roofline: func() Roofline { r := DefaultRoofline(); r.PrefillUtil = 2; return r }()},
			[]string{"roofline.prefill_util: must be in (0, 1]"}},
		{"request overhead", Config{Roofline: func() Roofline { r := DefaultRoofline(); r.RequestOverhead = -time.Second; return r }()},
			[]string{"roofline.request_overhead: must be ≥ 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			// kv_budget_tokens, unset, derives from max_num_seqs and
			// max_model_len: an error in those is theirs alone.
			if tc.c.KVBudgetTokens == 0 && err != nil && strings.Contains(err.Error(), "kv_budget_tokens") {
				t.Errorf("error %q names kv_budget_tokens, which the config does not set", err)
			}
			wantErrs(t, err, tc.want)
		})
	}
}

// wantErrs checks a Validate error: none when want is empty, else one
// holding every string of want.
func wantErrs(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("Validate() = %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("Validate() = nil")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %q, want it to contain %q", err, w)
		}
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

func TestPrefillUtilDefaultsToComputeUtil(t *testing.T) {
	c := Defaults(Config{Roofline: Roofline{ParamsB: 8, ComputeUtil: 0.4}})
	if c.Roofline.PrefillUtil != 0.4 {
		t.Errorf("prefill_util = %v, want compute_util's 0.4", c.Roofline.PrefillUtil)
	}
	if c = Defaults(Config{Roofline: Roofline{ParamsB: 8, ComputeUtil: 0.4, PrefillUtil: 0.1}}); c.Roofline.PrefillUtil != 0.1 {
		t.Errorf("prefill_util = %v, want 0.1", c.Roofline.PrefillUtil)
	}
}

func TestTimeScaleFixed(t *testing.T) {
	// time_scale multiplies the fixed timing's delays and the request
	// overhead; the modelled durations, not the wall clock, are checked.
	for _, tc := range []struct {
		scale               float64
		ttft, itl, overhead time.Duration
	}{
		{1, 200 * time.Millisecond, 10 * time.Millisecond, 300 * time.Millisecond},
		{0.05, 10 * time.Millisecond, 500 * time.Microsecond, 15 * time.Millisecond},
		{2, 400 * time.Millisecond, 20 * time.Millisecond, 600 * time.Millisecond},
	} {
		rl := DefaultRoofline()
		rl.RequestOverhead = 300 * time.Millisecond
		s, err := New(Config{Timing: TimingFixed, TimeScale: tc.scale, Roofline: rl})
		if err != nil {
			t.Fatal(err)
		}
		ttft, itl := s.fixedDelays()
		if ttft != tc.ttft || itl != tc.itl {
			t.Errorf("scale %g: TTFT %v, ITL %v; want %v, %v", tc.scale, ttft, itl, tc.ttft, tc.itl)
		}
		if got := s.cfg.scaled(rl.RequestOverhead); got != tc.overhead {
			t.Errorf("scale %g: request overhead %v, want %v", tc.scale, got, tc.overhead)
		}
		s.Close()
	}
}

func TestValidateSpecDecode(t *testing.T) {
	all := func(a float64) map[string]float64 {
		return map[string]float64{"prose": a, "code": a, "json": a, "tool-calls": a, "repetitive": a}
	}
	for _, tc := range []struct {
		name string
		c    Config
		want []string // substrings of the error; none means valid
	}{
		{"valid", Config{SpecDecode: &SpecDecode{DraftTokens: 4, Acceptance: all(0.5)}}, nil},
		{"edges", Config{SpecDecode: &SpecDecode{DraftTokens: 1, Acceptance: all(1)}}, nil},
		{"no drafts", Config{SpecDecode: &SpecDecode{Acceptance: all(0.5)}},
			[]string{"spec_decode.draft_tokens: must be ≥ 1, got 0"}},
		{"fixed timing", Config{Timing: TimingFixed, SpecDecode: &SpecDecode{DraftTokens: 2, Acceptance: all(0.5)}},
			[]string{`spec_decode: needs timing "roofline"`}},
		{"bad rate", Config{SpecDecode: &SpecDecode{DraftTokens: 2, Acceptance: func() map[string]float64 {
			m := all(0.5)
			m["code"] = 1.5
			return m
		}()}}, []string{"spec_decode.acceptance.code: must be a rate in [0, 1], got 1.5"}},
		{"unknown and missing class", Config{SpecDecode: &SpecDecode{DraftTokens: 2, Acceptance: map[string]float64{
			"prose": 0.5, "code": 0.5, "json": 0.5, "tool-calls": 0.5, "poetry": 0.5}}},
			[]string{"spec_decode.acceptance.poetry: unknown content class", "spec_decode.acceptance.repetitive: missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErrs(t, tc.c.Validate(), tc.want)
		})
	}
}

func TestExpectedTokensPerStep(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		k     int
		want  float64
	}{{0, 4, 1}, {0.5, 1, 1.5}, {0.5, 3, 1.875}, {1, 4, 5}, {0.95, 4, 4.524}} {
		if got := ExpectedTokensPerStep(tc.alpha, tc.k); math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("ExpectedTokensPerStep(%g, %d) = %g, want %g", tc.alpha, tc.k, got, tc.want)
		}
	}
}
