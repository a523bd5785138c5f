package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// OpenAI's legacy completions as documented, mirrored here.

type cmplTestChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type oaiTestUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// llama.cpp's timings object, with the simulator's queue_ms.
type testTimings struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	QueueMS             float64 `json:"queue_ms"`
}

type cmplTestChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []cmplTestChoice `json:"choices"`
	Usage   *oaiTestUsage    `json:"usage"`
	Timings *testTimings     `json:"timings"`
	Stamp   int64            `json:"sixpin_sent_unix_ns"`
}

func TestCompletionsStream(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: 0.5})
	body := map[string]any{"model": "m", "prompt": "hello there", "max_tokens": 4, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}}
	_, evs := streamEvents(t, ts.URL, "/v1/completions", body)
	if len(evs) != 7 || evs[6].data != "[DONE]" {
		t.Fatalf("%d events: %v", len(evs), evs)
	}
	checkStamps(t, evs)
	var text string
	var id string
	for i, e := range evs[:6] {
		if e.name != "" {
			t.Errorf("event %d named %q", i, e.name)
		}
		var c cmplTestChunk
		strict(t, e.data, &c)
		if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") || c.Model != "m" || (id != "" && c.ID != id) {
			t.Errorf("chunk %d: %s", i, e.data)
		}
		id = c.ID
		switch {
		case i < 4: // tokens: all text, no reasoning split
			wantKeys(t, e.data, "", "choices,created,id,model,object,sixpin_sent_unix_ns")
			wantKeys(t, e.data, "choices.0", "finish_reason,index,logprobs,text")
			if len(c.Choices) != 1 || c.Choices[0].FinishReason != nil || len(strings.Fields(c.Choices[0].Text)) != 1 {
				t.Errorf("token chunk %d: %s", i, e.data)
			}
			text += c.Choices[0].Text
		case i == 4:
			if len(c.Choices) != 1 || c.Choices[0].Text != "" || *c.Choices[0].FinishReason != "length" || c.Timings != nil {
				t.Errorf("finish chunk: %s", e.data)
			}
		default:
			wantKeys(t, e.data, "", "choices,created,id,model,object,sixpin_sent_unix_ns,timings,usage")
			// BOS + 2 words, no template.
			if len(c.Choices) != 0 || c.Usage.PromptTokens != 3 || c.Usage.CompletionTokens != 4 || c.Usage.TotalTokens != 7 {
				t.Errorf("usage chunk: %s", e.data)
			}
			checkTimings(t, c.Timings, c.Usage.PromptTokens, c.Usage.PromptTokensDetails.CachedTokens, c.Usage.CompletionTokens)
		}
	}
	// /tokenize counts the prompt as the completion bills it.
	_, b := do(t, http.MethodPost, ts.URL+"/tokenize", map[string]any{"model": "m", "prompt": "hello there"})
	if !strings.Contains(string(b), `"count":3`) {
		t.Errorf("tokenize: %s", b)
	}

	delete(body, "stream")
	resp, b := readAll(t, ts.URL, "/v1/completions", body, nil)
	var c cmplTestChunk
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	strict(t, string(b), &c)
	if c.Object != "text_completion" || len(c.Choices) != 1 || c.Choices[0].Text != text || *c.Choices[0].FinishReason != "length" || c.Usage == nil {
		t.Errorf("completion %s, streamed %q", b, text)
	}
	checkTimings(t, c.Timings, c.Usage.PromptTokens, c.Usage.PromptTokensDetails.CachedTokens, c.Usage.CompletionTokens)
}

// checkTimings checks a timings object agrees with the usage beside it:
// its prompt, cached and completion tokens.
func checkTimings(t *testing.T, tm *testTimings, prompt, cached, completion int) {
	t.Helper()
	if tm == nil {
		t.Fatal("no timings")
	}
	if tm.CacheN != cached || tm.PromptN != prompt-cached || tm.PredictedN != completion {
		t.Errorf("timings %+v against usage: %d prompt tokens, %d cached, %d completion", *tm, prompt, cached, completion)
	}
	near := func(a, b float64) bool { return a == b || (a-b)/(a+b) < 1e-12 && (b-a)/(a+b) < 1e-12 }
	for _, r := range []struct {
		n                    int
		ms, perToken, perSec float64
	}{{tm.PromptN, tm.PromptMS, tm.PromptPerTokenMS, tm.PromptPerSecond}, {tm.PredictedN, tm.PredictedMS, tm.PredictedPerTokenMS, tm.PredictedPerSecond}} {
		switch {
		case r.ms < 0 || tm.QueueMS < 0:
			t.Errorf("negative time: %+v", *tm)
		case r.n > 0 && !near(r.perToken, r.ms/float64(r.n)):
			t.Errorf("per-token ms %v, want %v / %d", r.perToken, r.ms, r.n)
		case r.ms > 0 && !near(r.perSec, float64(r.n)/r.ms*1000):
			t.Errorf("per-second %v, want %d / %v ms", r.perSec, r.n, r.ms)
		case r.ms == 0 && r.perSec != 0:
			t.Errorf("per-second %v for no time", r.perSec)
		}
	}
}

func TestCompletionsPrompt(t *testing.T) {
	on := true
	_, ts := start(t, Config{Timing: TimingNone, PrefixCaching: &on})
	for _, tc := range []struct {
		name   string
		prompt any
		status int
		tokens int
		cached int
	}{
		{"string", text(0, 40), 200, 41, 0},
		{"one in an array, sharing the prefix", []string{text(0, 40) + " more"}, 200, 42, 32},
		{"two prompts", []string{"a", "b"}, 400, 0, 0},
		{"a number", 42, 400, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := readAll(t, ts.URL, "/v1/completions", map[string]any{"prompt": tc.prompt, "max_tokens": 2}, nil)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tc.status != 200 {
				if !strings.Contains(string(b), `"type":"invalid_request_error"`) {
					t.Errorf("error body %s", b)
				}
				return
			}
			var c cmplTestChunk
			strict(t, string(b), &c)
			if c.Usage.PromptTokens != tc.tokens || c.Usage.PromptTokensDetails.CachedTokens != tc.cached {
				t.Errorf("usage %+v, want %d prompt tokens, %d cached", *c.Usage, tc.tokens, tc.cached)
			}
		})
	}
}

// A hosted service's request overhead (its gateway) delays the first
// token but is no queue: the request waited for no other. queue_ms, like
// vLLM's queue time, is the wait in the engine's waiting list only, so a
// client that judges served concurrency by it does not read a lone
// request as queued.
func TestRequestOverheadIsNotQueue(t *testing.T) {
	rl := DefaultRoofline()
	rl.RequestOverhead = 2 * time.Second
	_, ts := start(t, Config{Roofline: rl})
	body := map[string]any{"model": "m", "prompt": "hello there", "max_tokens": 2, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}}
	_, evs := streamEvents(t, ts.URL, "/v1/completions", body)
	var c cmplTestChunk
	strict(t, evs[len(evs)-2].data, &c)
	if c.Timings == nil {
		t.Fatalf("no timings: %s", evs[len(evs)-2].data)
	}
	// Generous: an idle engine schedules a submitted request within a step.
	if c.Timings.QueueMS >= 1000 {
		t.Errorf("queue_ms %.0f counts the 2 s request overhead as queue", c.Timings.QueueMS)
	}
}
