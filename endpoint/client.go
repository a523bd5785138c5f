// Package endpoint is the wire: one request sent to an inference server
// and its answer read into a record.Record.
//
// It holds everything about the server on the other side: the
// Target (base URL, model, key, headers, output control), the HTTP
// transport and its connection reuse, one request sent and its answer read
// into a record.Record (the protocols: OpenAI chat completions,
// Anthropic Messages, OpenAI Responses, legacy completions; a lean
// Server-Sent Events reader, per-chunk monotonic timestamps, failure
// classification, redaction of the target's secrets), discovery of what
// the server serves, the chat-template probe, and the server's /tokenize.
// The runner package generates load with it.
package endpoint

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/record"
)

// Defaults for Options.
const (
	DefaultRequestTimeout = 10 * time.Minute
	DefaultStallTimeout   = 2 * time.Minute
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// Conns is how many idle connections are kept (the run's
	// concurrency); at least 2.
	Conns int
	// MaxConns, if > 0, bounds the connections open and being dialled
	// over sixpin's own transport (h1.Transport.MaxConns): a closed
	// loop's streams, never more.
	MaxConns int
	// Exact enforces the output pin with the target's output control.
	Exact bool
	// MaxLineBytes bounds one line of a stream, and one event's data
	// (default DefaultMaxLineBytes): a longer one fails the request
	// (class oversized_line), so that no stream holds more memory.
	MaxLineBytes int
	// RequestTimeout bounds one request from send to last byte (default
	// DefaultRequestTimeout).
	RequestTimeout time.Duration
	// StallTimeout fails a stream that sends no token for that long after
	// its first token (class timeout; default DefaultStallTimeout);
	// keep-alive comments do not count; negative: no such limit. Before
	// the first token the request timeout bounds the wait.
	StallTimeout time.Duration
	// RequestIDPrefix, when set, sends every request with an X-Request-Id
	// of PREFIX-N (N counts the client's requests from 1), records it on
	// the request's Record and checks the id an answer echoes. Requests
	// that are not the run's (the readiness check, the template probe)
	// are PREFIX-probe-N, so a server's log can tell them apart.
	RequestIDPrefix string
	// NoEventLoop reads every answer on its own goroutine. By default,
	// on Linux, a long answer over plain HTTP/1.1 is read on the
	// process's event loop (internal/evloop), which spends less CPU per
	// chunk and reads no later (docs/speed.md); this is the way back, to
	// compare the two.
	NoEventLoop bool
}

// ProbeIDInfix is what stands between RequestIDPrefix and the counter in
// the X-Request-Id of a request that is not the run's.
const ProbeIDInfix = "-probe-"

// Client sends requests to one Target. It is safe for concurrent use by
// any number of goroutines: per-request state lives in each call, and
// what is shared (outages, keep-alive learning, the connection count) is
// updated once per request, never per chunk.
type Client struct {
	target Target
	// httpc reuses connections; fresh opens one per request, for a
	// server that hangs up on kept-alive ones (keepAlive).
	httpc, fresh *http.Client
	// proto is the wire API spoken; ep is the target's URL taken apart;
	// url and header are every request's URL and header (header is
	// shared: read only).
	proto  protocol
	ep     baseURL
	url    string
	header http.Header
	// tmpl is every request but its context, header and body (send).
	tmpl *http.Request
	// extra is the request extensions as `,"k":v` pairs for the body.
	extra []byte
	// rd removes the target's secrets from the server's text.
	rd redactor

	exact          bool
	maxLine        int
	requestTimeout time.Duration
	stallTimeout   time.Duration
	// noLoop reads every answer on its goroutine (Options.NoEventLoop);
	// loopStreams counts the answers read on the event loop.
	noLoop      bool
	loopStreams atomic.Int64

	// health records the endpoint's outages.
	health health
	// keepAlive turns connection reuse off once the server is seen to
	// hang up on kept-alive connections; dials counts connections opened.
	keepAlive keepAlive
	dials     atomic.Int64
	// idPrefix and ids make the requests' X-Request-Id (Options).
	idPrefix string
	ids      atomic.Int64
	// wire is the HTTP the first answer came over (Wire).
	wire atomic.Pointer[string]
}

