package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	capacityfile "github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/verdict"
)

// Flags reach the harness's configuration as named.
func TestCapacityFlags(t *testing.T) {
	t.Parallel()
	var got *CapacityOptions
	build := func(f *Factory) *cobra.Command {
		return NewCmdCapacity(f, func(_ *cobra.Command, o *CapacityOptions) error { got = o; return nil })
	}
	code, _, errOut := runCmd(t, build, "s.yaml", "--tiers", "t.yaml", "--tier", "a: ttft_ms.p90<=2000, error_rate<=1%", "--tier", "b: e2e_ms.p90<=9000",
		"--max", "32", "--min", "2", "--max-runs", "9", "--budget", "20m", "--points", "5", "--min-steady", "40s", "--duration", "3m", "--seed", "4", "-o", "c.json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	c := got.Config
	if c.ScenarioPath != "s.yaml" || c.TiersFile != "t.yaml" || !slices.Equal(c.Tiers, []string{"a: ttft_ms.p90<=2000, error_rate<=1%", "b: e2e_ms.p90<=9000"}) ||
		c.Max != 32 || c.Min != 2 || c.MaxRuns != 9 || c.Budget != 20*time.Minute || c.Points != 5 || c.MinSteady != 40*time.Second ||
		c.Duration != 3*time.Minute || !got.SeedSet || got.Seed != 4 || c.Output != "c.json" {
		t.Errorf("config %+v", c)
	}
	for _, bad := range [][]string{{"s.yaml", "--budget", "-1s"}, {"s.yaml", "--max-runs", "-1"}, {}, {"s.yaml", "--shard", "2/2", "--run-id", "r"}} {
		build := func(f *Factory) *cobra.Command { return NewCmdCapacity(f, nil) }
		if code, _, _ := runCmd(t, build, bad...); code != ExitBadInput {
			t.Errorf("%q: exit %d, want %d", bad, code, ExitBadInput)
		}
	}
}

// sixpin capacity end to end on a simulator that runs two sequences at a
// time, then its file through sixpin report in each format; compare
// compares it with itself; a tier naming no known metric is bad input before load.
// The tier (400 ms) lies well above two sequences' TTFT (under 100 ms): at a
// fifth of real time under -race on a busy machine 150 ms was 234 ms at one.
func TestCapacityCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prof := filepath.Join(dir, "two.yaml")
	src := "name: two\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\n" +
		"sim: {model: m, timing: roofline, tokenizer: words, max_num_seqs: 2, max_model_len: 4096, roofline: {params_b: 1, bytes_per_param: 1, layers: 1, heads: 1, kv_heads: 1, head_dim: 64, kv_bytes: 1, peak_tflops: 100, compute_util: 1, mem_bandwidth_gbs: 100, mem_util: 1, step_overhead: 30ms}}\n"
	if err := os.WriteFile(prof, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "c.json")
	capacity := func(f *Factory) *cobra.Command { return NewCmdCapacity(f, nil) }
	code, stdout, errOut := runCmd(t, capacity, "../../harness/testdata/capacity.yaml", "--profile", prof, "--tier", "tight: ttft_ms.p90<=400",
		"--max", "2", "--min-steady", "3s", "--time-scale", "0.2", "--no-progress", "-o", out)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"sixpin capacity: capacity", "tiers:   tight: ttft_ms.p90 <= 400",
		"tight: N* ≥ 2 streams: it passed at the largest value tried; raise --max", "Results: " + out}, []string{"point 2 (bracket) at 2 streams: tight pass"})

	report := func(f *Factory) *cobra.Command { return NewCmdReport(f, nil) }
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{out}, []string{"Capacity: capacity against two", "Points, in the order they ran:"}},
		{[]string{out, "--format", "md"}, []string{"# Capacity: capacity against two", "| # | value | role | seed | tight |"}},
		{[]string{out, "--format", "csv"}, []string{"point,value,unit,role,seed,valid,tier,", "1,1,streams,start,5,true,tight,true,pass,true,"}},
		{[]string{out, "--format", "html"}, []string{"<h1>sixpin capacity: capacity against two", `class="chart curve"`, `<g class="nstar" data-tier="tight"`}},
		{[]string{out, "--format", "junit"}, []string{`<testsuite name="` + out + `" tests="1" failures="0">`, `<testcase classname="capacity" name="tight">`}},
	} {
		code, stdout, errOut := runCmd(t, report, c.args...)
		expectOutput(t, code, stdout, errOut, ExitOK, c.want, nil)
	}
	compare := func(f *Factory) *cobra.Command { return NewCmdCompare(f, nil) }
	code, stdout, errOut = runCmd(t, compare, out, out)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"tight: ≥ 2 → ≥ 2 streams — unchanged"}, nil)

	// The gate: the file against itself passes; against a search in which
	// 2 streams failed, the tier's N* dropped.
	gate := func(f *Factory) *cobra.Command { return NewCmdGate(f, nil) }
	code, stdout, errOut = runCmd(t, gate, "--baseline", out, out)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"pass  tight", "≥ 2 → ≥ 2 streams", "unchanged"}, nil)
	worse := filepath.Join(dir, "worse.json")
	cf, err := capacityfile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cf.Points {
		if cf.Points[i].Value == 2 {
			cf.Points[i].Verdicts[0].Outcome, cf.Points[i].Verdicts[0].First = verdict.Failed, 0
		}
	}
	capacityfile.Fill(cf)
	if err := capacityfile.WriteFile(worse, cf); err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut = runCmd(t, gate, "--baseline", out, worse, "--markdown", filepath.Join(dir, "gate.md"))
	expectOutput(t, code, stdout, errOut, ExitFailed, []string{"FAIL  tight", "≥ 2 → 1 ≤ N* < 2 streams", "the current N* lies below the baseline's"}, []string{"regression"})

	// (runCmd maps only cmd's own bad input; execute maps the harness's
	// to exit 2 as for every command.)
	_, _, errOut = runCmd(t, capacity, "../../harness/testdata/capacity.yaml", "--profile", prof, "--tier", "tight: ttft.p90<=150", "-o", out)
	if !strings.Contains(errOut, `sixpin: bad input: --tier tight: condition 1: unknown metric "ttft"`) || strings.Contains(errOut, "capacity point") {
		t.Errorf("a bad tier: %s", errOut)
	}
}

