package endpoint

import (
	"math"
	"os"
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

// TestParseSGLangSpecMetrics reads SGLang's speculative-decoding series:
// its counters summed over label sets, its gauges averaged over the
// schedulers; an SGLang without them leaves them nil, and one that does
// not speculate shows its acceptance-length gauge at 0, as SGLang logs it.
func TestParseSGLangSpecMetrics(t *testing.T) {
	const notSpeculating = `# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 2.0
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{engine_type="unified",model_name="m",pp_rank="0",tp_rank="0"} 0.0
# TYPE sglang:num_requests_total counter
sglang:num_requests_total{model_name="m"} 7.0
`
	for _, tt := range []struct {
		name                          string
		raw                           []byte
		verify, requests, length, wid *float64
	}{
		{"speculating", readFile(t, "testdata/metrics/sglang_spec.txt"), ptr(12000), ptr(256), ptr(2.8), ptr(4)},
		{"an older SGLang", readFile(t, "testdata/metrics/sglang.txt"), nil, nil, nil, nil},
		{"not speculating", []byte(notSpeculating), nil, ptr(7), ptr(0), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x, engine, ok := parseServerMetrics(tt.raw)
			if !ok || engine != SourceSGLang {
				t.Fatalf("engine %q ok %v", engine, ok)
			}
			for _, c := range []struct {
				what      string
				got, want *float64
			}{
				{"verify steps", x.SpecVerifySteps, tt.verify}, {"finished requests", x.FinishedRequests, tt.requests},
				{"accept length", x.SpecAcceptLength, tt.length}, {"draft width", x.SpecDraftWidth, tt.wid},
			} {
				if (c.got == nil) != (c.want == nil) || c.got != nil && math.Abs(*c.got-*c.want) > 1e-9 {
					t.Errorf("%s %v, want %v", c.what, show(c.got), show(c.want))
				}
			}
			if x.SpecDrafts != nil || x.SpecDraftTokens != nil || x.SpecAccepted != nil {
				t.Errorf("vLLM's counters read from SGLang: %+v", x)
			}
		})
	}
}

func ptr(v float64) *float64 { return &v }

// show is *p, or "nil".
func show(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
