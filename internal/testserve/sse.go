package testserve

import (
	"fmt"
	"io"
	"net/http"
)

// Events of an OpenAI-compatible chat stream, for handlers that send a
// stream of their own making: each is one whole SSE event.
const (
	RoleEvent = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	DoneEvent = "data: [DONE]\n\n"
)

// ContentEvent is a chunk whose delta carries text.
func ContentEvent(text string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` +
		text + `"},"finish_reason":null}]}` + "\n\n"
}

// FinishEvent is a chunk that ends the choice with reason.
func FinishEvent(reason string) string {
	return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` +
		reason + `"}]}` + "\n\n"
}

// UsageEvent is the usage chunk (no choices) that include_usage asks for.
func UsageEvent(prompt, completion int) string {
	return fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
		prompt, completion, prompt+completion)
}

// SSE answers 200 with the given raw SSE text, each piece flushed on its
// own.
func SSE(pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		for _, p := range pieces {
			io.WriteString(w, p)
			fl.Flush()
		}
	}
}

// SSEThenHold sends pieces, then holds the response open until the
// client leaves or release is closed.
func SSEThenHold(release <-chan struct{}, pieces ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		SSE(pieces...)(w, r)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}
