package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fastRoofline is a tiny model whose steps take microseconds, so roofline
// tests run quickly; no test asserts on wall-clock time.
func fastRoofline() Roofline {
	return Roofline{
		ParamsB: 0.001, BytesPerParam: 2, Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8,
		KVBytes: 2, PeakTFLOPS: 1000, MemBandwidthGBs: 1000, ComputeUtil: 1, MemUtil: 1,
	}
}

func start(t testing.TB, c Config) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close) // runs after s.Close: cleanups are LIFO
	t.Cleanup(func() { s.Close() })
	return s, ts
}

// req is a chat-completions request body.
type req map[string]any

func userMsg(text string) []map[string]any {
	return []map[string]any{{"role": "user", "content": text}}
}

func post(ctx context.Context, t testing.TB, url string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// testChunk is a streamed chunk as a client decodes it.
type testChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage   *usageJSON   `json:"usage"`
	Timings *testTimings `json:"timings"`
	Stamp   int64        `json:"sixpin_sent_unix_ns"`
}

// streamResult is a parsed SSE response.
type streamResult struct {
	raw       []string // data payloads, in order, [DONE] included
	chunks    []testChunk
	bad       []string // payloads that are not valid JSON
	done      bool     // saw data: [DONE]
	content   []string // content deltas that carried text
	reasoning []string // reasoning deltas that carried text
	finish    string
	usage     *usageJSON
	err       error // from reading the body
}

func (r *streamResult) words() int {
	n := 0
	for _, s := range append(append([]string(nil), r.reasoning...), r.content...) {
		n += len(strings.Fields(s))
	}
	return n
}

// readStream parses SSE events ("data: …\n\n") until EOF or error.
func readStream(body io.Reader) *streamResult {
	res := &streamResult{}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			res.bad = append(res.bad, line)
			continue
		}
		res.raw = append(res.raw, data)
		if data == "[DONE]" {
			res.done = true
			continue
		}
		var c testChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			res.bad = append(res.bad, data)
			continue
		}
		res.chunks = append(res.chunks, c)
		for _, ch := range c.Choices {
			if d := ch.Delta.Content; d != nil && *d != "" {
				res.content = append(res.content, *d)
			}
			if d := ch.Delta.ReasoningContent; d != nil && *d != "" {
				res.reasoning = append(res.reasoning, *d)
			}
			if ch.FinishReason != nil {
				res.finish = *ch.FinishReason
			}
		}
		if c.Usage != nil {
			res.usage = c.Usage
		}
	}
	res.err = sc.Err()
	return res
}

func stream(t testing.TB, url string, body req) (*http.Response, *streamResult) {
	t.Helper()
	body["stream"] = true
	resp := post(context.Background(), t, url, body)
	defer resp.Body.Close()
	return resp, readStream(resp.Body)
}

func nonStream(t testing.TB, url string, body req) (*http.Response, completion) {
	t.Helper()
	resp := post(context.Background(), t, url, body)
	defer resp.Body.Close()
	var c completion
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("decode completion %q: %v", b, err)
		}
	}
	return resp, c
}

