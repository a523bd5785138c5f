package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// This file is the generation path every protocol shares: admission
// (overload, rate limits, faults), timing (none, fixed or the roofline
// engine), chunking, send stamps, mid-stream faults and the server's own
// timings. A protocol (chat.go, completions.go, messages.go,
// responses.go) only decodes its request and encodes its response.

// protocol is one API the Server serves over the shared generation path.
// Implementations are stateless and safe for concurrent use.
type protocol interface {
	// decode reads a request's body (and headers) into a genRequest and
	// the encoder of its response, or refuses it.
	decode(r *http.Request, body io.Reader) (*genRequest, encoder, *refusal)
	// authorized reports whether r carries key; it is asked only when
	// the Server has an API key.
	authorized(r *http.Request, key string) bool
	// refuse writes f as the protocol's error response.
	refuse(w http.ResponseWriter, f *refusal)
	// quota sets the protocol's rate-limit headers from the limiter's
	// answer.
	quota(h http.Header, q *quota)
}

// encoder writes one response in its protocol's shape. Its methods are
// called from the request's handler goroutine only, in the order begin,
// tokens…, then finish or fail (streaming), or complete alone (not
// streaming). Streaming methods write events through the reply (event,
// send) and report false when the client is gone.
type encoder interface {
	// begin writes the events that open a stream, just before its first
	// token (or before finish, for a response without tokens).
	begin(rp *reply) bool
	// tokens writes output tokens [from, to) as one event; they are all
	// reasoning or all answer (from < rp.j.reasoning tells which).
	tokens(rp *reply, from, to int) bool
	// finish writes the events that end a stream that completed.
	finish(rp *reply) bool
	// fail writes the protocol's in-stream error (FaultStreamError);
	// nothing follows it.
	fail(rp *reply) bool
	// malformed is the invalid event FaultMalformed writes.
	malformed() []byte
	// complete is the whole non-streaming response body.
	complete(rp *reply) []byte
}

// decodeJSON decodes a request body into v, or refuses it.
func decodeJSON(body io.Reader, v any) *refusal {
	if err := json.NewDecoder(body).Decode(v); err != nil {
		return invalid("Invalid JSON body: %v", err)
	}
	return nil
}

// stringOrList decodes b, a JSON string, null or array, as request
// bodies put text: a string (null as "") into s, an array into list (a
// pointer to a slice). It reports whether b was an array.
func stringOrList(b []byte, s *string, list any) (bool, error) {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*s = ""
		return false, nil
	case b[0] == '"':
		return false, json.Unmarshal(b, s)
	case b[0] == '[':
		return true, json.Unmarshal(b, list)
	}
	return false, fmt.Errorf("must be a string or an array, got %.20s", b)
}

// declared reports whether b, a request's JSON list of tools, declares
// any: not absent, null or [].
func declared(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && string(b) != "null" && !(b[0] == '[' && len(bytes.TrimSpace(b[1:])) == 1)
}

// serve is the handler of one protocol's generation endpoint.
func (s *Server) serve(p protocol) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.closed() {
			p.refuse(w, &refusal{kind: refClosing, msg: "The server is shutting down."})
			return
		}
		if s.cfg.APIKey != "" && !p.authorized(r, s.cfg.APIKey) {
			p.refuse(w, &refusal{kind: refAuth, msg: "Incorrect API key provided."})
			return
		}
		body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
		g, enc, f := p.decode(r, body)
		// Read to EOF so the server watches the connection and cancels
		// the request's context when the client goes away.
		io.Copy(io.Discard, body)
		if f != nil {
			p.refuse(w, f)
			return
		}
		j, f := s.plan(g)
		if f != nil {
			p.refuse(w, f)
			return
		}
		s.generate(w, r.Context(), p, g, j, enc)
	}
}

// generate admits j and writes its response: refused when the engine is
// overloaded, a quota is exhausted or a fault says so; otherwise timed by
// the configured timing and written by enc.
func (s *Server) generate(w http.ResponseWriter, ctx context.Context, p protocol, g *genRequest, j job, enc encoder) {
	arrival := time.Now().UnixNano()
	if n := s.cfg.OverloadAfterWaiting; n > 0 && s.eng != nil && s.eng.queued() >= n {
		p.refuse(w, &refusal{kind: refOverloaded, msg: "Overloaded: " + strconv.Itoa(n) + " or more requests are waiting."})
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
		q := s.lim.admit(j.prompt, s.peekCached(j))
		p.quota(w.Header(), &q)
		if q.over != nil {
			w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(q.retry)))
			p.refuse(w, &refusal{kind: refRateLimit, bucket: q.over.kind, quota: q.over.limit})
			return
		}
	}
	defer settle()
	if f := faultRefusal(j.fault); f != nil {
		if j.fault == FaultHTTP429 {
			w.Header().Set("Retry-After", "1")
		}
		settle()
		p.refuse(w, f)
		return
	}
	s.m.inflight.Add(1)
	finished := false
	defer func() {
		s.m.inflight.Add(-1)
		if !finished {
			s.m.aborted()
		}
		s.log.write(w.Header().Get("X-Request-Id"), j, rp, finished)
	}()
	rp = s.newReply(w, ctx, g, j, enc, arrival)
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
		rp.t = rp.timings()
		rp.finish()
		s.m.finished(j.finish, &rp.t)
		finished = true
	case rp.failed && !rp.stream:
		p.refuse(w, &refusal{kind: refOverloaded, msg: "Simulated fault: the server failed while generating."})
	case (!rp.started || !rp.stream) && s.closed():
		// Closed before anything was written: say so rather than send
		// an empty 200.
		p.refuse(w, &refusal{kind: refClosing, msg: "The server is shutting down."})
	}
}

