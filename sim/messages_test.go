package sim

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Anthropic's Messages API as its documentation describes it, mirrored
// here independently of the server's own types.

type anthTestUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type anthTestBlock struct {
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Thinking  *string `json:"thinking"`
	Signature *string `json:"signature"`
}

type anthTestMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []anthTestBlock `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        anthTestUsage   `json:"usage"`
}

// anthTestEvent is the union of the stream's event payloads.
type anthTestEvent struct {
	Type         string           `json:"type"`
	Message      *anthTestMessage `json:"message"`
	Index        *int             `json:"index"`
	ContentBlock *anthTestBlock   `json:"content_block"`
	Delta        *struct {
		Type         string  `json:"type"`
		Text         *string `json:"text"`
		Thinking     *string `json:"thinking"`
		Signature    *string `json:"signature"`
		StopReason   *string `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage *struct {
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stamp int64 `json:"sixpin_sent_unix_ns"`
}

// anthStream is a decoded Messages stream.
type anthStream struct {
	evs      []sseEvent
	decoded  []anthTestEvent
	order    []string // event names, runs of content_block_delta of one delta type collapsed
	text     string
	thinking string
	start    *anthTestMessage
	stop     string // message_delta's stop_reason
	out      int    // message_delta's output_tokens
}

// checkAnthEvents decodes every event strictly, checks each event's
// documented members and that its event name is its data's type.
func checkAnthEvents(t *testing.T, evs []sseEvent) *anthStream {
	t.Helper()
	s := &anthStream{evs: evs}
	const st = "sixpin_sent_unix_ns,"
	for _, e := range evs {
		var ev anthTestEvent
		strict(t, e.data, &ev)
		if ev.Type != e.name {
			t.Errorf("event %q carries type %q", e.name, ev.Type)
		}
		name := e.name
		switch e.name {
		case "message_start":
			wantKeys(t, e.data, "", "message,"+st+"type")
			wantKeys(t, e.data, "message", "content,id,model,role,stop_reason,stop_sequence,type,usage")
			wantKeys(t, e.data, "message.usage", "cache_creation_input_tokens,cache_read_input_tokens,input_tokens,output_tokens")
			s.start = ev.Message
		case "content_block_start":
			wantKeys(t, e.data, "", "content_block,index,"+st+"type")
			if ev.ContentBlock.Type == "thinking" {
				wantKeys(t, e.data, "content_block", "thinking,type")
			} else {
				wantKeys(t, e.data, "content_block", "text,type")
			}
			name += ":" + ev.ContentBlock.Type
		case "ping", "message_stop":
			wantKeys(t, e.data, "", strings.TrimSuffix(st, ",")+",type")
		case "content_block_delta":
			wantKeys(t, e.data, "", "delta,index,"+st+"type")
			d := ev.Delta
			switch d.Type {
			case "text_delta":
				wantKeys(t, e.data, "delta", "text,type")
				s.text += *d.Text
			case "thinking_delta":
				wantKeys(t, e.data, "delta", "thinking,type")
				s.thinking += *d.Thinking
			case "signature_delta":
				wantKeys(t, e.data, "delta", "signature,type")
			default:
				t.Errorf("delta type %q", d.Type)
			}
			name += ":" + d.Type
		case "content_block_stop":
			wantKeys(t, e.data, "", "index,"+st+"type")
		case "message_delta":
			wantKeys(t, e.data, "", "delta,"+st+"type,usage")
			wantKeys(t, e.data, "delta", "stop_reason,stop_sequence")
			wantKeys(t, e.data, "usage", "output_tokens")
			s.stop, s.out = *ev.Delta.StopReason, ev.Usage.OutputTokens
		case "error":
			wantKeys(t, e.data, "", "error,"+st+"type")
		default:
			t.Errorf("unknown event %q", e.name)
		}
		if n := len(s.order); n == 0 || s.order[n-1] != name || !strings.HasPrefix(name, "content_block_delta") {
			s.order = append(s.order, name)
		}
		s.decoded = append(s.decoded, ev)
	}
	checkStamps(t, evs)
	return s
}

func anthReq(max int, msgs ...map[string]any) map[string]any {
	return map[string]any{"model": "claude-sim", "max_tokens": max, "messages": msgs}
}

