package harness

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/listen"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/sim"
)

// SimConfig decodes a simulator profile's `sim:` section into the
// simulator's configuration, strictly: every error names the profile's
// file:line:col and the field inside sim: ("sim.fixed.ttft: must be ≥ 0").
// profiles keeps the section as YAML so that a client-side profile never
// links the simulator; this is where the two meet.
func SimConfig(p *profiles.Profile) (sim.Config, error) {
	var c sim.Config
	if !p.Simulated() || p.Sim == nil {
		return c, fmt.Errorf("profile %s is not a simulator profile (kind %s)", p.Name, p.Kind)
	}
	doc, errs := strictyaml.DecodeNode(p.Source, p.Sim, &c, "sim")
	if len(errs) > 0 {
		return c, errs
	}
	bad := func(field, format string, args ...any) {
		errs = append(errs, doc.Place(&strictyaml.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}))
	}
	if err := sim.Defaults(c).Validate(); err != nil {
		simErrors(err, bad)
	}
	simBounds(&c, bad)
	if len(errs) > 0 {
		errs.Sort()
		return c, errs
	}
	return c, nil
}

// SimulatorOf is what a simulator profile's sim: section resolves to,
// with the simulator's defaults, for describing it (report does not link
// the simulator); SimConfig's error when it does not decode.
func SimulatorOf(p *profiles.Profile) (*report.Simulator, error) {
	c, err := SimConfig(p)
	if err != nil {
		return nil, err
	}
	c = sim.Defaults(c)
	return &report.Simulator{Model: c.Model, Timing: c.Timing, MaxModelLen: c.MaxModelLen}, nil
}

// simErrors places the simulator's own validation errors ("roofline.mem_util:
// must be in (0, 1], got 2") at their fields inside sim:.
func simErrors(err error, bad func(field, format string, args ...any)) {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		if field, msg, ok := strings.Cut(e.Error(), ": "); ok && !strings.ContainsAny(field, " \n") {
			bad("sim."+field, "%s", msg)
		} else {
			bad("sim", "%v", e)
		}
	}
}

// simBounds checks the simulator's sizes that would allocate absurdly or
// overflow: token counts to bounds.Tokens, sequences to bounds.Streams.
func simBounds(c *sim.Config, bad func(field, format string, args ...any)) {
	for _, f := range []struct {
		key   string
		n     int
		limit int
		unit  string
	}{
		{"max_model_len", c.MaxModelLen, bounds.Tokens, " tokens"},
		{"max_batched_tokens", c.MaxBatchedTokens, bounds.Tokens, " tokens"},
		{"tokens_per_chunk", c.TokensPerChunk, bounds.Tokens, " tokens"},
		{"natural_output_tokens", c.NaturalOutputTokens, bounds.Tokens, " tokens"},
		{"block_size", c.BlockSize, bounds.Tokens, " tokens"},
		{"max_num_seqs", c.MaxNumSeqs, bounds.Streams, ""},
	} {
		if f.n > f.limit {
			bad("sim."+f.key, "must be ≤ %s%s (got %d)", numfmt.Thousands(float64(f.limit)), f.unit, f.n)
		}
	}
	if t := c.TemplateOverheadTokens; t != nil && *t > bounds.Tokens {
		bad("sim.template_overhead_tokens", "must be ≤ %s tokens (got %d)", numfmt.Thousands(bounds.Tokens), *t)
	}
}

// Simulator is the built-in simulator served over real HTTP, for `sixpin
// run` (on a loopback port) and `sixpin sim` (on the address asked for).
type Simulator struct {
	// URL is the OpenAI-compatible base URL, ending in /v1, as this
	// machine reaches it; Reach says who else can (listen.Where).
	URL, Reach string
	// Model is the model id it serves.
	Model string
	s     *sim.Server
	srv   *http.Server
	errc  chan error
}

// StartSimulator serves profile p's simulator on addr, a loopback
// address ("127.0.0.1:0" for any free port), timeScale times faster than
// real time when 0 < timeScale < 1. Errors in the profile are bad input.
func StartSimulator(p *profiles.Profile, addr string, timeScale float64) (*Simulator, error) {
	return startSimulator(p, addr, false, timeScale, nil, nil)
}

// ServeSimulator serves profile p's simulator in real time on addr for
// other tools (`sixpin sim`): by listen.Listen's rule, a loopback address
// unless remote. requestLog, when not nil, receives one JSON line per
// request served (sim.Config.RequestLog). With cert (nil: plain http) it
// serves https, HTTP/2 and HTTP/1.1 offered in ALPN as a cloud endpoint
// does. Errors in the profile and a refused address are bad input.
func ServeSimulator(p *profiles.Profile, addr string, remote bool, requestLog io.Writer, cert *tls.Certificate) (*Simulator, error) {
	return startSimulator(p, addr, remote, 0, requestLog, cert)
}

// simListener is `sixpin sim`'s rule for its address.
var simListener = listen.Server{Flag: "--addr", RemoteFlag: "--remote", Shows: "a model server that answers whoever asks"}

func startSimulator(p *profiles.Profile, addr string, remote bool, timeScale float64, requestLog io.Writer, cert *tls.Certificate) (*Simulator, error) {
	c, err := SimConfig(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	c.RequestLog = requestLog
	if timeScale > 0 && timeScale < 1 {
		c.TimeScale = timeScale
	}
	ln, err := listen.Listen(simListener, addr, remote)
	if errors.Is(err, listen.ErrNotLoopback) {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	} else if err != nil {
		return nil, fmt.Errorf("start simulator: %w", err)
	}
	s, err := sim.New(c)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("%w: profile %s: %w", ErrBadInput, p.Name, err)
	}
	url, reach := listen.Where(ln, "/v1")
	sm := &Simulator{URL: url, Reach: reach, Model: sim.Defaults(c).Model, s: s,
		srv: &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}, errc: make(chan error, 1)}
	if cert != nil {
		sm.URL = "https" + strings.TrimPrefix(url, "http")
		sm.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}}
		go func() { sm.errc <- sm.srv.ServeTLS(ln, "", "") }()
		return sm, nil
	}
	go func() { sm.errc <- sm.srv.Serve(ln) }()
	return sm, nil
}

// Done receives the error that stopped serving before Close was called.
func (sm *Simulator) Done() <-chan error { return sm.errc }

// Close stops the simulator: its engine, then the server, letting open
// connections finish for up to grace.
func (sm *Simulator) Close(grace time.Duration) error {
	sm.s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := sm.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("simulator shutdown: %w", err)
	}
	return nil
}
