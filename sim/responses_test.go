package sim

import (
	"fmt"
	"strings"
	"testing"
)

// OpenAI's Responses API as its documentation describes it, mirrored
// here independently of the server's own types.

type respTestPart struct {
	Type        string      `json:"type"`
	Text        string      `json:"text"`
	Annotations *[]struct{} `json:"annotations"`
}

type respTestItem struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Role    string          `json:"role"`
	Summary *[]respTestPart `json:"summary"`
	Content []respTestPart  `json:"content"`
}

type respTestUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

type respTestObject struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	CreatedAt int64  `json:"created_at"`
	Status    string `json:"status"`
	Error     *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Instructions      *string        `json:"instructions"`
	MaxOutputTokens   *int           `json:"max_output_tokens"`
	Model             string         `json:"model"`
	Output            []respTestItem `json:"output"`
	ParallelToolCalls bool           `json:"parallel_tool_calls"`
	Reasoning         struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	} `json:"reasoning"`
	Temperature float64           `json:"temperature"`
	TopP        float64           `json:"top_p"`
	ToolChoice  string            `json:"tool_choice"`
	Tools       []struct{}        `json:"tools"`
	Usage       *respTestUsage    `json:"usage"`
	Metadata    map[string]string `json:"metadata"`
}

const respObjectKeys = "created_at,error,id,incomplete_details,instructions,max_output_tokens,metadata,model,object,output,parallel_tool_calls,reasoning,status,temperature,tool_choice,tools,top_p,usage"

// respTestEvent is the union of the stream's event payloads.
type respTestEvent struct {
	Type           string          `json:"type"`
	SequenceNumber *int            `json:"sequence_number"`
	Response       *respTestObject `json:"response"`
	OutputIndex    *int            `json:"output_index"`
	Item           *respTestItem   `json:"item"`
	ItemID         string          `json:"item_id"`
	ContentIndex   *int            `json:"content_index"`
	Part           *respTestPart   `json:"part"`
	Delta          *string         `json:"delta"`
	Text           *string         `json:"text"`
	Logprobs       *[]struct{}     `json:"logprobs"`
	Code           *string         `json:"code"`
	Message        *string         `json:"message"`
	Param          *string         `json:"param"`
	Stamp          int64           `json:"sixpin_sent_unix_ns"`
}

type respStream struct {
	decoded   []respTestEvent
	order     []string // event types, runs of one delta type collapsed
	text      string
	reasoning string
	last      *respTestObject // of the terminal event
}

// checkRespEvents decodes every event strictly, checks each event's
// documented members, that its event name is its type, and that
// sequence numbers count from 0.
func checkRespEvents(t *testing.T, evs []sseEvent) *respStream {
	t.Helper()
	s := &respStream{}
	const head = "sequence_number,sixpin_sent_unix_ns,type"
	at := "content_index,item_id,output_index,"
	for i, e := range evs {
		var ev respTestEvent
		strict(t, e.data, &ev)
		if ev.Type != e.name {
			t.Errorf("event %q carries type %q", e.name, ev.Type)
		}
		if ev.SequenceNumber == nil || *ev.SequenceNumber != i {
			t.Errorf("event %d (%s): sequence_number %v", i, e.name, ev.SequenceNumber)
		}
		switch e.name {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			wantKeys(t, e.data, "", "response,"+head)
			wantKeys(t, e.data, "response", respObjectKeys)
			s.last = ev.Response
		case "response.output_item.added", "response.output_item.done":
			wantKeys(t, e.data, "", "item,output_index,"+head)
			if ev.Item.Type == "reasoning" {
				wantKeys(t, e.data, "item", "content,id,status,summary,type")
			} else {
				wantKeys(t, e.data, "item", "content,id,role,status,type")
			}
		case "response.content_part.added", "response.content_part.done":
			wantKeys(t, e.data, "", at+"part,"+head)
		case "response.output_text.delta":
			wantKeys(t, e.data, "", at+"delta,logprobs,"+head)
			s.text += *ev.Delta
		case "response.reasoning_text.delta":
			wantKeys(t, e.data, "", at+"delta,"+head)
			s.reasoning += *ev.Delta
		case "response.output_text.done":
			wantKeys(t, e.data, "", at+"logprobs,"+head+",text")
			if *ev.Text != s.text {
				t.Errorf("output_text.done %q, deltas %q", *ev.Text, s.text)
			}
		case "response.reasoning_text.done":
			wantKeys(t, e.data, "", at+head+",text")
			if *ev.Text != s.reasoning {
				t.Errorf("reasoning_text.done %q, deltas %q", *ev.Text, s.reasoning)
			}
		case "error":
			wantKeys(t, e.data, "", "code,message,param,"+head)
		default:
			t.Errorf("unknown event %q", e.name)
		}
		if n := len(s.order); n == 0 || s.order[n-1] != e.name || !strings.HasSuffix(e.name, ".delta") {
			s.order = append(s.order, e.name)
		}
		s.decoded = append(s.decoded, ev)
	}
	checkStamps(t, evs)
	return s
}

