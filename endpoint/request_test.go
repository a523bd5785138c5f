package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// The chat stream's building blocks (testserve's), short.
const (
	roleEvent = testserve.RoleEvent
	doneEvent = testserve.DoneEvent
)

var (
	contentEvent = testserve.ContentEvent
	finishEvent  = testserve.FinishEvent
	usageEvent   = testserve.UsageEvent
	sse          = testserve.SSE
	sseThenHold  = testserve.SSEThenHold
)

// alternate sends every second chat request to bad and the others to good.
func alternate(bad, good http.Handler) http.Handler {
	var n atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" && n.Add(1)%2 == 0 {
			bad.ServeHTTP(w, r)
			return
		}
		good.ServeHTTP(w, r)
	})
}

// checkSuccess checks a successful record against the simulator's
// contract (exact output, the pinned prompt length, one token per chunk).
func checkSuccess(t *testing.T, rec *record.Record) {
	t.Helper()
	if !rec.HasUsage || rec.Usage.PromptTokens != rec.RequestedPromptTokens || rec.Usage.CompletionTokens != rec.RequestedOutputTokens {
		t.Errorf("request %d: usage %+v (has %v), requested %d/%d", rec.Index, rec.Usage, rec.HasUsage,
			rec.RequestedPromptTokens, rec.RequestedOutputTokens)
	}
	if len(rec.Chunks) != rec.RequestedOutputTokens {
		t.Errorf("request %d: %d chunks, want %d", rec.Index, len(rec.Chunks), rec.RequestedOutputTokens)
	}
	if rec.HTTPStatus != 200 {
		t.Errorf("request %d: HTTP status %d, want 200", rec.Index, rec.HTTPStatus)
	}
	checkTimeline(t, rec, true)
}