func TestStreamShape(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, Model: "m1"})
	resp, res := stream(t, ts.URL, req{
		"model": "asked-model", "messages": userMsg("hello there world"),
		"max_tokens": 5, "ignore_eos": true, "stream_options": map[string]any{"include_usage": true},
	})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if len(res.bad) > 0 || res.err != nil {
		t.Fatalf("bad events %q, err %v", res.bad, res.err)
	}
	// role, 5 tokens, finish, usage, [DONE]
	if len(res.raw) != 9 || !res.done || res.raw[8] != "[DONE]" {
		t.Fatalf("events = %d %q", len(res.raw), res.raw)
	}
	first := res.chunks[0]
	if d := first.Choices[0].Delta; d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" || first.Choices[0].FinishReason != nil {
		t.Errorf("first chunk = %s", res.raw[0])
	}
	for i, c := range res.chunks {
		if c.ID != first.ID || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion.chunk" || c.Model != "asked-model" || c.Created == 0 {
			t.Errorf("chunk %d header: %s", i, res.raw[i])
		}
		if c.Stamp == 0 {
			t.Errorf("chunk %d has no sixpin_sent_unix_ns: %s", i, res.raw[i])
		}
		if i > 0 && c.Stamp < res.chunks[i-1].Stamp {
			t.Errorf("chunk %d stamp goes back", i)
		}
	}
	for i := 1; i <= 5; i++ {
		c := res.chunks[i].Choices[0]
		if c.Delta.Content == nil || len(strings.Fields(*c.Delta.Content)) != 1 || !strings.HasPrefix(*c.Delta.Content, " ") {
			t.Errorf("token chunk %d = %s", i, res.raw[i])
		}
	}
	if fin := res.chunks[6]; len(fin.Choices) != 1 || fin.Choices[0].Delta.Content != nil || res.finish != "length" {
		t.Errorf("finish chunk = %s", res.raw[6])
	}
	u := res.chunks[7]
	if len(u.Choices) != 0 || u.Usage == nil || !strings.Contains(res.raw[7], `"choices":[]`) {
		t.Fatalf("usage chunk = %s", res.raw[7])
	}
	// prompt: 3 words + 5 template + 3
	if got := *u.Usage; got.PromptTokens != 11 || got.CompletionTokens != 5 || got.TotalTokens != 16 {
		t.Errorf("usage = %+v", got)
	}
	for _, key := range []string{`"prompt_tokens_details":{"cached_tokens":0}`, `"completion_tokens_details":{"reasoning_tokens":0}`} {
		if !strings.Contains(res.raw[7], key) {
			t.Errorf("usage chunk lacks %s: %s", key, res.raw[7])
		}
	}
}

func TestSendStampsOff(t *testing.T) {
	off := false
	_, ts := start(t, Config{Timing: TimingNone, SendStamps: &off})
	_, res := stream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 3, "ignore_eos": true})
	for _, raw := range res.raw {
		if strings.Contains(raw, "sixpin_sent_unix_ns") {
			t.Fatalf("stamp sent with SendStamps off: %s", raw)
		}
	}
}

func TestUsageOnlyWhenAsked(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	for _, tc := range []struct {
		name string
		opts any
		want bool
	}{
		{"absent", nil, false},
		{"false", map[string]any{"include_usage": false}, false},
		{"true", map[string]any{"include_usage": true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := req{"messages": userMsg("a b"), "max_tokens": 4, "ignore_eos": true}
			if tc.opts != nil {
				body["stream_options"] = tc.opts
			}
			_, res := stream(t, ts.URL, body)
			if got := res.usage != nil; got != tc.want {
				t.Errorf("usage present = %v, want %v", got, tc.want)
			}
			if !res.done {
				t.Error("no [DONE]")
			}
		})
	}
}

func TestNonStreamShape(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: 0.25})
	resp, c := nonStream(t, ts.URL, req{"model": "x", "messages": userMsg("one two"), "max_tokens": 8, "ignore_eos": true})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if c.Object != "chat.completion" || c.Model != "x" || !strings.HasPrefix(c.ID, "chatcmpl-") || len(c.Choices) != 1 {
		t.Fatalf("completion = %+v", c)
	}
	ch := c.Choices[0]
	if ch.Message.Role != "assistant" || ch.FinishReason != "length" {
		t.Errorf("choice = %+v", ch)
	}
	if r, a := len(strings.Fields(ch.Message.ReasoningContent)), len(strings.Fields(ch.Message.Content)); r != 2 || a != 6 {
		t.Errorf("reasoning %d, content %d words; want 2, 6", r, a)
	}
	if u := c.Usage; u.PromptTokens != 10 || u.CompletionTokens != 8 || u.TotalTokens != 18 || u.CompletionTokensDetails.ReasoningTokens != 2 {
		t.Errorf("usage = %+v", u)
	}
}

// TestStreamMatchesNonStream checks the streamed deltas concatenate to the
// non-streamed message for the same prompt.
func TestStreamMatchesNonStream(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, TokensPerChunk: 3})
	body := func() req { return req{"messages": userMsg("same prompt here"), "max_tokens": 50} }
	_, res := stream(t, ts.URL, body())
	_, c := nonStream(t, ts.URL, body())
	if got := strings.Join(res.content, ""); got != c.Choices[0].Message.Content {
		t.Errorf("streamed %q\nnon-streamed %q", got, c.Choices[0].Message.Content)
	}
	if res.finish != c.Choices[0].FinishReason {
		t.Errorf("finish %q vs %q", res.finish, c.Choices[0].FinishReason)
	}
}

