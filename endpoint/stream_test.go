package endpoint

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/record"
)

// toolCallEvent is a delta of tool call i: its id and name first, then
// pieces of its arguments, as vLLM and OpenAI stream them.
func toolCallEvent(i int, first bool, args string) string {
	fn := `"function":{"arguments":"` + args + `"}`
	if first {
		fn = `"id":"call_` + string(rune('a'+i)) + `","type":"function","function":{"name":"read_file","arguments":"` + args + `"}`
	}
	return `data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":` +
		string(rune('0'+i)) + `,` + fn + `}]},"finish_reason":null}]}` + "\n\n"
}

// gzipped serves pieces as one gzip-encoded event stream, flushing the
// compressor after every piece.
func gzipped(pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		for _, p := range pieces {
			io.WriteString(zw, p)
			zw.Flush()
			w.(http.Flusher).Flush()
		}
		zw.Close()
	}
}

// TestStreamsAsTheSpecSays reads legal streams that servers send and a
// strict reader must get right: tool calls as output, SSE's multi-line
// data, empty data, keep-alive comments by the thousand, a byte-order
// mark, a compressed body, and an answer that is JSON rather than a
// stream.
func TestStreamsAsTheSpecSays(t *testing.T) {
	cases := []struct {
		name      string
		handler   http.Handler
		chunks    int
		finish    string
		toolCalls bool
		usage     *record.Usage
	}{
		{name: "only tool calls", handler: sse(roleEvent, toolCallEvent(0, true, ""), toolCallEvent(0, false, `{\"path\":`),
			toolCallEvent(0, false, `\"a.go\"}`), finishEvent("tool_calls"), usageEvent(12, 9), doneEvent),
			chunks: 3, finish: "tool_calls", toolCalls: true, usage: &record.Usage{PromptTokens: 12, CompletionTokens: 9}},
		{name: "content then a tool call", handler: sse(roleEvent, contentEvent(" let me look"), toolCallEvent(0, true, `{}`),
			finishEvent("tool_calls"), doneEvent),
			chunks: 2, finish: "tool_calls", toolCalls: true},
		{name: "one JSON over two data lines", handler: sse(roleEvent,
			"data: {\"choices\":[{\"index\":0,\n", "data: \"delta\":{\"content\":\" a\"}}]}\n\n", finishEvent("stop"), doneEvent),
			chunks: 1, finish: "stop"},
		{name: "empty data payloads", handler: sse(roleEvent, "data: \n\n", contentEvent(" a"), "data:\n\n", finishEvent("stop"), doneEvent),
			chunks: 1, finish: "stop"},
		{name: "12,000 comments before the first token", handler: sse(roleEvent, strings.Repeat(": ping\n\n", 12_000),
			contentEvent(" a"), finishEvent("stop"), doneEvent),
			chunks: 1, finish: "stop"},
		{name: "byte-order mark", handler: sse("\xef\xbb\xbf"+contentEvent(" a"), contentEvent(" b"), finishEvent("stop"), doneEvent),
			chunks: 2, finish: "stop"},
		{name: "gzip-encoded stream", handler: gzipped(roleEvent, contentEvent(" a"), contentEvent(" b"), finishEvent("stop"),
			usageEvent(5, 2), doneEvent),
			chunks: 2, finish: "stop", usage: &record.Usage{PromptTokens: 5, CompletionTokens: 2}},
		{name: "a JSON answer instead of a stream", handler: testserve.Status(200, "application/json",
			`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`),
			chunks: 1, finish: "stop", usage: &record.Usage{PromptTokens: 5, CompletionTokens: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, c.handler, nil)
			rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{}))
			if rec.Failed() {
				t.Fatalf("failed: %s: %s", rec.Err, rec.ErrMsg)
			}
			if len(rec.Chunks) != c.chunks || rec.FinishReason != c.finish || rec.ToolCalls != c.toolCalls {
				t.Errorf("%d chunks, finish %q, tool calls %v; want %d, %q, %v", len(rec.Chunks), rec.FinishReason, rec.ToolCalls,
					c.chunks, c.finish, c.toolCalls)
			}
			if c.usage != nil && (!rec.HasUsage || rec.Usage != *c.usage) {
				t.Errorf("usage %+v (has %v), want %+v", rec.Usage, rec.HasUsage, *c.usage)
			}
			for i, ch := range rec.Chunks {
				if ch.Reasoning {
					t.Errorf("chunk %d is marked reasoning", i)
				}
			}
			checkTimeline(t, rec, false)
		})
	}
}