// TestErrorClasses checks every failure class: the record's class, HTTP
// status and message, and that the load goes on (the other requests, 24
// on 4 streams of 20–60 prompt and 4–12 exact output tokens, succeed).
// Simulator faults hit about half the requests; purpose-built failures
// hit every second request; a dead port fails all.
func TestErrorClasses(t *testing.T) {
	const n, streams = 24, 4
	type badHandler func(release <-chan struct{}) http.Handler
	cases := []struct {
		name   string
		faults map[string]float64 // simulator faults
		bad    badHandler         // or: every second request is answered by bad
		dead   bool               // or: nothing listens
		co     Options
		want   record.ErrorClass
		status int    // the HTTP status received: 0 when no response came
		msg    string // ErrMsg contains it
	}{
		{name: "connect: closed port", dead: true, want: record.ErrConnect, msg: "refused"},
		{name: "timeout: stall after the first token", faults: map[string]float64{sim.FaultStall: 0.5},
			co: Options{StallTimeout: 100 * time.Millisecond}, want: record.ErrTimeout, status: 200, msg: "stalled"},
		{name: "timeout: no response at all",
			bad: func(rel <-chan struct{}) http.Handler { return holdBeforeHeaders(rel) },
			co:  Options{RequestTimeout: 300 * time.Millisecond}, want: record.ErrTimeout, msg: "timed out"},
		{name: "timeout: headers, then nothing before the first token",
			bad: func(rel <-chan struct{}) http.Handler { return sseThenHold(rel, roleEvent) },
			co:  Options{RequestTimeout: 300 * time.Millisecond}, want: record.ErrTimeout, status: 200, msg: "timed out"},
		{name: "http_4xx: fault 400", faults: map[string]float64{sim.FaultHTTP400: 0.5},
			want: record.ErrHTTP4xx, status: 400, msg: "rejected"},
		{name: "http_4xx: vLLM flat error body",
			bad: func(<-chan struct{}) http.Handler {
				return testserve.Status(400, "application/json", `{"object":"error","message":"bad things","type":"BadRequestError","param":null,"code":400}`)
			},
			want: record.ErrHTTP4xx, status: 400, msg: "bad things"},
		{name: "http_429: fault", faults: map[string]float64{sim.FaultHTTP429: 0.5},
			want: record.ErrHTTP429, status: 429, msg: "rate limit"},
		{name: "http_5xx: fault 500", faults: map[string]float64{sim.FaultHTTP500: 0.5},
			want: record.ErrHTTP5xx, status: 500, msg: "server had an error"},
		{name: "http_5xx: fault 503", faults: map[string]float64{sim.FaultHTTP503: 0.5},
			want: record.ErrHTTP5xx, status: 503, msg: "overloaded"},
		{name: "http_5xx: proxy HTML page",
			bad: func(<-chan struct{}) http.Handler {
				return testserve.Status(502, "text/html", "<html><body>502 Bad Gateway</body></html>")
			},
			want: record.ErrHTTP5xx, status: 502, msg: "502"},
		{name: "stream_cut: connection closed mid-stream", faults: map[string]float64{sim.FaultCut: 0.5},
			want: record.ErrStreamCut, status: 200},
		{name: "stream_cut: clean end without a finish_reason",
			bad:  func(<-chan struct{}) http.Handler { return sse(roleEvent, contentEvent(" a"), contentEvent(" b")) },
			want: record.ErrStreamCut, status: 200, msg: "finish_reason"},
		{name: "malformed_chunk: fault", faults: map[string]float64{sim.FaultMalformed: 0.5},
			want: record.ErrMalformed, status: 200, msg: "not valid JSON"},
		{name: "empty_response: fault", faults: map[string]float64{sim.FaultEmpty: 0.5},
			want: record.ErrEmpty, status: 200, msg: "without any content"},
		{name: "stream_error: OpenAI error event",
			bad: func(<-chan struct{}) http.Handler {
				return sse(roleEvent, contentEvent(" a"), contentEvent(" b"), `data: {"error":{"message":"boom","type":"server_error"}}`+"\n\n")
			},
			want: record.ErrStreamError, status: 200, msg: "boom"},
		{name: "stream_error: error member in a chunk",
			bad: func(<-chan struct{}) http.Handler {
				return sse(roleEvent, contentEvent(" a"), `data: {"id":"c1","object":"chat.completion.chunk","choices":[],"error":{"message":"boom"}}`+"\n\n")
			},
			want: record.ErrStreamError, status: 200, msg: "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tg Target
			switch {
			case c.dead:
				tg = simTarget(testserve.DeadURL(t) + "/v1")
			case c.bad != nil:
				release := make(chan struct{})
				srv := newSim(t, sim.Config{Timing: sim.TimingNone})
				tg = simTarget(serve(t, alternate(c.bad(release), srv), func() { close(release) }).URL + "/v1")
			default:
				tg = simTarget(simServer(t, sim.Config{Faults: c.faults}))
			}
			o := c.co
			o.Conns, o.Exact = streams, true
			recs := simLoad(client(t, tg, o), n, streams, func(i int) int { return 20 + i*17%41 }, func(i int) int { return 4 + i*5%9 })
			checkIndexes(t, recs, n)

			failed := 0
			for _, rec := range recs {
				if !rec.Failed() {
					checkSuccess(t, rec)
					continue
				}
				failed++
				if rec.Err != c.want || rec.HTTPStatus != c.status {
					t.Errorf("request %d: class %q status %d, want %q %d (%s)", rec.Index, rec.Err, rec.HTTPStatus, c.want, c.status, rec.ErrMsg)
				}
				if rec.ErrMsg == "" || !strings.Contains(strings.ToLower(rec.ErrMsg), strings.ToLower(c.msg)) {
					t.Errorf("request %d: ErrMsg %q, want one mentioning %q", rec.Index, rec.ErrMsg, c.msg)
				}
				if strings.ContainsAny(rec.ErrMsg, "\n\r") {
					t.Errorf("request %d: ErrMsg is not one line: %q", rec.Index, rec.ErrMsg)
				}
				if rec.End < rec.Sent || rec.Sent < rec.Scheduled {
					t.Errorf("request %d: Scheduled %v Sent %v End %v out of order", rec.Index, rec.Scheduled, rec.Sent, rec.End)
				}
			}
			switch {
			case c.dead && failed != n:
				t.Errorf("%d of %d requests failed against a closed port", failed, n)
			case c.bad != nil && failed != n/2:
				t.Errorf("%d of %d requests failed, want every second one (%d)", failed, n, n/2)
			case c.faults != nil && (failed == 0 || failed == n):
				t.Errorf("%d of %d requests failed at fault probability 0.5", failed, n)
			}
		})
	}
}