func TestOutputLength(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, NaturalOutputTokens: 20})
	for _, tc := range []struct {
		name       string
		body       req
		min, max   int // completion tokens
		wantFinish string
	}{
		{"ignore_eos 1", req{"max_tokens": 1, "ignore_eos": true}, 1, 1, "length"},
		{"ignore_eos 137", req{"max_tokens": 137, "ignore_eos": true}, 137, 137, "length"},
		{"ignore_eos max_completion_tokens wins", req{"max_tokens": 10, "max_completion_tokens": 33, "ignore_eos": true}, 33, 33, "length"},
		{"natural capped", req{"max_tokens": 2}, 2, 2, "length"},
		{"min_tokens raises", req{"max_tokens": 500, "min_tokens": 300}, 300, 300, "stop"},
		{"min_tokens equal max", req{"max_tokens": 300, "min_tokens": 300}, 300, 300, "length"},
		{"no max_tokens is natural", req{}, 1, 200, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["messages"] = userMsg("tell me about " + tc.name)
			tc.body["stream_options"] = map[string]any{"include_usage": true}
			_, res := stream(t, ts.URL, tc.body)
			if res.usage == nil {
				t.Fatal("no usage")
			}
			n := res.usage.CompletionTokens
			if n < tc.min || n > tc.max {
				t.Errorf("completion_tokens = %d, want [%d, %d]", n, tc.min, tc.max)
			}
			if res.words() != n {
				t.Errorf("streamed %d words, usage says %d", res.words(), n)
			}
			if res.finish != tc.wantFinish {
				t.Errorf("finish_reason = %q, want %q", res.finish, tc.wantFinish)
			}
		})
	}
}

func TestNaturalLengthDeterministic(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, NaturalOutputTokens: 100})
	length := func(prompt string) int {
		_, c := nonStream(t, ts.URL, req{"messages": userMsg(prompt)})
		return c.Usage.CompletionTokens
	}
	seen := map[int]bool{}
	for i := range 20 {
		p := fmt.Sprintf("prompt number %d", i)
		a, b := length(p), length(p)
		if a != b {
			t.Errorf("%q: lengths %d then %d", p, a, b)
		}
		seen[a] = true
	}
	if len(seen) < 10 {
		t.Errorf("only %d distinct natural lengths over 20 prompts", len(seen))
	}
	// A different seed changes the draw.
	_, ts2 := start(t, Config{Timing: TimingNone, NaturalOutputTokens: 100, Seed: 7})
	differ := 0
	for i := range 20 {
		p := fmt.Sprintf("prompt number %d", i)
		_, c := nonStream(t, ts2.URL, req{"messages": userMsg(p)})
		if c.Usage.CompletionTokens != length(p) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("seed does not change natural lengths")
	}
}

func TestNaturalLengthDistribution(t *testing.T) {
	// The median of lognormal(median 200, σ 0.5) draws is about 200.
	var ls []int
	for i := range 2001 {
		ls = append(ls, naturalLength(mix(uint64(i)), 200))
	}
	below := 0
	for _, l := range ls {
		if l < 200 {
			below++
		}
	}
	if below < 900 || below > 1100 {
		t.Errorf("%d of 2001 draws below the median 200", below)
	}
}

func TestPromptTokens(t *testing.T) {
	five, zero := 5, 0
	for _, tc := range []struct {
		name     string
		overhead *int
		messages any
		want     int
	}{
		{"one message", nil, userMsg("the quick brown fox"), 4 + 5 + 3},
		{"explicit overhead", &five, userMsg("a b c"), 3 + 5 + 3},
		{"no overhead", &zero, userMsg("a b c"), 3 + 3},
		{"whitespace runs", &zero, userMsg("  a\t\tb \n\n c  "), 3 + 3},
		{"unicode spaces", &zero, userMsg("a\u00a0b\u3000c"), 3 + 3},
		{"empty", nil, userMsg(""), 5 + 3},
		{"two messages", nil, []map[string]any{
			{"role": "system", "content": "you are terse"},
			{"role": "user", "content": "hi"},
		}, 3 + 1 + 2*5 + 3},
		{"content parts", nil, []map[string]any{{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "one two"},
			{"type": "image_url", "image_url": map[string]any{"url": "x"}},
			{"type": "text", "text": "three"},
		}}}, 3 + 5 + 3},
		{"null content", nil, []map[string]any{{"role": "assistant", "content": nil}}, 5 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, TemplateOverheadTokens: tc.overhead})
			resp, c := nonStream(t, ts.URL, req{"messages": tc.messages, "max_tokens": 1})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if c.Usage.PromptTokens != tc.want {
				t.Errorf("prompt_tokens = %d, want %d", c.Usage.PromptTokens, tc.want)
			}
		})
	}
}

