package sim

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// This file is what OpenAI's protocols (chat completions, legacy
// completions, Responses) share: error bodies, bearer-token checks, the
// x-ratelimit headers, and the chunk stream of chat and legacy
// completions with its usage and llama.cpp-style timings.

// apiError is a refused request as written: its status and JSON body.
type apiError struct {
	status int
	body   []byte
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(append(e.body, '\n'))
}

// openAIError is the {"error":{...}} body OpenAI returns, with a null
// code.
func openAIError(status int, typ, msg string) *apiError {
	return openAICodedError(status, typ, msg, "")
}

// openAICodedError is openAIError with a code ("" for null).
func openAICodedError(status int, typ, msg, code string) *apiError {
	type inner struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	}
	e := inner{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	b, _ := json.Marshal(struct {
		Error inner `json:"error"`
	}{e})
	return &apiError{status, b}
}

// vllmError is the flat {"object":"error",...} body vLLM returns.
func vllmError(status int, typ, msg string) *apiError {
	b, _ := json.Marshal(struct {
		Object  string  `json:"object"`
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}{"error", msg, typ, nil, status})
	return &apiError{status, b}
}

// openAIRefusal renders f for OpenAI's protocols. A context-window error
// is vLLM's flat body when vllm is set (chat, completions), OpenAI's
// otherwise (Responses).
func openAIRefusal(f *refusal, vllm bool) *apiError {
	switch f.kind {
	case refContext:
		if !vllm {
			return openAICodedError(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf(
				"Your input exceeds the context window of this model: %d tokens (%d in the input, %d in the output) against a context window of %d tokens.",
				f.prompt+max(0, f.maxTokens), f.prompt, max(0, f.maxTokens), f.limit), "context_length_exceeded")
		}
		if f.maxTokens >= 0 {
			return vllmError(http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				f.limit, f.prompt+f.maxTokens, f.prompt, f.maxTokens))
		}
		return vllmError(http.StatusBadRequest, "BadRequestError", fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.",
			f.limit, f.prompt))
	case refAuth:
		return openAICodedError(http.StatusUnauthorized, "invalid_request_error", f.msg, "invalid_api_key")
	case refRateLimit:
		if f.bucket != nil {
			return rateLimitError(f.bucket)
		}
		return openAIError(http.StatusTooManyRequests, "requests", f.msg)
	case refServer:
		return openAIError(http.StatusInternalServerError, "server_error", f.msg)
	case refOverloaded, refClosing:
		return openAIError(http.StatusServiceUnavailable, "server_error", f.msg)
	}
	return openAIError(http.StatusBadRequest, "invalid_request_error", f.msg)
}

// bearerAuthorized reports whether r's Authorization header is
// "Bearer key".
func bearerAuthorized(r *http.Request, key string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(got), []byte(key)) == 1
}

// xRateLimitHeaders sets x-ratelimit-limit-, -remaining- and
// -reset-<bucket> (in seconds, fractional, as Cerebras sends them) for
// every bucket.
func xRateLimitHeaders(h http.Header, q *quota) {
	for _, b := range q.buckets {
		n := b.kind.name
		h.Set("x-ratelimit-limit-"+n, strconv.Itoa(b.limit))
		h.Set("x-ratelimit-remaining-"+n, strconv.Itoa(b.remaining))
		h.Set("x-ratelimit-reset-"+n, strconv.FormatFloat(b.reset.Seconds(), 'f', 3, 64))
	}
}

// oaiShape is the JSON around the text of a chat or legacy-completions
// chunk: everything that differs between the two streams.
type oaiShape struct {
	idPrefix, object string
	role             string // the choice of the opening chunk; "" for none
	answer, thought  string // a token chunk's choice up to its text: answer, reasoning
	closeText        string // after the text
	finish           string // the finish chunk's choice up to the reason
	malformed        string
}

// oaiStream encodes a chat-completions or legacy-completions stream:
// chunks of `data: {"id":…,"choices":[…]}`, a finish chunk, the usage
// chunk when asked, and [DONE]. The last chunk carries llama.cpp's
// timings (see timingsJSON).
type oaiStream struct {
	shape  *oaiShape
	usage  bool   // stream_options.include_usage
	prefix []byte // `{"id":…,"choices":[`
}

func (e *oaiStream) begin(rp *reply) bool {
	model, _ := json.Marshal(rp.model)
	p := make([]byte, 0, 128)
	p = append(p, `{"id":"`...)
	p = append(p, e.shape.idPrefix...)
	p = append(p, rp.idHex...)
	p = append(p, `","object":"`...)
	p = append(p, e.shape.object...)
	p = append(p, `","created":`...)
	p = strconv.AppendInt(p, rp.created, 10)
	p = append(p, `,"model":`...)
	p = append(p, model...)
	p = append(p, `,"choices":[`...)
	e.prefix = p
	if e.shape.role == "" {
		return true
	}
	b := append(rp.event(""), e.prefix...)
	b = append(b, e.shape.role...)
	return rp.send(append(b, ']'))
}