// holdBeforeHeaders never answers: it holds the request until the
// client leaves or release is closed.
func holdBeforeHeaders(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// TestContextLength400 runs prompts around the simulator's context window
// (150–400 tokens, 10 exact output tokens, on 2 streams): those that do
// not fit (prompt + max_tokens > max_model_len) get vLLM's 400, the
// others succeed.
func TestContextLength400(t *testing.T) {
	const maxModelLen = 256
	c := client(t, simTarget(simServer(t, sim.Config{MaxModelLen: maxModelLen})), Options{Conns: 2, Exact: true})
	recs := simLoad(c, 20, 2, func(i int) int { return 150 + i*13 }, fixed(10))
	checkIndexes(t, recs, 20)
	var fit, over int
	for _, rec := range recs {
		if rec.RequestedPromptTokens+rec.RequestedOutputTokens <= maxModelLen {
			fit++
			if rec.Failed() {
				t.Errorf("request %d (%d+%d tokens) failed: %s: %s", rec.Index, rec.RequestedPromptTokens, rec.RequestedOutputTokens, rec.Err, rec.ErrMsg)
			} else {
				checkSuccess(t, rec)
			}
			continue
		}
		over++
		if rec.Err != record.ErrHTTP4xx || rec.HTTPStatus != 400 || !strings.Contains(rec.ErrMsg, "maximum context length") {
			t.Errorf("request %d (%d+%d tokens): %q %d %q, want http_4xx 400 about the context length", rec.Index,
				rec.RequestedPromptTokens, rec.RequestedOutputTokens, rec.Err, rec.HTTPStatus, rec.ErrMsg)
		}
	}
	if fit == 0 || over == 0 {
		t.Errorf("%d requests fit and %d did not; the test wants both", fit, over)
	}
}

// TestStreamVariants reads valid streams in the shapes real servers send
// and checks what the record makes of them.
func TestStreamVariants(t *testing.T) {
	type want struct {
		chunks    int
		reasoning []bool // per chunk, when not nil
		usage     *record.Usage
		finish    string
	}
	reasoningEvent := func(member, text string) string {
		return `data: {"choices":[{"index":0,"delta":{"` + member + `":"` + text + `"},"finish_reason":null}]}` + "\n\n"
	}
	cases := []struct {
		name   string
		stream []string
		want   want
	}{
		{"no usage", []string{roleEvent, contentEvent(" a"), contentEvent(" b"), finishEvent("stop"), doneEvent},
			want{chunks: 2, finish: "stop"}},
		{"last token carries the finish_reason", []string{roleEvent, contentEvent(" a"),
			`data: {"choices":[{"index":0,"delta":{"content":" b"},"finish_reason":"length"}]}` + "\n\n", usageEvent(10, 2), doneEvent},
			want{chunks: 2, finish: "length", usage: &record.Usage{PromptTokens: 10, CompletionTokens: 2}}},
		{"data: without a space, CRLF line ends", []string{
			strings.ReplaceAll(strings.ReplaceAll(contentEvent(" a"), "data: ", "data:"), "\n", "\r\n"),
			strings.ReplaceAll(contentEvent(" b"), "\n", "\r\n"),
			strings.ReplaceAll(finishEvent("stop"), "\n", "\r\n"), "data: [DONE]\r\n\r\n"},
			want{chunks: 2, finish: "stop"}},
		{"comments and event lines", []string{": keep-alive\n\n", "event: message\n" + contentEvent(" a"), ": ping\n\n",
			"event: message\n" + contentEvent(" b"), finishEvent("stop"), usageEvent(7, 2), doneEvent},
			want{chunks: 2, finish: "stop", usage: &record.Usage{PromptTokens: 7, CompletionTokens: 2}}},
		{"no [DONE]", []string{roleEvent, contentEvent(" a"), finishEvent("stop"), usageEvent(5, 1)},
			want{chunks: 1, finish: "stop", usage: &record.Usage{PromptTokens: 5, CompletionTokens: 1}}},
		{"usage on every chunk", []string{
			`data: {"choices":[{"index":0,"delta":{"content":" a"}}],"usage":{"prompt_tokens":9,"completion_tokens":1}}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":" b"}}],"usage":{"prompt_tokens":9,"completion_tokens":2}}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2}}` + "\n\n", doneEvent},
			want{chunks: 2, finish: "stop", usage: &record.Usage{PromptTokens: 9, CompletionTokens: 2}}},
		{"reasoning then content", []string{reasoningEvent("reasoning", " r1"), reasoningEvent("reasoning_content", " r2"),
			contentEvent(" a"), finishEvent("stop"), doneEvent},
			want{chunks: 3, finish: "stop", reasoning: []bool{true, true, false}}},
		// Some servers send "error": null on every chunk; null is not an
		// error event.
		{"error: null on every chunk", []string{
			`data: {"choices":[{"index":0,"delta":{"content":" a"}}],"error":null}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{"content":" b"}}],"error":null}` + "\n\n",
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":null}` + "\n\n", doneEvent},
			want{chunks: 2, finish: "stop"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, sse(c.stream...), nil)
			rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{}))
			if rec.Failed() {
				t.Fatalf("failed: %s: %s", rec.Err, rec.ErrMsg)
			}
			if len(rec.Chunks) != c.want.chunks || rec.FinishReason != c.want.finish {
				t.Errorf("%d chunks, finish %q; want %d, %q", len(rec.Chunks), rec.FinishReason, c.want.chunks, c.want.finish)
			}
			if c.want.reasoning != nil {
				for j, ch := range rec.Chunks {
					if j < len(c.want.reasoning) && ch.Reasoning != c.want.reasoning[j] {
						t.Errorf("chunk %d Reasoning = %v, want %v", j, ch.Reasoning, c.want.reasoning[j])
					}
				}
			}
			switch {
			case c.want.usage == nil && rec.HasUsage:
				t.Errorf("usage %+v, want none", rec.Usage)
			case c.want.usage != nil && (!rec.HasUsage || rec.Usage != *c.want.usage):
				t.Errorf("usage %+v (has %v), want %+v", rec.Usage, rec.HasUsage, *c.want.usage)
			}
			checkTimeline(t, rec, false)
		})
	}
}