// retrySeconds is a Retry-After for a wait: whole seconds, at least 1.
func retrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// faultRefusal is the refusal a fault class answers with before any
// output, or nil.
func faultRefusal(fault string) *refusal {
	switch fault {
	case FaultHTTP400:
		return &refusal{kind: refInvalid, msg: "Simulated fault: the request was rejected."}
	case FaultHTTP429:
		return &refusal{kind: refRateLimit, msg: "Simulated fault: rate limit reached for requests. Please try again in 1s."}
	case FaultHTTP500:
		return &refusal{kind: refServer, msg: "Simulated fault: the server had an error while processing your request."}
	case FaultHTTP503:
		return &refusal{kind: refOverloaded, msg: "Simulated fault: the engine is currently overloaded, please try again later."}
	}
	return nil
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
	if s.cfg.SpecDecode != nil {
		q.spec = newSeqSpec(rp.j.alpha, rp.j.hash)
	}
	rp.q = q
	rp.submitted = time.Now().UnixNano()
	defer q.gone.Store(true)
	s.eng.submit(q)
	for rp.sent < rp.j.out {
		select {
		case <-q.notify:
		case <-rp.ctx.Done():
			return false
		case <-s.done:
			return false
		}
		// Set at admission, before the first token is published.
		rp.cached = int(q.cached.Load())
		if !rp.advance(int(q.avail.Load())) {
			return false
		}
	}
	return true
}

// reply writes one response as its tokens become available, through its
// protocol's encoder: SSE events when streaming, one body at the end
// otherwise. It is used by the request's handler goroutine only.
type reply struct {
	s      *Server
	w      http.ResponseWriter
	fl     http.Flusher
	ctx    context.Context
	j      job
	enc    encoder
	stream bool

	model   string // as asked, or the served model
	idHex   string // 16 hex digits, unique per response; protocols prefix it
	created int64  // Unix seconds
	buf     []byte // the event being written, reused

	sent    int // tokens written (or, not streaming, produced)
	cached  int // prompt tokens found in the prefix cache
	started bool
	failed  bool // FaultStreamError struck

	faultDone bool

	// q is the engine's sequence (TimingRoofline), whose clock times the
	// response; without it the handler's clock does: arrival, first and
	// last token, in Unix nanoseconds. submitted is when the request
	// joined the engine's waiting list, after the request overhead.
	q                               *seq
	arrival, submitted, first, last int64
	t                               timings // set when the output is complete
}

