package sim

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file is Anthropic's Messages API, POST /v1/messages: the request,
// the event stream (message_start, content_block_start/delta/stop, ping,
// message_delta, message_stop, error), the message, Anthropic's errors
// (529 overloaded_error among them) and its rate-limit headers.
//
// Prompt caching follows cache_control: only the prompt up to its last
// block marked with cache_control is cached, in whole KV blocks of
// block_size tokens (system, then messages, in order). usage then says
// cache_read_input_tokens: the marked prefix found in the cache;
// cache_creation_input_tokens: the rest of the marked prefix, in whole
// blocks, which this request writes; input_tokens: everything else (the
// tail after the last breakpoint, and any partial block). The three add
// up to the prompt. Without prefix_caching nothing is cached and both
// cache figures are 0.

// messagesRequest is the part of a Messages request the simulator reads;
// other fields are ignored. ignore_eos and min_tokens are the simulator's
// extensions (Anthropic has no "don't stop early" control), with chat's
// meaning.
type messagesRequest struct {
	Model       string           `json:"model"`
	MaxTokens   *int             `json:"max_tokens"`
	Messages    []anthMessage    `json:"messages"`
	System      anthContent      `json:"system"`
	Stream      bool             `json:"stream"`
	Temperature *float64         `json:"temperature"`
	Metadata    json.RawMessage  `json:"metadata"`
	Thinking    *messagesThought `json:"thinking"`
	IgnoreEOS   bool             `json:"ignore_eos"`
	MinTokens   int              `json:"min_tokens"`
	// Tools make the request's content class tool-calls (see classify).
	Tools json.RawMessage `json:"tools"`
}

type messagesThought struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type anthMessage struct {
	Role    string      `json:"role"`
	Content anthContent `json:"content"`
}

// anthContent is a message's (or the system prompt's) content: a string,
// or an array of content blocks, one part each. A part's text is that of
// its block: text, thinking, tool_use (name and input), tool_result (its
// content's text); other blocks (images, documents) have none. mark is
// 1 + the index of the last block with cache_control.
type anthContent struct {
	parts []string
	mark  int
	tools bool // a tool_use or tool_result block
}