// capture records every chat request's headers and body, then hands it
// to next.
type capture struct {
	next http.Handler
	mu   sync.Mutex
	reqs []capturedRequest
}

type capturedRequest struct {
	header        http.Header
	body          []byte
	contentLength int64
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.reqs = append(c.reqs, capturedRequest{r.Header.Clone(), body, r.ContentLength})
	c.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.next.ServeHTTP(w, r)
}

func (c *capture) requests() []capturedRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]capturedRequest(nil), c.reqs...)
}

// TestRequestOnTheWire checks the request body and headers a server sees:
// the streaming options, the max-tokens field the target names, the output
// controls for an exact pin, the profile's extra body members and headers,
// and the bearer key.
func TestRequestOnTheWire(t *testing.T) {
	const outTokens = 9
	cases := []struct {
		name           string
		control        OutputControl
		exact          bool
		maxTokensField string
		wantIgnoreEOS  bool
		wantMinTokens  bool
	}{
		{"ignore_eos+min_tokens", ControlIgnoreEOS | ControlMinTokens, true, "", true, true},
		{"ignore_eos, max_completion_tokens", ControlIgnoreEOS, true, "max_completion_tokens", true, false},
		{"min_tokens", ControlMinTokens, true, "max_tokens", false, true},
		{"none", ControlNone, true, "", false, false},
		{"not exact", ControlIgnoreEOS | ControlMinTokens, false, "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cp := &capture{next: newSim(t, sim.Config{Timing: sim.TimingNone})}
			ts := serve(t, cp, nil)
			tg := Target{
				BaseURL:        ts.URL + "/v1",
				Model:          sim.DefaultModel,
				APIKey:         "sk-test-1234",
				Headers:        map[string]string{"X-Tenant": "acme"},
				ExtraBody:      map[string]any{"top_k": 20, "chat_template_kwargs": map[string]any{"enable_thinking": false}},
				MaxTokensField: c.maxTokensField,
				OutputControl:  c.control,
			}
			cl := client(t, tg, Options{Exact: c.exact})
			for _, rec := range simLoad(cl, 3, 1, fixed(12), fixed(outTokens)) {
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
			}
			reqs := cp.requests()
			if len(reqs) != 3 {
				t.Fatalf("the server saw %d requests, want 3", len(reqs))
			}
			field, other := "max_tokens", "max_completion_tokens"
			if c.maxTokensField == "max_completion_tokens" {
				field, other = other, field
			}
			for i, req := range reqs {
				var m map[string]any
				if err := json.Unmarshal(req.body, &m); err != nil {
					t.Fatalf("request %d: body is not JSON (%v): %s", i, err, req.body)
				}
				if req.contentLength != int64(len(req.body)) {
					t.Errorf("request %d: Content-Length %d, body %d bytes", i, req.contentLength, len(req.body))
				}
				check := func(key string, want any) {
					t.Helper()
					got, ok := m[key]
					switch {
					case want == nil && ok:
						t.Errorf("request %d: %q = %v, want it absent", i, key, got)
					case want != nil && !reflect.DeepEqual(got, want):
						t.Errorf("request %d: %q = %#v, want %#v", i, key, got, want)
					}
				}
				check("model", sim.DefaultModel)
				check("stream", true)
				check("stream_options", map[string]any{"include_usage": true})
				check(field, float64(outTokens))
				check(other, nil)
				check("top_k", float64(20))
				check("chat_template_kwargs", map[string]any{"enable_thinking": false})
				if c.wantIgnoreEOS {
					check("ignore_eos", true)
				} else {
					check("ignore_eos", nil)
				}
				if c.wantMinTokens {
					check("min_tokens", float64(outTokens))
				} else {
					check("min_tokens", nil)
				}
				msgs, _ := m["messages"].([]any)
				if len(msgs) != 1 {
					t.Errorf("request %d: %d messages, want 1", i, len(msgs))
				}
				for k, want := range map[string]string{
					"Authorization": "Bearer sk-test-1234",
					"X-Tenant":      "acme",
					"Content-Type":  "application/json",
					"Accept":        "text/event-stream",
				} {
					if got := req.header.Get(k); got != want {
						t.Errorf("request %d: header %s = %q, want %q", i, k, got, want)
					}
				}
			}
		})
	}
}