// validate checks a scenario's abort_on as a run would, at file:line:col.
func TestValidateAbortOn(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "abort.yaml")
	src := "pins:\n  model: {name: m}\n  prompt: {tokens: 100}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 1}\nrequests: 5\n" +
		"abort_on: [ttft_ms.p90 <= 100, tpot_ms.p90 >= 5]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := sixpin(t, nil, "validate", path)
	expectOutput(t, code, out, errOut, ExitBadInput, nil, []string{path + ":7:32: abort_on[1]: tpot_ms is better lower: bound it from above"})
}

// --repeat runs the search once per seed, each into a file of its own,
// then says N* per tier over the seeds.
func TestCapacityRepeat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "c.json")
	capacity := func(f *Factory) *cobra.Command { return NewCmdCapacity(f, nil) }
	code, stdout, errOut := runCmd(t, capacity, "../../harness/testdata/capacity.yaml", "--profile", "sim-instant", "--tier", "t: ttft_ms.p90<=10000",
		"--max", "2", "--min-steady", "1s", "--time-scale", "0.2", "--no-progress", "--repeat", "2", "--seed", "7", "-o", out)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"N* over 2 seeds (7, 1007):",
		"t: ≥ 2 streams · ≥ 2 streams — not a number on every seed"}, nil)
	for _, f := range []string{"c-seed7.json", "c-seed1007.json"} {
		cf, err := capacityfile.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSuffix(strings.TrimPrefix(f, "c-seed"), ".json"); strconv.FormatInt(cf.Plan.Seed, 10) != want {
			t.Errorf("%s: seed %d", f, cf.Plan.Seed)
		}
	}
	code, _, errOut = runCmd(t, capacity, "../../harness/testdata/capacity.yaml", "--tier", "t: ttft_ms.p90<=10000", "--repeat", "0")
	if code != ExitBadInput || !strings.Contains(errOut, "--repeat must be ≥ 1") {
		t.Errorf("--repeat 0: exit %d: %s", code, errOut)
	}
}