func TestResponsesStream(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	body := map[string]any{"model": "gpt-sim", "input": "hello there world", "instructions": "be brief",
		"max_output_tokens": 6, "ignore_eos": true}
	_, evs := streamEvents(t, ts.URL, "/v1/responses", body)
	s := checkRespEvents(t, evs)
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.done response.content_part.done response.output_item.done response.incomplete"
	if got := strings.Join(s.order, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	created := s.decoded[0].Response
	if created.Status != "in_progress" || len(created.Output) != 0 || created.Usage != nil || !strings.HasPrefix(created.ID, "resp_") ||
		created.Object != "response" || created.Model != "gpt-sim" || *created.Instructions != "be brief" || *created.MaxOutputTokens != 6 {
		t.Errorf("response.created %+v", created)
	}
	o := s.last
	if o.Status != "incomplete" || o.IncompleteDetails == nil || o.IncompleteDetails.Reason != "max_output_tokens" || o.ID != created.ID {
		t.Errorf("terminal response: status %q, incomplete %+v", o.Status, o.IncompleteDetails)
	}
	if len(o.Output) != 1 || o.Output[0].Type != "message" || o.Output[0].Role != "assistant" || o.Output[0].Content[0].Text != s.text ||
		len(strings.Fields(s.text)) != 6 {
		t.Errorf("output %+v, streamed %q", o.Output, s.text)
	}
	// instructions (5 + 2) + input (5 + 3) + prime 3
	if u := o.Usage; u.InputTokens != 18 || u.OutputTokens != 6 || u.TotalTokens != 24 || u.InputTokensDetails.CachedTokens != 0 {
		t.Errorf("usage %+v", u)
	}
	for _, ev := range s.decoded {
		if ev.ItemID != "" && ev.ItemID != o.Output[0].ID {
			t.Errorf("%s: item_id %q, want %q", ev.Type, ev.ItemID, o.Output[0].ID)
		}
	}

	// Not streamed: the same response object.
	delete(body, "stream")
	resp, b := readAll(t, ts.URL, "/v1/responses", body, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var ns respTestObject
	strict(t, string(b), &ns)
	wantKeys(t, string(b), "", respObjectKeys)
	if ns.Status != "incomplete" || len(ns.Output) != 1 || ns.Output[0].Content[0].Text != s.text || *ns.Usage != *o.Usage {
		t.Errorf("response %s", b)
	}
}

func TestResponsesCompleted(t *testing.T) {
	// A natural stop well inside max_output_tokens completes.
	_, ts := start(t, Config{Timing: TimingNone, NaturalOutputTokens: 10})
	_, evs := streamEvents(t, ts.URL, "/v1/responses", map[string]any{"input": "short answer", "max_output_tokens": 1000})
	s := checkRespEvents(t, evs)
	if s.order[len(s.order)-1] != "response.completed" || s.last.Status != "completed" || s.last.IncompleteDetails != nil {
		t.Fatalf("terminal %v, status %q", s.order[len(s.order)-1], s.last.Status)
	}
	if s.last.Output[0].Status != "completed" || s.last.Usage.OutputTokens != len(strings.Fields(s.text)) {
		t.Errorf("output %+v, usage %+v", s.last.Output, s.last.Usage)
	}
}

func TestResponsesReasoning(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone, ReasoningShare: 0.25, TokensPerChunk: 3})
	body := map[string]any{"input": "think", "max_output_tokens": 20, "ignore_eos": true, "reasoning": map[string]any{"effort": "high"}}
	_, evs := streamEvents(t, ts.URL, "/v1/responses", body)
	s := checkRespEvents(t, evs)
	want := "response.created response.in_progress " +
		"response.output_item.added response.content_part.added response.reasoning_text.delta response.reasoning_text.done response.content_part.done response.output_item.done " +
		"response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done response.output_item.done " +
		"response.incomplete"
	if got := strings.Join(s.order, " "); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	o := s.last
	if len(o.Output) != 2 || o.Output[0].Type != "reasoning" || o.Output[0].Content[0].Type != "reasoning_text" ||
		o.Output[0].Content[0].Text != s.reasoning || o.Output[0].Summary == nil || o.Output[1].Content[0].Text != s.text {
		t.Errorf("output %+v", o.Output)
	}
	if r, a := len(strings.Fields(s.reasoning)), len(strings.Fields(s.text)); r != 5 || a != 15 || o.Usage.OutputTokensDetails.ReasoningTokens != 5 {
		t.Errorf("reasoning %d, answer %d words; usage %+v", r, a, o.Usage)
	}
	if *o.Reasoning.Effort != "high" {
		t.Errorf("reasoning %+v", o.Reasoning)
	}
	var idx []string
	for _, ev := range s.decoded {
		if ev.Type == "response.output_item.added" {
			idx = append(idx, fmt.Sprint(*ev.OutputIndex, ev.Item.Type, ev.Item.Status))
		}
	}
	if fmt.Sprint(idx) != "[0reasoningin_progress 1messagein_progress]" {
		t.Errorf("items added %v", idx)
	}
	// effort none: no reasoning.
	body["reasoning"] = map[string]any{"effort": "none"}
	_, evs = streamEvents(t, ts.URL, "/v1/responses", body)
	if s := checkRespEvents(t, evs); s.reasoning != "" || len(s.last.Output) != 1 {
		t.Errorf("effort none: reasoning %q", s.reasoning)
	}
}

