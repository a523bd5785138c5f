package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/internal/redact"
)

// DefaultReadyTimeout is how long `sixpin run`, `bakeoff` and `waterfall`
// wait, before load, for a server still starting to be ready
// (--ready-timeout): long enough for a large model to load, short enough
// that a wrong port does not hang a script for long.
const DefaultReadyTimeout = 5 * time.Minute

// Between two looks at a server that is not ready: a jittered backoff
// from readyFirst to readyMax, or the wait the server asked for (a
// Retry-After is honoured whole, as during the run); what it waits for
// is said again every readySay.
const (
	readyFirst = 200 * time.Millisecond
	readyMax   = 2 * time.Second
	readySay   = 10 * time.Second
)

// waitReady waits, before load, until the server is ready to serve
// (endpoint.Client.Ready), for at most cfg.ReadyTimeout (0: it does not
// look), saying on cfg.ErrOut what it waits for. A server not ready by
// then fails the run before any request of it (ErrRunFailed).
func waitReady(ctx context.Context, cfg Config, c *endpoint.Client) error {
	if cfg.ReadyTimeout <= 0 {
		return nil
	}
	start := time.Now()
	rng := rand.New(rand.NewPCG(endpoint.ProbeSeed, 0x7265616479)) // "ready": jitter, not part of the measurement
	var said time.Time
	for n := 0; ; n++ {
		r := c.Ready(ctx)
		waited := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%w: while waiting for the server to be ready", ErrInterrupted)
		case r.Ready:
			if n > 0 {
				fmt.Fprintf(cfg.ErrOut, "sixpin: the server is ready after %s\n", waited.Round(time.Millisecond))
			}
			return nil
		case waited >= cfg.ReadyTimeout:
			return fmt.Errorf("%w: the server at %s was not ready after %s (%s); --ready-timeout waits longer",
				ErrRunFailed, redact.URL(c.Target().BaseURL), cfg.ReadyTimeout, r.Why)
		}
		switch {
		case n == 0:
			fmt.Fprintf(cfg.ErrOut, "sixpin: waiting up to %s (--ready-timeout) for the server to be ready: %s\n", cfg.ReadyTimeout, r.Why)
			said = time.Now()
		case time.Since(said) >= readySay:
			fmt.Fprintf(cfg.ErrOut, "sixpin: still waiting for the server (%s of %s): %s\n", waited.Round(time.Second), cfg.ReadyTimeout, r.Why)
			said = time.Now()
		}
		d := backoff.Jittered(rng, readyFirst, readyMax, n)
		if r.Hint > 0 {
			d = r.Hint
		}
		if !backoff.Sleep(ctx, min(d, cfg.ReadyTimeout-waited)) {
			return fmt.Errorf("%w: while waiting for the server to be ready", ErrInterrupted)
		}
	}
}

// refusalHint says what to check when the server refused a one-token
// request with status (endpoint.Refusal).
func refusalHint(status int, c *endpoint.Client, tg *target) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		set := "set"
		if !tg.keySet {
			set = "not set"
		}
		return fmt.Sprintf("check the API key (profile %s reads it from %s, which is %s)", tg.profile.Name, tg.keyEnv, set)
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return fmt.Sprintf("sixpin posts to %s: check --endpoint (an OpenAI-compatible base URL usually ends in /v1) and the model name %q",
			redact.URL(c.PostURL()), tg.Model)
	}
	return fmt.Sprintf("check what profile %s adds to each request (extra_body, output control %s) against what the server accepts",
		tg.profile.Name, tg.OutputControl)
}
