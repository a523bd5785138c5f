package endpoint

import (
	"net/http"
	"strconv"
)

// chat is OpenAI's chat completions (POST {base}/chat/completions), as
// vLLM, SGLang, llama.cpp, Ollama and most clouds serve it.
type chat struct{}

func (chat) path() string { return "/chat/completions" }

func (chat) auth(h http.Header, key string) { bearer(h, key) }

func (chat) body(r bodyRequest) []byte {
	return requestBody(r.model, r.msgs, r.maxTokensField, r.maxTokens, r.extra, r.minTokens)
}

func (chat) event(data []byte, c *chunk) error { return parseChunk(data, c) }

// done: the stream ends with "data: [DONE]".
func (chat) done(data []byte) bool { return isDone(data) }

// isDone reports whether data is OpenAI's end-of-stream sentinel, [DONE].
func isDone(data []byte) bool {
	return len(data) >= 6 && data[0] == '[' && string(trimSpace(data)) == "[DONE]"
}

// requestBody renders a streaming chat-completion request:
//
//	{"model":M,"messages":[...],"stream":true,"stream_options":{"include_usage":true},
//	 "max_tokens":N <extra> ,"min_tokens":K}
//
// extra is the target's request extensions as `,"k":v` pairs (encodeExtra);
// minTokens 0 leaves min_tokens out. Writing the JSON directly costs one
// exact-size allocation and one pass over the prompt text, against
// encoding/json's reflection, its HTML escaping and a buffer that grows.
func requestBody(model string, msgs []Message, maxTokensField string, maxTokens int, extra []byte, minTokens int) []byte {
	n := len(model) + len(extra) + 160
	for _, m := range msgs {
		n += len(m.Role) + len(m.Content) + len(m.Raw) + 32
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"messages":`...)
	b = appendMessages(b, msgs)
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true},"`...)
	if maxTokensField == "" {
		maxTokensField = "max_tokens"
	}
	b = append(b, maxTokensField...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	b = append(b, extra...)
	if minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(minTokens), 10)
	}
	return append(b, '}')
}

// appendMessages appends msgs as a JSON array of {"role":R,"content":T}
// (null when NullContent) and each message's Raw members.
func appendMessages(b []byte, msgs []Message) []byte {
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendJSONString(b, m.Role)
		b = append(b, `,"content":`...)
		if m.NullContent {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, m.Content)
		}
		b = append(b, m.Raw...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// parseChunk reads one SSE data payload into c. It validates the whole JSON
// value (a malformed chunk is an error, not a partial read) and allocates
// nothing: the per-chunk client path runs millions of times per run.
func parseChunk(b []byte, c *chunk) error {
	*c = chunk{}
	p := parser{b: b}
	p.ws()
	if !p.object(p.topMember, c) {
		return errMalformed
	}
	p.ws()
	if p.i != len(p.b) {
		return errMalformed
	}
	if c.hasError && c.errMessage == nil {
		c.errMessage = c.message
	}
	return nil
}

func (p *parser) topMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "choices":
		return p.optArray(p.choice, c)
	case "usage":
		return p.optObject(p.usageMember, c, &c.hasUsage)
	case "model":
		s, ok := p.optString()
		c.model = s
		return ok
	case "timings": // llama.cpp's and the simulator's, in the last chunk
		return p.optObject(p.timingsMember, c, &c.timings.has)
	case "sixpin_sent_unix_ns":
		v, ok := p.integer()
		c.sentUnixNS = v
		return ok
	case "error":
		switch {
		case p.isNull():
			return true
		case p.i < len(p.b) && p.b[p.i] == '{':
			c.hasError = true
			return p.object(p.errorMember, c)
		case p.i < len(p.b) && p.b[p.i] == '"':
			c.hasError = true
			s, ok := p.str()
			c.errMessage = s
			return ok
		}
		c.hasError = true
		return p.skip()
	case "object":
		s, ok := p.optString()
		if string(s) == "error" {
			c.hasError = true
		}
		return ok
	case "message":
		s, ok := p.strOrSkip()
		c.message = s
		return ok
	}
	return p.skip()
}

func (p *parser) errorMember(key []byte, c *chunk) bool {
	if string(key) == "message" && p.i < len(p.b) && p.b[p.i] == '"' {
		s, ok := p.str()
		c.errMessage = s
		return ok
	}
	return p.skip()
}

func (p *parser) choice(c *chunk) bool {
	return p.object(p.choiceMember, c)
}

func (p *parser) choiceMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "delta", "message":
		return p.optObject(p.deltaMember, c, nil)
	case "text": // legacy completions' choices[].text
		s, ok := p.optString()
		c.contentBytes += len(s)
		c.content = s
		return ok
	case "finish_reason":
		s, ok := p.optString()
		if s != nil {
			c.finished = true
			c.finishReason = s
		}
		return ok
	}
	return p.skip()
}

func (p *parser) deltaMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "content":
		s, ok := p.optString()
		c.contentBytes += len(s)
		c.content = s
		return ok
	case "reasoning_content", "reasoning":
		s, ok := p.optString()
		c.reasoningBytes += len(s)
		return ok
	case "tool_calls":
		return p.optArray(p.toolCallElem, c)
	}
	return p.skip()
}

// toolCallElem reads one tool call of a delta: its function's name and
// arguments are output text.
func (p *parser) toolCallElem(c *chunk) bool {
	c.toolCall = true
	return p.object(p.toolCallMember, c)
}

func (p *parser) toolCallMember(key []byte, c *chunk) bool {
	if string(key) != "function" {
		return p.skip()
	}
	return p.optObject(p.functionMember, c, nil)
}

func (p *parser) functionMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "name", "arguments":
		s, ok := p.optString()
		c.toolBytes += len(s)
		return ok
	}
	return p.skip()
}

func (p *parser) usageMember(key []byte, c *chunk) bool {
	var dst *int
	switch string(key) {
	case "prompt_tokens":
		dst = &c.usage.promptTokens
	case "completion_tokens":
		dst = &c.usage.completionTokens
	case "prompt_tokens_details":
		return p.optObject(p.detailMember, c, nil)
	case "completion_tokens_details":
		return p.optObject(p.detailMember, c, nil)
	default:
		return p.skip()
	}
	v, ok := p.integer()
	*dst = int(v)
	return ok
}

func (p *parser) detailMember(key []byte, c *chunk) bool {
	var dst *int
	switch string(key) {
	case "cached_tokens":
		dst = &c.usage.cachedTokens
	case "reasoning_tokens":
		dst = &c.usage.reasoningTokens
	default:
		return p.skip()
	}
	v, ok := p.integer()
	*dst = int(v)
	return ok
}
