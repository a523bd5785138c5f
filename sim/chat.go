package sim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// words are the simulated output vocabulary: plain lowercase English words,
// each one token. Exactly 64, so a token's word is 6 bits of a hash.
var words = [64]string{
	"the", "of", "and", "to", "in", "is", "that", "it",
	"for", "on", "with", "as", "was", "at", "by", "be",
	"this", "from", "or", "an", "are", "not", "but", "which",
	"have", "one", "all", "were", "can", "there", "their", "more",
	"when", "will", "would", "about", "into", "time", "some", "could",
	"them", "other", "than", "then", "only", "its", "over", "also",
	"after", "first", "two", "new", "way", "well", "where", "much",
	"through", "each", "most", "such", "make", "long", "many", "work",
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	if s.closed() {
		writeAPIError(w, openAIError(http.StatusServiceUnavailable, "server_error", "The server is shutting down."))
		return
	}
	var req chatRequest
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		writeAPIError(w, openAIError(http.StatusBadRequest, "invalid_request_error", "Invalid JSON body: "+err.Error()))
		return
	}
	// Read to EOF so the server watches the connection and cancels the
	// request's context when the client goes away.
	io.Copy(io.Discard, body)

	j, aerr := s.plan(&req)
	if aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	// settle counts the output against the rate limits and frees the
	// request's KV blocks (without the engine): once, before the response
	// ends, so that a client's next request finds them settled.
	var rp *reply
	var release func()
	settled := false
	settle := func() {
		if settled {
			return
		}
		settled = true
		if release != nil {
			release()
		}
		if s.lim != nil {
			out := 0
			if rp != nil {
				out = rp.sent
			}
			s.lim.complete(out)
		}
	}
	if s.lim != nil {
		if aerr := s.lim.admit(w.Header(), j.prompt, s.peekCached(j)); aerr != nil {
			writeAPIError(w, aerr)
			return
		}
	}
	defer settle()
	if aerr := faultError(j.fault); aerr != nil {
		if j.fault == FaultHTTP429 {
			w.Header().Set("Retry-After", "1")
		}
		settle()
		writeAPIError(w, aerr)
		return
	}
	rp = s.newReply(w, r.Context(), &req, j)
	if s.kv != nil {
		rp.cached, release = s.holdBlocks(j)
	}
	ok := true
	switch {
	case j.out == 0:
	case s.cfg.Timing == TimingNone:
		ok = rp.advance(j.out)
	case s.cfg.Timing == TimingFixed:
		ok = s.runFixed(rp)
	default:
		ok = s.runEngine(rp)
	}
	settle()
	switch {
	case ok:
		rp.finish()
	case (!rp.started || !rp.stream) && s.closed():
		// Closed before anything was written: say so rather than send
		// an empty 200.
		writeAPIError(w, openAIError(http.StatusServiceUnavailable, "server_error", "The server is shutting down."))
	}
}

// peekCached is the prompt tokens of j the prefix cache holds now (0
// without prefix caching): what the rate limiter takes as cached. The
// engine looks again when it admits the request.
func (s *Server) peekCached(j job) int {
	switch {
	case j.hashes == nil:
		return 0
	case s.eng != nil:
		return s.eng.peek(j.prompt, j.hashes)
	}
	s.kvMu.Lock()
	defer s.kvMu.Unlock()
	return peekCache(s.kv, j.prompt, j.hashes)
}

// holdBlocks is prefix caching without the roofline engine: j takes its
// blocks at once (reusing the cached ones, beyond the budget if need be,
// as nothing queues) and commits its prompt's; release frees them into
// the LRU. It returns the prompt tokens found cached.
func (s *Server) holdBlocks(j job) (cached int, release func()) {
	q := &seq{prompt: j.prompt, hashes: j.hashes}
	s.kvMu.Lock()
	defer s.kvMu.Unlock()
	s.kv.admit(q, true)
	cached = q.prefilled
	q.prefilled = q.fill
	s.kv.commit(q)
	return cached, func() {
		s.kvMu.Lock()
		s.kv.release(q)
		s.kvMu.Unlock()
	}
}

// fixedDelays are TimingFixed's TTFT and gap between chunks, times
// TimeScale.
func (s *Server) fixedDelays() (ttft, itl time.Duration) {
	return s.cfg.scaled(s.cfg.Fixed.TTFT), s.cfg.scaled(s.cfg.Fixed.ITL)
}

// runFixed sends the first chunk after Fixed.TTFT and each next one
// Fixed.ITL later (both times TimeScale). It reports whether the response
// should be finished.
func (s *Server) runFixed(rp *reply) bool {
	ttft, itl := s.fixedDelays()
	t := time.NewTimer(ttft)
	defer t.Stop()
	for rp.sent < rp.j.out {
		select {
		case <-t.C:
		case <-rp.ctx.Done():
			return false
		case <-s.done:
			return false
		}
		if !rp.advance(rp.chunkEnd()) {
			return false
		}
		t.Reset(itl)
	}
	return true
}