// TestErrMsgNeverHoldsAPIKey has servers echo the request's Authorization
// header in their errors, in every place an error message is taken from.
// Target.APIKey is documented as never logged, printed or saved, and
// Record.ErrMsg as never containing an API key.
func TestErrMsgNeverHoldsAPIKey(t *testing.T) {
	const key = "sk-secret-0123456789abcdef"
	echo := func(code int, contentType, format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			testserve.Status(code, contentType, fmt.Sprintf(format, r.Header.Get("Authorization")))(w, r)
		}
	}
	echoStream := func(format string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			sse(roleEvent, contentEvent(" a"), fmt.Sprintf(format, r.Header.Get("Authorization")))(w, r)
		}
	}
	cases := []struct {
		name    string
		handler http.Handler
		want    record.ErrorClass
	}{
		{"401 OpenAI error body", echo(401, "application/json", `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error"}}`),
			record.ErrHTTP4xx},
		{"400 vLLM error body", echo(400, "application/json", `{"object":"error","message":"bad request with headers {'authorization': '%s'}","code":400}`),
			record.ErrHTTP4xx},
		{"502 proxy text body", echo(502, "text/plain", "upstream refused: Authorization: %s"), record.ErrHTTP5xx},
		{"error event in the stream", echoStream(`data: {"error":{"message":"key %s revoked"}}` + "\n\n"), record.ErrStreamError},
		{"error member in a chunk", echoStream(`data: {"choices":[],"error":{"message":"key %s revoked"}}` + "\n\n"), record.ErrStreamError},
		{"malformed chunk", echoStream(`data: {"auth":"%s",` + "\n\n"), record.ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, c.handler, nil)
			rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m", APIKey: key}, Options{}))
			if rec.Err != c.want || rec.ErrMsg == "" {
				t.Errorf("class %q, ErrMsg %q; want %q with a message", rec.Err, rec.ErrMsg, c.want)
			}
			if strings.Contains(rec.ErrMsg, key) {
				t.Errorf("ErrMsg holds the API key: %q", rec.ErrMsg)
			}
		})
	}
}

// TestErrMsgValidUTF8 has a server answer with a long non-ASCII error
// message: ErrMsg, shortened to one line, must stay valid UTF-8 whichever
// byte the cut falls on.
func TestErrMsgValidUTF8(t *testing.T) {
	for _, lead := range []string{"", "x"} {
		t.Run(fmt.Sprintf("offset %d", len(lead)), func(t *testing.T) {
			msg := lead + strings.Repeat("é", 400)
			ts := serve(t, testserve.Status(500, "application/json", `{"error":{"message":"`+msg+`","type":"server_error"}}`), nil)
			rec := one(client(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{}))
			if rec.Err != record.ErrHTTP5xx {
				t.Fatalf("record %+v, want an http_5xx", rec)
			}
			if !utf8.ValidString(rec.ErrMsg) {
				t.Errorf("ErrMsg is not valid UTF-8; it ends %q", rec.ErrMsg[max(len(rec.ErrMsg)-8, 0):])
			}
		})
	}
}