// New prepares a Client. It fails only on a target it cannot address: a
// base URL that is not http(s), or one with user info when an API key is
// set too (both would be the Authorization header).
func New(t Target, o Options) (*Client, error) {
	c := &Client{
		target:         t,
		exact:          o.Exact,
		maxLine:        DefaultMaxLineBytes,
		requestTimeout: DefaultRequestTimeout,
		stallTimeout:   DefaultStallTimeout,
		idPrefix:       o.RequestIDPrefix,
		noLoop:         o.NoEventLoop,
	}
	if o.MaxLineBytes > 0 {
		c.maxLine = o.MaxLineBytes
	}
	if o.RequestTimeout > 0 {
		c.requestTimeout = o.RequestTimeout
	}
	if o.StallTimeout != 0 {
		c.stallTimeout = o.StallTimeout
	}
	var err error
	extra := map[string]any{}
	for k, v := range t.ExtraBody {
		extra[k] = v
	}
	if c.exact && t.OutputControl.Has(ControlIgnoreEOS) {
		extra["ignore_eos"] = true
	}
	if c.extra, err = encodeExtra(extra); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	ep, auth, err := parseBaseURL(t.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if auth != "" && t.APIKey != "" {
		return nil, fmt.Errorf("target: the base URL %s carries a user name and password and an API key is set too; "+
			"both would be the Authorization header: drop one (the key comes from the profile's api_key_env)", redact.URL(t.BaseURL))
	}
	c.proto = newProtocol(t.Protocol)
	if t.Protocol == ProtocolMessages && ep.apiPath == ep.rootPath {
		// Anthropic's base URL has no /v1 (https://api.anthropic.com):
		// with or without it, the API is under …/v1.
		ep.apiPath += "/v1"
	}
	c.ep, c.url = ep, ep.api(c.proto.path())
	if c.tmpl, err = http.NewRequest(http.MethodPost, c.url, nil); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	c.header = requestHeader(t, auth)
	c.rd = newRedactor(t, auth)
	tr := newTransport(o.Conns, &c.dials, t.HTTP, t.RootCAs)
	once := tr.Clone()
	once.DisableKeepAlives = true
	c.httpc, c.fresh = &http.Client{Transport: streamTransport(tr, t.HTTP, o.MaxConns, c.closedIdle)}, &http.Client{Transport: streamTransport(once, t.HTTP, o.MaxConns, nil)}
	return c, nil
}

// PostURL is the URL the client posts its requests to.
func (c *Client) PostURL() string { return c.url }

// Target returns the client's target.
func (c *Client) Target() Target { return c.target }

// Outages returns the times the endpoint could not be reached, in order:
// from a request that failed to connect to the first answer, on a new
// connection, to a request sent after it. Times are run time, as the
// requests' clocks gave them.
func (c *Client) Outages() []record.Outage { return c.health.list() }

// Connections returns how many TCP connections the client has opened.
func (c *Client) Connections() int64 { return c.dials.Load() }

// EventLoopStreams is how many answers the client has read on the
// process's event loop (Options.NoEventLoop); the others were read on
// their own goroutine.
func (c *Client) EventLoopStreams() int64 { return c.loopStreams.Load() }

// Wire is the HTTP the first answer to a request of the client's came
// over, as negotiated: "HTTP/1.1", "HTTP/1.1 over TLS 1.3", "HTTP/2.0
// over TLS 1.3"; "" before any answer.
func (c *Client) Wire() string {
	if w := c.wire.Load(); w != nil {
		return *w
	}
	return ""
}

// sawWire records the HTTP of an answer, the first one's only: one atomic
// load per request after it.
func (c *Client) sawWire(resp *http.Response) {
	if c.wire.Load() != nil {
		return
	}
	w := resp.Proto
	if resp.TLS != nil {
		w += " over " + tls.VersionName(resp.TLS.Version)
	}
	c.wire.CompareAndSwap(nil, &w)
}

// Close releases the client's idle connections.
func (c *Client) Close() { c.httpc.CloseIdleConnections(); c.fresh.CloseIdleConnections() }

// Clock turns wall-clock time into run time: offsets from Start, divided
// by Scale (1, or 0: real time; 0 < Scale < 1 against a simulator that
// runs 1/Scale times faster, so records are in simulated time).
type Clock struct {
	Start time.Time
	Scale float64
}

// Since is the offset from Start, in run time.
func (k Clock) Since() time.Duration { return k.Run(time.Since(k.Start)) }

// Run converts a wall-clock duration to run time.
func (k Clock) Run(d time.Duration) time.Duration {
	if k.Scale == 0 || k.Scale == 1 {
		return d
	}
	return time.Duration(float64(d) / k.Scale)
}