// TestStreamFailures classes the streams that are not answers: each its
// own class, with the server's message where it gave one.
func TestStreamFailures(t *testing.T) {
	cases := []struct {
		name    string
		handler http.Handler
		co      Options
		want    record.ErrorClass
		msg     string
	}{
		{name: "vLLM's error object in the stream", handler: sse(roleEvent, contentEvent(" a"),
			`data: {"object":"error","message":"the engine died","type":"InternalServerError","param":null,"code":500}`+"\n\n"),
			want: "stream_error", msg: "the engine died"},
		{name: "OpenAI's error event", handler: sse(roleEvent, `data: {"error":{"message":"over capacity","type":"server_error"}}`+"\n\n"),
			want: "stream_error", msg: "over capacity"},
		{name: "only [DONE]", handler: sse(doneEvent), want: "empty_response", msg: "without any content"},
		{name: "an empty body", handler: sse(), want: "empty_response", msg: "without any content"},
		{name: "an HTML page with status 200", handler: testserve.Status(200, "text/html", "<html><body>Sign in to continue</body></html>"),
			want: "bad_content_type", msg: "text/html"},
		{name: "a line over the limit", handler: sse(roleEvent, `data: {"choices":[{"delta":{"content":"`+strings.Repeat("x", 5000)+`"}}]}`+"\n\n"),
			co: Options{MaxLineBytes: 4096}, want: "oversized_line", msg: "4096"},
		{name: "a line over the default limit", handler: sse(roleEvent, "data: "+strings.Repeat("x", DefaultMaxLineBytes+1)+"\n\n"),
			want: "oversized_line", msg: "limit"},
		{name: "an encoding sixpin cannot read", handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "br")
			io.WriteString(w, "\x0b\x02\x80")
		}), want: "bad_content_type", msg: "br"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, c.handler, nil)
			rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, c.co))
			if rec.Err != c.want || !strings.Contains(rec.ErrMsg, c.msg) {
				t.Errorf("class %q, message %q; want %q mentioning %q", rec.Err, rec.ErrMsg, c.want, c.msg)
			}
			if rec.HTTPStatus != 200 {
				t.Errorf("HTTP status %d, want 200", rec.HTTPStatus)
			}
			if len(rec.ErrMsg) > 310 {
				t.Errorf("ErrMsg is %d bytes long", len(rec.ErrMsg))
			}
		})
	}
}

// A redirect is not followed: it would add a round trip to every
// request's time to first token. The request fails, its message naming
// where the redirect points, and nothing is sent there.
func TestRedirectIsNotFollowed(t *testing.T) {
	var followed atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
	})
	mux.Handle("/v2/chat/completions", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed.Add(1)
		sse(roleEvent, contentEvent(" a"), finishEvent("stop"), doneEvent).ServeHTTP(w, r)
	}))
	ts := serve(t, mux, nil)
	rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{}))
	if rec.Err != record.ErrHTTP4xx || rec.HTTPStatus != http.StatusTemporaryRedirect ||
		!strings.Contains(rec.ErrMsg, "redirect to /v2/chat/completions") || !strings.Contains(rec.ErrMsg, "not followed") {
		t.Errorf("class %q, status %d, message %q", rec.Err, rec.HTTPStatus, rec.ErrMsg)
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// A connection that could not be made in time is a connect failure,
// whatever the error wraps: Go's dial timeout is a DeadlineExceeded too,
// and was told as "request timed out" (class timeout) though the request
// had all its time left. Only the request's own deadline is a timeout.
func TestDialTimeoutIsConnect(t *testing.T) {
	_, err := (&net.Dialer{Timeout: time.Nanosecond}).Dial("tcp", "127.0.0.1:9")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want a dial that times out, got %v", err)
	}
	err = &url.Error{Op: "Post", URL: "http://127.0.0.1:9/v1/chat/completions", Err: err}
	if class, msg := classify(err, nil, &sent{}); class != record.ErrConnect || strings.Contains(msg, "request timed out") {
		t.Errorf("a dial's timeout: %s, %q; want connect", class, msg)
	}
	if class, msg := classify(err, context.DeadlineExceeded, &sent{}); class != record.ErrTimeout || !strings.Contains(msg, "request timed out") {
		t.Errorf("the request's own deadline, met while dialling: %s, %q; want timeout", class, msg)
	}
}
