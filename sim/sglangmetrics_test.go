package sim

import (
	"math"
	"strings"
	"testing"
)

// sglangSample is the name of a sim-model sample of SGLang's scheduler
// (sched) or tokenizer.
func sglangSample(name string, sched bool) string {
	if sched {
		return name + `{model_name="sim-model",engine_type="unified",tp_rank="0",pp_rank="0"}`
	}
	return name + `{model_name="sim-model"}`
}

// TestSGLangMetrics checks /metrics in SGLang's names against the
// responses: its counters count the finished requests, their output
// tokens and their verification steps, one a decode step, so that the
// output tokens are each request's first, plus one per step, plus those
// accepted (draft_n_accepted); the gauges are over the last 40 decode
// steps, with acceptance rate (length − 1) ÷ K as they are over the same
// steps; no vLLM name is served.
func TestSGLangMetrics(t *testing.T) {
	const k = 3
	c := specConfig(k)
	c.Metrics = MetricsSGLang
	_, ts := start(t, c)
	var out, accepted, n int
	for class, prompt := range classPrompts {
		for _, tokens := range []int{1, 2, 40, 257} {
			body := req{"max_tokens": tokens, "ignore_eos": true}
			for key, v := range prompt {
				body[key] = v
			}
			_, c := nonStream(t, ts.URL, body)
			if tm := c.Timings; tm == nil {
				t.Fatalf("%s, %d tokens: no timings", class, tokens)
			} else if tm.DraftNAccepted != nil {
				accepted += *tm.DraftNAccepted
			}
			out += c.Usage.CompletionTokens
			n++
		}
	}
	m := scrape(t, ts.URL)
	for name := range m {
		if strings.HasPrefix(name, "vllm:") {
			t.Fatalf("a vLLM name in SGLang's metrics: %s", name)
		}
	}
	gen, requests := m[sglangSample("sglang:generation_tokens_total", false)], m[sglangSample("sglang:num_requests_total", false)]
	verify := m[sglangSample("sglang:spec_verify_calls_total", false)]
	if int(gen) != out || int(requests) != n {
		t.Errorf("generation_tokens_total %v, num_requests_total %v; the responses: %d tokens, %d requests", gen, requests, out, n)
	}
	if want := out - n - accepted; int(verify) != want || accepted == 0 {
		t.Errorf("spec_verify_calls_total %v, want %d: %d tokens less %d first and %d accepted", verify, want, out, n, accepted)
	}
	length, rate := m[sglangSample("sglang:spec_accept_length", true)], m[sglangSample("sglang:spec_accept_rate", true)]
	if !(length > 1 && length <= k+1) || math.Abs(rate-(length-1)/k) > 1e-9 {
		t.Errorf("spec_accept_length %v, spec_accept_rate %v; want in (1, %d] and (length − 1) ÷ %d", length, rate, k+1, k)
	}
	if steps, width := m[sglangSample("sglang:spec_num_steps", true)], m[sglangSample("sglang:spec_num_draft_tokens", true)]; steps != k || width != k+1 {
		t.Errorf("spec_num_steps %v, spec_num_draft_tokens %v; want %d, %d", steps, width, k, k+1)
	}
	if _, ok := m[sglangSample("sglang:time_to_first_token_seconds_count", false)]; !ok {
		t.Errorf("no TTFT histogram")
	}
}

// TestSGLangMetricsNotSpeculating: without spec_decode SGLang's
// speculative gauges read 0, as SGLang logs them, and it has no
// verification counter.
func TestSGLangMetricsNotSpeculating(t *testing.T) {
	_, ts := start(t, Config{Roofline: fastRoofline(), Metrics: MetricsSGLang})
	nonStream(t, ts.URL, req{"messages": userMsg("Tell me a story."), "max_tokens": 20, "ignore_eos": true})
	m := scrape(t, ts.URL)
	if v, ok := m[sglangSample("sglang:spec_accept_length", true)]; !ok || v != 0 {
		t.Errorf("spec_accept_length %v (served %v), want 0", v, ok)
	}
	if v, ok := m[sglangSample("sglang:spec_verify_calls_total", false)]; ok {
		t.Errorf("spec_verify_calls_total %v without speculative decoding", v)
	}
	if m[sglangSample("sglang:generation_tokens_total", false)] != 20 {
		t.Errorf("generation_tokens_total %v, want 20", m[sglangSample("sglang:generation_tokens_total", false)])
	}
}