func TestMessagesStream(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: 0.5})
	body := anthReq(5, msg("user", "hello there world"))
	body["system"] = "be brief"
	body["ignore_eos"] = true
	resp, evs := streamEvents(t, ts.URL, "/v1/messages", body)
	s := checkAnthEvents(t, evs)
	want := "message_start content_block_start:text ping content_block_delta:text_delta content_block_stop message_delta message_stop"
	if got := strings.Join(s.order, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	// Without thinking enabled, no thinking: the reasoning share does not apply.
	if n := strings.Count(strings.Join(evNames(evs), " "), "content_block_delta"); n != 5 || len(strings.Fields(s.text)) != 5 {
		t.Errorf("%d deltas, text %q", n, s.text)
	}
	m := s.start
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "claude-sim" ||
		len(m.Content) != 0 || m.StopReason != nil || m.StopSequence != nil {
		t.Errorf("message_start message %+v", m)
	}
	// system (5 + 2) + user (5 + 3) + prime 3
	if m.Usage != (anthTestUsage{InputTokens: 18, OutputTokens: 1}) {
		t.Errorf("message_start usage %+v", m.Usage)
	}
	if s.stop != "max_tokens" || s.out != 5 {
		t.Errorf("message_delta: stop %q, output %d", s.stop, s.out)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Error("no X-Request-Id")
	}

	// The same request not streamed is the same message.
	delete(body, "stream")
	resp, b := readAll(t, ts.URL, "/v1/messages", body, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var msgOut anthTestMessage
	strict(t, string(b), &msgOut)
	wantKeys(t, string(b), "", "content,id,model,role,stop_reason,stop_sequence,type,usage")
	if len(msgOut.Content) != 1 || msgOut.Content[0].Type != "text" || *msgOut.Content[0].Text != s.text {
		t.Errorf("content %s, streamed %q", b, s.text)
	}
	if *msgOut.StopReason != "max_tokens" || msgOut.StopSequence != nil || msgOut.Usage != (anthTestUsage{InputTokens: 18, OutputTokens: 5}) {
		t.Errorf("message %s", b)
	}
}

func evNames(evs []sseEvent) []string {
	names := make([]string, len(evs))
	for i, e := range evs {
		names[i] = e.name
	}
	return names
}

func TestMessagesThinking(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: 0.75, TokensPerChunk: 100})
	body := anthReq(2000, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "think hard"}}})
	body["thinking"] = map[string]any{"type": "enabled", "budget_tokens": 1024}
	body["ignore_eos"] = true
	_, evs := streamEvents(t, ts.URL, "/v1/messages", body)
	s := checkAnthEvents(t, evs)
	want := "message_start content_block_start:thinking ping content_block_delta:thinking_delta content_block_delta:signature_delta content_block_stop " +
		"content_block_start:text content_block_delta:text_delta content_block_stop message_delta message_stop"
	if got := strings.Join(s.order, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	// 75% of 2000 is 1500 reasoning tokens, capped by the budget.
	if th, tx := len(strings.Fields(s.thinking)), len(strings.Fields(s.text)); th != 1024 || tx != 976 || s.out != 2000 {
		t.Errorf("thinking %d, text %d, output %d tokens", th, tx, s.out)
	}
	var idx []int
	for _, ev := range s.decoded {
		if ev.Index != nil && ev.Type == "content_block_start" {
			idx = append(idx, *ev.Index)
		}
	}
	if fmt.Sprint(idx) != "[0 1]" {
		t.Errorf("block indexes %v", idx)
	}

	delete(body, "stream")
	_, b := readAll(t, ts.URL, "/v1/messages", body, nil)
	var m anthTestMessage
	strict(t, string(b), &m)
	if len(m.Content) != 2 || m.Content[0].Type != "thinking" || *m.Content[0].Thinking != s.thinking || m.Content[0].Signature == nil ||
		m.Content[1].Type != "text" || *m.Content[1].Text != s.text {
		t.Errorf("message content %s", b)
	}
}

func TestMessagesMaxTokens(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	for _, max := range []int{1, 7, 2000} {
		_, evs := streamEvents(t, ts.URL, "/v1/messages", anthReq(max, msg("user", "how long")))
		s := checkAnthEvents(t, evs)
		n := len(strings.Fields(s.text))
		switch {
		case n > max || s.out != n:
			t.Errorf("max_tokens %d: %d words, output_tokens %d", max, n, s.out)
		case n == max && s.stop != "max_tokens", n < max && s.stop != "end_turn":
			t.Errorf("max_tokens %d: %d tokens, stop %q", max, n, s.stop)
		}
	}
}

