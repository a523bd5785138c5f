package endpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/sixpin/sixpin/record"
)

// readyPrompt is what Ready sends to a server without a health endpoint:
// any short prompt, for one token; its lengths are not measured.
const readyPrompt = "Hello"

// Readiness is one look at whether the server is ready to serve.
type Readiness struct {
	// Ready is false while the server cannot be reached or says it is
	// not ready (503 Loading model, 529 overloaded, a gateway's 502/504
	// for a backend still starting); Why then says how, on one line,
	// redacted, and Hint is the wait a generation's answer asked for (0:
	// none; wall-clock).
	Ready bool
	Why   string
	Hint  time.Duration
	// Health is true when the server's health endpoint answered (200 or
	// not ready); false when it has none and a one-token request was
	// the look.
	Health bool
}

// Ready looks once at whether the server is ready to serve, as its
// engine says it: GET {host}/health (vLLM, SGLang, TGI, llama-server: 200
// once the model is loaded; llama-server answers 503 Loading model
// before). A server without one (404, or any other answer) is asked a
// one-token generation, whose answer decides the same way: a connect
// failure, 503 or 529 is not ready, any other answer is. A failure that
// waiting cannot mend (a name that does not resolve, a certificate
// refused) is ready too, so that the run goes on to report it. Each look
// is bounded by DefaultDiscoverTimeout.
func (c *Client) Ready(ctx context.Context) Readiness {
	lookCtx, cancel := context.WithTimeout(ctx, DefaultDiscoverTimeout)
	defer cancel()
	status, raw, err := c.fetch(lookCtx, http.MethodGet, c.ep.root("/health"), nil)
	switch {
	case err != nil && ctx.Err() == nil && transient(err):
		return Readiness{Why: "cannot connect: " + c.redact(err.Error())}
	case err != nil:
		return Readiness{Ready: true}
	case status == http.StatusOK:
		return Readiness{Ready: true, Health: true}
	case notReady(status):
		return Readiness{Why: fmt.Sprintf("GET /health: HTTP %d: %s", status, oneLine(errorMessage(raw))), Health: true}
	}
	r := &call{Client: c, clk: Clock{Start: time.Now()}}
	rec := r.stream(ctx, ErrCutAtOnce, record.Request{Index: -1, PromptTokens: 1, OutputTokens: 1}, UserMessage(readyPrompt), 0)
	if rec.Err == record.ErrConnect || rec.Failed() && notReady(rec.HTTPStatus) {
		return Readiness{Why: rec.ErrMsg, Hint: rec.RetryAfter}
	}
	return Readiness{Ready: true}
}

// notReady reports whether an HTTP status says the server is not ready
// yet.
func notReady(status int) bool {
	switch status {
	case http.StatusServiceUnavailable, 529, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// transient reports whether a failed health check is one a server still
// starting gives: refused, reset or closed connections, and timeouts.
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}