func (s *Server) newReply(w http.ResponseWriter, ctx context.Context, g *genRequest, j job, enc encoder, arrival int64) *reply {
	fl, _ := w.(http.Flusher)
	rp := &reply{
		s:       s,
		w:       w,
		fl:      fl,
		ctx:     ctx,
		j:       j,
		enc:     enc,
		stream:  g.stream,
		model:   g.model,
		created: time.Now().Unix(),
		arrival: arrival,
	}
	if rp.model == "" {
		rp.model = s.cfg.Model
	}
	rp.idHex = string(appendHex(make([]byte, 0, 16), mix(j.hash^uint64(arrival))))
	if rp.stream {
		rp.buf = make([]byte, 0, 512+8*s.cfg.TokensPerChunk)
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

// appendWords appends the text of tokens [from, to), JSON-escaped: each
// a space and one word (see outText).
func (rp *reply) appendWords(b []byte, from, to int) []byte {
	for i := from; i < to; i++ {
		b = rp.j.text.appendToken(b, i, true)
	}
	return b
}

// text is the text of tokens [from, to), as the streamed deltas of them
// concatenate to.
func (rp *reply) text(from, to int) string {
	var b []byte
	for i := from; i < to; i++ {
		b = rp.j.text.appendToken(b, i, false)
	}
	return string(b)
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
// false when the response must stop here (client gone, Close, stall, a
// stream error).
func (rp *reply) advance(avail int) bool {
	for rp.sent < avail {
		end := rp.chunkEnd()
		if end > avail {
			return true
		}
		if rp.q == nil {
			rp.produced(end - rp.sent)
		}
		if rp.sent == 0 {
			// Counted before it is written: a client that has the token
			// finds it in /metrics.
			rp.s.m.firstToken(rp)
		}
		if !rp.begin() {
			return false
		}
		if rp.stream && !rp.enc.tokens(rp, rp.sent, end) {
			return false
		}
		rp.sent = end
		if !rp.afterChunk() {
			return false
		}
	}
	return true
}

// produced times n tokens made now by the handler's clock (without the
// engine, which times its own): the first and last token, and the gap
// since the previous chunk for the inter-token latency metric.
func (rp *reply) produced(n int) {
	now := time.Now().UnixNano()
	if rp.first == 0 {
		rp.first = now
	} else {
		rp.s.m.itl.observe(time.Duration(now - rp.last))
	}
	rp.last = now
	rp.s.m.generationTokens.Add(int64(n))
}

// begin starts the response on its first token (as vLLM does): headers
// and the protocol's opening events.
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
	return rp.enc.begin(rp)
}

// event starts an SSE event in the reply's buffer: "event: name" (when
// name is not empty), then "data: ", to which the caller appends a JSON
// object without its closing brace and hands the result to send.
func (rp *reply) event(name string) []byte {
	b := rp.buf[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	return append(b, "data: "...)
}

// send closes the event's JSON object in b (adding the send stamp),
// writes it and flushes. b becomes the reply's buffer.
func (rp *reply) send(b []byte) bool {
	if rp.s.stamps {
		b = append(b, `,"sixpin_sent_unix_ns":`...)
		b = strconv.AppendInt(b, time.Now().UnixNano(), 10)
	}
	b = append(b, "}\n\n"...)
	rp.buf = b
	return rp.write(b)
}

// write writes b as it is and flushes.
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
			return rp.write(rp.enc.malformed())
		}
	case FaultStreamError:
		if rp.sent >= rp.j.out/2 {
			rp.failed = true
			if rp.stream {
				rp.enc.fail(rp)
			}
			return false
		}
	}
	return true
}

// finish ends a response whose output is complete: the closing events
// when streaming, the whole body otherwise.
func (rp *reply) finish() {
	if !rp.begin() {
		return
	}
	if rp.stream {
		rp.enc.finish(rp)
		return
	}
	b := rp.enc.complete(rp)
	if rp.j.fault == FaultMalformed {
		b = b[:len(b)/2]
	}
	rp.w.Header().Set("Content-Type", "application/json")
	rp.w.WriteHeader(http.StatusOK)
	rp.w.Write(append(b, '\n'))
}

// timings are one response's figures by the server's own clock: the
// engine's (TimingRoofline: step boundaries of the model, in the
// Server's wall-clock time, so scaled by TimeScale like everything a
// client measures) or the handler's (the other timings).
type timings struct {
	queue   time.Duration // joined the engine → first scheduled (the request overhead is no queue: it waits for no other request)
	prefill time.Duration // first scheduled → first token
	decode  time.Duration // first token → last token
	ttft    time.Duration // arrival → first token
	e2e     time.Duration // arrival → last token
	cached  int           // prompt tokens found in the prefix cache
	prompt  int           // prompt tokens computed: the prompt less cached
	out     int           // output tokens, reasoning included
	// Speculative decoding: tokens drafted and accepted (llama.cpp's
	// draft_n and draft_n_accepted) and decode steps, each a
	// verification (SGLang's spec_verify_ct); 0 without.
	drafted, accepted, verifies int
}

// timings computes the response's timings once its output is complete.
func (rp *reply) timings() timings {
	sched, first, last := rp.arrival, rp.first, rp.last
	if q := rp.q; q != nil {
		sched, first, last = q.scheduled.Load(), q.first.Load(), q.last.Load()
	}
	if first == 0 { // no tokens
		now := time.Now().UnixNano()
		sched, first, last = rp.arrival, now, now
	}
	span := func(from, to int64) time.Duration { return time.Duration(max(0, to-from)) }
	t := timings{
		queue:   span(max(rp.arrival, rp.submitted), sched),
		prefill: span(max(rp.arrival, sched), first),
		decode:  span(first, last),
		ttft:    span(rp.arrival, first),
		e2e:     span(rp.arrival, last),
		cached:  rp.cached,
		prompt:  rp.j.prompt - rp.cached,
		out:     rp.sent,
	}
	if rp.j.out == 0 {
		t.ttft = 0
	}
	if rp.q != nil && rp.q.spec != nil {
		t.drafted, t.accepted = int(rp.q.spec.drafted.Load()), int(rp.q.spec.accepted.Load())
		t.verifies = int(rp.q.spec.steps.Load())
	}
	return t
}

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
