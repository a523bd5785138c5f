package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// This file is OpenAI's chat completions, POST /v1/chat/completions, as
// vLLM serves it: the request, the chunk stream and the completion.

// chatRequest is the part of an OpenAI chat-completions request the
// simulator reads; other fields are ignored.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	IgnoreEOS           bool           `json:"ignore_eos"`
	MinTokens           int            `json:"min_tokens"`
	// Tools are rendered into the prompt, as a chat template does.
	Tools json.RawMessage `json:"tools"`
	// ChatTemplateKwargs.PreserveThinking keeps earlier assistant
	// messages' reasoning_content in the prompt (Qwen's and Kimi's
	// templates drop it otherwise).
	ChatTemplateKwargs struct {
		PreserveThinking bool `json:"preserve_thinking"`
	} `json:"chat_template_kwargs"`
}

// streamOptions is OpenAI's stream_options.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string         `json:"role"`
	Content messageContent `json:"content"`
	// ReasoningContent is an earlier answer's reasoning, in the prompt
	// only under chat_template_kwargs.preserve_thinking.
	ReasoningContent string `json:"reasoning_content"`
	// ToolCalls are an assistant message's calls, in the prompt as
	// written (names and arguments).
	ToolCalls json.RawMessage `json:"tool_calls"`
}

// messageContent is a message's text: a JSON string, null, or an array of
// parts whose "text" parts are joined with newlines (other parts, such as
// images, are ignored).
type messageContent string

func (c *messageContent) UnmarshalJSON(b []byte) error {
	var text string
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	list, err := stringOrList(b, &text, &parts)
	if err != nil {
		return fmt.Errorf("content %w", err)
	}
	if list {
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		text = strings.Join(texts, "\n")
	}
	*c = messageContent(text)
	return nil
}

// chatProto serves chat completions.
type chatProto struct{}

var chatShape = &oaiShape{
	idPrefix:  "chatcmpl-",
	object:    "chat.completion.chunk",
	role:      `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`,
	answer:    `{"index":0,"delta":{"content":"`,
	thought:   `{"index":0,"delta":{"reasoning_content":"`,
	closeText: `"},"finish_reason":null}`,
	finish:    `{"index":0,"delta":{},"finish_reason":"`,
	malformed: "data: {\"choices\":[{\"delta\":{\"content\":\n\n",
}

func (chatProto) decode(r *http.Request, body io.Reader) (*genRequest, encoder, *refusal) {
	var req chatRequest
	if f := decodeJSON(body, &req); f != nil {
		return nil, nil, f
	}
	g := &genRequest{
		model:     req.Model,
		turns:     make([]turn, len(req.Messages)),
		maxTokens: req.MaxTokens,
		minTokens: req.MinTokens,
		ignoreEOS: req.IgnoreEOS,
		stream:    req.Stream,
		tools:     declared(req.Tools),
	}
	if req.MaxCompletionTokens != nil {
		g.maxTokens = req.MaxCompletionTokens
	}
	for i, m := range req.Messages {
		var parts []string
		if i == 0 && len(req.Tools) > 0 && string(req.Tools) != "null" {
			parts = append(parts, string(req.Tools))
		}
		if m.ReasoningContent != "" && req.ChatTemplateKwargs.PreserveThinking {
			parts = append(parts, m.ReasoningContent)
		}
		parts = append(parts, string(m.Content))
		if len(m.ToolCalls) > 0 && string(m.ToolCalls) != "null" {
			parts = append(parts, string(m.ToolCalls))
			g.tools = true
		}
		g.turns[i] = turn{role: m.Role, parts: parts}
	}
	enc := &chatEncoder{oaiStream{shape: chatShape, usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}}
	return g, enc, nil
}

func (chatProto) authorized(r *http.Request, key string) bool { return bearerAuthorized(r, key) }

func (chatProto) refuse(w http.ResponseWriter, f *refusal) { writeAPIError(w, openAIRefusal(f, true)) }

func (chatProto) quota(h http.Header, q *quota) { xRateLimitHeaders(h, q) }

// chatEncoder is the chunk stream (oaiStream) and the completion.
type chatEncoder struct{ oaiStream }

type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usageJSON          `json:"usage"`
	Timings *timingsJSON       `json:"timings,omitempty"`
}

type completionChoice struct {
	Index        int               `json:"index"`
	Message      completionMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
}

type completionMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// complete is the non-streaming response; its content is what the
// streamed deltas would concatenate to.
func (e *chatEncoder) complete(rp *reply) []byte {
	tj := newTimingsJSON(&rp.t)
	b, _ := json.Marshal(completion{
		ID:      "chatcmpl-" + rp.idHex,
		Object:  "chat.completion",
		Created: rp.created,
		Model:   rp.model,
		Choices: []completionChoice{{
			Message: completionMessage{
				Role:             "assistant",
				Content:          rp.text(rp.j.reasoning, rp.j.out),
				ReasoningContent: rp.text(0, rp.j.reasoning),
			},
			FinishReason: rp.j.finish,
		}},
		Usage:   oaiUsage(rp),
		Timings: &tj,
	})
	return b
}
