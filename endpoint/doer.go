package endpoint

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sixpin/sixpin/internal/h1"
	"github.com/sixpin/sixpin/record"
)

// newTransport returns the transport for one run: sized for the run's
// concurrency so connections are reused, never compressed (SSE must not
// be buffered by gzip), and with dial and TLS timeouts so a dead endpoint
// fails fast as a connect error. Every connection it opens adds one to
// dials. It speaks HTTP/2 where a TLS server offers it under HTTP2, and
// HTTP/1.1 only otherwise.
func newTransport(conns int, dials *atomic.Int64, v HTTPVersion, roots *x509.CertPool) *http.Transport {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				dials.Add(1)
			}
			return c, err
		},
		// Sessions resumed on the connections after the first: a full
		// handshake per connection is most of opening one.
		TLSClientConfig:     &tls.Config{RootCAs: roots, ClientSessionCache: tls.NewLRUClientSessionCache(max(conns, 64))},
		ForceAttemptHTTP2:   v == HTTP2,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(conns, 2),
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableCompression:  true,
		// Buffers stay at the 4 KiB default: at 10,000 streams every KiB
		// per connection is 10 MB, and larger ones gain nothing measurable.
	}
	if v != HTTP2 {
		// A non-nil, empty map: no HTTP/2, a proxied https request too.
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return tr
}

// streamTransport carries the run's requests: over plain http (a local
// engine, the simulator), and over https under HTTP1, sixpin's own
// HTTP/1.1 transport, whose read of a streamed chunk costs less than
// net/http's (internal/h1); anything else (https under HTTP2, a proxy)
// through tr, with the same dialer, TLS config, pool size and keep-alive
// setting; at most maxConns connections (≤ 0: no bound). closedIdle (nil:
// none) is told of each idle connection the server closed, as a request
// was about to take it.
func streamTransport(tr *http.Transport, v HTTPVersion, maxConns int, closedIdle func(idle time.Duration)) http.RoundTripper {
	t := &h1.Transport{Dial: tr.DialContext, Fallback: tr, Proxy: tr.Proxy, MaxIdle: tr.MaxIdleConnsPerHost, MaxConns: maxConns,
		IdleTimeout: tr.IdleConnTimeout, DisableKeepAlives: tr.DisableKeepAlives, ClosedIdle: closedIdle}
	if v == HTTP1 {
		t.TLS, t.TLSHandshakeTimeout = tr.TLSClientConfig, tr.TLSHandshakeTimeout
	}
	return t
}

// attempt is what one attempt to send a request saw of its connection,
// through httptrace. Its fields are set from the transport's goroutines.
type attempt struct {
	conns    atomic.Int32 // connections the transport got (net/http re-sends a request of which nothing was written itself)
	reused   atomic.Bool  // the last one had served a request before
	idle     atomic.Int64 // how long the last one had been idle, ns
	dropped  atomic.Bool  // the last one was found closed by the server, and closed before use
	hungUp   atomic.Int32 // kept-alive connections found closed by the server within hangUpIdle of their last answer
	answered atomic.Bool  // the first byte of a response arrived
}

func (a *attempt) trace(seen *connSeen) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if seen != nil {
				seen.conn.Store(&info.Conn)
			}
			if a.conns.Add(1) > 1 && a.reused.Load() && !a.dropped.Load() && time.Duration(a.idle.Load()) < hangUpIdle {
				// net/http sends the request again when nothing of it
				// could be written: the server had closed the last one.
				a.hungUp.Add(1)
			}
			a.reused.Store(info.Reused)
			a.idle.Store(int64(info.IdleTime))
			a.dropped.Store(false)
			if info.Reused && serverClosed(info.Conn) {
				// Nothing is written to it: the transport's write fails,
				// and the request goes out again (see unsent).
				info.Conn.Close()
				a.dropped.Store(true)
				if info.IdleTime < hangUpIdle {
					a.hungUp.Add(1)
				}
			}
		},
		GotFirstResponseByte: func() { a.answered.Store(true) },
	}
}

// serverClosed looks, without waiting or reading, whether the server has
// hung up on a kept-alive TLS connection net/http is about to use (an end
// of stream or a reset is queued on it). A server that hangs up after
// each response (as llama-server does on a keep-alive timeout) usually has
// by then, and a request written to such a connection would be lost
// without a way to know that it never reached the server. One system call
// per request on a reused connection, none per chunk. An HTTP/2
// connection, which other requests share, is left alone, and so is a
// plain-TCP one: sixpin's own transport hands those out, and it looked at
// each as it took it from its pool (internal/h1), a moment before.
func serverClosed(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol != "h2" && peerClosed(c)
}

