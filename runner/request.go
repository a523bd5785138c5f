package runner

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

var (
	errStalled     = errors.New("stream stalled")
	errInterrupted = errors.New("run interrupted")
)

// do sends one request, reads its stream to the end and returns its record.
// It never fails: a failure is classified on the record. inflight
// cancellation cuts the request off as interrupted.
func (r *Runner) do(inflight context.Context, req scenario.Request, text string, scheduled time.Duration) *results.Record {
	return r.doMessages(inflight, req, userMessage(text), scheduled)
}

// userMessage is a conversation of one user message.
func userMessage(text string) []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}
}

// doMessages is do for a whole conversation.
func (r *Runner) doMessages(inflight context.Context, req scenario.Request, msgs []openai.ChatCompletionMessage, scheduled time.Duration) *results.Record {
	r.stats.Issued.Add(1)
	r.stats.InFlight.Add(1)
	rec := r.stream(inflight, req, msgs, scheduled)
	r.stats.InFlight.Add(-1)
	r.stats.Done.Add(1)
	if rec.Failed() {
		r.stats.Failed.Add(1)
	}
	if rec.HasUsage {
		r.stats.OutputTokens.Add(int64(rec.Usage.CompletionTokens))
	} else {
		r.stats.OutputTokens.Add(int64(len(rec.Chunks)))
	}
	return rec
}

func (r *Runner) stream(inflight context.Context, req scenario.Request, msgs []openai.ChatCompletionMessage, scheduled time.Duration) *results.Record {
	rec := &results.Record{
		Session:               -1,
		Index:                 req.Index,
		Class:                 req.Class,
		Scheduled:             scheduled,
		RequestedPromptTokens: req.PromptTokens,
		RequestedOutputTokens: req.OutputTokens,
	}
	// The request's context: cut off by an interrupt (inflight), by the
	// request timeout, or by the stall watchdog.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(inflight))
	defer cancel(nil)
	stopInterrupt := context.AfterFunc(inflight, func() { cancel(errInterrupted) })
	defer stopInterrupt()
	ctx, cancelTimeout := context.WithTimeout(ctx, r.requestTimeout)
	defer cancelTimeout()
	x := &exchange{}
	if r.exact && hasControl(r.target.OutputControl, ControlMinTokens) {
		x.minTokens = req.OutputTokens
	}
	ctx = withExchange(ctx, x)

	creq := openai.ChatCompletionRequest{
		Model:         r.target.Model,
		Messages:      msgs,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if r.target.MaxTokensField == "max_completion_tokens" {
		creq.MaxCompletionTokens = req.OutputTokens
	} else {
		creq.MaxTokens = req.OutputTokens
	}

	rec.Sent = r.since()
	stream, err := r.client.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		rec.End = r.since()
		r.fail(rec, ctx, err)
		if rec.HTTPStatus == 0 {
			rec.HTTPStatus = x.status
		}
		if rec.Err == results.ErrHTTP429 {
			rec.RateLimitBucket = results.BucketFromMessage(rec.ErrMsg)
			if rec.RateLimitBucket == "" {
				rec.RateLimitBucket = x.bucket
			}
			rec.RetryAfter = r.runTime(x.retryAfter)
		}
		return rec
	}
	defer stream.Close()
	rec.HTTPStatus = x.status
	r.read(ctx, cancel, stream, rec)
	return rec
}

// read consumes the stream, timestamping every chunk. This is the per-chunk
// hot path: one clock read, an allocation-free parse, an append.
func (r *Runner) read(ctx context.Context, cancel context.CancelCauseFunc, stream *openai.ChatCompletionStream, rec *results.Record) {
	var (
		c        chunk
		finished bool
		watch    *stallWatch
	)
	defer func() {
		if watch != nil {
			watch.stop()
		}
	}()
	for {
		raw, err := stream.RecvRaw()
		now := time.Now()
		at := r.runTime(now.Sub(r.start))
		if err != nil {
			rec.End = at
			if errors.Is(err, io.EOF) && ctx.Err() == nil {
				switch {
				case !finished:
					rec.Err, rec.ErrMsg = results.ErrStreamCut, "the stream ended before a finish_reason"
				case len(rec.Chunks) == 0:
					rec.Err, rec.ErrMsg = results.ErrEmpty, "the stream finished without any content or reasoning token"
				}
				return
			}
			r.fail(rec, ctx, err)
			return
		}
		if perr := parseChunk(raw, &c); perr != nil {
			rec.End = at
			rec.Err = results.ErrMalformed
			rec.ErrMsg = r.redact(fmt.Sprintf("chunk is not valid JSON: %q", raw))
			return
		}
		if c.hasError {
			rec.End = at
			rec.Err = results.ErrStreamError
			rec.ErrMsg = r.redact("error event in the stream: " + string(raw))
			return
		}
		if rec.Model == "" && len(c.model) > 0 {
			rec.Model = string(c.model)
		}
		if c.finished && !finished {
			finished = true
			rec.FinishReason = string(c.finishReason)
		}
		if c.hasUsage {
			rec.HasUsage = true
			rec.Usage = results.Usage{
				PromptTokens:     c.usage.promptTokens,
				CompletionTokens: c.usage.completionTokens,
				ReasoningTokens:  c.usage.reasoningTokens,
				CachedTokens:     c.usage.cachedTokens,
			}
		}
		n := c.contentBytes + c.reasoningBytes
		if n == 0 {
			continue
		}
		lag := int32(-1)
		if c.sentUnixNS > 0 {
			lag = int32(min(max(now.UnixNano()-c.sentUnixNS, 0)/1e3, math.MaxInt32))
		}
		rec.Chunks = append(rec.Chunks, results.Chunk{
			At: at, Bytes: int32(n), Reasoning: c.contentBytes == 0, ClientLagUS: lag,
		})
		if r.stallTimeout > 0 {
			if watch == nil {
				watch = newStallWatch(r.stallTimeout, r.since, func() { cancel(errStalled) })
			}
			watch.last.Store(int64(at))
		}
	}
}

