package endpoint

import (
	"slices"
	"testing"
)

// TestParseSpecMetrics reads vLLM's spec_decode counters summed over
// engines, the per-position series by position; a vLLM without them
// leaves them nil.
func TestParseSpecMetrics(t *testing.T) {
	const withSpec = `# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 50
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 400
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 200
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 210
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 90
# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="1"} 60
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="0"} 80
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="0"} 40
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="1",model_name="m",position="1"} 30
vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="m",position="x"} 7
`
	x, engine, ok := parseServerMetrics([]byte(withSpec))
	if !ok || engine != SourceVLLM {
		t.Fatalf("engine %q ok %v", engine, ok)
	}
	if val(x.SpecDrafts) != 150 || val(x.SpecDraftTokens) != 600 || val(x.SpecAccepted) != 300 {
		t.Errorf("drafts %v, draft tokens %v, accepted %v; want 150, 600, 300", val(x.SpecDrafts), val(x.SpecDraftTokens), val(x.SpecAccepted))
	}
	if want := []float64{120, 90}; !slices.Equal(x.SpecAcceptedPerPos, want) {
		t.Errorf("per position %v, want %v", x.SpecAcceptedPerPos, want)
	}
	x, _, _ = parseServerMetrics([]byte("vllm:num_requests_running{engine=\"0\"} 3\n"))
	if x.SpecDrafts != nil || x.SpecDraftTokens != nil || x.SpecAccepted != nil || x.SpecAcceptedPerPos != nil {
		t.Errorf("a vLLM without speculative decoding: %+v", x)
	}
}