func (e *oaiStream) tokens(rp *reply, from, to int) bool {
	b := append(rp.event(""), e.prefix...)
	if from < rp.j.reasoning {
		b = append(b, e.shape.thought...)
	} else {
		b = append(b, e.shape.answer...)
	}
	b = rp.appendWords(b, from, to)
	b = append(b, e.shape.closeText...)
	return rp.send(append(b, ']'))
}

func (e *oaiStream) finish(rp *reply) bool {
	b := append(rp.event(""), e.prefix...)
	b = append(b, e.shape.finish...)
	b = append(b, rp.j.finish...)
	b = append(b, `"}]`...)
	if !e.usage {
		b = appendTimings(b, &rp.t)
	}
	if !rp.send(b) {
		return false
	}
	if e.usage {
		b := append(rp.event(""), e.prefix...)
		b = append(b, `],"usage":`...)
		u, _ := json.Marshal(oaiUsage(rp))
		b = append(b, u...)
		b = appendTimings(b, &rp.t)
		if !rp.send(b) {
			return false
		}
	}
	return rp.write([]byte("data: [DONE]\n\n"))
}

// fail writes OpenAI's in-stream error chunk, then [DONE].
func (e *oaiStream) fail(rp *reply) bool {
	b := append(rp.event(""), `{"error":{"message":"Simulated fault: the server is overloaded and stopped generating.","type":"server_error","param":null,"code":null}`...)
	return rp.send(b) && rp.write([]byte("data: [DONE]\n\n"))
}

func (e *oaiStream) malformed() []byte { return []byte(e.shape.malformed) }

// usageJSON is the usage object of chat and legacy completions.
type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func oaiUsage(rp *reply) usageJSON {
	u := usageJSON{
		PromptTokens:     rp.j.prompt,
		CompletionTokens: rp.j.out,
		TotalTokens:      rp.j.prompt + rp.j.out,
	}
	u.PromptTokensDetails.CachedTokens = rp.cached
	u.CompletionTokensDetails.ReasoningTokens = rp.j.reasoning
	return u
}

// timingsJSON is llama.cpp's per-response timings object, from the
// server's own clock (see timings), plus the simulator's queue_ms: the
// wait in the engine's waiting list until it first scheduled the request
// (not the request overhead, which waits for no other request). Times
// are in milliseconds; a rate whose time is 0 is 0. As llama.cpp does,
// draft_n (draft tokens proposed) and draft_n_accepted (those accepted)
// are there only when draft_n > 0 (speculative decoding, SpecDecode).
type timingsJSON struct {
	CacheN              int     `json:"cache_n"`
	PromptN             int     `json:"prompt_n"`
	PromptMS            float64 `json:"prompt_ms"`
	PromptPerTokenMS    float64 `json:"prompt_per_token_ms"`
	PromptPerSecond     float64 `json:"prompt_per_second"`
	PredictedN          int     `json:"predicted_n"`
	PredictedMS         float64 `json:"predicted_ms"`
	PredictedPerTokenMS float64 `json:"predicted_per_token_ms"`
	PredictedPerSecond  float64 `json:"predicted_per_second"`
	QueueMS             float64 `json:"queue_ms"`
	DraftN              int     `json:"draft_n,omitempty"`
	DraftNAccepted      *int    `json:"draft_n_accepted,omitempty"`
}

func newTimingsJSON(t *timings) timingsJSON {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	per := func(n int, d time.Duration) (perToken, perSecond float64) {
		if n > 0 {
			perToken = ms(d) / float64(n)
		}
		if d > 0 {
			perSecond = float64(n) / d.Seconds()
		}
		return perToken, perSecond
	}
	j := timingsJSON{
		CacheN:      t.cached,
		PromptN:     t.prompt,
		PromptMS:    ms(t.prefill),
		PredictedN:  t.out,
		PredictedMS: ms(t.decode),
		QueueMS:     ms(t.queue),
	}
	if t.drafted > 0 {
		j.DraftN, j.DraftNAccepted = t.drafted, &t.accepted
	}
	j.PromptPerTokenMS, j.PromptPerSecond = per(t.prompt, t.prefill)
	j.PredictedPerTokenMS, j.PredictedPerSecond = per(t.out, t.decode)
	return j
}

// appendTimings appends `,"timings":{…}` to an open chunk object.
func appendTimings(b []byte, t *timings) []byte {
	tj, _ := json.Marshal(newTimingsJSON(t))
	b = append(b, `,"timings":`...)
	return append(b, tj...)
}
