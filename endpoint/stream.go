package endpoint

import (
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/sixpin/sixpin/record"
)

var (
	errStalled = errors.New("stream stalled")
	errDrained = errors.New("the rest of the response took too long to arrive")
)

// interruptError is the cause a request is cut off with when the run is
// interrupted; its text says how.
type interruptError struct{ msg string }

func (e *interruptError) Error() string { return e.msg }

var (
	// ErrCutAfterGrace cuts off the run's requests when the grace period
	// after an interrupt has run out.
	ErrCutAfterGrace error = &interruptError{"cut off by the interrupt after the grace period"}
	// ErrCutBySecondInterrupt cuts off the run's requests when a second
	// interrupt comes before the grace period has run out.
	ErrCutBySecondInterrupt error = &interruptError{"cut off by a second interrupt, before the grace period ran out"}
	// ErrCutAtOnce cuts off a request made before the run (the probe):
	// there is no grace period then.
	ErrCutAtOnce error = &interruptError{"cut off by the interrupt at once (before the run starts there is no grace period)"}
)

// cutCause is why a request is cut off when inflight ends: the
// interrupt inflight was cancelled with, if its canceller named one,
// else cut.
func cutCause(inflight context.Context, cut error) error {
	var ie *interruptError
	if c := context.Cause(inflight); errors.As(c, &ie) {
		return c
	}
	return cut
}

// Bounds on what is read of a response besides its stream.
const (
	// maxErrorBody is what is kept of an error response's body.
	maxErrorBody = 64 << 10
	// maxDrain and drainTimeout bound what is read after a stream's end
	// ([DONE]) or an error body, so that the connection is reused (the
	// body's last chunk usually follows within microseconds); a response
	// that goes on longer loses its connection instead.
	maxDrain     = 64 << 10
	drainTimeout = time.Second
	// snippetBytes is what an error message quotes of a body.
	snippetBytes = 512
	// maxChunksUpFront bounds the chunks a record makes room for before
	// its stream starts.
	maxChunksUpFront = 1 << 15
)

// call is one request on its way: the client and the clock its record's
// times are read on.
type call struct {
	*Client
	clk   Clock
	live  *Counter      // nil: not counted
	first *atomic.Int64 // Call.First; nil: not kept
	more  []byte        // Call.Extra
	// hdr is the request's header (Call.Header); nil: the client's own.
	hdr http.Header
	// echo takes the answer's headers a session sends back (Call.Echo).
	echo *Echo
	// keepText keeps the answer's text in the record (Call.KeepText).
	keepText bool
	// cutInEvent: the last stream read ended in the middle of an event
	// (a line the body ended inside of, dropped), for the probe to say.
	cutInEvent bool
	// inflight is the request's parent context; cut the cause it is cut
	// off with when inflight ends (Call.Cut).
	inflight context.Context
	cut      error
}

// since is the offset from the clock's start, in run time.
func (r *call) since() time.Duration { return r.clk.Since() }

// runTime converts a wall-clock duration to run time.
func (r *call) runTime(d time.Duration) time.Duration { return r.clk.Run(d) }

// Call is one request to send: msgs, with Req's lengths, due at
// Scheduled on Clock.
type Call struct {
	Req       record.Request
	Msgs      []Message
	Scheduled time.Duration
	Clock     Clock
	// Cut is the cause a request is cut off with when the inflight
	// context is cancelled (ErrCutAfterGrace, ErrCutAtOnce), unless the
	// context was cancelled with an interrupt cause of its own
	// (context.WithCancelCause: ErrCutBySecondInterrupt), which wins.
	Cut error
	// Extra are more members of this request's body, as `,"k":v` pairs
	// of valid JSON after the target's own extensions (a replayed
	// conversation's tools, sampling parameters, chat_template_kwargs).
	Extra []byte
	// Live, if not nil, counts the token-bearing chunks of the requests
	// still streaming: a stream adds its chunks as they arrive (at most
	// one atomic add per LiveStep) and takes them back when it ends.
	Live *Counter
	// First, if not nil, is set to the first token-bearing chunk's
	// arrival (run time in ns, plus one) when it comes: one store per
	// request.
	First *atomic.Int64
	// Header, if not nil, is the request's header instead of the
	// client's own: one SessionHeader made, read only, for all the
	// requests of a session.
	Header http.Header
	// Echo, if not nil, takes the answer's headers that its session sends
	// back (Echo.Names), once per request as the answer's header arrives.
	Echo *Echo
	// KeepText keeps the answer's text in the record (record.Record.Text,
	// at most record.MaxTextBytes): one append per chunk, for a sample
	// of requests (record.KeepsText).
	KeepText bool
}

