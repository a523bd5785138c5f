package sim

import (
	"fmt"
	"io"
)

// writeSpecMetrics writes vLLM V1's speculative-decoding counters (see
// vllm/v1/spec_decode/metrics.py, SpecDecodingProm), as its Prometheus
// client exposes them, under labels (engine and model_name):
//
//	vllm:spec_decode_num_drafts_total                  verification steps that had drafts, per sequence
//	vllm:spec_decode_num_draft_tokens_total            draft tokens proposed
//	vllm:spec_decode_num_accepted_tokens_total         draft tokens accepted
//	vllm:spec_decode_num_accepted_tokens_per_pos_total accepted tokens by draft position, labelled position="0".."K−1"
//
// A draft counts at position i when its first i + 1 tokens were accepted,
// so position 0's count is the drafts with any token accepted. Like vLLM,
// the simulator has these series only when it speculates.
func writeSpecMetrics(w io.Writer, st *engineStats, labels string) {
	counter := func(name, help string, v int64) {
		fmt.Fprintf(w, "# HELP %[1]s %[2]s\n# TYPE %[1]s counter\n%[1]s{%[3]s} %[4]d\n", name, help, labels, v)
	}
	counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.", st.drafts.Load())
	counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.", st.draftTokens.Load())
	counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.", st.accepted.Load())
	const perPos = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
	fmt.Fprintf(w, "# HELP %s Accepted tokens per draft position.\n# TYPE %[1]s counter\n", perPos)
	for i := range st.perPos {
		fmt.Fprintf(w, "%s{%s,position=\"%d\"} %d\n", perPos, labels, i, st.perPos[i].Load())
	}
}
