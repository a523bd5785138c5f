package endpoint

import (
	"net/http"
	"strconv"
)

// responses is OpenAI's Responses API (POST {base}/responses), as OpenAI,
// vLLM and others serve it. Its events carry their type in the data:
// response.created (the response, in progress), response.output_item.added
// (a function call's name), response.output_text.delta and
// response.refusal.delta (content), response.reasoning_text.delta and
// response.reasoning_summary_text.delta (reasoning),
// response.function_call_arguments.delta (tool output), the *.done events
// (which repeat what the deltas said, and are not counted again), and
// response.completed or response.incomplete (the whole response, with
// usage) or error and response.failed. The body ends after the last; a
// [DONE] after it is taken too.
type responses struct{}

func (responses) path() string { return "/responses" }

func (responses) auth(h http.Header, key string) { bearer(h, key) }

func (responses) done(data []byte) bool { return isDone(data) }

// body renders a streaming Responses request:
//
//	{"model":M,"input":[{"role":R,"content":T},…],"stream":true,"store":false,
//	 "max_output_tokens":N <extra> ,"min_tokens":K}
//
// store false: a benchmark's responses are not kept on the server.
func (responses) body(r bodyRequest) []byte {
	n := len(r.model) + len(r.extra) + 160
	for _, m := range r.msgs {
		n += len(m.Role) + len(m.Content) + 32
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, r.model)
	b = append(b, `,"input":`...)
	b = appendMessages(b, r.msgs)
	b = append(b, `,"stream":true,"store":false,"max_output_tokens":`...)
	b = strconv.AppendInt(b, int64(r.maxTokens), 10)
	return appendTail(b, r)
}

// Responses event types whose members say more than their names.
const (
	respItemAdded = "response.output_item.added"
	respError     = "error"
	respFailed    = "response.failed"
)

func (responses) event(b []byte, c *chunk) error {
	*c = chunk{}
	p := parser{b: b}
	if err := p.whole(p.respMember, c); err != nil {
		return err
	}
	if len(c.typ) == 0 {
		return nil // a whole response object (not streamed)
	}
	// A "delta" was read as content, an "item" as a tool call (and its
	// content, which a stream's deltas carry instead): what counts is the
	// event's type.
	d, text := c.contentBytes, c.content
	c.contentBytes, c.reasoningBytes, c.content = 0, 0, nil
	if string(c.typ) != respItemAdded {
		c.toolCall, c.toolBytes = false, 0
	}
	switch string(c.typ) {
	case "response.output_text.delta", "response.refusal.delta":
		c.contentBytes, c.content = d, text
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		c.reasoningBytes = d
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		c.toolCall, c.toolBytes = true, d
	case respError, respFailed:
		c.hasError = true
	}
	return nil
}

// respMember reads a member of an event or of a whole response object.
func (p *parser) respMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "type":
		s, ok := p.str()
		c.typ = s
		return ok
	case "delta":
		s, ok := p.strOrSkip()
		c.contentBytes, c.content = len(s), s
		return ok
	case "item":
		return p.object(p.respItemMember, c)
	case "response":
		return p.object(p.respObjectMember, c)
	case "output":
		return p.array(p.respItem, c)
	case "code":
		s, ok := p.optString()
		c.errType = s
		return ok
	case "message":
		s, ok := p.strOrSkip()
		c.message = s
		return ok
	case "sixpin_sent_unix_ns":
		v, ok := p.integer()
		c.sentUnixNS = v
		return ok
	}
	return p.respObjectMember(key, c)
}

// respObjectMember reads a member of the response object. Its output
// is not read: in a stream, the deltas said it already.
func (p *parser) respObjectMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "model":
		s, ok := p.optString()
		c.model = s
		return ok
	case "status":
		s, ok := p.optString()
		switch string(s) {
		case "completed", "incomplete":
			c.finished = true
			if c.finishReason == nil {
				c.finishReason = s
			}
		case "failed":
			c.hasError = true
		}
		return ok
	case "incomplete_details":
		return p.optObject(p.respIncompleteMember, c, nil)
	case "usage":
		return p.optObject(p.respUsageMember, c, &c.hasUsage)
	case "error":
		return p.errorValue(p.respErrorMember, c)
	}
	return p.skip()
}

// respIncompleteMember: the reason a response is incomplete is its
// finish reason ("max_output_tokens").
func (p *parser) respIncompleteMember(key []byte, c *chunk) bool {
	if string(key) == "reason" {
		s, ok := p.optString()
		if s != nil {
			c.finished, c.finishReason = true, s
		}
		return ok
	}
	return p.skip()
}

// respErrorMember reads an error object: its code and message.
func (p *parser) respErrorMember(key []byte, c *chunk) bool {
	if string(key) == "code" {
		s, ok := p.optString()
		c.errType = s
		return ok
	}
	return p.errorMember(key, c)
}

// respUsageMember reads the Responses usage object: input_tokens (the
// whole prompt, of which input_tokens_details.cached_tokens were cached)
// and output_tokens (of which output_tokens_details.reasoning_tokens
// were reasoning).
func (p *parser) respUsageMember(key []byte, c *chunk) bool {
	var dst *int
	switch string(key) {
	case "input_tokens":
		dst = &c.usage.promptTokens
	case "output_tokens":
		dst = &c.usage.completionTokens
	case "input_tokens_details", "output_tokens_details":
		return p.optObject(p.detailMember, c, nil)
	default:
		return p.skip()
	}
	v, ok := p.integer()
	*dst = int(v)
	return ok
}

func (p *parser) respItem(c *chunk) bool { return p.object(p.respItemMember, c) }

// respItemMember reads an output item: a function call's name and
// arguments are tool output, a message's or a reasoning item's content
// (and summary) content and reasoning.
func (p *parser) respItemMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "name", "arguments", "input":
		c.toolCall = true
		s, ok := p.optString()
		c.toolBytes += len(s)
		return ok
	case "content", "summary":
		return p.optArray(p.respPart, c)
	}
	return p.skip()
}

// respPart reads a content part: reasoning_text and summary_text are
// reasoning, output_text and refusal content. Its type may follow its
// text, so both are read before either counts.
func (p *parser) respPart(c *chunk) bool {
	var typ []byte
	n := 0
	ok := p.object(func(key []byte, c *chunk) bool {
		switch string(key) {
		case "type":
			s, ok := p.str()
			typ = s
			return ok
		case "text", "refusal":
			s, ok := p.optString()
			n += len(s)
			return ok
		}
		return p.skip()
	}, c)
	switch string(typ) {
	case "reasoning_text", "summary_text":
		c.reasoningBytes += n
	default:
		c.contentBytes += n
	}
	return ok
}