// Echo is what a session sends back of its answers' headers: a router's
// session token (llm-d's x-session-token). It is one session's, used by
// one goroutine at a time.
type Echo struct {
	// Names are the headers taken, canonical keys.
	Names []string
	// Values[i] is the last non-empty value of Names[i] an answer
	// carried ("" before one did).
	Values []string
	// Changed is set when a value changes; the caller clears it once it
	// has rebuilt its session's header (Client.SessionHeader).
	Changed bool
}

// take keeps the values of e's names that h carries.
func (e *Echo) take(h http.Header) {
	if len(e.Values) != len(e.Names) {
		e.Values = make([]string, len(e.Names))
	}
	for i, n := range e.Names {
		if v := h.Get(n); v != "" && v != e.Values[i] {
			e.Values[i], e.Changed = v, true
		}
	}
}

// Stream sends one request and reads its answer to the end into a
// record. It never fails: a failure is classified on the record. When
// inflight is cancelled the request is cut off with cause k.Cut (class
// interrupted).
func (c *Client) Stream(inflight context.Context, k Call) *record.Record {
	r := &call{Client: c, clk: k.Clock, live: k.Live, first: k.First, more: k.Extra, hdr: k.Header, echo: k.Echo, keepText: k.KeepText}
	return r.stream(inflight, k.Cut, k.Req, k.Msgs, k.Scheduled)
}

// stream sends one request and reads its answer into a record. When
// inflight is cancelled the request is cut off with cause cut.
func (r *call) stream(inflight context.Context, cut error, req record.Request, msgs []Message, scheduled time.Duration) *record.Record {
	rec := &record.Record{
		Session:               -1,
		Index:                 req.Index,
		Class:                 req.Class,
		Content:               req.Content,
		Scheduled:             scheduled,
		RequestedPromptTokens: req.PromptTokens,
		RequestedOutputTokens: req.OutputTokens,
	}
	// The request's context: cut off by an interrupt (inflight, whose
	// cause fail translates), or by its watchdog — the request timeout, a
	// stall, a drain that takes too long (one timer, not a context of its
	// own: one context and one registration with its parent per request).
	ctx, cancel := context.WithCancelCause(inflight)
	defer cancel(nil)
	var wd watchdog
	wd.start(r.clk, r.requestTimeout, cancel)
	defer wd.stop()
	r.inflight, r.cut = inflight, cut

	minTokens := 0
	if r.exact && r.target.OutputControl.Has(ControlMinTokens) {
		minTokens = req.OutputTokens
	}
	extra := r.extra
	if len(r.more) > 0 {
		extra = append(append(make([]byte, 0, len(r.extra)+len(r.more)), r.extra...), r.more...)
	}
	body := r.proto.body(bodyRequest{model: r.target.Model, msgs: msgs, maxTokensField: r.target.MaxTokensField,
		maxTokens: req.OutputTokens, extra: extra, minTokens: minTokens})
	if r.idPrefix != "" {
		sep := "-"
		if req.Index < 0 {
			sep = ProbeIDInfix // a request of the probe or readiness check, not of the run
		}
		rec.RequestID = r.idPrefix + sep + strconv.FormatInt(r.ids.Add(1), 10)
	}
	rec.Sent = r.since()
	r.cutInEvent = false
	s := r.send(ctx, body, rec.RequestID, r.hdr)
	rec.Reconnects = s.reconnects
	if s.err != nil {
		rec.End = r.since()
		r.fail(rec, ctx, s.err, &s)
		if rec.Err == record.ErrConnect && !s.reusedConn {
			// A kept-alive connection the server closed says nothing
			// of whether it accepts connections.
			r.health.failed(rec.Sent)
		}
	} else {
		// A server still starting (503 Loading model) or overloaded (529)
		// is not back yet: an outage lasts until a real answer.
		code := s.resp.StatusCode
		if r.echo != nil {
			r.echo.take(s.resp.Header)
		}
		r.health.answered(rec.Sent, r.since(), s.freshConn, code != http.StatusServiceUnavailable && code != 529)
		r.readResponse(ctx, &wd, s.resp, rec)
	}
	// Everything the record keeps of the server's text, redacted in one
	// place, before it is shortened, so that no part of a secret survives.
	rec.ErrMsg = oneLine(r.rd.String(rec.ErrMsg))
	rec.Model = r.rd.String(rec.Model)
	rec.FinishReason = r.rd.String(rec.FinishReason)
	// The stream's chunks leave the live count: its caller counts the
	// request's tokens now.
	r.live.stripe(req.Index).Add(-int64(len(rec.Chunks)))
	return rec
}

