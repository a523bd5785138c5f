package verdict

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

func TestPinMismatches(t *testing.T) {
	st := stats.Default()
	ins := load(t, fixBase, fixNoise, fixC1, fixInstant, fixSlow)
	base := ins[0].Run
	for _, c := range []struct {
		name string
		run  *results.Run
		want []string
	}{
		{"another seed", ins[1].Run, nil},
		{"a slower server", ins[4].Run, nil},
		{"one stream, long prompts", ins[2].Run, []string{"prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens", "prompt p50: 505 vs 8,003",
			"concurrency: 4 vs 1", "mix ratio: 7.80 vs 125"}},
		{"another model", ins[3].Run, []string{"model params (served): 27B vs 8B"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, m := range PinMismatches(base, c.run, st) {
				got = append(got, m.String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("mismatches %q, want %q", got, c.want)
			}
		})
	}
}

// Declared pins differ one at a time; each is named.
func TestPinMismatchesDeclared(t *testing.T) {
	st := stats.Default()
	truth := true
	for _, c := range []struct {
		change func(p *results.Pins)
		want   string
	}{
		{func(p *results.Pins) { p.Model.Declared.Name = "qwen3-32b" }, "model: sim-local-27b vs qwen3-32b"},
		{func(p *results.Pins) { p.Model.Declared.ParamsB = 32 }, "model params: 27B vs 32B"},
		{func(p *results.Pins) { p.Model.Declared.Dtype = "bf16" }, "model dtype: q4 vs bf16"},
		{func(p *results.Pins) { p.Concurrency.Declared.Streams = 8 }, "concurrency: 4 vs 8"},
		{func(p *results.Pins) {
			p.Concurrency.Declared = scenario.ConcurrencyDeclared{Mode: "open", RateRPS: 2.5, Arrival: "poisson"}
		}, "concurrency: closed loop, 4 concurrent streams vs open loop, 2.5 req/s poisson arrivals, no in-flight cap"},
		{func(p *results.Pins) { p.Concurrency.Declared.SessionAffinity = "X-Session-Id" },
			"concurrency session_affinity: no session affinity header vs each session's id in header X-Session-Id"},
		{func(p *results.Pins) { p.KVCache.Declared.MaxNumSeqs = 32 }, "kv_cache max_num_seqs: 8 vs 32"},
		{func(p *results.Pins) { p.KVCache.Declared.PrefixCaching = &truth }, "kv_cache prefix_caching: not declared vs on"},
		{func(p *results.Pins) { p.KVCache.Declared.Batching = "static" }, "kv_cache batching: continuous vs static"},
		{func(p *results.Pins) { p.Mix.Declared.InputOutputRatio = 2 }, "mix ratio: 7.80 vs 2.00"},
		{func(p *results.Pins) {
			p.Mix.Declared.Classes = []scenario.ClassWeights{{Name: "chat", Weight: 0.7}, {Name: "code", Weight: 0.3}}
		}, "mix classes: one class vs chat×0.7 code×0.3"},
		{func(p *results.Pins) {
			p.Output.Declared.Dist, p.Output.Declared.Min, p.Output.Declared.Max, p.Output.Declared.Mean = "65", 65, 65, 65
		},
			"output: 64 tokens vs 65 tokens"},
		{func(p *results.Pins) { p.Output.Declared.Exact = false }, "output exact: true vs false"},
		// Re-sent reasoning lengthens every later prompt: not the same workload.
		{func(p *results.Pins) { p.Prompt.Declared.PreserveReasoning = &truth },
			"prompt preserve_reasoning: earlier turns' reasoning dropped (preserve_reasoning: false) vs earlier turns' reasoning re-sent (preserve_reasoning: true)"},
	} {
		t.Run(c.want, func(t *testing.T) {
			other := load(t, fixBase)[0].Run
			c.change(&other.Pins)
			ms := PinMismatches(load(t, fixBase)[0].Run, other, st)
			if len(ms) != 1 || ms[0].String() != c.want {
				t.Errorf("mismatches %q, want just %q", JoinMismatches(ms), c.want)
			}
		})
	}
	// Within the tolerance: the declared prompt mean moves 1% (tolerance 2%).
	other := load(t, fixBase)[0].Run
	other.Pins.Prompt.Declared.Dist = "uniform [404, 606]"
	other.Pins.Prompt.Declared.Min, other.Pins.Prompt.Declared.Max = 404, 606
	if ms := PinMismatches(load(t, fixBase)[0].Run, other, st); len(ms) != 0 {
		t.Errorf("1%% off a 2%% tolerance: mismatches %q", JoinMismatches(ms))
	}
	// The prompts' content: named when both runs declare it; a run from
	// before the pin declares none and is not judged.
	a, b := load(t, fixBase)[0].Run, load(t, fixBase)[0].Run
	b.Pins.Prompt.Declared.Content = "code"
	if ms := PinMismatches(a, b, st); len(ms) != 0 {
		t.Errorf("content against a run from before the pin: mismatches %q", JoinMismatches(ms))
	}
	a.Pins.Prompt.Declared.Content = "prose"
	if ms := PinMismatches(a, b, st); len(ms) != 1 || ms[0].String() != "prompt content: prose vs code" {
		t.Errorf("content prose vs code: mismatches %q", JoinMismatches(ms))
	}
}

func TestCompare(t *testing.T) {
	c, err := Compare(load(t, fixBase, fixNoise, fixSlow), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Comparable() {
		t.Fatalf("mismatches: %s", c.MismatchSummary())
	}
	cell := func(key string, run int) Cell {
		for _, s := range c.Sections {
			for _, r := range s.Rows {
				if r.Key == key {
					return r.Cells[run]
				}
			}
		}
		t.Fatalf("no row %s", key)
		return Cell{}
	}
	for _, x := range []struct {
		key     string
		run     int
		verdict string
	}{
		{"steady.aggregate_output_tok_s", 1, "same"},
		{"steady.aggregate_output_tok_s", 2, "worse"},
		{"steady.effective_tok_s.p50", 2, "worse"},
		{"steady.tpot_ms.p50", 2, "worse"},
		{"steady.ttft_ms.p99", 2, "?"}, // 88 values: no p99 interval
		{"steady.requests", 1, "same"},
		{"errors.rate", 2, "same"},
	} {
		if got := cell(x.key, x.run); got.Verdict != x.verdict {
			t.Errorf("%s, run %d: verdict %q (change %+.3f, interval %+v), want %q", x.key, x.run, got.Verdict, got.Change, got.Interval, x.verdict)
		}
	}
	if ch := cell("steady.aggregate_output_tok_s", 2).Change; math.Abs(ch+0.222) > 0.01 {
		t.Errorf("slow aggregate change %.3f, want ≈ −22%%", ch)
	}
}

func TestCompareNeedsTwo(t *testing.T) {
	if _, err := Compare(load(t, fixBase), stats.Default()); err == nil {
		t.Error("compared one run")
	}
}

func TestCompareRefusalNamesPins(t *testing.T) {
	c, err := Compare(load(t, fixBase, fixNoise, fixC1), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if c.Comparable() {
		t.Fatal("comparable")
	}
	s := c.MismatchSummary()
	// The values come in the order the runs are named: A's first.
	if !strings.Contains(s, fixBase+" vs "+fixC1+": prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens; prompt p50: 505 vs 8,003; concurrency: 4 vs 1") ||
		strings.Contains(s, "noise.json") {
		t.Errorf("summary:\n%s", s)
	}
}