func TestCountWordsAllocatesNothing(t *testing.T) {
	s := strings.Repeat("word ", 140000) // 700 KB
	if n := testing.AllocsPerRun(10, func() { countWords(s) }); n != 0 {
		t.Errorf("countWords allocates %v times", n)
	}
	if got := countWords(s); got != 140000 {
		t.Errorf("countWords = %d", got)
	}
}

func TestTokensPerChunk(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, TokensPerChunk: 3})
	_, res := stream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 10, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}})
	var sizes []int
	for _, c := range res.content {
		sizes = append(sizes, len(strings.Fields(c)))
	}
	if fmt.Sprint(sizes) != "[3 3 3 1]" {
		t.Errorf("chunk sizes = %v, want [3 3 3 1]", sizes)
	}
	if res.words() != 10 || res.usage.CompletionTokens != 10 {
		t.Errorf("words %d, usage %d", res.words(), res.usage.CompletionTokens)
	}
}

func TestReasoningShare(t *testing.T) {
	for _, tc := range []struct {
		share              float64
		perChunk           int
		reasoning, content string // chunk sizes
	}{
		{0.3, 1, "[1 1 1]", "[1 1 1 1 1 1 1]"},
		{0.3, 2, "[2 1]", "[2 2 2 1]"},
		{0, 1, "[]", "[1 1 1 1 1 1 1 1 1 1]"},
		{1, 4, "[4 4 2]", "[]"},
	} {
		t.Run(fmt.Sprintf("share %g per chunk %d", tc.share, tc.perChunk), func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: tc.share, TokensPerChunk: tc.perChunk})
			_, res := stream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 10, "ignore_eos": true,
				"stream_options": map[string]any{"include_usage": true}})
			sizes := func(ds []string) string {
				out := []int{}
				for _, d := range ds {
					out = append(out, len(strings.Fields(d)))
				}
				return fmt.Sprint(out)
			}
			if got := sizes(res.reasoning); got != tc.reasoning {
				t.Errorf("reasoning chunks %s, want %s", got, tc.reasoning)
			}
			if got := sizes(res.content); got != tc.content {
				t.Errorf("content chunks %s, want %s", got, tc.content)
			}
			// Reasoning comes first: no reasoning chunk after a content one.
			sawContent := false
			for _, c := range res.chunks {
				for _, ch := range c.Choices {
					if ch.Delta.Content != nil && *ch.Delta.Content != "" {
						sawContent = true
					}
					if ch.Delta.ReasoningContent != nil && sawContent {
						t.Error("reasoning after content")
					}
				}
			}
			want := int(tc.share*10 + 0.5)
			if u := res.usage; u.CompletionTokens != 10 || u.CompletionTokensDetails.ReasoningTokens != want {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, MaxModelLen: 32768, TemplateOverheadTokens: new(int)})
	long := strings.Repeat("w ", 38997) // + 3 = 39000 prompt tokens
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"context too long", mustJSON(req{"messages": userMsg(long), "max_tokens": 1000}),
			`{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
		{"prompt alone too long", mustJSON(req{"messages": userMsg(long)}),
			`{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 39000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}`},
		{"bad JSON", `{"messages": [`, ""},
		{"wrong content type", `{"messages":[{"role":"user","content":42}]}`, ""},
		{"max_tokens 0", `{"messages":[],"max_tokens":0}`, ""},
		{"min above max", `{"messages":[],"max_tokens":5,"min_tokens":6}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if tc.want != "" {
				if got := strings.TrimSpace(string(b)); got != tc.want {
					t.Errorf("body\n got %s\nwant %s", got, tc.want)
				}
				return
			}
			var e struct {
				Error struct {
					Message *string `json:"message"`
					Type    string  `json:"type"`
					Code    any     `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == nil || *e.Error.Message == "" || e.Error.Type != "invalid_request_error" || e.Error.Code != nil {
				t.Errorf("body %s", b)
			}
		})
	}
}

func TestAPIKey(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, APIKey: "sk-sim"})
	for path, body := range map[string]any{
		"/v1/chat/completions": req{"messages": userMsg("x"), "max_tokens": 2},
		"/v1/completions":      map[string]any{"prompt": "x", "max_tokens": 2},
		"/v1/responses":        map[string]any{"input": "x", "max_output_tokens": 2},
	} {
		for _, tc := range []struct {
			auth   string
			status int
		}{{"", 401}, {"Bearer sk-other", 401}, {"sk-sim", 401}, {"Bearer sk-sim", 200}} {
			resp, b := readAll(t, ts.URL, path, body, map[string]string{"Authorization": tc.auth})
			if resp.StatusCode != tc.status {
				t.Errorf("%s with %q: status %d, want %d", path, tc.auth, resp.StatusCode, tc.status)
			}
			if tc.status == 401 && !strings.Contains(string(b), `"code":"invalid_api_key"`) {
				t.Errorf("%s: 401 body %s", path, b)
			}
			if strings.Contains(string(b), "sk-sim") {
				t.Errorf("%s: the key in the body %s", path, b)
			}
		}
	}
	// Discovery needs no key.
	if code, _ := do(t, http.MethodGet, ts.URL+"/metrics", nil); code != 200 {
		t.Errorf("/metrics: status %d", code)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		class  string
		status int
		check  func(t *testing.T, resp *http.Response, res *streamResult)
	}{
		{FaultHTTP400, 400, nil},
		{FaultHTTP429, 429, func(t *testing.T, resp *http.Response, _ *streamResult) {
			if got := resp.Header.Get("Retry-After"); got != "1" {
				t.Errorf("Retry-After = %q", got)
			}
		}},
		{FaultHTTP500, 500, nil},
		{FaultHTTP503, 503, nil},
		{FaultCut, 200, func(t *testing.T, _ *http.Response, res *streamResult) {
			if res.done || res.finish != "" || res.err == nil {
				t.Errorf("cut stream: done %v, finish %q, read error %v", res.done, res.finish, res.err)
			}
			if res.words() != 10 {
				t.Errorf("cut after %d tokens, want 10 (half of 20)", res.words())
			}
		}},
		{FaultMalformed, 200, func(t *testing.T, _ *http.Response, res *streamResult) {
			if len(res.bad) != 1 || res.bad[0] != `{"choices":[{"delta":{"content":` {
				t.Errorf("malformed events = %q", res.bad)
			}
			if !res.done || res.words() != 20 || res.usage == nil || res.usage.CompletionTokens != 20 {
				t.Errorf("stream after malformed event: done %v, %d words", res.done, res.words())
			}
			// The bad event sits after half the tokens.
			words := 0
			for _, raw := range res.raw {
				if raw == res.bad[0] {
					break
				}
				words += strings.Count(raw, `"content":" `) // token chunks carry one word
			}
			if words != 10 {
				t.Errorf("malformed event after %d tokens, want 10", words)
			}
		}},
		{FaultStreamError, 200, func(t *testing.T, _ *http.Response, res *streamResult) {
			// Half the tokens, OpenAI's in-stream error, [DONE].
			n := len(res.raw)
			if res.words() != 10 || !res.done || n < 2 || res.finish != "" || res.usage != nil {
				t.Fatalf("stream error: %d words, done %v, finish %q: %q", res.words(), res.done, res.finish, res.raw)
			}
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(res.raw[n-2]), &e) != nil || e.Error.Type != "server_error" || e.Error.Message == "" {
				t.Errorf("error chunk %s", res.raw[n-2])
			}
		}},
		{FaultEmpty, 200, func(t *testing.T, _ *http.Response, res *streamResult) {
			if res.words() != 0 || !res.done || res.finish != "stop" || len(res.chunks) != 3 {
				t.Errorf("empty: %d words, done %v, finish %q, %d chunks", res.words(), res.done, res.finish, len(res.chunks))
			}
			if res.usage == nil || res.usage.CompletionTokens != 0 {
				t.Errorf("usage = %+v", res.usage)
			}
		}},
	} {
		t.Run(tc.class, func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{tc.class: 1}})
			resp, res := stream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 20, "ignore_eos": true,
				"stream_options": map[string]any{"include_usage": true}})
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status != 200 {
				var e struct {
					Error struct {
						Message string `json:"message"`
						Type    string `json:"type"`
					} `json:"error"`
				}
				if len(res.raw) != 0 || len(res.bad) != 1 || json.Unmarshal([]byte(res.bad[0]), &e) != nil || e.Error.Message == "" || e.Error.Type == "" {
					t.Errorf("error body %q", res.bad)
				}
			}
			if tc.check != nil {
				tc.check(t, resp, res)
			}
		})
	}
}

