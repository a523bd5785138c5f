package endpoint

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
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

// A real llama-server speculating with a draft model exposes vLLM's four
// counters under its llamacpp: prefix; they are read as vLLM's are and
// marked llama.cpp's. Without a draft model it exposes them at 0.
func TestParseLlamaCppSpecMetrics(t *testing.T) {
	data, err := os.ReadFile("testdata/metrics/llamacpp_spec.txt")
	if err != nil {
		t.Fatal(err)
	}
	x, engine, ok := parseServerMetrics(data)
	if !ok || engine != SourceLlamaCpp || x.SpecEngine != SourceLlamaCpp {
		t.Fatalf("engine %q (spec %q) ok %v", engine, x.SpecEngine, ok)
	}
	if val(x.SpecDrafts) != 4204 || val(x.SpecDraftTokens) != 16631 || val(x.SpecAccepted) != 6052 {
		t.Errorf("drafts %v, draft tokens %v, accepted %v; want the server's 4204, 16631, 6052", val(x.SpecDrafts), val(x.SpecDraftTokens), val(x.SpecAccepted))
	}
	if want := []float64{2679, 1678, 1059, 636}; !slices.Equal(x.SpecAcceptedPerPos, want) {
		t.Errorf("per position %v, want %v", x.SpecAcceptedPerPos, want)
	}
	plain, err := os.ReadFile("testdata/metrics/llamacpp.txt")
	if err != nil {
		t.Fatal(err)
	}
	x, _, _ = parseServerMetrics(plain)
	if val(x.SpecDraftTokens) != 0 || x.SpecAcceptedPerPos != nil {
		t.Errorf("a llama-server without a draft model: %+v", x)
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

// TestScrapeSimulatorSGLang scrapes the simulator serving SGLang's names
// while it speculates: at the end, its counters are the requests,
// their output tokens and their verification steps, and the output
// tokens less one per request and one per step are exactly the draft
// tokens the requests' own timings say were accepted; the draft width
// is K + 1.
func TestScrapeSimulatorSGLang(t *testing.T) {
	const k = 4
	srv, err := sim.New(sim.Config{Model: "m", Metrics: sim.MetricsSGLang, TimeScale: 0.05,
		SpecDecode: &sim.SpecDecode{DraftTokens: k, Acceptance: map[string]float64{
			sim.ClassProse: 0.6, sim.ClassCode: 0.7, sim.ClassJSON: 0.8, sim.ClassToolCalls: 0.8, sim.ClassRepetitive: 0.95}}})
	if err != nil {
		t.Fatal(err)
	}
	c, sc, clk := scrapedSim(t, srv)
	const n, out = 4, 64
	accepted := 0
	for i := range n {
		rec := c.Stream(context.Background(), Call{Req: record.Request{Index: i, PromptTokens: 50, OutputTokens: out},
			Msgs: UserMessage(strings.Repeat("tell me more ", 17)), Clock: clk, Cut: ErrCutAfterGrace})
		if rec.Err != record.OK || !rec.Server.Has {
			t.Fatalf("request %d: %s %s (timings %v)", i, rec.Err, rec.ErrMsg, rec.Server.Has)
		}
		accepted += rec.Server.DraftAccepted
	}
	got := sc.Stop()
	if got.Source != "sglang GET /metrics" || got.Failures != 0 || len(got.Samples) < 2 {
		t.Fatalf("source %q, %d samples, %d failures (%s)", got.Source, len(got.Samples), got.Failures, got.LastError)
	}
	// SGLang's counters, like every labelled series of its Prometheus
	// client, appear at their first count: at the baseline, none yet.
	first, last := got.Samples[0], got.Samples[len(got.Samples)-1]
	if first.GenerationTokens != nil || first.SpecVerifySteps != nil {
		t.Errorf("counters before any request finished: %+v", first)
	}
	gen, reqs, verify := val(last.GenerationTokens), val(last.FinishedRequests), val(last.SpecVerifySteps)
	if gen != n*out || reqs != n || verify <= 0 {
		t.Fatalf("rose by %v tokens, %v requests, %v verification steps; want %d, %d, > 0", gen, reqs, verify, n*out, n)
	}
	if int(gen-reqs-verify) != accepted || accepted == 0 {
		t.Errorf("%v tokens − %v requests − %v steps = %v, the requests' timings accepted %d", gen, reqs, verify, gen-reqs-verify, accepted)
	}
	if val(last.SpecDraftWidth) != k+1 || last.SpecAcceptLength == nil {
		t.Errorf("draft width %v, accept length %v; want %d and a reading", show(last.SpecDraftWidth), show(last.SpecAcceptLength), k+1)
	}
}
