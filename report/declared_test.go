package report

import (
	"testing"

	"github.com/sixpin/sixpin/scenario"
)

// One wording of each declared pin, whatever prints it.
func TestDeclaredWording(t *testing.T) {
	on := true
	for _, c := range []struct {
		got, want string
	}{
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 16}), "closed loop, 16 concurrent streams"},
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 1}), "closed loop, a single stream: per-stream = aggregate"},
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 4, Sessions: true}),
			"closed loop, 4 concurrent agentic sessions (think time between turns)"},
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "open", RateRPS: 2.5, Arrival: "gamma", Burstiness: 0.5, MaxInFlight: 64}),
			"open loop, 2.5 req/s gamma arrivals (burstiness 0.5), at most 64 in flight"},
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "open", RateRPS: 2, Arrival: "poisson"}), "open loop, 2 req/s poisson arrivals, no in-flight cap"},
		{declaredConcurrency(scenario.ConcurrencyDeclared{Mode: "trace", Streams: 9, Sessions: true}), "the trace's sessions at their recorded times (up to 9 at once)"},
		{declaredTokens(scenario.TokensDeclared{Dist: "64", Min: 64, Max: 64, Mean: 64}), "64 tokens"},
		{declaredTokens(scenario.TokensDeclared{Dist: "200", Min: 200, Max: 200, Mean: 155}), "200 tokens (mean 155)"},
		{declaredTokens(scenario.TokensDeclared{Dist: "uniform [400, 600]", Min: 400, Max: 600, Mean: 500, Tokenizer: "qwen2"}),
			"uniform [400, 600] tokens (mean 500), built by tokenizer qwen2"},
		{declaredTokens(scenario.TokensDeclared{Dist: scenario.PerClass, Mean: 3245}), "per class (see mix): mean 3,245 tokens over the mix"},
		{declaredOutput(scenario.OutputDeclared{TokensDeclared: scenario.TokensDeclared{Dist: "64", Min: 64, Max: 64, Mean: 64}, Exact: true}), "64 tokens, exact"},
		{declaredOutput(scenario.OutputDeclared{TokensDeclared: scenario.TokensDeclared{Dist: "64", Min: 64, Max: 64, Mean: 64}, Exact: true, Control: "ignore_eos"}),
			"64 tokens, exact via ignore_eos"},
		{declaredOutput(scenario.OutputDeclared{TokensDeclared: scenario.TokensDeclared{Dist: "64", Min: 64, Max: 64, Mean: 64}, Exact: true, Control: "none"}),
			"64 tokens, exact, not enforced (no don't-stop-early control)"},
		{declaredModel(scenario.ModelDeclared{Name: "q", ParamsB: 27, ActiveParamsB: 3, Dtype: "bf16"}), "q, 27B params (3B active), bf16"},
		{declaredModel(scenario.ModelDeclared{Name: "q", Requested: "q-served"}), `q; requested as "q-served"`},
		{declaredKV(scenario.KVCachePin{MaxModelLen: 32768, MaxNumSeqs: 8, Batching: "continuous", PrefixCaching: &on}),
			"max_model_len 32,768, max_num_seqs 8, continuous batching, prefix caching on"},
		{declaredKV(scenario.KVCachePin{}), "not declared"},
		{declaredMix(scenario.MixDeclared{InputOutputRatio: 2, Classes: []scenario.ClassWeights{{Name: "chat", Weight: 0.7}, {Name: "agent", Weight: 0.3}}}),
			"input:output 2.00; classes chat×0.7 agent×0.3"},
	} {
		if c.got != c.want {
			t.Errorf("got  %q\nwant %q", c.got, c.want)
		}
	}
}