// readResponse reads an answer: an error status, a stream, or a JSON
// body; anything else is bad_content_type.
func (r *call) readResponse(ctx context.Context, wd *watchdog, resp *http.Response, rec *record.Record) {
	defer resp.Body.Close()
	rec.HTTPStatus = resp.StatusCode
	if rec.RequestID != "" {
		rec.IDEcho = echoed(resp.Header, rec.RequestID)
	}
	body, err := decoded(resp)
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		if err != nil {
			body = resp.Body
		}
		r.httpError(wd, resp, body, rec)
		return
	case err != nil:
		rec.End = r.since()
		rec.Err, rec.ErrMsg = record.ErrBadContentType, err.Error()
		return
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream", "":
		// One chunk per token is the common case: room for them up front
		// spares the per-chunk path the growing appends.
		rec.Chunks = make([]record.Chunk, 0, min(max(rec.RequestedOutputTokens, 1), maxChunksUpFront))
		sr := getSSEReader(body, r.maxLine)
		var lb io.ReadCloser // the body the event loop may take (loopable)
		if body == resp.Body && r.loopable(rec) {
			lb = resp.Body
		}
		if r.read(ctx, wd, sr, rec, lb) {
			drain(wd, resp.Body)
		}
		putSSEReader(sr)
	case "application/json":
		r.readJSON(ctx, body, rec)
	default:
		snippet, _ := io.ReadAll(io.LimitReader(body, snippetBytes))
		rec.End = r.since()
		rec.Err = record.ErrBadContentType
		rec.ErrMsg = fmt.Sprintf("HTTP %d with Content-Type %q, not an event stream: %s", resp.StatusCode, resp.Header.Get("Content-Type"), snippet)
	}
}

// mediaType is a Content-Type's media type, lower case; an event
// stream's plain header without parsing it (mime.ParseMediaType makes a
// map of its parameters for every answer).
func mediaType(ct string) string {
	if ct == "text/event-stream" {
		return ct
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}

// decoded is resp's body decoded from its Content-Encoding. sixpin asks
// for none, but a proxy may compress anyway.
func decoded(resp *http.Response) (io.Reader, error) {
	switch ce := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); ce {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the body is not the gzip its Content-Encoding says: %w", err)
		}
		return zr, nil
	case "deflate":
		zr, err := zlib.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the body is not the deflate its Content-Encoding says: %w", err)
		}
		return zr, nil
	default:
		return nil, fmt.Errorf("Content-Encoding %q is not one sixpin reads (gzip, deflate)", ce)
	}
}

// drain reads what is left of a response after its end, within bounds
// (maxDrain; drainTimeout, which wd keeps), so that its connection goes
// back to the pool.
func drain(wd *watchdog, body io.Reader) {
	wd.drain()
	_, _ = io.CopyN(io.Discard, body, maxDrain)
	wd.endDrain()
}

// httpError records an error status with the message its body gives.
func (r *call) httpError(wd *watchdog, resp *http.Response, body io.Reader, rec *record.Record) {
	raw, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	drain(wd, resp.Body)
	rec.End = r.since()
	raw = r.rd.Bytes(raw)
	rec.ErrMsg = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, errorMessage(raw))
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		rec.ErrMsg = fmt.Sprintf("HTTP %d: a redirect to %s, not followed (it would add a round trip to every request's time to first token): "+
			"point the endpoint there", resp.StatusCode, r.rd.String(loc))
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		rec.Err = record.ErrHTTP429
		rec.RateLimitBucket = record.BucketFromMessage(rec.ErrMsg)
		if rec.RateLimitBucket == "" {
			rec.RateLimitBucket = bucketFromHeaders(resp.Header)
		}
	case code >= 500:
		rec.Err = record.ErrHTTP5xx
	default:
		rec.Err = record.ErrHTTP4xx
	}
	if record.AsksToSlowDown(resp.StatusCode) {
		rec.RetryAfter = r.runTime(retryHint(resp.Header, time.Now()))
	}
}

