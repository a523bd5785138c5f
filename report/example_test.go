package report_test

import (
	"fmt"
	"os"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
)

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
	// prompt       8000 tokens, content prose; drift ≤ 2% per request
	// output       4000 tokens, exact
	// concurrency  closed loop, 16 concurrent streams
	// kv_cache     max_model_len 32,768, max_num_seqs 8, continuous batching
	// mix          input:output 2.00
	// run          5m; request_timeout 10m
	// windows      warmup 30s, burst 10s, steady auto
	// slo          ttft ≤ 2000 ms, tpot ≤ 50 ms, error rate ≤ 1%
	// warning      scenarios/chat-8k-c16.yaml:8:40: pins.concurrency.streams: exceeds pins.kv_cache.max_num_seqs (16 > 8): the server runs at most 8 at once and queues the rest
}
