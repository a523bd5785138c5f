package sim

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// scrape reads /metrics into sample → value, a sample named as written
// (name{labels}); it fails on a line that is not a comment or a sample
// (vLLM's, SGLang's or the simulator's own).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	code, b := do(t, http.MethodGet, url+"/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d", code)
	}
	m := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil || !strings.HasPrefix(line, "vllm:") && !strings.HasPrefix(line, "sglang:") && !strings.HasPrefix(line, SchedulerConfigInfo+"{") {
			t.Fatalf("not a sample: %q", line)
		}
		m[line[:i]] = v
	}
	return m
}

// sample is the name of a sim-model sample with extra labels.
func sample(name string, extra ...string) string {
	labels := append([]string{`engine="0"`, `model_name="sim-model"`}, extra...)
	return name + "{" + strings.Join(labels, ",") + "}"
}

// checkHistograms checks every histogram is cumulative, ends in +Inf and
// counts what its +Inf bucket counts.
func checkHistograms(t *testing.T, m map[string]float64) {
	t.Helper()
	for _, h := range []struct {
		name   string
		bounds []float64
	}{
		{"vllm:time_to_first_token_seconds", ttftBuckets}, {"vllm:e2e_request_latency_seconds", requestBuckets},
		{"vllm:request_queue_time_seconds", requestBuckets}, {"vllm:request_prefill_time_seconds", requestBuckets},
		{"vllm:request_decode_time_seconds", requestBuckets}, {"vllm:inter_token_latency_seconds", itlBuckets},
	} {
		prev := 0.0
		for _, le := range append(h.bounds, 0) {
			s := `le="+Inf"`
			if le != 0 {
				s = `le="` + promFloat(le) + `"`
			}
			v, ok := m[sample(h.name+"_bucket", s)]
			if !ok || v < prev {
				t.Errorf("%s bucket %s = %v (present %v) after %v", h.name, s, v, ok, prev)
			}
			prev = v
		}
		if c, ok := m[sample(h.name+"_count")]; !ok || c != prev {
			t.Errorf("%s_count %v, +Inf bucket %v", h.name, c, prev)
		}
		if _, ok := m[sample(h.name+"_sum")]; !ok {
			t.Errorf("%s_sum missing", h.name)
		}
	}
}

// openStream posts body to path as a stream and reads until the first
// event whose data contains marker: a token. The caller closes the body.
func openStream(t *testing.T, ctx context.Context, url, path string, body map[string]any, marker string) *bufio.Reader {
	t.Helper()
	body["stream"] = true
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url+path, strings.NewReader(mustJSON(body)))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	readUntil(t, br, marker)
	return br
}

// readUntil reads lines until one contains marker.
func readUntil(t *testing.T, br *bufio.Reader, marker string) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended before %q: %v", marker, err)
		}
		if strings.Contains(line, marker) {
			return
		}
	}
}