// errorMessage is the message of an error body: OpenAI's
// {"error":{"message":…}}, {"error":"…"}, Anthropic's {"type":"error",
// "error":{"type":T,"message":…}} (as "T: message"), vLLM's
// {"object":"error","message":…}, FastAPI's {"detail":…}; else the body
// as it is.
func errorMessage(raw []byte) string {
	var v struct {
		Type    string          `json:"type"`
		Error   json.RawMessage `json:"error"`
		Message *string         `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &v) == nil {
		var e struct {
			Type    string  `json:"type"`
			Message *string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &e) == nil && e.Message != nil && v.Type == "error" && e.Type != "":
			return e.Type + ": " + *e.Message
		case e.Message != nil:
			return *e.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != nil:
			return *v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			return s
		case len(v.Detail) > 0:
			return string(v.Detail)
		}
	}
	if len(raw) == 0 {
		return "(empty body)"
	}
	return string(raw)
}

// read consumes an event stream, timestamping every chunk. This is the
// per-chunk hot path: one clock read, an allocation-free read and parse,
// an append. It reports whether the stream ended as it should ([DONE]),
// so that the rest of the response may be drained.
//
// lb, if not nil, is the stream's body, which the event loop may take
// once the stream has shown itself long: loopAfterReads arrivals (an
// answer sent at once, however long, is read here to its end). The
// stream then ends on the loop (onLoop), which drains it too.
func (r *call) read(ctx context.Context, wd *watchdog, sr *sseReader, rec *record.Record, lb io.ReadCloser) bool {
	var st reading
	st.init(r, ctx, wd, sr, rec)
	defer st.close()
	for {
		data, err := sr.next()
		elapsed := time.Since(st.start)
		if err != nil {
			st.stop(err, elapsed)
			return false
		}
		if end, done := st.event(data, elapsed, sr.reads()); end {
			return done
		}
		if lb != nil && sr.reads() >= loopAfterReads {
			if onLoop(&st, lb) {
				return false
			}
			lb = nil
		}
	}
}

// reading is one answer's event stream being read: what its reader
// keeps from one event to the next, so that events may come from a loop
// that reads the stream (call.read) or from an event loop that reads many
// (loopStream). It is used by one goroutine at a time.
//
// What an event reads is copied here once, not loaded from the call or
// the record each time: at a thousand streams every line a waking stream
// touches has been evicted, and one more line is one more miss (a load
// of r.keepText was 28% of the read loop's own time). The event's parse
// (c) lives in the pooled reader.
type reading struct {
	c        *chunk
	rec      *record.Record
	chunks   []record.Chunk
	proto    protocol // the Client's, shared by every stream: read once
	clk      Clock
	start    time.Time
	finished bool
	model    bool
	keep     bool
	// lastRead is the stream read the last token-bearing chunk came in;
	// tokenReads counts those reads (Record.TokenReads).
	lastRead   uint32
	tokenReads int
	// Chunks not yet added to the live count, and when they go.
	pending  int64
	flushAt  time.Duration
	live     *atomic.Int64
	stall    time.Duration
	publish  time.Duration // when the next chunk's time goes to the stall watch
	watching bool          // the watch looks for a stall
	wd       *watchdog
	// The server's send stamps are wall-clock times; the receive time
	// they are set against is the run's wall-clock start plus the
	// monotonic time since (one clock read per chunk, not two).
	startUnix int64
	r         *call
	sr        *sseReader
	ctx       context.Context
}

func (st *reading) init(r *call, ctx context.Context, wd *watchdog, sr *sseReader, rec *record.Record) {
	*st = reading{c: &sr.ev, rec: rec, chunks: rec.Chunks, proto: r.proto, clk: r.clk, start: r.clk.Start,
		keep: r.keepText, tokenReads: rec.TokenReads, live: r.live.stripe(rec.Index), stall: r.stallTimeout,
		startUnix: r.clk.Start.UnixNano(), r: r, sr: sr, ctx: ctx, wd: wd}
}

// close gives the record what the reading kept, and ends its stall watch.
func (st *reading) close() {
	st.rec.Chunks, st.rec.TokenReads = st.chunks, st.tokenReads
	if st.watching {
		st.wd.endStall()
	}
	st.live.Add(st.pending)
	st.pending = 0
}

// stop ends the stream on its reader's error (io.EOF: its end), which
// came elapsed (wall time) after the run's start.
func (st *reading) stop(err error, elapsed time.Duration) {
	rec, r := st.rec, st.r
	rec.End = st.clk.Run(elapsed)
	rec.Chunks = st.chunks
	switch {
	case err == io.EOF && st.ctx.Err() == nil:
		ended(rec, st.finished)
		r.cutInEvent = st.sr.cut
	case errors.Is(err, errLineTooLong):
		rec.Err = record.ErrOversizedLine
		rec.ErrMsg = fmt.Sprintf("a line of the stream is longer than the limit of %d bytes (Options.MaxLineBytes); the stream was not read further", r.maxLine)
	default:
		r.fail(rec, st.ctx, err, nil)
	}
}

// event takes one event's data, which arrived elapsed (wall time) after
// the run's start in the stream's reads-th arrival. It reports whether
// the stream ended with it, and whether as it should ([DONE]).
func (st *reading) event(data []byte, elapsed time.Duration, reads uint32) (end, done bool) {
	at := st.clk.Run(elapsed) // run time (inlined)
	rec, c := st.rec, st.c
	if st.proto.done(data) {
		rec.End = at
		rec.Chunks = st.chunks
		ended(rec, st.finished)
		return true, true
	}
	if perr := st.proto.event(data, c); perr != nil {
		rec.End = at
		rec.Err = record.ErrMalformed
		rec.ErrMsg = fmt.Sprintf("chunk is not valid JSON: %q", data[:min(len(data), maxErrorBody)])
		return true, false
	}
	if c.hasError {
		rec.End = at
		rec.Err = record.ErrStreamError
		rec.ErrMsg = "error event in the stream: " + c.errorText(data)
		return true, false
	}
	if !st.model && len(c.model) > 0 {
		st.model, rec.Model = true, string(c.model)
	}
	if c.finished && !st.finished {
		st.finished = true
		rec.FinishReason = string(c.finishReason)
	}
	if c.hasUsage {
		rec.HasUsage = true
		rec.Usage = c.usage.into(rec.Usage)
	}
	if c.timings.has {
		rec.Server = c.timings.results(st.clk)
	}
	if st.keep && len(c.content) > 0 {
		rec.Text = keepText(rec.Text, c.content)
	}
	n := c.contentBytes + c.reasoningBytes + c.toolBytes
	if c.toolCall {
		rec.ToolCalls = true
		n = max(n, 1) // a tool call's delta is output, whatever it carries
	}
	if n == 0 {
		return false, false
	}
	lag := int32(-1)
	if c.sentUnixNS > 0 {
		lag = int32(min(max(st.startUnix+int64(elapsed)-c.sentUnixNS, 0)/1e3, math.MaxInt32))
	}
	st.chunks = append(st.chunks, record.Chunk{
		At: at, Bytes: int32(n), Reasoning: c.contentBytes == 0 && !c.toolCall, ClientLagUS: lag,
	})
	if len(st.chunks) == 1 && st.r.first != nil {
		st.r.first.Store(int64(at) + 1)
	}
	if reads != st.lastRead {
		st.tokenReads, st.lastRead = st.tokenReads+1, reads
	}
	if st.pending++; elapsed >= st.flushAt {
		st.live.Add(st.pending)
		st.pending, st.flushAt = 0, elapsed+LiveStep
	}
	if st.stall > 0 && at >= st.publish {
		if st.watching {
			st.wd.last.Store(int64(at))
		} else {
			st.wd.watchStall(st.stall, at)
			st.watching = true
		}
		st.publish = at + stallStep(st.stall)
	}
	return false, false
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// ended classifies a stream that ended cleanly: without any output it is
// empty, without a finish_reason it was cut.
func ended(rec *record.Record, finished bool) {
	switch {
	case len(rec.Chunks) == 0:
		rec.Err, rec.ErrMsg = record.ErrEmpty, "the stream finished without any content, reasoning or tool call"
	case !finished:
		rec.Err, rec.ErrMsg = record.ErrStreamCut, "the stream ended before a finish_reason"
	}
}

// readJSON reads a 200 answer that is one JSON object rather than a
// stream: a whole completion (the server ignored "stream": true), one
// chunk at its arrival, or an error.
func (r *call) readJSON(ctx context.Context, body io.Reader, rec *record.Record) {
	data, err := io.ReadAll(io.LimitReader(body, int64(r.maxLine)+1))
	now := time.Now()
	rec.End = r.runTime(now.Sub(r.clk.Start))
	var c chunk
	switch {
	case err != nil:
		r.fail(rec, ctx, err, nil)
	case len(data) > r.maxLine:
		rec.Err = record.ErrOversizedLine
		rec.ErrMsg = fmt.Sprintf("the JSON answer is longer than the limit of %d bytes (Options.MaxLineBytes)", r.maxLine)
	case r.proto.event(data, &c) != nil:
		rec.Err = record.ErrMalformed
		rec.ErrMsg = fmt.Sprintf("the JSON answer is not valid JSON: %q", data[:min(len(data), maxErrorBody)])
	case c.hasError:
		rec.Err = record.ErrStreamError
		rec.ErrMsg = "error answer: " + c.errorText(data)
	default:
		rec.Model, rec.FinishReason = string(c.model), string(c.finishReason)
		rec.HasUsage, rec.Usage = c.hasUsage, c.usage.into(record.Usage{})
		if c.timings.has {
			rec.Server = c.timings.results(r.clk)
		}
		rec.ToolCalls = c.toolCall
		if r.keepText && len(c.content) > 0 {
			rec.Text = keepText(rec.Text, c.content)
		}
		if n := c.contentBytes + c.reasoningBytes + c.toolBytes; n > 0 || c.toolCall {
			rec.Chunks = append(rec.Chunks, record.Chunk{At: rec.End, Bytes: int32(max(n, 1)),
				Reasoning: c.contentBytes == 0 && !c.toolCall, ClientLagUS: -1})
			rec.TokenReads = 1              // a whole answer: its decode is not observed
			r.live.stripe(rec.Index).Add(1) // taken back with the stream's chunks
		}
		ended(rec, c.finished)
	}
}

// keepText appends an event's answer text to the record's, up to
// record.MaxTextBytes (the first append sizes the buffer once).
func keepText(text, add []byte) []byte {
	if text == nil {
		text = make([]byte, 0, min(record.MaxTextBytes, 4<<10))
	}
	return append(text, add[:min(len(add), record.MaxTextBytes-len(text))]...)
}

// fail classifies err (with the request context's cause) onto rec; s is
// the send that failed, nil for a failure while reading the answer.
func (r *call) fail(rec *record.Record, ctx context.Context, err error, s *sent) {
	cause := context.Cause(ctx)
	if ic := context.Cause(r.inflight); ic != nil && cause == ic {
		// Cut off by the end of inflight, whose cause it took.
		cause = cutCause(r.inflight, r.cut)
		if errors.Is(err, ic) {
			err = cause
		}
	}
	rec.Err, rec.ErrMsg = classify(err, cause, s)
	if len(rec.Chunks) > 0 && rec.Err == record.ErrConnect {
		rec.Err = record.ErrStreamCut // the connection broke mid-stream
	}
}

// classify maps a request error to its class and a message; s is the
// send that failed, nil for a failure while reading the answer.
func classify(err, cause error, s *sent) (record.ErrorClass, string) {
	msg := err.Error()
	var ie *interruptError
	switch {
	case errors.As(cause, &ie):
		return record.ErrInterrupted, ie.msg
	case errors.Is(cause, errStalled):
		return record.ErrTimeout, "stream stalled: no chunk within the stall timeout"
	case errors.Is(cause, errDrained):
		return record.ErrTimeout, "the response went on after its end: " + msg
	case errors.Is(cause, context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) && !dialFailed(err):
		// A dial's own timeout is a DeadlineExceeded too: a connect
		// failure (below), not the request's.
		return record.ErrTimeout, "request timed out: " + msg
	}
	var netErr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.As(err, &dnsErr), errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &certErr),
		errors.As(err, &unknownAuth), errors.As(err, &recordErr),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return record.ErrConnect, msg
	case errors.As(err, &netErr) && netErr.Timeout():
		return record.ErrTimeout, msg
	}
	if !connClosed(err) {
		return record.ErrClient, msg
	}
	how := "closed"
	if errors.Is(err, syscall.ECONNRESET) || strings.Contains(msg, "connection reset") {
		how = "reset"
	}
	switch {
	case s != nil && s.reusedConn:
		return record.ErrConnect, "the server " + how + " a kept-alive connection as the request was sent, before answering " +
			"(not sent again: the server may have read it): " + msg
	case s != nil:
		return record.ErrConnect, "the server " + how + " the connection before answering: " + msg
	}
	return record.ErrStreamCut, "the connection was " + how + " mid-stream: " + msg
}

// oneLine shortens an error message to one line of at most 300 bytes,
// cut at a character boundary.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		i := 300
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

// redact removes the target's secrets from a message built from text the
// server controls, then shortens it to one line.
func (r *Client) redact(msg string) string { return oneLine(r.rd.String(msg)) }