func TestFaultStall(t *testing.T) {
	s, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{FaultStall: 1}})
	resp := post(context.Background(), t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 20, "ignore_eos": true, "stream": true})
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	// Role chunk and the first token arrive; then nothing until Close.
	for i := 0; i < 2; i++ {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		br.ReadString('\n')
	}
	s.Close()
	res := readStream(br)
	if len(res.raw) != 0 || res.done {
		t.Errorf("after the stall: %q", res.raw)
	}
}

func TestFaultsDeterministicPerPrompt(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{FaultHTTP500: 0.5}})
	got := map[int]int{}
	for i := range 40 {
		p := fmt.Sprintf("prompt %d", i)
		first, _ := nonStream(t, ts.URL, req{"messages": userMsg(p), "max_tokens": 2})
		again, _ := nonStream(t, ts.URL, req{"messages": userMsg(p), "max_tokens": 2})
		if first.StatusCode != again.StatusCode {
			t.Errorf("%q: %d then %d", p, first.StatusCode, again.StatusCode)
		}
		got[first.StatusCode]++
	}
	if got[500] < 5 || got[200] < 5 {
		t.Errorf("status counts %v for p=0.5", got)
	}
}

func TestFaultsNonStream(t *testing.T) {
	for _, tc := range []struct {
		class string
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{FaultEmpty, func(t *testing.T, resp *http.Response, body []byte, err error) {
			var c completion
			if json.Unmarshal(body, &c) != nil || c.Usage.CompletionTokens != 0 || c.Choices[0].Message.Content != "" {
				t.Errorf("body %s", body)
			}
		}},
		{FaultMalformed, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if resp.StatusCode != 200 || json.Valid(body) {
				t.Errorf("status %d, body %s", resp.StatusCode, body)
			}
		}},
		{FaultCut, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err == nil {
				t.Errorf("cut non-stream request succeeded: %d %s", resp.StatusCode, body)
			}
		}},
	} {
		t.Run(tc.class, func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{tc.class: 1}})
			resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json",
				strings.NewReader(mustJSON(req{"messages": userMsg("x"), "max_tokens": 20})))
			var body []byte
			if err == nil {
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			tc.check(t, resp, body, err)
		})
	}
}

