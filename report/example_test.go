package report_test

import (
	"fmt"
	"os"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
)

// A run on a slower server against its baseline: the throughput and TPOT
// rules fail; the p99 rules see the slowdown but 88 requests are too few
// for a p99 interval, so they cannot fail.
func ExampleGate() {
	runs, err := report.Load("testdata/base.json", "testdata/slow.json")
	if err != nil {
		panic(err)
	}
	g, err := report.Gate(runs[0], runs[1], report.DefaultRules(), stats.Default())
	if err != nil {
		panic(err)
	}
	for _, c := range g.Checks {
		fmt.Printf("%-4s %-30s %s\n", c.Status, c.Rule.Key, c.Rule.Tolerance())
	}
	fmt.Println("passed:", g.Passed())
	// Output:
	// pass steady.ttft_ms.p99             max_increase 55%
	// fail steady.tpot_ms.p50             max_increase 15%
	// pass steady.e2e_ms.p99              max_increase 20%
	// fail steady.aggregate_output_tok_s  max_decrease 5%
	// fail steady.effective_tok_s.p50     max_decrease 5%
	// pass errors.rate                    max 1%
	// pass validity                       valid and complete
	// passed: false
}

// Two runs measure the same workload only if their pins agree.
func ExamplePinMismatches() {
	runs, err := report.Load("testdata/base.json", "testdata/c1-8k.json")
	if err != nil {
		panic(err)
	}
	fmt.Println(report.JoinMismatches(report.PinMismatches(runs[0].Run, runs[1].Run, stats.Default())))
	// Output:
	// prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens; prompt p50: 505 vs 8,003; concurrency: 4 vs 1; mix ratio: 7.80 vs 125
}

func ExampleDescribeScenario() {
	s, err := scenario.Parse("scenarios/chat-8k-c16.yaml", []byte(`
description: 16 agents at once, 8,000-token prompts, 4,000 tokens out, steadily.
seed: 42
pins:
  model: {name: qwen3.8-27b, params_b: 27, dtype: bf16}
  prompt: {tokens: 8000}
  output: {tokens: 4000, exact: true}
  concurrency: {mode: closed, streams: 16}
  kv_cache: {max_model_len: 32768, max_num_seqs: 8, batching: continuous}
  mix: {input_output_ratio: 2}
duration: 5m
windows: {warmup: 30s}
slo: {ttft_ms: 2000, tpot_ms: 50, max_error_rate: 0.01}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	report.DescribeScenario(os.Stdout, s)
	// Output:
	// scenario     chat-8k-c16
	// description  16 agents at once, 8,000-token prompts, 4,000 tokens out, steadily.
	// file         scenarios/chat-8k-c16.yaml (sha256 5f0483c71269)
	// seed         42
	// model        qwen3.8-27b, 27B params, bf16
	// prompt       8000 tokens; drift ≤ 2% per request
	// output       4000 tokens, exact
	// concurrency  closed loop, 16 concurrent streams
	// kv_cache     max_model_len 32,768, max_num_seqs 8, continuous batching
	// mix          input:output 2.00
	// run          5m; request_timeout 10m
	// windows      warmup 30s, burst 10s, steady auto
	// slo          ttft ≤ 2000 ms, tpot ≤ 50 ms, error rate ≤ 1%
	// warning      scenarios/chat-8k-c16.yaml:8:40: pins.concurrency.streams: exceeds pins.kv_cache.max_num_seqs (16 > 8): the server runs at most 8 at once and queues the rest
}

// A baseline of several runs: each rule is judged against the spread
// between them, as well as its tolerance.
func ExampleGateRuns() {
	runs, err := report.Load("testdata/base.json", "testdata/noise.json", "testdata/slow.json")
	if err != nil {
		panic(err)
	}
	base := report.Sample{Name: "testdata/{base,noise}.json", Runs: runs[:2]}
	current := report.Sample{Name: "testdata/slow.json", Runs: runs[2:]}
	g, err := report.GateRuns(base, current, report.DefaultRules(), stats.Default())
	if err != nil {
		panic(err)
	}
	for _, c := range g.Checks {
		fmt.Printf("%-4s %-30s %s\n", c.Status, c.Rule.Key, c.Why)
	}
	fmt.Println("passed:", g.Passed())
	// Output:
	// pass steady.ttft_ms.p99             within the tolerance
	// fail steady.tpot_ms.p50             regression: beyond the tolerance and outside the spread between runs
	// fail steady.e2e_ms.p99              regression: beyond the tolerance and outside the spread between runs
	// fail steady.aggregate_output_tok_s  regression: beyond the tolerance and outside the spread between runs
	// fail steady.effective_tok_s.p50     regression: beyond the tolerance and outside the spread between runs
	// pass errors.rate                    within the tolerance
	// pass validity                       the current run is valid and complete
	// passed: false
}
