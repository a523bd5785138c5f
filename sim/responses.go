package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// This file is OpenAI's Responses API, POST /v1/responses: the request,
// the event stream (response.created … response.completed, or
// response.incomplete when max_output_tokens cut it short, or error and
// response.failed) and the response object. Reasoning tokens stream as
// a reasoning item with reasoning_text content
// (response.reasoning_text.delta), as open-weight reasoning models served
// by vLLM stream them, before the message item.

// responsesRequest is the part of a Responses request the simulator
// reads; other fields are ignored. ignore_eos and min_tokens are the
// simulator's extensions, with chat's meaning.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              respInput         `json:"input"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Stream             bool              `json:"stream"`
	Reasoning          *respReasoning    `json:"reasoning"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Metadata           map[string]string `json:"metadata"`
	PreviousResponseID *string           `json:"previous_response_id"`
	IgnoreEOS          bool              `json:"ignore_eos"`
	MinTokens          int               `json:"min_tokens"`
	// Tools make the request's content class tool-calls (see classify).
	Tools json.RawMessage `json:"tools"`
}

type respReasoning struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// respInput is the input: a string (one user message) or an array of
// items. A message item's text is its content (a string, or parts with
// text); a function call's is its name and arguments, a function call
// output's its output; other items have none.
type respInput []turn

func (in *respInput) UnmarshalJSON(b []byte) error {
	var s string
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
	}
	list, err := stringOrList(b, &s, &items)
	switch {
	case err != nil:
		return fmt.Errorf("input %w", err)
	case !list:
		*in = respInput{{role: "user", parts: []string{s}}}
		return nil
	}
	*in = make(respInput, 0, len(items))
	for i, it := range items {
		var t turn
		switch it.Type {
		case "", "message":
			text, err := respText(it.Content)
			if err != nil {
				return fmt.Errorf("input[%d].content %w", i, err)
			}
			t = turn{role: it.Role, parts: []string{text}}
		case "function_call":
			t = turn{role: "assistant", parts: []string{it.Name + " " + it.Arguments}}
		case "function_call_output":
			text, err := respText(it.Output)
			if err != nil {
				return fmt.Errorf("input[%d].output %w", i, err)
			}
			t = turn{role: "tool", parts: []string{text}}
		default:
			continue
		}
		*in = append(*in, t)
	}
	return nil
}

// respText is a content value's text: a string, or the text of its parts
// joined with newlines.
func respText(raw json.RawMessage) (string, error) {
	var s string
	var parts []struct {
		Text string `json:"text"`
	}
	list, err := stringOrList(raw, &s, &parts)
	if err != nil || !list {
		return s, err
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), nil
}

// responsesProto serves the Responses API.
type responsesProto struct{}

func (responsesProto) decode(r *http.Request, body io.Reader) (*genRequest, encoder, *refusal) {
	var req responsesRequest
	if f := decodeJSON(body, &req); f != nil {
		return nil, nil, f
	}
	if req.PreviousResponseID != nil {
		return nil, nil, invalid("previous_response_id: the simulator stores no responses; send the whole input")
	}
	g := &genRequest{
		model:     req.Model,
		maxTokens: req.MaxOutputTokens,
		minTokens: req.MinTokens,
		ignoreEOS: req.IgnoreEOS,
		stream:    req.Stream,
		tools:     declared(req.Tools),
	}
	if req.Instructions != nil {
		g.turns = append(g.turns, turn{role: "system", parts: []string{*req.Instructions}})
	}
	g.turns = append(g.turns, req.Input...)
	e := &responsesEncoder{item: -1, req: &req}
	if req.Reasoning != nil && req.Reasoning.Effort != nil && *req.Reasoning.Effort == "none" {
		g.noReasoning = true
	}
	return g, e, nil
}

func (responsesProto) authorized(r *http.Request, key string) bool { return bearerAuthorized(r, key) }

func (responsesProto) refuse(w http.ResponseWriter, f *refusal) {
	writeAPIError(w, openAIRefusal(f, false))
}

func (responsesProto) quota(h http.Header, q *quota) { xRateLimitHeaders(h, q) }

// responsesEncoder writes the event stream or the response object.
type responsesEncoder struct {
	req       *responsesRequest
	seq       int  // the next event's sequence_number
	item      int  // output index of the open item; -1 before the first
	reasoning bool // the open item is the reasoning item
}

// respObject is the response object.
type respObject struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	CreatedAt         int64             `json:"created_at"`
	Status            string            `json:"status"`
	Error             *respError        `json:"error"`
	IncompleteDetails *respIncomplete   `json:"incomplete_details"`
	Instructions      *string           `json:"instructions"`
	MaxOutputTokens   *int              `json:"max_output_tokens"`
	Model             string            `json:"model"`
	Output            []respItem        `json:"output"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	Reasoning         respReasoning     `json:"reasoning"`
	Temperature       float64           `json:"temperature"`
	TopP              float64           `json:"top_p"`
	ToolChoice        string            `json:"tool_choice"`
	Tools             []struct{}        `json:"tools"`
	Usage             *respUsage        `json:"usage"`
	Metadata          map[string]string `json:"metadata"`
}

