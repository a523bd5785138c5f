package sim

import (
	"encoding/json"
	"io"
	"sync"
)

// RequestLogEntry is one line of Config.RequestLog: a generation request
// the Server admitted, as it ended. Summed over a run's lines, the token
// fields are what the Server served that run: what a client claiming to
// send a workload can be checked against, request by request.
type RequestLogEntry struct {
	// ID is the request's X-Request-Id (the client's, or one the Server
	// made up).
	ID string `json:"id"`
	// PromptTokens is the whole prompt in tokens, CachedTokens the part
	// of it the prefix cache served, CompletionTokens the tokens sent
	// (reasoning included).
	PromptTokens     int `json:"prompt_tokens"`
	CachedTokens     int `json:"cached_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// FinishReason is "stop" or "length" for a response that completed,
	// "abort" for one that ended early (the client left, the Server
	// closed, a fault struck).
	FinishReason string `json:"finish_reason"`
}

// requestLog writes RequestLogEntry lines to w, one request at a time:
// safe for concurrent use. A nil *requestLog writes nothing.
type requestLog struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newRequestLog(w io.Writer) *requestLog {
	if w == nil {
		return nil
	}
	return &requestLog{enc: json.NewEncoder(w)}
}

// write logs the request j whose reply was rp (nil: none began), which
// finished or not. A write error is dropped: the log never fails a
// request.
func (l *requestLog) write(id string, j job, rp *reply, finished bool) {
	if l == nil {
		return
	}
	e := RequestLogEntry{ID: id, PromptTokens: j.prompt, FinishReason: "abort"}
	if rp != nil {
		e.CachedTokens, e.CompletionTokens = rp.cached, rp.sent
	}
	if finished {
		e.FinishReason = j.finish
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(&e)
}