// anthUsageOf sends a non-streaming Messages request and returns its usage.
func anthUsageOf(t *testing.T, url string, body map[string]any) anthTestUsage {
	t.Helper()
	resp, b := readAll(t, url, "/v1/messages", body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var m anthTestMessage
	strict(t, string(b), &m)
	return m.Usage
}

func TestMessagesPromptCaching(t *testing.T) {
	zero := 0
	marked := func(text string) []map[string]any {
		return []map[string]any{{"type": "text", "text": text, "cache_control": map[string]any{"type": "ephemeral"}}}
	}
	for _, timing := range []string{TimingNone, TimingRoofline} {
		t.Run(timing, func(t *testing.T) {
			_, ts := start(t, cachingConfig(func(c *Config) {
				c.TemplateOverheadTokens, c.Timing, c.Roofline = &zero, timing, fastRoofline()
			}))
			sys := text(0, 100) // 100 tokens marked: 6 whole blocks (96 tokens) cached
			body := func(user any, more ...map[string]any) map[string]any {
				b := anthReq(3, append([]map[string]any{{"role": "user", "content": user}}, more...)...)
				b["system"] = marked(sys)
				b["ignore_eos"] = true
				return b
			}
			// system 100 + user 2 + prime 3 = 105 tokens.
			if u := anthUsageOf(t, ts.URL, body("question one")); u != (anthTestUsage{InputTokens: 9, CacheCreationInputTokens: 96, OutputTokens: 3}) {
				t.Errorf("first: %+v", u)
			}
			if u := anthUsageOf(t, ts.URL, body("question two")); u != (anthTestUsage{InputTokens: 9, CacheReadInputTokens: 96, OutputTokens: 3}) {
				t.Errorf("second, same system: %+v", u)
			}
			// The next turn marks its last message: 100 + 2 + 3 + 30
			// tokens up to the mark, 8 whole blocks (128); 96 read.
			next := body("question one", msg("assistant", text(500, 3)), map[string]any{"role": "user", "content": marked(text(600, 30))})
			if u := anthUsageOf(t, ts.URL, next); u != (anthTestUsage{InputTokens: 138 - 128, CacheCreationInputTokens: 128 - 96, CacheReadInputTokens: 96, OutputTokens: 3}) {
				t.Errorf("next turn: %+v", u)
			}
			// Without cache_control nothing is read or written.
			plain := anthReq(3, msg("user", "question one"))
			plain["system"] = sys
			plain["ignore_eos"] = true
			if u := anthUsageOf(t, ts.URL, plain); u != (anthTestUsage{InputTokens: 105, OutputTokens: 3}) {
				t.Errorf("unmarked: %+v", u)
			}
		})
	}
}

func TestMessagesErrors(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, MaxModelLen: 4096, APIKey: "sk-test"})
	key := map[string]string{"x-api-key": "sk-test", "anthropic-version": "2023-06-01"}
	for _, tc := range []struct {
		name    string
		body    any
		headers map[string]string
		status  int
		typ     string
	}{
		{"no key", anthReq(5, msg("user", "x")), map[string]string{"anthropic-version": "2023-06-01"}, 401, "authentication_error"},
		{"wrong key", anthReq(5, msg("user", "x")), map[string]string{"x-api-key": "sk-other"}, 401, "authentication_error"},
		{"bearer key", anthReq(5, msg("user", "x")), map[string]string{"Authorization": "Bearer sk-test"}, 200, ""},
		{"bad JSON", `{"messages": [`, key, 400, "invalid_request_error"},
		{"no max_tokens", map[string]any{"messages": []any{msg("user", "x")}}, key, 400, "invalid_request_error"},
		{"no messages", anthReq(5), key, 400, "invalid_request_error"},
		{"system role in messages", anthReq(5, msg("system", "x")), key, 400, "invalid_request_error"},
		{"thinking budget too small", func() any {
			b := anthReq(5000, msg("user", "x"))
			b["thinking"] = map[string]any{"type": "enabled", "budget_tokens": 100}
			return b
		}(), key, 400, "invalid_request_error"},
		{"thinking budget over max_tokens", func() any {
			b := anthReq(2000, msg("user", "x"))
			b["thinking"] = map[string]any{"type": "enabled", "budget_tokens": 2000}
			return b
		}(), key, 400, "invalid_request_error"},
		{"context", anthReq(4096, msg("user", "x")), key, 400, "invalid_request_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := readAll(t, ts.URL, "/v1/messages", tc.body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			if tc.status == 200 {
				return
			}
			checkAnthError(t, b, tc.typ)
		})
	}
}

// checkAnthError checks b is Anthropic's error body of type typ.
func checkAnthError(t *testing.T, b []byte, typ string) {
	t.Helper()
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	strict(t, string(b), &e)
	wantKeys(t, string(b), "", "error,type")
	if e.Type != "error" || e.Error.Type != typ || e.Error.Message == "" {
		t.Errorf("error body %s, want type %s", b, typ)
	}
}