// unsent reports whether an attempt that failed with err on a kept-alive
// connection, before any answer, did so with nothing of the request
// written: the transport found the connection closed by the server
// before writing to it (net/http's "server closed idle connection"), or
// it was found so and closed before use (dropped), or the first write
// failed (h1.ErrUnsent). The server cannot have read it. After a byte of
// it went out, a failure (an end of stream, a reset) may have come after
// the server read the request — a server that resets a connection on a
// request does exactly that — and there is no telling.
func (a *attempt) unsent(err error) bool {
	return errors.Is(err, h1.ErrUnsent) || a.dropped.Load() && errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// dialFailed reports whether err is a failure to open a connection (after
// a kept-alive one was found closed, say): the endpoint's, not the
// kept-alive connection's.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// maxReconnects bounds the re-sends of one request. Each takes one dead
// connection out of the pool, and once the pool holds no more a fresh one
// is dialled, which ends the re-sends: the bound is a safety net.
const maxReconnects = 32

// sent is the outcome of send: the response, or the failure and whether
// it came on a kept-alive connection before any answer; and the times the
// request was sent again on a new connection.
type sent struct {
	resp       *http.Response
	err        error
	reusedConn bool
	// freshConn: the answer came on a connection opened for it, which
	// says the endpoint accepts connections now (health.answered).
	freshConn  bool
	reconnects int
}

// send posts a chat-completion body. A request that failed on a
// kept-alive connection without a byte of it written (attempt.unsent) is
// sent again on a new connection and counted as a reconnect; one of which
// anything was written is never sent twice: the server may have read it.
// What each attempt saw of its kept-alive connection goes to the
// keep-alive learning. base is the request's header (nil: the client's
// own); it is shared and read only.
func (r *Client) send(ctx context.Context, body []byte, id string, base http.Header) sent {
	var s sent
	if base == nil {
		base = r.header
	}
	header := base
	if id != "" { // once per request: the shared header plus the id
		header = make(http.Header, len(base)+1)
		for k, v := range base {
			header[k] = v
		}
		header["X-Request-Id"] = []string{id}
	}
	seen, _ := ctx.Value(connSeenKey{}).(*connSeen)
	for {
		a := &attempt{}
		// The request is the client's template (its URL parsed once,
		// shared, read only) with this one's context, header and body.
		req := r.tmpl.WithContext(httptrace.WithClientTrace(ctx, a.trace(seen)))
		req.Header = header // r.header is shared, read only: the transport never writes a request's header
		req.Body, req.ContentLength = &sentBody{Reader: *bytes.NewReader(body)}, int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return &sentBody{Reader: *bytes.NewReader(body)}, nil }
		c := r.httpc
		if r.keepAlive.off.Load() {
			c = r.fresh
		}
		s.resp, s.err = roundTrip(c.Transport, req)
		if seen != nil {
			seen.kept.Store(s.err == nil && !s.resp.Close)
		}
		// The transport's own re-sends are reconnects too.
		s.reconnects += max(int(a.conns.Load())-1, 0)
		reused := a.reused.Load()
		s.reusedConn = reused && !a.answered.Load() && s.err != nil && !dialFailed(s.err)
		unsent := s.reusedConn && a.unsent(s.err)
		hungUp := int(a.hungUp.Load())
		switch {
		case s.err == nil && reused:
			r.keepAlive.answered.Add(1)
		case !s.reusedConn || ctx.Err() != nil:
		case unsent && time.Duration(a.idle.Load()) < hangUpIdle && !a.dropped.Load():
			hungUp++ // found closed as the request went out (dropped ones are counted)
		case !unsent && connClosed(s.err):
			hungUp++ // closed or reset after the request went out, before any answer
		}
		if hungUp > 0 {
			r.sawHangUps(hungUp)
		}
		if s.err == nil {
			s.freshConn = !reused
			r.sawWire(s.resp)
			return s
		}
		if ctx.Err() != nil || !unsent || s.reconnects >= maxReconnects {
			return s
		}
		s.reconnects++
	}
}

