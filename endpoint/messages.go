package endpoint

import (
	"net/http"
	"strconv"
)

// AnthropicVersion is the anthropic-version header sent with every
// Messages request unless the profile's headers set one.
const AnthropicVersion = "2023-06-01"

// maxBreakpoints is how many cache_control markers one Messages request
// may carry.
const maxBreakpoints = 4

// messages is Anthropic's Messages API (POST {base}/messages), as
// Anthropic, llama.cpp's server, vLLM and several clouds serve it. The
// stream's events: message_start (the message, with the input half of
// usage), content_block_start / content_block_delta / content_block_stop
// (text, thinking — counted as reasoning — and tool_use blocks),
// message_delta (stop_reason and the output half of usage), message_stop,
// ping, error. There is no sentinel: the body ends after message_stop.
type messages struct{}

func (messages) path() string { return "/messages" }

// auth sends the key as x-api-key, and the API version.
func (messages) auth(h http.Header, key string) {
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	h.Set("Anthropic-Version", AnthropicVersion)
}

func (messages) done([]byte) bool { return false }

// body renders a streaming Messages request:
//
//	{"model":M,"max_tokens":N,"stream":true,"system":[…],"messages":[…] <extra> ,"min_tokens":K}
//
// System messages go to "system"; a message's content is a string, or,
// where a prompt-caching breakpoint falls in it, text blocks whose last
// before the breakpoint carries "cache_control":{"type":"ephemeral"}.
// Breakpoints (at most four, the last ones kept) go where the caller's
// Message.Cache says, and at the end of the last message of a
// conversation (more than one message: the history the next turn
// repeats). A single message without Cache is not marked: a cache write
// costs more than input, and nothing would read it.
func (messages) body(r bodyRequest) []byte {
	n := len(r.model) + len(r.extra) + 160
	for _, m := range r.msgs {
		n += len(m.Role) + len(m.Content) + 96
	}
	marks := breakpoints(r.msgs)
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, r.model)
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(r.maxTokens), 10)
	b = append(b, `,"stream":true`...)
	system := false
	for i, m := range r.msgs {
		if m.Role != RoleSystem {
			continue
		}
		if !system {
			b = append(b, `,"system":[`...)
		} else {
			b = append(b, ',')
		}
		system = true
		b = appendBlocks(b, m.Content, marks[i])
	}
	if system {
		b = append(b, ']')
	}
	b = append(b, `,"messages":[`...)
	first := true
	for i, m := range r.msgs {
		if m.Role == RoleSystem {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"role":`...)
		b = appendJSONString(b, m.Role)
		b = append(b, `,"content":`...)
		if marks[i] == 0 {
			b = appendJSONString(b, m.Content)
		} else {
			b = append(b, '[')
			b = appendBlocks(b, m.Content, marks[i])
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	return appendTail(b, r)
}

// breakpoints is, per message, the byte offset in its content after which
// a cache breakpoint goes (0: none): Message.Cache, and the whole last
// message of a conversation; at most maxBreakpoints, the last ones kept.
func breakpoints(msgs []Message) []int {
	marks := make([]int, len(msgs))
	for i, m := range msgs {
		marks[i] = min(max(m.Cache, 0), len(m.Content))
	}
	if n := len(msgs); n > 1 && len(msgs[n-1].Content) > 0 {
		marks[n-1] = len(msgs[n-1].Content)
	}
	kept := 0
	for i := len(marks) - 1; i >= 0; i-- {
		if marks[i] == 0 {
			continue
		}
		if kept++; kept > maxBreakpoints {
			marks[i] = 0
		}
	}
	return marks
}

// appendBlocks appends text as text blocks (no brackets): one, or two
// when a breakpoint falls inside it; the block ending at the breakpoint
// carries cache_control. mark 0 is no breakpoint.
func appendBlocks(b []byte, text string, mark int) []byte {
	head, tail := text, ""
	if mark > 0 && mark < len(text) {
		head, tail = text[:mark], text[mark:]
	}
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONString(b, head)
	if mark > 0 {
		b = append(b, `,"cache_control":{"type":"ephemeral"}`...)
	}
	b = append(b, '}')
	if tail != "" {
		b = append(b, `,{"type":"text","text":`...)
		b = appendJSONString(b, tail)
		b = append(b, '}')
	}
	return b
}

func (messages) event(b []byte, c *chunk) error {
	*c = chunk{}
	p := parser{b: b}
	return p.whole(p.anthMember, c)
}

// anthMember reads a member of an event, of the message object in
// message_start, or of a whole (non-streamed) message: the members of
// all of them are read by the same names.
func (p *parser) anthMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "message":
		return p.optObject(p.anthMember, c, nil)
	case "content_block":
		return p.object(p.anthBlockMember, c)
	case "content":
		return p.optArray(p.anthBlock, c)
	case "delta":
		return p.object(p.anthDeltaMember, c)
	case "stop_reason":
		return p.stopReason(c)
	case "usage":
		if p.isNull() {
			return true
		}
		return p.anthUsage(c)
	case "model":
		s, ok := p.optString()
		c.model = s
		return ok
	case "error":
		return p.errorValue(p.typedErrorMember, c)
	case "sixpin_sent_unix_ns":
		v, ok := p.integer()
		c.sentUnixNS = v
		return ok
	}
	return p.skip()
}

// stopReason reads a stop reason (a string or null): a string finishes
// the answer.
func (p *parser) stopReason(c *chunk) bool {
	s, ok := p.optString()
	if s != nil {
		c.finished, c.finishReason = true, s
	}
	return ok
}

func (p *parser) anthBlock(c *chunk) bool { return p.object(p.anthBlockMember, c) }

// anthBlockMember reads a member of a content block: text is content,
// thinking (and redacted thinking's data) reasoning, a tool use's name
// and input tool output. Only tool-use blocks have a name or an input.
func (p *parser) anthBlockMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "text":
		s, ok := p.optString()
		c.contentBytes += len(s)
		c.content = s
		return ok
	case "thinking", "data":
		s, ok := p.optString()
		c.reasoningBytes += len(s)
		return ok
	case "name":
		c.toolCall = true
		s, ok := p.optString()
		c.toolBytes += len(s)
		return ok
	case "input":
		c.toolCall = true
		start := p.i
		ok := p.skip()
		if n := p.i - start; ok && n > 2 { // "{}" is an input still to stream
			c.toolBytes += n
		}
		return ok
	}
	return p.skip()
}

// anthDeltaMember reads a content_block_delta's delta (text_delta,
// thinking_delta, input_json_delta; a signature is no output) or a
// message_delta's (stop_reason).
func (p *parser) anthDeltaMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "text":
		s, ok := p.optString()
		c.contentBytes += len(s)
		c.content = s
		return ok
	case "thinking":
		s, ok := p.optString()
		c.reasoningBytes += len(s)
		return ok
	case "partial_json": // the first is often "": no output yet
		s, ok := p.optString()
		c.toolBytes += len(s)
		c.toolCall = c.toolCall || len(s) > 0
		return ok
	case "stop_reason":
		return p.stopReason(c)
	}
	return p.skip()
}

// anthUsage reads a Messages usage object. Its input comes in three
// parts that add up to the prompt: input_tokens (not cached),
// cache_read_input_tokens (read from the cache) and
// cache_creation_input_tokens (written to it). message_start carries
// them, message_delta the output_tokens so far (and, on newer API
// versions, the input again): the fields present are this chunk's part.
func (p *parser) anthUsage(c *chunk) bool {
	c.usage = usage{}
	if !p.object(p.anthUsageMember, c) {
		return false
	}
	u := &c.usage
	u.promptTokens += u.cachedTokens + u.cacheWriteTokens
	c.hasUsage = u.parts != 0
	return true
}

func (p *parser) anthUsageMember(key []byte, c *chunk) bool {
	var dst *int
	part := partInput
	switch string(key) {
	case "input_tokens":
		dst = &c.usage.promptTokens
	case "cache_read_input_tokens":
		dst = &c.usage.cachedTokens
	case "cache_creation_input_tokens":
		dst = &c.usage.cacheWriteTokens
	case "output_tokens":
		dst, part = &c.usage.completionTokens, partOutput
	default:
		return p.skip()
	}
	if p.isNull() {
		return true
	}
	v, ok := p.integer()
	*dst = int(v)
	c.usage.parts |= part
	return ok
}

// typedErrorMember reads an error object with a type and a message
// (Anthropic's {"type":"overloaded_error","message":"Overloaded"}).
func (p *parser) typedErrorMember(key []byte, c *chunk) bool {
	if string(key) == "type" && p.i < len(p.b) && p.b[p.i] == '"' {
		s, ok := p.str()
		c.errType = s
		return ok
	}
	return p.errorMember(key, c)
}
