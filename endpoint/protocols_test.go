package endpoint

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// simServer serves the simulator (no modelled time) over real HTTP.
func simServer(t *testing.T, cfg sim.Config) string {
	t.Helper()
	if cfg.Timing == "" {
		cfg.Timing = sim.TimingNone
	}
	if cfg.Model == "" {
		cfg.Model = "sim-model"
	}
	return serve(t, newSim(t, cfg), nil).URL + "/v1"
}

func protoClient(t *testing.T, base string, p Protocol, key string, extra map[string]any) *Client {
	t.Helper()
	c, err := New(Target{BaseURL: base, Model: "sim-model", APIKey: key, Protocol: p,
		OutputControl: ControlIgnoreEOS | ControlMinTokens, ExtraBody: extra}, Options{Exact: true, Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func streamOne(c *Client, i, prompt, out int, msgs []Message) *record.Record {
	return c.Stream(context.Background(), Call{Req: record.Request{Index: i, PromptTokens: prompt, OutputTokens: out},
		Msgs: msgs, Clock: Clock{Start: time.Now()}, Cut: ErrCutAfterGrace})
}

// TestProtocolsClosedLoop runs requests one after another against the
// simulator's /v1/messages, /v1/responses and /v1/completions (and chat,
// the yardstick): every metric keeps its meaning, a chunk carrying k
// tokens counts k, the usage is whole, and the key is sent the protocol's
// way (the simulator refuses any other).
func TestProtocolsClosedLoop(t *testing.T) {
	base := simServer(t, sim.Config{APIKey: "sk-proto-test-key", TokensPerChunk: 2})
	for _, p := range []Protocol{ProtocolChat, ProtocolMessages, ProtocolResponses, ProtocolCompletions} {
		t.Run(p.String(), func(t *testing.T) {
			c := protoClient(t, base, p, "sk-proto-test-key", nil)
			for i := range 3 {
				rec := streamOne(c, i, 40, 20, UserMessage(strings.Repeat("alpha beta gamma ", 10)))
				if rec.Failed() {
					t.Fatalf("request %d: %s: %s", i, rec.Err, rec.ErrMsg)
				}
				if !rec.HasUsage || rec.Usage.CompletionTokens != 20 || rec.Usage.PromptTokens == 0 {
					t.Fatalf("usage %+v (has %v), want 20 output tokens and a prompt", rec.Usage, rec.HasUsage)
				}
				if len(rec.Chunks) != 10 || rec.Model != "sim-model" || rec.FinishReason == "" {
					t.Fatalf("%d chunks, model %q, finish %q; want 10 two-token chunks of sim-model, finished",
						len(rec.Chunks), rec.Model, rec.FinishReason)
				}
				for _, ch := range rec.Chunks {
					if ch.Reasoning || ch.ClientLagUS < 0 {
						t.Fatalf("chunk %+v: want content with the send stamp read", ch)
					}
				}
			}
		})
	}
}

// TestProtocolsReasoning: thinking blocks (Messages) and reasoning_text
// deltas (Responses) are reasoning chunks, before the answer's.
func TestProtocolsReasoning(t *testing.T) {
	base := simServer(t, sim.Config{ReasoningShare: 0.5})
	for _, tc := range []struct {
		p     Protocol
		extra map[string]any
	}{
		{ProtocolMessages, map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024}}},
		{ProtocolResponses, nil},
	} {
		t.Run(tc.p.String(), func(t *testing.T) {
			c := protoClient(t, base, tc.p, "", tc.extra)
			rec := streamOne(c, 0, 40, 2000, UserMessage("think about it"))
			if rec.Failed() {
				t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
			}
			reasoning := 0
			for i, ch := range rec.Chunks {
				if ch.Reasoning {
					if i != reasoning {
						t.Fatalf("reasoning chunk %d after content", i)
					}
					reasoning++
				}
			}
			if reasoning == 0 || reasoning == len(rec.Chunks) {
				t.Fatalf("%d of %d chunks reasoning, want some of each", reasoning, len(rec.Chunks))
			}
		})
	}
}

// TestMessagesPromptCaching: an agentic conversation sent twice, growing,
// reads its history from the cache the first wrote: the markers go where
// the history ends, and usage's three input parts add up to the prompt.
func TestMessagesPromptCaching(t *testing.T) {
	yes := true
	base := simServer(t, sim.Config{PrefixCaching: &yes})
	c := protoClient(t, base, ProtocolMessages, "", nil)
	turn := strings.Repeat("the agent reads a file and edits it ", 40)
	msgs := []Message{{Role: RoleUser, Content: turn}, {Role: RoleAssistant, Content: turn}, {Role: RoleUser, Content: turn}}
	first := streamOne(c, 0, 1000, 8, msgs)
	msgs = append(msgs, Message{Role: RoleAssistant, Content: turn}, Message{Role: RoleUser, Content: turn})
	second := streamOne(c, 1, 1600, 8, msgs)
	for _, rec := range []*record.Record{first, second} {
		if rec.Failed() {
			t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
		}
	}
	if u := first.Usage; u.CacheWriteTokens == 0 || u.CachedTokens != 0 {
		t.Fatalf("first turn usage %+v: want a cache write, no read", u)
	}
	if u := second.Usage; u.CachedTokens < first.Usage.CacheWriteTokens || u.CachedTokens >= u.PromptTokens {
		t.Fatalf("second turn usage %+v: want the first turn's %d written tokens read", u, first.Usage.CacheWriteTokens)
	}
	if second.Usage.CompletionTokens != 8 {
		t.Fatalf("output %d, want 8 (message_delta's part of usage)", second.Usage.CompletionTokens)
	}
}

// TestMessagesErrors: 529 overloaded, the in-stream overloaded_error and
// a 429 rate_limit_error whose bucket the anthropic-ratelimit-* headers
// (or its message) name, with Retry-After honoured.
func TestMessagesErrors(t *testing.T) {
	t.Run("529", func(t *testing.T) {
		c := protoClient(t, simServer(t, sim.Config{Faults: map[string]float64{sim.FaultHTTP503: 1}}), ProtocolMessages, "", nil)
		rec := streamOne(c, 0, 10, 10, UserMessage("hello"))
		if rec.Err != record.ErrHTTP5xx || rec.HTTPStatus != 529 || !strings.Contains(rec.ErrMsg, "overloaded_error") {
			t.Fatalf("%s %d %q: want http_5xx 529 overloaded_error", rec.Err, rec.HTTPStatus, rec.ErrMsg)
		}
	})
	t.Run("stream error", func(t *testing.T) {
		c := protoClient(t, simServer(t, sim.Config{Faults: map[string]float64{sim.FaultStreamError: 1}}), ProtocolMessages, "", nil)
		rec := streamOne(c, 0, 10, 10, UserMessage("hello"))
		if rec.Err != record.ErrStreamError || rec.ErrMsg != "error event in the stream: overloaded_error: Overloaded" || len(rec.Chunks) == 0 {
			t.Fatalf("%s %q, %d chunks: want stream_error overloaded_error after some chunks", rec.Err, rec.ErrMsg, len(rec.Chunks))
		}
	})
	t.Run("429", func(t *testing.T) {
		c := protoClient(t, simServer(t, sim.Config{RateLimits: sim.RateLimits{UncachedTokensPerMinute: 100}}), ProtocolMessages, "", nil)
		var rec *record.Record
		for i := range 5 {
			if rec = streamOne(c, i, 60, 4, UserMessage(strings.Repeat("many words here ", 20))); rec.Failed() {
				break
			}
		}
		if rec.Err != record.ErrHTTP429 || rec.RateLimitBucket != record.BucketUncachedTokens || rec.RetryAfter <= 0 {
			t.Fatalf("%s bucket %q retry after %v (%s): want http_429 on uncached tokens with a Retry-After",
				rec.Err, rec.RateLimitBucket, rec.RetryAfter, rec.ErrMsg)
		}
	})
}

// TestAnthropicRateLimitHeaders: the exhausted anthropic-ratelimit-*
// bucket is named from the headers alone, the narrowest when several are.
func TestAnthropicRateLimitHeaders(t *testing.T) {
	for _, tc := range []struct {
		h    map[string]string
		want string
	}{
		{map[string]string{"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-tokens-remaining": "500"}, record.BucketRequests},
		{map[string]string{"anthropic-ratelimit-input-tokens-remaining": "0", "anthropic-ratelimit-tokens-remaining": "0"}, record.BucketUncachedTokens},
		{map[string]string{"anthropic-ratelimit-output-tokens-remaining": "0", "anthropic-ratelimit-requests-remaining": "0"}, record.BucketOutputTokens},
		{map[string]string{"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-limit": "0"}, record.BucketTokens},
		{map[string]string{"anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z"}, ""},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		for range 20 { // map order must not matter
			if got := bucketFromHeaders(h); got != tc.want {
				t.Fatalf("%v: bucket %q, want %q", tc.h, got, tc.want)
			}
		}
	}
}

// TestMessagesBaseURL: Anthropic's base URL is written without /v1; the
// request goes to …/v1/messages either way, its query kept.
func TestMessagesBaseURL(t *testing.T) {
	for base, want := range map[string]string{
		"https://api.anthropic.com":           "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/":          "https://api.anthropic.com/v1/messages",
		"https://api.anthropic.com/v1":        "https://api.anthropic.com/v1/messages",
		"https://gw.example/anthropic?k=v":    "https://gw.example/anthropic/v1/messages?k=v",
		"https://gw.example/anthropic/v1?k=v": "https://gw.example/anthropic/v1/messages?k=v",
	} {
		c, err := New(Target{BaseURL: base, Protocol: ProtocolMessages}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.url != want {
			t.Errorf("%s: %s, want %s", base, c.url, want)
		}
	}
}

// A request that keeps its text gets its answer's text in the record,
// over every protocol, and its words are the answer's tokens; a request
// that does not keep its text gets none; and the text stops at
// record.MaxTextBytes.
func TestKeepText(t *testing.T) {
	base := simServer(t, sim.Config{TokensPerChunk: 3, Tokenizer: "words"})
	for _, p := range []Protocol{ProtocolChat, ProtocolMessages, ProtocolResponses, ProtocolCompletions} {
		t.Run(p.String(), func(t *testing.T) {
			c := protoClient(t, base, p, "", nil)
			call := Call{Req: record.Request{Index: 1, PromptTokens: 40, OutputTokens: 30}, Msgs: UserMessage("say something"),
				Clock: Clock{Start: time.Now()}, Cut: ErrCutAfterGrace, KeepText: true}
			rec := c.Stream(context.Background(), call)
			if rec.Failed() {
				t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
			}
			if n, answer := len(strings.Fields(string(rec.Text))), rec.Usage.CompletionTokens; n != answer || answer == 0 {
				t.Errorf("kept %d words (%q), the answer has %d tokens of one word each", n, rec.Text, answer)
			}
			call.KeepText = false
			if rec := c.Stream(context.Background(), call); rec.Text != nil {
				t.Errorf("a request that keeps no text kept %q", rec.Text)
			}
			call.KeepText, call.Req.OutputTokens = true, 8000
			if rec := c.Stream(context.Background(), call); len(rec.Text) != record.MaxTextBytes {
				t.Errorf("a long answer kept %d bytes, want the cap %d", len(rec.Text), record.MaxTextBytes)
			}
		})
	}
}
