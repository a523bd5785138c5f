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
