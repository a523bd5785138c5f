package sim

import (
	"encoding/json"
	"io"
	"net/http"
)

// This file is OpenAI's legacy completions, POST /v1/completions, as vLLM
// serves it: a plain prompt (a BOS token, then its tokens; no chat
// template), text chunks, usage and llama.cpp-style timings as in chat.

// completionsRequest is the part of a legacy completions request the
// simulator reads; other fields are ignored.
type completionsRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	IgnoreEOS     bool            `json:"ignore_eos"`
	MinTokens     int             `json:"min_tokens"`
}

// completionsProto serves legacy completions.
type completionsProto struct{}

var completionsShape = &oaiShape{
	idPrefix:  "cmpl-",
	object:    "text_completion",
	answer:    `{"text":"`,
	thought:   `{"text":"`,
	closeText: `","index":0,"logprobs":null,"finish_reason":null}`,
	finish:    `{"text":"","index":0,"logprobs":null,"finish_reason":"`,
	malformed: "data: {\"choices\":[{\"text\":\n\n",
}

func (completionsProto) decode(r *http.Request, body io.Reader) (*genRequest, encoder, *refusal) {
	var req completionsRequest
	if f := decodeJSON(body, &req); f != nil {
		return nil, nil, f
	}
	prompt, f := completionsPrompt(req.Prompt)
	if f != nil {
		return nil, nil, f
	}
	g := &genRequest{
		model:       req.Model,
		raw:         &prompt,
		maxTokens:   req.MaxTokens,
		minTokens:   req.MinTokens,
		ignoreEOS:   req.IgnoreEOS,
		noReasoning: true,
		stream:      req.Stream,
	}
	enc := &completionsEncoder{oaiStream{shape: completionsShape, usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}}
	return g, enc, nil
}

// completionsPrompt is the prompt: a string, or an array of exactly one
// string. The simulator serves one prompt per request (a batch of
// several would be several choices), so it refuses more than one.
func completionsPrompt(raw json.RawMessage) (string, *refusal) {
	var s string
	var list []string
	isList, err := stringOrList(raw, &s, &list)
	switch {
	case err != nil || len(raw) == 0:
		return "", invalid("prompt must be a string or an array of strings, got %.40s", raw)
	case isList && len(list) != 1:
		return "", invalid("prompt: the simulator serves one prompt per request, got %d", len(list))
	case isList:
		return list[0], nil
	}
	return s, nil
}

func (completionsProto) authorized(r *http.Request, key string) bool { return bearerAuthorized(r, key) }

func (completionsProto) refuse(w http.ResponseWriter, f *refusal) {
	writeAPIError(w, openAIRefusal(f, true))
}

func (completionsProto) quota(h http.Header, q *quota) { xRateLimitHeaders(h, q) }

// completionsEncoder is the chunk stream (oaiStream) and the completion.
type completionsEncoder struct{ oaiStream }

// textCompletion is the non-streaming response.
type textCompletion struct {
	ID      string                 `json:"id"`
	Object  string                 `json:"object"`
	Created int64                  `json:"created"`
	Model   string                 `json:"model"`
	Choices []textCompletionChoice `json:"choices"`
	Usage   usageJSON              `json:"usage"`
	Timings *timingsJSON           `json:"timings,omitempty"`
}

type textCompletionChoice struct {
	Text         string  `json:"text"`
	Index        int     `json:"index"`
	Logprobs     *string `json:"logprobs"`
	FinishReason string  `json:"finish_reason"`
}

func (e *completionsEncoder) complete(rp *reply) []byte {
	tj := newTimingsJSON(&rp.t)
	b, _ := json.Marshal(textCompletion{
		ID:      "cmpl-" + rp.idHex,
		Object:  "text_completion",
		Created: rp.created,
		Model:   rp.model,
		Choices: []textCompletionChoice{{Text: rp.text(0, rp.j.out), FinishReason: rp.j.finish}},
		Usage:   oaiUsage(rp),
		Timings: &tj,
	})
	return b
}