type respError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

// respItem is an output item: a message (role, content of output_text)
// or a reasoning item (summary, content of reasoning_text).
type respItem struct {
	ID      string      `json:"id"`
	Type    string      `json:"type"`
	Status  string      `json:"status"`
	Role    string      `json:"role,omitempty"`
	Summary *[]respPart `json:"summary,omitempty"`
	Content []respPart  `json:"content"`
}

type respPart struct {
	Type        string      `json:"type"`
	Text        string      `json:"text"`
	Annotations *[]struct{} `json:"annotations,omitempty"`
}

type respUsage struct {
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

// object is the response as it stands: with status, its items so far
// (completed, but the last one with itemStatus) and, once done, usage.
func (e *responsesEncoder) object(rp *reply, status, itemStatus string, done bool) respObject {
	o := respObject{
		ID: "resp_" + rp.idHex, Object: "response", CreatedAt: rp.created, Status: status,
		Instructions: e.req.Instructions, MaxOutputTokens: e.req.MaxOutputTokens, Model: rp.model,
		Output: []respItem{}, ParallelToolCalls: true, Temperature: 1, TopP: 1, ToolChoice: "auto",
		Tools: []struct{}{}, Metadata: e.req.Metadata,
	}
	if e.req.Reasoning != nil {
		o.Reasoning = *e.req.Reasoning
	}
	if e.req.Temperature != nil {
		o.Temperature = *e.req.Temperature
	}
	if e.req.TopP != nil {
		o.TopP = *e.req.TopP
	}
	if o.Metadata == nil {
		o.Metadata = map[string]string{}
	}
	if !done {
		return o
	}
	reasoning := min(rp.j.reasoning, rp.sent)
	if reasoning > 0 {
		o.Output = append(o.Output, e.itemOf(rp, true, "completed"))
	}
	if rp.sent > reasoning {
		o.Output = append(o.Output, e.itemOf(rp, false, "completed"))
	}
	if n := len(o.Output); n > 0 {
		o.Output[n-1].Status = itemStatus
	}
	u := &respUsage{InputTokens: rp.j.prompt, OutputTokens: rp.sent, TotalTokens: rp.j.prompt + rp.sent}
	u.InputTokensDetails.CachedTokens = rp.cached
	u.OutputTokensDetails.ReasoningTokens = reasoning
	o.Usage = u
	return o
}

// itemOf is the reasoning item or the message item as the tokens sent so
// far make it, with status.
func (e *responsesEncoder) itemOf(rp *reply, reasoning bool, status string) respItem {
	from, to := rp.j.reasoning, rp.sent
	if reasoning {
		from, to = 0, min(rp.j.reasoning, rp.sent)
	}
	it := respItem{ID: e.itemID(rp, reasoning), Status: status, Content: []respPart{}}
	if status != "in_progress" {
		it.Content = []respPart{e.part(rp, reasoning, rp.text(from, to))}
	}
	if reasoning {
		it.Type, it.Summary = "reasoning", &[]respPart{}
	} else {
		it.Type, it.Role = "message", "assistant"
	}
	return it
}

func (e *responsesEncoder) itemID(rp *reply, reasoning bool) string {
	if reasoning {
		return "rs_" + rp.idHex
	}
	return "msg_" + rp.idHex
}

func (e *responsesEncoder) part(rp *reply, reasoning bool, text string) respPart {
	if reasoning {
		return respPart{Type: "reasoning_text", Text: text}
	}
	return respPart{Type: "output_text", Text: text, Annotations: &[]struct{}{}}
}

// ev starts an event of type typ: its type and sequence_number.
func (e *responsesEncoder) ev(rp *reply, typ string) []byte {
	b := rp.event(typ)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	e.seq++
	return b
}

// evJSON sends an event of type typ whose one more member is key: v.
func (e *responsesEncoder) evJSON(rp *reply, typ string, extra []byte, key string, v any) bool {
	j, _ := json.Marshal(v)
	b := append(e.ev(rp, typ), extra...)
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return rp.send(append(b, j...))
}

// at is `,"item_id":…,"output_index":…,"content_index":0` of the open
// item.
func (e *responsesEncoder) at(rp *reply, b []byte) []byte {
	b = append(b, `,"item_id":"`...)
	b = append(b, e.itemID(rp, e.reasoning)...)
	b = append(b, `","output_index":`...)
	b = strconv.AppendInt(b, int64(e.item), 10)
	return append(b, `,"content_index":0`...)
}

func (e *responsesEncoder) begin(rp *reply) bool {
	return e.evJSON(rp, "response.created", nil, "response", e.object(rp, "in_progress", "", false)) &&
		e.evJSON(rp, "response.in_progress", nil, "response", e.object(rp, "in_progress", "", false))
}

func (e *responsesEncoder) tokens(rp *reply, from, to int) bool {
	reasoning := from < rp.j.reasoning
	if e.item < 0 || reasoning != e.reasoning {
		if !e.closeItem(rp, "completed") {
			return false
		}
		e.item++
		e.reasoning = reasoning
		idx := []byte(`,"output_index":` + strconv.Itoa(e.item))
		if !e.evJSON(rp, "response.output_item.added", idx, "item", e.itemOf(rp, reasoning, "in_progress")) ||
			!e.evJSON(rp, "response.content_part.added", e.at(rp, nil), "part", e.part(rp, reasoning, "")) {
			return false
		}
	}
	var b []byte
	if reasoning {
		b = e.at(rp, e.ev(rp, "response.reasoning_text.delta"))
		b = append(b, `,"delta":"`...)
		b = append(rp.appendWords(b, from, to), '"')
	} else {
		b = e.at(rp, e.ev(rp, "response.output_text.delta"))
		b = append(b, `,"delta":"`...)
		b = append(rp.appendWords(b, from, to), `","logprobs":[]`...)
	}
	return rp.send(b)
}

// closeItem ends the open item, if any: its text, its content part and
// the item itself, with status.
func (e *responsesEncoder) closeItem(rp *reply, status string) bool {
	if e.item < 0 {
		return true
	}
	it := e.itemOf(rp, e.reasoning, status)
	text := it.Content[0].Text
	typ, tail := "response.output_text.done", `,"logprobs":[]`
	if e.reasoning {
		typ, tail = "response.reasoning_text.done", ""
	}
	t, _ := json.Marshal(text)
	b := append(e.at(rp, e.ev(rp, typ)), `,"text":`...)
	b = append(append(b, t...), tail...)
	if !rp.send(b) {
		return false
	}
	idx := []byte(`,"output_index":` + strconv.Itoa(e.item))
	return e.evJSON(rp, "response.content_part.done", e.at(rp, nil), "part", it.Content[0]) &&
		e.evJSON(rp, "response.output_item.done", idx, "item", it)
}

func (e *responsesEncoder) finish(rp *reply) bool {
	status, typ := "completed", "response.completed"
	if rp.j.finish == "length" {
		status, typ = "incomplete", "response.incomplete"
	}
	if !e.closeItem(rp, status) {
		return false
	}
	o := e.object(rp, status, status, true)
	if status == "incomplete" {
		o.IncompleteDetails = &respIncomplete{Reason: "max_output_tokens"}
	}
	return e.evJSON(rp, typ, nil, "response", o)
}

func (e *responsesEncoder) fail(rp *reply) bool {
	const msg = "Simulated fault: the server is overloaded and stopped generating."
	b := append(e.ev(rp, "error"), `,"code":"server_error","message":"`+msg+`","param":null`...)
	if !rp.send(b) {
		return false
	}
	o := e.object(rp, "failed", "incomplete", true)
	o.Error = &respError{Code: "server_error", Message: msg}
	return e.evJSON(rp, "response.failed", nil, "response", o)
}

func (e *responsesEncoder) malformed() []byte {
	return []byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n")
}

func (e *responsesEncoder) complete(rp *reply) []byte {
	status := "completed"
	if rp.j.finish == "length" {
		status = "incomplete"
	}
	o := e.object(rp, status, status, true)
	if status == "incomplete" {
		o.IncompleteDetails = &respIncomplete{Reason: "max_output_tokens"}
	}
	b, _ := json.Marshal(o)
	return b
}