func TestResponsesInput(t *testing.T) {
	zero := 0
	_, ts := start(t, cachingConfig(func(c *Config) { c.TemplateOverheadTokens = &zero }))
	usage := func(body map[string]any) respTestUsage {
		t.Helper()
		body["max_output_tokens"], body["ignore_eos"] = 2, true
		resp, b := readAll(t, ts.URL, "/v1/responses", body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		var o respTestObject
		strict(t, string(b), &o)
		return *o.Usage
	}
	history := []map[string]any{
		{"role": "user", "content": text(0, 40)},
		{"type": "message", "role": "assistant", "content": []map[string]any{{"type": "output_text", "text": "ok then"}}},
		{"type": "function_call", "call_id": "c1", "name": "read", "arguments": `{"path":"a"}`},
		{"type": "function_call_output", "call_id": "c1", "output": "w1 w2 w3"},
		{"type": "reasoning", "summary": []any{}},
		{"role": "user", "content": []map[string]any{{"type": "input_text", "text": "and"}, {"type": "input_text", "text": "now"}}},
	}
	// 40 + 2 + 2 (name, arguments) + 3 + 2 + prime 3
	first := usage(map[string]any{"input": history})
	if first.InputTokens != 52 || first.InputTokensDetails.CachedTokens != 0 {
		t.Errorf("first: %+v", first)
	}
	// The same history and one more message: every whole block of the
	// first prompt is cached (the prime is the next message's header).
	next := usage(map[string]any{"input": append(history, map[string]any{"role": "user", "content": "more"})})
	if next.InputTokens != 53 || next.InputTokensDetails.CachedTokens != 48 {
		t.Errorf("next: %+v", next)
	}
	resp, b := readAll(t, ts.URL, "/v1/responses", map[string]any{"input": "x", "previous_response_id": "resp_1"}, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "previous_response_id") {
		t.Errorf("previous_response_id: %d %s", resp.StatusCode, b)
	}
}

func TestResponsesFailures(t *testing.T) {
	t.Run("stream error", func(t *testing.T) {
		_, ts := start(t, Config{Timing: TimingNone, Faults: map[string]float64{FaultStreamError: 1}})
		_, evs := streamEvents(t, ts.URL, "/v1/responses", map[string]any{"input": "x", "max_output_tokens": 20, "ignore_eos": true})
		s := checkRespEvents(t, evs)
		n := len(s.order)
		if n < 2 || s.order[n-2] != "error" || s.order[n-1] != "response.failed" {
			t.Fatalf("events %v", s.order)
		}
		if o := s.last; o.Status != "failed" || o.Error == nil || o.Error.Code != "server_error" || o.Usage.OutputTokens != 10 {
			t.Errorf("failed response %+v", o)
		}
	})
	t.Run("rate limit", func(t *testing.T) {
		_, url := limitedServer(t, Config{Timing: TimingNone, RateLimits: RateLimits{RequestsPerMinute: 1}})
		body := map[string]any{"input": "x", "max_output_tokens": 3}
		if resp, b := readAll(t, url, "/v1/responses", body, nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, b)
		}
		resp, b := readAll(t, url, "/v1/responses", body, nil)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "60" ||
			resp.Header.Get("x-ratelimit-remaining-requests-minute") != "0" || resp.Header.Get("x-ratelimit-limit-requests-minute") != "1" {
			t.Errorf("status %d, headers %v", resp.StatusCode, resp.Header)
		}
		checkRateLimitBody(t, b, "Requests per minute")
	})
	t.Run("context", func(t *testing.T) {
		_, ts := start(t, Config{Timing: TimingNone, MaxModelLen: 100})
		resp, b := readAll(t, ts.URL, "/v1/responses", map[string]any{"input": "x", "max_output_tokens": 100}, nil)
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":"context_length_exceeded"`) {
			t.Errorf("status %d: %s", resp.StatusCode, b)
		}
	})
}
