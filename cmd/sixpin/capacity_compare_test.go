package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// seqProfile writes a simulated server that runs at most n sequences
// (a decode step about 40 ms) and returns its path.
func seqProfile(t *testing.T, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("seq%d.yaml", n))
	src := fmt.Sprintf("name: seq%d\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\n"+
		"sim: {model: m, timing: roofline, tokenizer: words, max_num_seqs: %d, max_model_len: 4096, roofline: {params_b: 1, bytes_per_param: 1, layers: 1, heads: 1, kv_heads: 1, head_dim: 64, kv_bytes: 1, peak_tflops: 100, compute_util: 1, mem_bandwidth_gbs: 100, mem_util: 1, step_overhead: 30ms}}\n", n, n)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sixpin compare of capacity files from real searches against the
// simulator. The N* change is read from two searches kept as report
// fixtures (a server of three sequences against one of two, made by the
// commands in report/testdata/gen/README.md: on a loaded machine a live
// search's tight TTFT bound can flip at a fifth of real time); the
// refusals from searches run here, one point each, whose outcomes do not
// matter: the same pins compare, a search of longer prompts is refused
// naming the prompt pin (and shown with --allow-pin-mismatch), a tier of
// the same name judged by another bound is refused naming it, and a
// capacity file beside a results file is refused, saying which is which.
func TestCapacityCompare(t *testing.T) {
	t.Parallel()
	compare := func(f *Factory) *cobra.Command { return NewCmdCompare(f, nil) }
	const two, three = "../../report/testdata/capacity-two.json", "../../report/testdata/capacity-three.json"
	code, stdout, errOut := runCmd(t, compare, two, three)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"sixpin compare — 2 capacity searches in closed-loop streams",
		"tight: 2 → 3 streams — higher: B's N* lies above A's", "A: 2 streams — at 3 the server queues", "B: 3 streams — at 4 the server queues",
		"loose: ≥ 8 → ≥ 8 streams — unchanged", "Every search holds them alike", "The curve, value by value"}, nil)
	code, stdout, errOut = runCmd(t, compare, three, two, "--format", "md")
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"# sixpin compare", "- **tight: 3 → 2 streams — lower: B's N* lies below A's**"}, nil)

	dir := t.TempDir()
	scenario := "../../harness/testdata/capacity.yaml"
	long := filepath.Join(dir, "long.yaml")
	src, err := os.ReadFile(scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, []byte(strings.Replace(string(src), "prompt: {tokens: 40}", "prompt: {tokens: 80}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := seqProfile(t, dir, 2)
	out := map[string]string{}
	for _, s := range []struct {
		name string
		args []string
	}{
		{"short", []string{scenario, "--tier", "tight: ttft_ms.p90<=150"}},
		{"long", []string{long, "--tier", "tight: ttft_ms.p90<=150"}},
		{"bound", []string{scenario, "--tier", "tight: ttft_ms.p90<=200"}},
	} {
		out[s.name] = filepath.Join(dir, s.name+".json")
		build := func(f *Factory) *cobra.Command { return NewCmdCapacity(f, nil) }
		code, stdout, errOut := runCmd(t, build, append(s.args, "--profile", prof, "--max-runs", "1", "--min-steady", "3s", "--time-scale", "0.2",
			"--no-progress", "-o", out[s.name])...)
		expectOutput(t, code, stdout, errOut, ExitOK, nil, nil)
	}

	code, stdout, errOut = runCmd(t, compare, two, out["short"])
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"tight: 2 → ", "Every search holds them alike"}, nil)
	code, stdout, errOut = runCmd(t, compare, out["short"], out["long"])
	expectOutput(t, code, stdout, errOut, ExitBadInput, nil, []string{"their pins differ", out["short"] + " vs " + out["long"] + ": prompt: 40 tokens vs 80 tokens"})
	code, stdout, errOut = runCmd(t, compare, out["short"], out["long"], "--allow-pin-mismatch")
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"PIN MISMATCH", "✗ A vs B: prompt: 40 tokens vs 80 tokens"}, nil)
	code, stdout, errOut = runCmd(t, compare, out["short"], out["bound"])
	expectOutput(t, code, stdout, errOut, ExitBadInput, nil, []string{`tier tight differs: "tight: ttft_ms.p90 <= 150" vs "tight: ttft_ms.p90 <= 200"`})

	results := "../../report/testdata/base.json"
	for _, args := range [][]string{{out["short"], results}, {results, out["short"]}} {
		code, stdout, errOut = runCmd(t, compare, args...)
		expectOutput(t, code, stdout, errOut, ExitBadInput, nil,
			[]string{out["short"] + " is a capacity file and " + results + " is not: compare capacity files with capacity files"})
	}
}