func TestModels(t *testing.T) {
	_, ts := start(t, Config{Model: "qwen-sim", MaxModelLen: 65536, Roofline: Roofline{
		ParamsB: 27, Layers: 64, Heads: 48, KVHeads: 8, HeadDim: 128, PeakTFLOPS: 200, MemBandwidthGBs: 1000}})
	resp, err := http.Get(ts.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			Created     int64  `json:"created"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
			Meta        struct {
				NParams   int64 `json:"n_params"`
				NCtxTrain int   `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Object != "list" || len(got.Data) != 1 {
		t.Fatalf("models = %+v", got)
	}
	m := got.Data[0]
	if m.ID != "qwen-sim" || m.Object != "model" || m.Created == 0 || m.OwnedBy != "sixpin-sim" ||
		m.MaxModelLen != 65536 || m.Meta.NParams != 27_000_000_000 || m.Meta.NCtxTrain != 65536 {
		t.Errorf("model = %+v", m)
	}

	for _, path := range []string{"/health", "/metrics"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
		if path == "/metrics" && !strings.Contains(string(b), "vllm:cache_config_info{") {
			t.Errorf("metrics: %s", b)
		}
	}
}

func TestFixedTiming(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingFixed, Fixed: Fixed{TTFT: time.Millisecond, ITL: time.Microsecond}, TokensPerChunk: 2})
	_, res := stream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 9, "ignore_eos": true})
	if !res.done || res.words() != 9 || len(res.content) != 5 {
		t.Errorf("done %v, %d words in %d chunks", res.done, res.words(), len(res.content))
	}
	_, c := nonStream(t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 9, "ignore_eos": true})
	if c.Usage.CompletionTokens != 9 {
		t.Errorf("non-stream usage %+v", c.Usage)
	}
}

