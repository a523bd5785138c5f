package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/testserve"
)

// The request log counts what the Server served, request by request, and
// agrees with its /metrics counters: prompt and generation tokens, and
// requests by finish reason.
func TestRequestLogCountsWhatWasServed(t *testing.T) {
	t.Parallel()
	var log testserve.Buffer
	s, err := New(Config{Timing: TimingNone, RequestLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	for i, body := range []string{
		`{"model":"sim-model","stream":true,"max_tokens":7,"ignore_eos":true,"messages":[{"role":"user","content":"one two three"}]}`,
		`{"model":"sim-model","max_tokens":5,"ignore_eos":true,"messages":[{"role":"user","content":"four five"}]}`,
		`{"model":"sim-model","max_tokens":3,"prompt":"six seven eight nine"}`,
	} {
		path := "/v1/chat/completions"
		if i == 2 {
			path = "/v1/completions"
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("X-Request-Id", "run-"+string(rune('a'+i)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
	}
	m := scrape(t, srv.URL)
	srv.Close() // waits for every handler, so every line is written

	var prompt, completion int
	ids := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	for sc.Scan() {
		var e RequestLogEntry
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.FinishReason != "length" {
			t.Errorf("%s finished %q, want length (ignore_eos, max_tokens)", e.ID, e.FinishReason)
		}
		ids[e.ID] = true
		prompt += e.PromptTokens
		completion += e.CompletionTokens
	}
	if len(ids) != 3 || !ids["run-a"] || !ids["run-c"] {
		t.Errorf("logged ids %v, want run-a, run-b, run-c", ids)
	}
	if completion != 7+5+3 {
		t.Errorf("completion tokens %d, want 15", completion)
	}
	if got := m[sample("vllm:prompt_tokens_total")]; float64(prompt) != got {
		t.Errorf("log counts %d prompt tokens, /metrics %v", prompt, got)
	}
	if got := m[sample("vllm:generation_tokens_total")]; float64(completion) != got {
		t.Errorf("log counts %d completion tokens, /metrics %v", completion, got)
	}
	if got := m[sample("vllm:request_success_total", `finished_reason="length"`)]; got != 3 {
		t.Errorf("/metrics counts %v requests finished by length, want 3", got)
	}
}