func TestMetricsLive(t *testing.T) {
	// Three streams, one per protocol, each sent its first token and then
	// held for an hour: all three run, each has produced one token.
	s, ts := start(t, Config{Timing: TimingFixed, Fixed: Fixed{TTFT: 0, ITL: time.Hour}})
	ctx := t.Context()
	openStream(t, ctx, ts.URL, "/v1/chat/completions", req{"messages": userMsg("a b"), "max_tokens": 10, "ignore_eos": true}, `"content":" `)
	openStream(t, ctx, ts.URL, "/v1/messages", anthReq(10, msg("user", "a b c")), "text_delta")
	openStream(t, ctx, ts.URL, "/v1/responses", map[string]any{"input": "a b c d", "max_output_tokens": 10}, "output_text.delta")
	m := scrape(t, ts.URL)
	for k, want := range map[string]float64{
		sample("vllm:num_requests_running"):                             3,
		sample("vllm:num_requests_waiting"):                             0,
		sample("vllm:generation_tokens_total"):                          3,
		sample("vllm:prompt_tokens_total"):                              10 + 11 + 12, // words + 5 + 3 each
		sample("vllm:time_to_first_token_seconds_count"):                3,
		sample("vllm:e2e_request_latency_seconds_count"):                0,
		sample("vllm:request_success_total", `finished_reason="abort"`): 0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	checkHistograms(t, m)
	// Close ends the three streams early: aborted.
	s.Close()
	waitFor(t, func() bool { return scrape(t, ts.URL)[sample("vllm:num_requests_running")] == 0 })
	if m := scrape(t, ts.URL); m[sample("vllm:request_success_total", `finished_reason="abort"`)] != 3 {
		t.Errorf("aborted %v, want 3", m[sample("vllm:request_success_total", `finished_reason="abort"`)])
	}
}

func TestMetricsEngine(t *testing.T) {
	rl := fastRoofline()
	rl.StepOverhead = time.Millisecond
	t.Run("during a run", func(t *testing.T) {
		_, ts := start(t, Config{Roofline: rl, KVBudgetTokens: 65536})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		for i := range 2 {
			// 20,000 tokens of 1 ms steps: still running at the end.
			body := req{"messages": userMsg(text(100*i, 40)), "max_tokens": 20000, "ignore_eos": true}
			openStream(t, ctx, ts.URL, "/v1/chat/completions", body, `"content":" `)
		}
		m1 := scrape(t, ts.URL)
		if m1[sample("vllm:num_requests_running")] != 2 || m1[sample("vllm:prompt_tokens_total")] != 2*48 ||
			m1[sample("vllm:generation_tokens_total")] < 2 {
			t.Errorf("running %v, prompt tokens %v, generation tokens %v", m1[sample("vllm:num_requests_running")],
				m1[sample("vllm:prompt_tokens_total")], m1[sample("vllm:generation_tokens_total")])
		}
		usage := m1[sample("vllm:kv_cache_usage_perc")]
		if usage <= 0 || usage > 1 || m1[sample("vllm:gpu_cache_usage_perc")] != usage {
			t.Errorf("KV usage %v, gpu alias %v", usage, m1[sample("vllm:gpu_cache_usage_perc")])
		}
		// The engine goes on producing: the counters move.
		var m2 map[string]float64
		waitFor(t, func() bool {
			m2 = scrape(t, ts.URL)
			return m2[sample("vllm:generation_tokens_total")] >= m1[sample("vllm:generation_tokens_total")]+10 &&
				m2[sample("vllm:inter_token_latency_seconds_count")] >= m1[sample("vllm:inter_token_latency_seconds_count")]+10
		})
		if m2[sample("vllm:num_requests_running")] != 2 {
			t.Errorf("running %v later", m2[sample("vllm:num_requests_running")])
		}
		checkHistograms(t, m2)
		cancel()
		waitFor(t, func() bool { return scrape(t, ts.URL)[sample("vllm:num_requests_running")] == 0 })
	})
	t.Run("counts", func(t *testing.T) {
		_, ts := start(t, Config{Roofline: rl})
		for i := range 3 {
			resp, b := readAll(t, ts.URL, "/v1/chat/completions", req{"messages": userMsg(fmt.Sprint("q", i)), "max_tokens": 5, "ignore_eos": true}, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
		}
		m := scrape(t, ts.URL)
		for k, want := range map[string]float64{
			sample("vllm:request_success_total", `finished_reason="length"`): 3,
			sample("vllm:request_success_total", `finished_reason="stop"`):   0,
			sample("vllm:request_success_total", `finished_reason="abort"`):  0,
			sample("vllm:prompt_tokens_total"):                               3 * 9,
			sample("vllm:generation_tokens_total"):                           3 * 5,
			sample("vllm:inter_token_latency_seconds_count"):                 3 * 4, // one per step after the first token
			sample("vllm:time_to_first_token_seconds_count"):                 3,
			sample("vllm:e2e_request_latency_seconds_count"):                 3,
			sample("vllm:request_decode_time_seconds_count"):                 3,
			sample("vllm:num_requests_running"):                              0,
		} {
			if m[k] != want {
				t.Errorf("%s = %v, want %v", k, m[k], want)
			}
		}
		// Each decode took 4 steps of at least StepOverhead.
		if got := m[sample("vllm:request_decode_time_seconds_sum")]; got < 3*4*rl.StepOverhead.Seconds() {
			t.Errorf("decode time sum %v s", got)
		}
		checkHistograms(t, m)
	})
}