func TestRooflineStreams(t *testing.T) {
	// Many concurrent streams through one engine, more than MaxNumSeqs
	// and more than the KV budget holds at once; every one completes.
	s, ts := start(t, Config{Roofline: fastRoofline(), MaxNumSeqs: 64, KVBudgetTokens: 64 * 40, TokensPerChunk: 2})
	const n = 500
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := 1 + i%17
			_, res := stream(t, ts.URL, req{"messages": userMsg(fmt.Sprintf("p %d", i)), "max_tokens": out, "ignore_eos": true,
				"stream_options": map[string]any{"include_usage": true}})
			if !res.done || res.words() != out || res.usage == nil || res.usage.CompletionTokens != out {
				errs <- fmt.Errorf("stream %d: done %v, %d words, want %d", i, res.done, res.words(), out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Everything finished: the engine holds nothing.
	waitFor(t, func() bool { return s.eng.stats.running.Load() == 0 && s.eng.stats.waiting.Load() == 0 })
}

// waitFor polls cond; it bounds nothing but the test's own patience.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 10000 {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCancelFreesKV(t *testing.T) {
	// The budget holds one request at a time. The first client leaves
	// after its first token; the second must then run.
	rl := fastRoofline()
	rl.StepOverhead = time.Millisecond
	_, ts := start(t, Config{Roofline: rl, KVBudgetTokens: 200})
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(ctx, t, ts.URL, req{"messages": userMsg("first"), "max_tokens": 150, "ignore_eos": true, "stream": true})
	br := bufio.NewReader(resp.Body)
	for i := 0; i < 4; i++ { // role chunk, blank, first token, blank
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	_, res := stream(t, ts.URL, req{"messages": userMsg("second"), "max_tokens": 150, "ignore_eos": true})
	if !res.done || res.words() != 150 {
		t.Errorf("second: done %v, %d words", res.done, res.words())
	}
}

func TestCloseEndsStreams(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		s, ts := start(t, Config{Timing: TimingFixed, Fixed: Fixed{TTFT: 0, ITL: time.Hour}})
		resp := post(context.Background(), t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 10, "ignore_eos": true, "stream": true})
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		for i := 0; i < 4; i++ {
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		if res := readStream(br); res.done || res.finish != "" {
			t.Errorf("after Close: %q", res.raw)
		}
	})
	t.Run("before first token", func(t *testing.T) {
		rl := fastRoofline()
		rl.StepOverhead = time.Hour
		s, ts := start(t, Config{Roofline: rl})
		got := make(chan int)
		go func() {
			resp := post(context.Background(), t, ts.URL, req{"messages": userMsg("x"), "max_tokens": 10, "stream": true})
			resp.Body.Close()
			got <- resp.StatusCode
		}()
		waitFor(t, func() bool { return s.eng.stats.running.Load() == 1 })
		s.Close()
		if status := <-got; status != http.StatusServiceUnavailable {
			t.Errorf("status %d, want 503", status)
		}
		resp := post(context.Background(), t, ts.URL, req{"messages": userMsg("x")})
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("after Close: status %d, want 503", resp.StatusCode)
		}
	})
}

func TestCloseIdempotent(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); s.Close() }()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsInvalid(t *testing.T) {
	_, err := New(Config{Timing: "warp"})
	if err == nil || !strings.Contains(err.Error(), "timing:") {
		t.Fatalf("err = %v", err)
	}
}

func BenchmarkStreamTimingNone(b *testing.B) {
	_, ts := start(b, Config{Timing: TimingNone})
	body := []byte(mustJSON(req{"messages": userMsg("benchmark prompt"), "max_tokens": 256, "ignore_eos": true, "stream": true}))
	client := ts.Client()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(ts.URL+"/v1/chat/completions", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n == 0 {
			b.Fatal(err, n)
		}
	}
	b.ReportMetric(256*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
