package endpoint

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
)

// serveBody answers every request with body, of content type ct.
func serveBody(t *testing.T, ct string, body []byte) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Write(body)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

// TestProtocolFixtures reads the vendors' documented streams and answers
// (testdata/protocols, see SOURCES.md): chunks per content, reasoning and
// tool output, usage (Anthropic's in two parts, its cached input counted
// in the prompt), finish reasons and errors.
func TestProtocolFixtures(t *testing.T) {
	type want struct {
		chunks, reasoning int
		tools             bool
		usage             record.Usage
		finish, model     string
		err               record.ErrorClass
		errMsg            string
	}
	for _, tc := range []struct {
		file string
		p    Protocol
		want want
	}{
		{"messages_text.sse", ProtocolMessages, want{chunks: 2, usage: record.Usage{PromptTokens: 25, CompletionTokens: 15},
			finish: "end_turn", model: "claude-opus-4-6"}},
		{"messages_tool_use.sse", ProtocolMessages, want{chunks: 5, tools: true,
			usage:  record.Usage{PromptTokens: 472 + 2048 + 8192, CompletionTokens: 89, CachedTokens: 8192, CacheWriteTokens: 2048},
			finish: "tool_use", model: "claude-opus-4-6"}},
		{"messages_thinking.sse", ProtocolMessages, want{chunks: 3, reasoning: 2, usage: record.Usage{PromptTokens: 40, CompletionTokens: 120},
			finish: "end_turn", model: "claude-sonnet-4-5"}},
		{"messages_error.sse", ProtocolMessages, want{chunks: 1, usage: record.Usage{PromptTokens: 25, CompletionTokens: 1},
			model: "claude-opus-4-6", err: record.ErrStreamError, errMsg: "error event in the stream: overloaded_error: Overloaded"}},
		{"messages_whole.json", ProtocolMessages, want{chunks: 1, tools: true,
			usage:  record.Usage{PromptTokens: 2095 + 1800, CompletionTokens: 503, CachedTokens: 1800},
			finish: "tool_use", model: "claude-opus-4-6"}},
		{"responses_text.sse", ProtocolResponses, want{chunks: 2, usage: record.Usage{PromptTokens: 37, CompletionTokens: 11},
			finish: "completed", model: "gpt-4.1-2025-04-14"}},
		{"responses_reasoning_tool.sse", ProtocolResponses, want{chunks: 4, reasoning: 1, tools: true,
			usage:  record.Usage{PromptTokens: 81, CompletionTokens: 150, CachedTokens: 64, ReasoningTokens: 128},
			finish: "completed", model: "o4-mini-2025-04-16"}},
		{"responses_error.sse", ProtocolResponses, want{chunks: 1, model: "gpt-4.1", err: record.ErrStreamError,
			errMsg: "error event in the stream: ERR_SOMETHING: Something went wrong"}},
		{"responses_incomplete.sse", ProtocolResponses, want{chunks: 1, usage: record.Usage{PromptTokens: 10, CompletionTokens: 2},
			finish: "max_output_tokens", model: "gpt-4.1"}},
		{"responses_whole.json", ProtocolResponses, want{chunks: 1, usage: record.Usage{PromptTokens: 36, CompletionTokens: 87},
			finish: "completed", model: "gpt-4.1-2025-04-14"}},
		{"completions_text.sse", ProtocolCompletions, want{chunks: 3, usage: record.Usage{PromptTokens: 5, CompletionTokens: 7},
			finish: "length", model: "gpt-3.5-turbo-instruct"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "protocols", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			ct := "text/event-stream"
			if strings.HasSuffix(tc.file, ".json") {
				ct = "application/json"
			}
			rec := streamOne(protoClient(t, serveBody(t, ct, body), tc.p, "", nil), 0, 10, 10, UserMessage("hi"))
			reasoning := 0
			for _, ch := range rec.Chunks {
				if ch.Reasoning {
					reasoning++
				}
			}
			got := want{chunks: len(rec.Chunks), reasoning: reasoning, tools: rec.ToolCalls, usage: rec.Usage,
				finish: rec.FinishReason, model: rec.Model, err: rec.Err, errMsg: rec.ErrMsg}
			if got != tc.want {
				t.Fatalf("read\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// TestProtocolMalformed: per protocol, an event that is not JSON, a
// stream cut before its stop reason, and one with no output.
func TestProtocolMalformed(t *testing.T) {
	const (
		msgStart = "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
		msgText  = "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n"
		msgEnd   = "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\ndata: {\"type\":\"message_stop\"}\n\n"
		respText = "data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n"
		respEnd  = "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
	)
	for _, tc := range []struct {
		name, body string
		p          Protocol
		want       record.ErrorClass
	}{
		{"messages not JSON", msgStart + "data: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\n\n" + msgEnd, ProtocolMessages, record.ErrMalformed},
		{"messages usage not a number", "data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":\"x\"}}\n\n", ProtocolMessages, record.ErrMalformed},
		{"messages cut", msgStart + msgText, ProtocolMessages, record.ErrStreamCut},
		{"messages empty", msgStart + msgEnd, ProtocolMessages, record.ErrEmpty},
		{"messages whole", msgStart + msgText + msgEnd, ProtocolMessages, record.OK},
		{"responses not JSON", "data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"\n\n" + respEnd, ProtocolResponses, record.ErrMalformed},
		{"responses trailing", respText + "data: {\"type\":\"error\"} x\n\n", ProtocolResponses, record.ErrMalformed},
		{"responses cut", respText, ProtocolResponses, record.ErrStreamCut},
		{"responses empty", respEnd, ProtocolResponses, record.ErrEmpty},
		{"responses failed", respText + "data: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"boom\"}}}\n\n", ProtocolResponses, record.ErrStreamError},
		{"responses whole", respText + respEnd + "data: [DONE]\n\n", ProtocolResponses, record.OK},
		{"completions not JSON", "data: {\"choices\":[{\"text\":}]}\n\n", ProtocolCompletions, record.ErrMalformed},
		{"completions cut", "data: {\"choices\":[{\"text\":\"hi\",\"finish_reason\":null}]}\n\n", ProtocolCompletions, record.ErrStreamCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := streamOne(protoClient(t, serveBody(t, "text/event-stream", []byte(tc.body)), tc.p, "", nil), 0, 3, 1, UserMessage("hi"))
			if rec.Err != tc.want {
				t.Fatalf("class %q (%s), want %q", rec.Err, rec.ErrMsg, tc.want)
			}
		})
	}
}

// addFixtureEvents seeds f with every event's data in the fixtures whose
// names start with prefix, and the whole JSON answers.
func addFixtureEvents(f *testing.F, prefix string) {
	files, _ := filepath.Glob(filepath.Join("testdata", "protocols", prefix+"*"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if strings.HasSuffix(name, ".json") {
			f.Add(string(b))
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				f.Add(data)
			}
		}
	}
}

// fuzzEvent checks a protocol's event reader on arbitrary data: it never
// panics, accepts only what encoding/json takes for an object, and counts
// no more bytes of output than there are.
func fuzzEvent(t *testing.T, p protocol, s string) {
	var c chunk
	err := p.event([]byte(s), &c)
	var v map[string]json.RawMessage
	stdErr := json.Unmarshal([]byte(s), &v)
	if err == nil && stdErr != nil {
		t.Fatalf("accepted %q; encoding/json: %v", s, stdErr)
	}
	if n := c.contentBytes + c.reasoningBytes + c.toolBytes; n > len(s) || n < 0 {
		t.Fatalf("%d output bytes in %d bytes of %q", n, len(s), s)
	}
}

// FuzzMessagesEvent fuzzes the Anthropic Messages event reader, seeded with
// the documented events (testdata/protocols/messages_*).
func FuzzMessagesEvent(f *testing.F) {
	addFixtureEvents(f, "messages_")
	f.Fuzz(func(t *testing.T, s string) { fuzzEvent(t, messages{}, s) })
}

// FuzzResponsesEvent fuzzes the OpenAI Responses event reader, seeded with
// the documented events (testdata/protocols/responses_*).
func FuzzResponsesEvent(f *testing.F) {
	addFixtureEvents(f, "responses_")
	f.Fuzz(func(t *testing.T, s string) { fuzzEvent(t, responses{}, s) })
}