func TestMessagesRateLimit(t *testing.T) {
	clock, url := limitedServer(t, Config{Timing: TimingNone, RateLimits: RateLimits{
		RequestsPerMinute: 2, UncachedTokensPerMinute: 1000, OutputTokensPerMinute: 500,
	}})
	body := anthReq(10, msg("user", "hi"))
	body["ignore_eos"] = true
	reset := clock.now().Add(time.Minute).UTC().Format(time.RFC3339)
	for i, want := range []struct {
		status                                  int
		reqRemaining, inRemaining, outRemaining string
	}{
		{200, "1", "991", "500"}, // prompt 5 + 1 + 3; output counted at completion
		{200, "0", "982", "490"},
		{429, "0", "982", "480"},
	} {
		resp, b := readAll(t, url, "/v1/messages", body, nil)
		if resp.StatusCode != want.status {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, b)
		}
		h := resp.Header
		for k, v := range map[string]string{
			"anthropic-ratelimit-requests-limit": "2", "anthropic-ratelimit-requests-remaining": want.reqRemaining,
			"anthropic-ratelimit-requests-reset":     reset,
			"anthropic-ratelimit-input-tokens-limit": "1000", "anthropic-ratelimit-input-tokens-remaining": want.inRemaining,
			"anthropic-ratelimit-input-tokens-reset":  reset,
			"anthropic-ratelimit-output-tokens-limit": "500", "anthropic-ratelimit-output-tokens-remaining": want.outRemaining,
			// no tokens-per-minute bucket: the more exhausted of input and output
			"anthropic-ratelimit-tokens-limit": "500", "anthropic-ratelimit-tokens-remaining": want.outRemaining,
		} {
			if got := h.Get(k); got != v {
				t.Errorf("request %d: %s = %q, want %q", i, k, got, v)
			}
		}
		for k := range h {
			if strings.HasPrefix(strings.ToLower(k), "x-ratelimit") {
				t.Errorf("request %d: OpenAI header %s on /v1/messages", i, k)
			}
		}
		if want.status == 429 {
			checkAnthError(t, b, "rate_limit_error")
			if h.Get("Retry-After") != "60" || !strings.Contains(string(b), "of 2 requests per minute") {
				t.Errorf("429: retry-after %q, body %s", h.Get("Retry-After"), b)
			}
		}
	}
}

func TestMessagesOverloaded(t *testing.T) {
	t.Run("fault", func(t *testing.T) {
		_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{FaultHTTP503: 1}})
		resp, b := readAll(t, ts.URL, "/v1/messages", anthReq(5, msg("user", "x")), nil)
		if resp.StatusCode != 529 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		checkAnthError(t, b, "overloaded_error")
	})
	t.Run("queue", func(t *testing.T) {
		// One request at a time fits the KV budget, and its first step
		// takes an hour: the second waits, the third finds one waiting.
		rl := fastRoofline()
		rl.StepOverhead = time.Hour
		s, ts := start(t, Config{Roofline: rl, KVBudgetTokens: 64, OverloadAfterWaiting: 1})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range 2 {
			go func() {
				// 42 words + 5 + 3: 50 tokens, the whole budget's 4 blocks
				b := mustJSON(anthReq(40, msg("user", text(100*i, 42))))
				r, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/messages", strings.NewReader(b))
				if resp, err := http.DefaultClient.Do(r); err == nil {
					resp.Body.Close()
				}
			}()
			waitFor(t, func() bool { return s.eng.stats.running.Load() == 1 && s.eng.queued() == i })
		}
		resp, b := readAll(t, ts.URL, "/v1/messages", anthReq(40, msg("user", "third")), nil)
		if resp.StatusCode != 529 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		checkAnthError(t, b, "overloaded_error")
		// OpenAI's protocols say 503.
		resp, b = readAll(t, ts.URL, "/v1/chat/completions", req{"messages": userMsg("third"), "max_tokens": 40}, nil)
		if resp.StatusCode != 503 {
			t.Errorf("chat: status %d: %s", resp.StatusCode, b)
		}
	})
}

func TestMessagesStreamError(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{FaultStreamError: 1}})
	body := anthReq(20, msg("user", "x"))
	body["ignore_eos"] = true
	_, evs := streamEvents(t, ts.URL, "/v1/messages", body)
	s := checkAnthEvents(t, evs)
	last := s.decoded[len(s.decoded)-1]
	if last.Type != "error" || last.Error.Type != "overloaded_error" || last.Error.Message == "" {
		t.Fatalf("last event %s", evs[len(evs)-1].data)
	}
	if n := len(strings.Fields(s.text)); n != 10 {
		t.Errorf("%d tokens before the error, want 10", n)
	}
	delete(body, "stream")
	resp, b := readAll(t, ts.URL, "/v1/messages", body, nil)
	if resp.StatusCode != 529 {
		t.Fatalf("not streamed: status %d: %s", resp.StatusCode, b)
	}
	checkAnthError(t, b, "overloaded_error")
}