// runEngine waits out the request overhead, submits the request to the
// roofline engine and writes tokens as the engine publishes them. Leaving
// (client gone, Close) frees the sequence's KV at the engine's next step
// boundary.
func (s *Server) runEngine(rp *reply) bool {
	if d := s.cfg.scaled(s.cfg.Roofline.RequestOverhead); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-rp.ctx.Done():
			t.Stop()
			return false
		case <-s.done:
			t.Stop()
			return false
		}
	}
	q := newSeq(rp.j.prompt, rp.j.out, rp.j.hashes)
	defer q.gone.Store(true)
	s.eng.submit(q)
	defer func() { rp.cached = int(q.cached.Load()) }()
	for rp.sent < rp.j.out {
		select {
		case <-q.notify:
		case <-rp.ctx.Done():
			return false
		case <-s.done:
			return false
		}
		if !rp.advance(int(q.avail.Load())) {
			return false
		}
	}
	return true
}

func faultError(fault string) *apiError {
	switch fault {
	case FaultHTTP400:
		return openAIError(http.StatusBadRequest, "invalid_request_error", "Simulated fault: the request was rejected.")
	case FaultHTTP429:
		return openAIError(http.StatusTooManyRequests, "requests", "Simulated fault: rate limit reached for requests. Please try again in 1s.")
	case FaultHTTP500:
		return openAIError(http.StatusInternalServerError, "server_error", "Simulated fault: the server had an error while processing your request.")
	case FaultHTTP503:
		return openAIError(http.StatusServiceUnavailable, "server_error", "Simulated fault: the engine is currently overloaded, please try again later.")
	}
	return nil
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	w.Write(append(e.body, '\n'))
}

// reply writes one response as its tokens become available: SSE chunks when
// streaming, one JSON object at the end otherwise. It is used by the
// request's handler goroutine only.
type reply struct {
	s      *Server
	w      http.ResponseWriter
	fl     http.Flusher
	ctx    context.Context
	j      job
	stream bool
	usage  bool // stream_options.include_usage

	id      string
	model   string
	created int64
	prefix  []byte // `data: {"id":…,"choices":[`
	buf     []byte // reused per chunk

	sent      int // tokens written (or, not streaming, produced)
	cached    int // prompt tokens found in the prefix cache
	started   bool
	faultDone bool
}

func (s *Server) newReply(w http.ResponseWriter, ctx context.Context, req *chatRequest, j job) *reply {
	fl, _ := w.(http.Flusher)
	rp := &reply{
		s:       s,
		w:       w,
		fl:      fl,
		ctx:     ctx,
		j:       j,
		stream:  req.Stream,
		usage:   req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		model:   req.Model,
		created: time.Now().Unix(),
	}
	if rp.model == "" {
		rp.model = s.cfg.Model
	}
	id := make([]byte, 0, 32)
	id = append(id, "chatcmpl-"...)
	id = appendHex(id, mix(j.hash^uint64(time.Now().UnixNano())))
	rp.id = string(id)
	if rp.stream {
		model, _ := json.Marshal(rp.model)
		p := make([]byte, 0, 128)
		p = append(p, `data: {"id":"`...)
		p = append(p, rp.id...)
		p = append(p, `","object":"chat.completion.chunk","created":`...)
		p = strconv.AppendInt(p, rp.created, 10)
		p = append(p, `,"model":`...)
		p = append(p, model...)
		p = append(p, `,"choices":[`...)
		rp.prefix = p
		rp.buf = make([]byte, 0, 256+len(p)+8*s.cfg.TokensPerChunk)
	}
	return rp
}

func appendHex(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for i := 60; i >= 0; i -= 4 {
		b = append(b, digits[(v>>uint(i))&0xf])
	}
	return b
}

// word is the text of output token i: one word, one token.
func (rp *reply) word(i int) string {
	return words[((rp.j.hash^saltWords)+uint64(i)*0x9e3779b97f4a7c15)>>58]
}

// chunkEnd is where the next chunk ends: TokensPerChunk tokens on, but not
// across the reasoning/answer boundary nor past the output.
func (rp *reply) chunkEnd() int {
	end := rp.sent + rp.s.cfg.TokensPerChunk
	if rp.sent < rp.j.reasoning {
		end = min(end, rp.j.reasoning)
	}
	return min(end, rp.j.out)
}

// advance writes every whole chunk among the first avail tokens. It reports
// false when the response must stop here (client gone, Close, stall).
func (rp *reply) advance(avail int) bool {
	for rp.sent < avail {
		end := rp.chunkEnd()
		if end > avail {
			return true
		}
		if !rp.begin() {
			return false
		}
		if rp.stream && !rp.writeTokens(rp.sent, end) {
			return false
		}
		rp.sent = end
		if !rp.afterChunk() {
			return false
		}
	}
	return true
}

