package endpoint

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/sixpin/sixpin/record"
)

// protocol is one wire API: where a request goes, its body, and how its
// stream's events read. A protocol is one file: chat.go (OpenAI chat
// completions), messages.go (Anthropic Messages), responses.go (OpenAI
// Responses), completions.go (legacy completions); the Client, the
// transport and the stream loop (stream.go) are shared by all. Every
// protocol's events carry their type in the data ("type": …), so the SSE
// event name is not needed. Its methods are called from any goroutine and
// hold no state.
type protocol interface {
	// path is the request's path under the API base ("/chat/completions").
	path() string
	// auth sets the API key's header on h (Authorization: Bearer, or
	// Anthropic's x-api-key) and any header the protocol requires; the
	// profile's headers are set after it and win.
	auth(h http.Header, key string)
	// body renders a streaming request.
	body(r bodyRequest) []byte
	// event reads one event's data into c, validating the whole of it and
	// allocating nothing (it runs once per chunk); a non-streamed JSON
	// answer is read by it too.
	event(data []byte, c *chunk) error
	// done reports whether data is the end-of-stream sentinel; a protocol
	// without one ends at the end of the body.
	done(data []byte) bool
}

// newProtocol is p's implementation.
func newProtocol(p Protocol) protocol {
	switch p {
	case ProtocolMessages:
		return messages{}
	case ProtocolResponses:
		return responses{}
	case ProtocolCompletions:
		return completions{}
	}
	return chat{}
}

// bearer sets the key as a bearer token, as OpenAI's APIs take it.
func bearer(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// bodyRequest is what a request body says.
type bodyRequest struct {
	model string
	msgs  []Message
	// maxTokensField names the output cap ("max_tokens" when empty).
	maxTokensField string
	maxTokens      int
	// extra is the target's request extensions as `,"k":v` pairs
	// (encodeExtra); minTokens > 0 asks for at least that many tokens.
	extra     []byte
	minTokens int
}

// appendTail ends a request body: the extensions, min_tokens when asked
// for, the closing brace.
func appendTail(b []byte, r bodyRequest) []byte {
	b = append(b, r.extra...)
	if r.minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(r.minTokens), 10)
	}
	return append(b, '}')
}

// Chat roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
)

// Message is one chat message: sixpin's own are text content only; a
// replayed conversation (MLPerf's agentic dataset) carries more.
type Message struct {
	Role, Content string
	// NullContent sends "content": null (an assistant message that only
	// calls tools) instead of Content.
	NullContent bool
	// Raw are more members of the message object, as `,"k":v` pairs of
	// valid JSON (tool_calls, tool_call_id, reasoning_content, name).
	// Chat completions sends them; the runner refuses them on any other
	// protocol.
	Raw []byte
	// Cache, when > 0, is how many bytes of Content's start a prompt
	// cache should keep (a shared prefix; len(Content): the whole
	// message): a protocol with caching markers (Anthropic's
	// cache_control) puts a breakpoint after them. Others ignore it.
	Cache int
}

// UserMessage is a conversation of one user message.
func UserMessage(text string) []Message { return []Message{{Role: RoleUser, Content: text}} }

// chunk is what sixpin reads from one streamed chat-completion chunk. Byte
// lengths are of the raw JSON string bodies (escapes counted as written);
// they only apportion token counts across chunks, so that is close enough.
type chunk struct {
	contentBytes int
	// content is the event's answer text (a raw JSON string body,
	// aliasing the input line), for a request that keeps its text.
	content        []byte
	reasoningBytes int
	toolBytes      int  // tool calls' names and arguments
	toolCall       bool // a delta carried tool_calls
	finished       bool // some choice carried a non-null finish_reason
	finishReason   []byte
	hasUsage       bool
	usage          usage
	model          []byte  // aliases the input line
	sentUnixNS     int64   // server send stamp (sixpin's simulator); 0 if absent
	timings        timings // the server's timing of the response (last chunk)
	// hasError marks an in-band error event: an "error" member (OpenAI),
	// or "object": "error" (vLLM); errMessage is its message's raw JSON
	// string body (error.message, or the top-level message), if any.
	// errType is error.type where the protocol gives one (Anthropic's
	// "overloaded_error").
	hasError   bool
	errMessage []byte
	message    []byte // a top-level "message" string
	errType    []byte
	// typ is the event's type, where the protocol reads it after the
	// event's other members (Responses).
	typ []byte
}

// usage is the OpenAI usage object, with the detail fields sixpin needs.
// promptTokens is the whole prompt, of which cachedTokens were read from a
// prompt cache and cacheWriteTokens written to one (Anthropic's
// cache_creation_input_tokens; 0 elsewhere).
type usage struct {
	promptTokens     int
	completionTokens int
	cachedTokens     int
	reasoningTokens  int
	cacheWriteTokens int
	// parts, when not 0, says the usage arrives in parts (Anthropic's
	// message_start carries the input, message_delta the output): only
	// the fields it names are this chunk's, merged into what came before.
	parts usagePart
}

// usagePart names the fields of a usage that arrives in parts.
type usagePart uint8

const (
	partInput  usagePart = 1 << iota // promptTokens, cachedTokens, cacheWriteTokens
	partOutput                       // completionTokens
)

// results converts u to the record's form.
func (u usage) results() record.Usage {
	return record.Usage{
		PromptTokens:     u.promptTokens,
		CompletionTokens: u.completionTokens,
		ReasoningTokens:  u.reasoningTokens,
		CachedTokens:     u.cachedTokens,
		CacheWriteTokens: u.cacheWriteTokens,
	}
}

// into is the record's usage after this chunk's: the whole of it, or, for
// a usage in parts, prev with the parts this chunk carries replaced.
func (u usage) into(prev record.Usage) record.Usage {
	if u.parts == 0 {
		return u.results()
	}
	if u.parts&partInput != 0 {
		prev.PromptTokens, prev.CachedTokens, prev.CacheWriteTokens = u.promptTokens, u.cachedTokens, u.cacheWriteTokens
	}
	if u.parts&partOutput != 0 {
		prev.CompletionTokens = u.completionTokens
	}
	return prev
}

// errorText is an error event's message, decoded, or else the whole
// event (raw is the event's data). It allocates: error path only.
func (c *chunk) errorText(raw []byte) string {
	msg := c.errMessage
	if msg == nil {
		msg = c.message
	}
	var s string
	if msg != nil && json.Unmarshal([]byte(`"`+string(msg)+`"`), &s) == nil && s != "" {
		if len(c.errType) > 0 {
			return string(c.errType) + ": " + s
		}
		return s
	}
	return string(raw)
}

var errMalformed = errors.New("malformed JSON")