// anthBlock is one content block, as far as the simulator reads it.
type anthBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	Thinking     string          `json:"thinking"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	Content      *anthContent    `json:"content"`
	CacheControl json.RawMessage `json:"cache_control"`
}

func (c *anthContent) UnmarshalJSON(b []byte) error {
	var text string
	var blocks []anthBlock
	list, err := stringOrList(b, &text, &blocks)
	switch {
	case err != nil:
		return fmt.Errorf("content %w", err)
	case !list:
		*c = anthContent{}
		if text != "" {
			c.parts = []string{text}
		}
		return nil
	}
	*c = anthContent{parts: make([]string, len(blocks))}
	for i, bl := range blocks {
		switch bl.Type {
		case "text":
			c.parts[i] = bl.Text
		case "thinking":
			c.parts[i] = bl.Thinking
		case "tool_use":
			c.parts[i] = bl.Name + " " + string(bl.Input)
			c.tools = true
		case "tool_result":
			c.tools = true
			if bl.Content != nil {
				c.parts[i] = strings.Join(bl.Content.parts, "\n")
			}
		}
		if len(bl.CacheControl) > 0 && string(bl.CacheControl) != "null" {
			c.mark = i + 1
		}
	}
	return nil
}

// messagesProto serves the Messages API.
type messagesProto struct{}

func (messagesProto) decode(r *http.Request, body io.Reader) (*genRequest, encoder, *refusal) {
	var req messagesRequest
	if f := decodeJSON(body, &req); f != nil {
		return nil, nil, f
	}
	if req.MaxTokens == nil {
		return nil, nil, invalid("max_tokens: Field required")
	}
	if len(req.Messages) == 0 {
		return nil, nil, invalid("messages: at least one message is required")
	}
	g := &genRequest{
		model:       req.Model,
		maxTokens:   req.MaxTokens,
		minTokens:   req.MinTokens,
		ignoreEOS:   req.IgnoreEOS,
		noReasoning: true,
		stream:      req.Stream,
		markedOnly:  true,
		tools:       declared(req.Tools),
	}
	if t := req.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			if t.BudgetTokens < 1024 {
				return nil, nil, invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
			}
			if *req.MaxTokens <= t.BudgetTokens {
				return nil, nil, invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
			}
			g.noReasoning, g.reasoningBudget = false, t.BudgetTokens
		case "adaptive":
			g.noReasoning = false
		case "disabled":
		default:
			return nil, nil, invalid("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
		}
	}
	if len(req.System.parts) > 0 {
		g.turns = append(g.turns, turn{role: "system", parts: req.System.parts, mark: req.System.mark})
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, nil, invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		g.turns = append(g.turns, turn{role: m.Role, parts: m.Content.parts, mark: m.Content.mark})
		g.tools = g.tools || m.Content.tools
	}
	return g, &messagesEncoder{block: -1}, nil
}

// authorized takes x-api-key, or the bearer form Anthropic takes for
// OAuth tokens.
func (messagesProto) authorized(r *http.Request, key string) bool {
	if got := r.Header.Get("X-Api-Key"); got != "" {
		return subtle.ConstantTimeCompare([]byte(got), []byte(key)) == 1
	}
	return bearerAuthorized(r, key)
}

// anthropicError is Anthropic's error body.
func anthropicError(status int, typ, msg string) *apiError {
	type inner struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error inner  `json:"error"`
	}{"error", inner{typ, msg}})
	return &apiError{status, b}
}

// statusOverloaded is Anthropic's status for an overloaded API.
const statusOverloaded = 529

func (messagesProto) refuse(w http.ResponseWriter, f *refusal) {
	var e *apiError
	switch f.kind {
	case refContext:
		msg := fmt.Sprintf("prompt is too long: %d tokens > %d maximum", f.prompt, f.limit)
		if f.prompt < f.limit {
			msg = fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again",
				f.prompt, f.maxTokens, f.limit)
		}
		e = anthropicError(http.StatusBadRequest, "invalid_request_error", msg)
	case refAuth:
		e = anthropicError(http.StatusUnauthorized, "authentication_error", "invalid x-api-key")
	case refRateLimit:
		msg := f.msg
		if f.bucket != nil {
			msg = fmt.Sprintf("This request would exceed the rate limit for your organization of %d %s.",
				f.quota, strings.ToLower(f.bucket.what))
		}
		e = anthropicError(http.StatusTooManyRequests, "rate_limit_error", msg)
	case refServer:
		e = anthropicError(http.StatusInternalServerError, "api_error", f.msg)
	case refOverloaded:
		e = anthropicError(statusOverloaded, "overloaded_error", "Overloaded")
	case refClosing:
		e = anthropicError(http.StatusServiceUnavailable, "api_error", f.msg)
	default:
		e = anthropicError(http.StatusBadRequest, "invalid_request_error", f.msg)
	}
	writeAPIError(w, e)
}

// quota sets Anthropic's rate-limit headers: requests from the
// requests-per-minute bucket, input-tokens from the uncached one (cache
// reads do not count against Anthropic's input limit), output-tokens
// from the output one, and tokens from the tokens-per-minute bucket or,
// without it, the more exhausted of input and output. Resets are RFC
// 3339 times, rounded up to the second.
func (messagesProto) quota(h http.Header, q *quota) {
	var requests, input, output, tokens *bucketState
	for i := range q.buckets {
		b := &q.buckets[i]
		switch b.kind.field {
		case "requests_per_minute":
			requests = b
		case "uncached_tokens_per_minute":
			input = b
		case "output_tokens_per_minute":
			output = b
		case "tokens_per_minute":
			tokens = b
		}
	}
	if tokens == nil {
		tokens = input
		if output != nil && (tokens == nil || output.remaining < tokens.remaining) {
			tokens = output
		}
	}
	for _, x := range []struct {
		name string
		b    *bucketState
	}{{"requests", requests}, {"tokens", tokens}, {"input-tokens", input}, {"output-tokens", output}} {
		if x.b == nil {
			continue
		}
		reset := q.now.Add(x.b.reset)
		if frac := reset.Sub(reset.Truncate(time.Second)); frac > 0 {
			reset = reset.Add(time.Second - frac)
		}
		h.Set("anthropic-ratelimit-"+x.name+"-limit", strconv.Itoa(x.b.limit))
		h.Set("anthropic-ratelimit-"+x.name+"-remaining", strconv.Itoa(x.b.remaining))
		h.Set("anthropic-ratelimit-"+x.name+"-reset", reset.UTC().Format(time.RFC3339))
	}
}

// messagesEncoder writes the event stream or the message. Thinking (the
// reasoning tokens) is content block 0 when there is any, the answer the
// next block; each opens on its first token.
type messagesEncoder struct {
	block    int  // index of the open content block; -1 before the first
	thinking bool // the open block is thinking
}

// anthUsage is the Messages usage object.
type anthUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// anthMessageOut is the message object.
type anthMessageOut struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []anthBlockOut `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"`
	Usage        anthUsage      `json:"usage"`
}

type anthBlockOut struct {
	Type      string  `json:"type"`
	Text      *string `json:"text,omitempty"`
	Thinking  *string `json:"thinking,omitempty"`
	Signature *string `json:"signature,omitempty"`
}