// roundTrip sends req through rt as http.Client.Do would, its error
// wrapped the same way ("Post \"URL\": …"), but without what a stream
// does not need and Do pays for on every request: a copy of the header
// and of the URL, kept for redirects. sixpin follows no redirect — one
// would add a round trip to every request's time to first token — and
// records it as the error it is (httpError).
func roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		return nil, &url.Error{Op: "Post", URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// sentBody is a request's body: its bytes, read once (GetBody makes
// another for a re-send).
type sentBody struct{ bytes.Reader }

func (*sentBody) Close() error { return nil }

// connClosed reports whether err says the connection was closed or reset
// (by the server, or locally after it was).
func connClosed(err error) bool {
	msg := err.Error()
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "server closed idle connection")
}

// SessionHeader is the header of every request of one session: the
// client's own, each of names (canonical header keys, as
// scenario.Plan.Affinity gives them) set to the session's id, and each
// header echo has taken from an answer set to its value, replacing a
// profile header of the same name (echo may be nil). Make it once per
// session, and again when echo changes, and pass it as Call.Header, read
// only: a request then costs no more than one without it.
func (c *Client) SessionHeader(names []string, id string, echo *Echo) http.Header {
	h := make(http.Header, len(c.header)+len(names))
	for k, v := range c.header {
		h[k] = v
	}
	v := []string{id}
	for _, n := range names {
		h[n] = v
	}
	if echo != nil {
		for i, n := range echo.Names {
			if i < len(echo.Values) && echo.Values[i] != "" {
				h[n] = []string{echo.Values[i]}
			}
		}
	}
	return h
}

// echoed says whether an answer's header echoes the request id sent.
func echoed(h http.Header, id string) record.IDEcho {
	switch got := h.Get("X-Request-Id"); got {
	case "":
		return record.IDNotEchoed
	case id:
		return record.IDEchoed
	}
	return record.IDMismatch
}

// requestHeader is the header of every request to t: JSON in, an event
// stream out, the key as t's protocol sends it (a bearer token, or
// x-api-key) or the URL's user info (auth), the protocol's own headers,
// and the profile's headers.
func requestHeader(t Target, auth string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "text/event-stream")
	newProtocol(t.Protocol).auth(h, t.APIKey)
	if t.APIKey == "" && auth != "" {
		h.Set("Authorization", auth)
	}
	for k, v := range t.Headers {
		h.Set(k, v)
	}
	return h
}

// encodeExtra renders extra body members as `,"k":v` pairs in key order.
func encodeExtra(m map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		v, err := json.Marshal(m[k])
		if err != nil {
			return nil, fmt.Errorf("extra_body.%s: %w", k, err)
		}
		kb, _ := json.Marshal(k)
		b.WriteByte(',')
		b.Write(kb)
		b.WriteByte(':')
		b.Write(v)
	}
	return b.Bytes(), nil
}

// bucketFromHeaders names the exhausted limit from x-ratelimit-remaining-*
// headers (OpenAI's and Cerebras' styles) or anthropic-ratelimit-*-remaining
// ones (Anthropic's input-tokens limit counts no cache reads: the uncached
// bucket), or "". When several are exhausted the narrowest is named
// (uncached, output, tokens per day, tokens, requests), whatever the
// headers' order.
func bucketFromHeaders(h http.Header) string {
	buckets := [...]string{record.BucketUncachedTokens, record.BucketOutputTokens,
		record.BucketTokensPerDay, record.BucketTokens, record.BucketRequests}
	best := len(buckets)
	for k, vs := range h {
		k = strings.ToLower(k)
		if len(vs) == 0 {
			continue
		}
		if a, ok := strings.CutPrefix(k, "anthropic-ratelimit-"); ok && strings.HasSuffix(a, "-remaining") {
			k = "x-ratelimit-remaining-" + strings.Replace(a, "input-tokens", "uncached-tokens", 1)
		}
		if !strings.HasPrefix(k, "x-ratelimit-remaining") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(vs[0]), 64); err != nil || v > 0 {
			continue
		}
		rank := len(buckets)
		switch {
		case strings.Contains(k, "uncached"):
			rank = 0
		case strings.Contains(k, "output"):
			rank = 1
		case strings.Contains(k, "tokens") && strings.Contains(k, "day"):
			rank = 2
		case strings.Contains(k, "tokens"):
			rank = 3
		case strings.Contains(k, "requests"):
			rank = 4
		}
		best = min(best, rank)
	}
	if best == len(buckets) {
		return ""
	}
	return buckets[best]
}