// stallWatch cancels a stream that has sent no chunk for a timeout. The
// per-chunk cost is one atomic store of the chunk's time (a timer reset per
// chunk would touch the runtime's timer heap millions of times); the timer
// itself fires at most once per timeout and re-arms for what remains.
type stallWatch struct {
	last    atomic.Int64 // offset of the last chunk from the run start, ns
	timeout time.Duration
	since   func() time.Duration // the current offset from the run start
	timer   *time.Timer
	onStall func()
}

func newStallWatch(timeout time.Duration, since func() time.Duration, onStall func()) *stallWatch {
	w := &stallWatch{timeout: timeout, since: since, onStall: onStall}
	w.timer = time.AfterFunc(timeout, w.check)
	return w
}

func (w *stallWatch) check() {
	idle := w.since() - time.Duration(w.last.Load())
	if idle >= w.timeout {
		w.onStall()
		return
	}
	w.timer.Reset(w.timeout - idle)
}

func (w *stallWatch) stop() { w.timer.Stop() }

// fail classifies err (with the request context's cause) onto rec.
func (r *Runner) fail(rec *results.Record, ctx context.Context, err error) {
	var msg string
	var status int
	rec.Err, status, msg = classify(err, context.Cause(ctx))
	if status != 0 {
		rec.HTTPStatus = status
	}
	rec.ErrMsg = r.redact(msg)
	if len(rec.Chunks) > 0 && rec.Err == results.ErrConnect {
		rec.Err = results.ErrStreamCut // the connection broke mid-stream
	}
}

// classify maps a request error to its class, the HTTP status if any, and
// a one-line message.
func classify(err, cause error) (results.ErrorClass, int, string) {
	msg := err.Error()
	switch {
	case errors.Is(cause, errInterrupted):
		return results.ErrInterrupted, 0, "cut off by the interrupt after the grace period"
	case errors.Is(cause, errStalled):
		return results.ErrTimeout, 0, "stream stalled: no chunk within the stall timeout"
	case errors.Is(cause, context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return results.ErrTimeout, 0, "request timed out: " + msg
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	status := 0
	switch {
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
		if status == 0 {
			return results.ErrStreamError, 0, msg
		}
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
	}
	switch {
	case status == 429:
		return results.ErrHTTP429, status, msg
	case status >= 500:
		return results.ErrHTTP5xx, status, msg
	case status >= 400:
		return results.ErrHTTP4xx, status, msg
	}
	var netErr net.Error
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return results.ErrStreamCut, 0, "the connection closed mid-stream: " + msg
	case errors.As(err, &dnsErr), errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &certErr),
		errors.As(err, &unknownAuth), errors.As(err, &recordErr),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return results.ErrConnect, 0, msg
	case errors.As(err, &netErr) && netErr.Timeout():
		return results.ErrTimeout, 0, msg
	case strings.Contains(msg, "connection reset"), strings.Contains(msg, "broken pipe"):
		return results.ErrStreamCut, 0, msg
	}
	return results.ErrClient, 0, msg
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

// redact removes secrets (the API key, header values) from a message built
// from text the server controls, before it is shortened, so that no part
// of a secret survives into a record.
func (r *Runner) redact(msg string) string {
	if k := r.target.APIKey; k != "" {
		msg = strings.ReplaceAll(msg, k, "[redacted]")
	}
	for _, v := range r.target.Headers {
		if len(v) >= 8 {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
		}
	}
	return oneLine(msg)
}