// usage maps the response's tokens (see the file comment).
func (e *messagesEncoder) usage(rp *reply, out int) anthUsage {
	read, write := rp.cached, 0
	if rp.s.caching {
		write = max(0, len(rp.j.hashes)*rp.s.cfg.BlockSize-read)
	}
	return anthUsage{InputTokens: rp.j.prompt - read - write, CacheCreationInputTokens: write, CacheReadInputTokens: read, OutputTokens: out}
}

// stopReason maps the finish: end_turn or max_tokens (the simulator makes
// no tool calls, so never tool_use).
func stopReason(rp *reply) string {
	if rp.j.finish == "length" {
		return "max_tokens"
	}
	return "end_turn"
}

// signature is the thinking block's opaque signature.
func signature(rp *reply) string {
	return "sim" + string(appendHex(nil, mix(rp.j.hash^saltWords^1)))
}

func (e *messagesEncoder) begin(rp *reply) bool {
	m, _ := json.Marshal(anthMessageOut{
		ID: "msg_" + rp.idHex, Type: "message", Role: "assistant", Model: rp.model,
		Content: []anthBlockOut{}, Usage: e.usage(rp, min(1, rp.j.out)),
	})
	b := append(rp.event("message_start"), `{"type":"message_start","message":`...)
	if !rp.send(append(b, m...)) {
		return false
	}
	if rp.j.out == 0 {
		return rp.send(append(rp.event("ping"), `{"type":"ping"`...))
	}
	return true
}

func (e *messagesEncoder) tokens(rp *reply, from, to int) bool {
	thinking := from < rp.j.reasoning
	if e.block < 0 || thinking != e.thinking {
		if !e.stop(rp) {
			return false
		}
		e.block++
		e.thinking = thinking
		b := append(rp.event("content_block_start"), `{"type":"content_block_start","index":`...)
		b = strconv.AppendInt(b, int64(e.block), 10)
		if thinking {
			b = append(b, `,"content_block":{"type":"thinking","thinking":""}`...)
		} else {
			b = append(b, `,"content_block":{"type":"text","text":""}`...)
		}
		if !rp.send(b) {
			return false
		}
		if e.block == 0 && !rp.send(append(rp.event("ping"), `{"type":"ping"`...)) {
			return false
		}
	}
	b := append(rp.event("content_block_delta"), `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(e.block), 10)
	if thinking {
		b = append(b, `,"delta":{"type":"thinking_delta","thinking":"`...)
	} else {
		b = append(b, `,"delta":{"type":"text_delta","text":"`...)
	}
	b = rp.appendWords(b, from, to)
	return rp.send(append(b, `"}`...))
}

// stop closes the open content block, if any: a thinking block gets its
// signature first.
func (e *messagesEncoder) stop(rp *reply) bool {
	if e.block < 0 {
		return true
	}
	if e.thinking {
		b := append(rp.event("content_block_delta"), `{"type":"content_block_delta","index":`...)
		b = strconv.AppendInt(b, int64(e.block), 10)
		b = append(b, `,"delta":{"type":"signature_delta","signature":"`...)
		b = append(b, signature(rp)...)
		if !rp.send(append(b, `"}`...)) {
			return false
		}
	}
	b := append(rp.event("content_block_stop"), `{"type":"content_block_stop","index":`...)
	return rp.send(strconv.AppendInt(b, int64(e.block), 10))
}

func (e *messagesEncoder) finish(rp *reply) bool {
	if !e.stop(rp) {
		return false
	}
	b := append(rp.event("message_delta"), `{"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, stopReason(rp)...)
	b = append(b, `","stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(rp.sent), 10)
	if !rp.send(append(b, '}')) {
		return false
	}
	return rp.send(append(rp.event("message_stop"), `{"type":"message_stop"`...))
}

func (e *messagesEncoder) fail(rp *reply) bool {
	return rp.send(append(rp.event("error"), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}`...))
}

func (e *messagesEncoder) malformed() []byte {
	return []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\n\n")
}

func (e *messagesEncoder) complete(rp *reply) []byte {
	var content []anthBlockOut
	if rp.j.reasoning > 0 {
		thought, sig := rp.text(0, rp.j.reasoning), signature(rp)
		content = append(content, anthBlockOut{Type: "thinking", Thinking: &thought, Signature: &sig})
	}
	if rp.j.out > rp.j.reasoning {
		text := rp.text(rp.j.reasoning, rp.j.out)
		content = append(content, anthBlockOut{Type: "text", Text: &text})
	}
	if content == nil {
		content = []anthBlockOut{}
	}
	stop := stopReason(rp)
	b, _ := json.Marshal(anthMessageOut{
		ID: "msg_" + rp.idHex, Type: "message", Role: "assistant", Model: rp.model,
		Content: content, StopReason: &stop, Usage: e.usage(rp, rp.j.out),
	})
	return b
}
