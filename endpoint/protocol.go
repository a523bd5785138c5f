package endpoint

import (
	"encoding/json"
	"errors"

	"github.com/sixpin/sixpin/results"
)

// protocol is one wire API: where a request goes, its body, and how its
// stream's events read. A protocol is one file (chat.go is OpenAI chat
// completions); the Client, the transport and the stream loop (stream.go)
// are shared by all. Its methods are called from any goroutine and hold
// no state.
type protocol interface {
	// path is the request's path under the API base ("/chat/completions").
	path() string
	// body renders a streaming request.
	body(r bodyRequest) []byte
	// event reads one event's data into c, validating the whole of it and
	// allocating nothing (it runs once per chunk); a non-streamed JSON
	// answer is read by it too.
	event(data []byte, c *chunk) error
	// done reports whether data is the end-of-stream sentinel.
	done(data []byte) bool
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

// Chat roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one chat message: sixpin sends text content only.
type Message struct {
	Role, Content string
}

// UserMessage is a conversation of one user message.
func UserMessage(text string) []Message { return []Message{{RoleUser, text}} }

// chunk is what sixpin reads from one streamed chat-completion chunk. Byte
// lengths are of the raw JSON string bodies (escapes counted as written);
// they only apportion token counts across chunks, so that is close enough.
type chunk struct {
	contentBytes   int
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
	hasError   bool
	errMessage []byte
	message    []byte // a top-level "message" string
}

// usage is the OpenAI usage object, with the detail fields sixpin needs.
type usage struct {
	promptTokens     int
	completionTokens int
	cachedTokens     int
	reasoningTokens  int
}

// results converts u to the record's form.
func (u usage) results() results.Usage {
	return results.Usage{
		PromptTokens:     u.promptTokens,
		CompletionTokens: u.completionTokens,
		ReasoningTokens:  u.reasoningTokens,
		CachedTokens:     u.cachedTokens,
	}
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
		return s
	}
	return string(raw)
}

var errMalformed = errors.New("malformed JSON")