// begin starts the response on its first token (as vLLM does): headers and
// the role chunk.
func (rp *reply) begin() bool {
	if rp.started {
		return true
	}
	rp.started = true
	if !rp.stream {
		return true
	}
	h := rp.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rp.w.WriteHeader(http.StatusOK)
	b := append(rp.buf[:0], rp.prefix...)
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`...)
	rp.buf = b
	return rp.send()
}

// writeTokens sends tokens [from, to) as one chunk.
func (rp *reply) writeTokens(from, to int) bool {
	b := append(rp.buf[:0], rp.prefix...)
	if from < rp.j.reasoning {
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
	} else {
		b = append(b, `{"index":0,"delta":{"content":"`...)
	}
	for i := from; i < to; i++ {
		b = append(b, ' ')
		b = append(b, rp.word(i)...)
	}
	b = append(b, `"},"finish_reason":null}]`...)
	rp.buf = b
	return rp.send()
}

// send closes the chunk object in buf (adding the send stamp), writes the
// event and flushes it.
func (rp *reply) send() bool {
	b := rp.buf
	if rp.s.stamps {
		b = append(b, `,"sixpin_sent_unix_ns":`...)
		b = strconv.AppendInt(b, time.Now().UnixNano(), 10)
	}
	b = append(b, "}\n\n"...)
	rp.buf = b
	return rp.write(b)
}

func (rp *reply) write(b []byte) bool {
	_, err := rp.w.Write(b)
	if rp.fl != nil {
		rp.fl.Flush()
	}
	return err == nil
}

// afterChunk injects the request's mid-stream fault, if any is due.
func (rp *reply) afterChunk() bool {
	switch rp.j.fault {
	case FaultStall:
		select {
		case <-rp.ctx.Done():
		case <-rp.s.done:
		}
		return false
	case FaultCut:
		if rp.sent >= rp.j.out/2 {
			panic(http.ErrAbortHandler) // net/http closes the connection, quietly
		}
	case FaultMalformed:
		if rp.stream && !rp.faultDone && rp.sent >= rp.j.out/2 {
			rp.faultDone = true
			return rp.write([]byte("data: {\"choices\":[{\"delta\":{\"content\":\n\n"))
		}
	}
	return true
}

// finish ends the response: the finish chunk, usage and [DONE] when
// streaming, the whole completion otherwise.
func (rp *reply) finish() {
	if !rp.begin() {
		return
	}
	if !rp.stream {
		rp.writeCompletion()
		return
	}
	b := append(rp.buf[:0], rp.prefix...)
	b = append(b, `{"index":0,"delta":{},"finish_reason":"`...)
	b = append(b, rp.j.finish...)
	b = append(b, `"}]`...)
	rp.buf = b
	if !rp.send() {
		return
	}
	if rp.usage {
		b := append(rp.buf[:0], rp.prefix...)
		b = append(b, `],"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(rp.j.prompt), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(rp.j.out), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(rp.j.prompt+rp.j.out), 10)
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(rp.cached), 10)
		b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(rp.j.reasoning), 10)
		b = append(b, `}}`...)
		rp.buf = b
		if !rp.send() {
			return
		}
	}
	rp.write([]byte("data: [DONE]\n\n"))
}

type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usageJSON          `json:"usage"`
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

// writeCompletion writes the non-streaming response; its content is what
// the streamed deltas would concatenate to.
func (rp *reply) writeCompletion() {
	var reasoning, content strings.Builder
	for i := 0; i < rp.j.out; i++ {
		sb := &content
		if i < rp.j.reasoning {
			sb = &reasoning
		}
		sb.WriteByte(' ')
		sb.WriteString(rp.word(i))
	}
	u := usageJSON{
		PromptTokens:     rp.j.prompt,
		CompletionTokens: rp.j.out,
		TotalTokens:      rp.j.prompt + rp.j.out,
	}
	u.PromptTokensDetails.CachedTokens = rp.cached
	u.CompletionTokensDetails.ReasoningTokens = rp.j.reasoning
	b, _ := json.Marshal(completion{
		ID:      rp.id,
		Object:  "chat.completion",
		Created: rp.created,
		Model:   rp.model,
		Choices: []completionChoice{{
			Message: completionMessage{
				Role:             "assistant",
				Content:          content.String(),
				ReasoningContent: reasoning.String(),
			},
			FinishReason: rp.j.finish,
		}},
		Usage: u,
	})
	if rp.j.fault == FaultMalformed {
		b = b[:len(b)/2]
	}
	rp.w.Header().Set("Content-Type", "application/json")
	rp.w.WriteHeader(http.StatusOK)
	rp.w.Write(append(b, '\n'))
}
