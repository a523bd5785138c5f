// Package h1 is a lean HTTP/1.1 client transport for sixpin's streamed
// requests over plain TCP. A streamed answer is read a chunk at a time,
// millions of times per run, and net/http's transport reads each through
// five layers of its own (a body with a mutex, an EOF signal with another,
// the persistent connection, its buffered reader, the chunked reader) and
// a goroutine pair per connection; here a chunk goes from the
// connection straight into the caller's buffer, its framing squeezed out
// in place (dechunker). BenchmarkStream reads the same streams through
// both in one run: on the 2-core machine this was written on, 5.4 µs of
// process CPU per event here against 8.0–11 µs through net/http (the test
// server's share, the same in both, included).
//
// It speaks HTTP/1.1 only, to http:// URLs that no proxy is set for;
// every other request (https, which may be HTTP/2; a proxied URL; a
// method other than GET or POST; a body of unknown length) goes to its
// Fallback. It reports to an httptrace.ClientTrace in the request's
// context as net/http does for the hooks sixpin uses (GotConn with
// Reused, ConnectStart, ConnectDone, GotFirstResponseByte), reuses the
// connection returned last (LIFO, as net/http), and never sends a request
// twice by itself.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds on what a response may send besides its body.
const (
	// MaxHeadBytes bounds a response's status line and header (and any
	// 1xx responses before it).
	MaxHeadBytes = 1 << 20
	// bufferBytes is each connection's read and write buffer: the 4 KiB
	// net/http uses, for the same reason (10,000 streams).
	bufferBytes = 4 << 10
)

// ErrHeadTooLong is returned for a response whose head is longer than
// MaxHeadBytes.
var ErrHeadTooLong = errors.New("h1: the response's header is longer than 1 MiB")

// Transport is an http.RoundTripper; see the package comment for what it
// carries itself. Set its fields before the first request; it is safe for
// concurrent use.
type Transport struct {
	// Dial opens a TCP connection (net.Dialer.DialContext).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Fallback carries the requests Transport does not. Required.
	Fallback http.RoundTripper
	// Proxy, if not nil, names the proxy for a request (as
	// http.Transport.Proxy); a request it names one for goes to Fallback.
	Proxy func(*http.Request) (*url.URL, error)
	// MaxIdle bounds the idle connections kept (≤ 0: 2).
	MaxIdle int
	// IdleTimeout closes a connection idle that long (0: never).
	IdleTimeout time.Duration
	// DisableKeepAlives opens a connection per request, sends
	// "Connection: close" and closes it after the answer.
	DisableKeepAlives bool

	mu   sync.Mutex
	idle []*conn // the last returned last
	// waiting are the requests dialling (oldest first), gone of them
	// no longer waiting.
	waiting []*waiter
	gone    int
}

// conn is one connection: its reader holds what was read and not yet
// consumed, its writer the request being written.
type conn struct {
	nc  net.Conn
	src limitedConn
	br  *bufio.Reader
	bw  *bufio.Writer
	// idleSince is when it was returned to the pool.
	idleSince time.Time
}

// limitedConn reads nc, at most left bytes while limit is set (the
// response head); a read past the limit is ErrHeadTooLong.
type limitedConn struct {
	nc    net.Conn
	limit bool
	left  int
}

func (l *limitedConn) Read(p []byte) (int, error) {
	if !l.limit {
		return l.nc.Read(p)
	}
	if l.left <= 0 {
		return 0, ErrHeadTooLong
	}
	n, err := l.nc.Read(p[:min(len(p), l.left)])
	l.left -= n
	return n, err
}

// handles reports whether t carries req itself.
func (t *Transport) handles(req *http.Request) (bool, error) {
	if req.URL.Scheme != "http" || req.Method != http.MethodPost && req.Method != http.MethodGet {
		return false, nil
	}
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength <= 0 {
		return false, nil // of unknown length: net/http chunks it
	}
	if t.Proxy != nil {
		p, err := t.Proxy(req)
		if err != nil || p != nil {
			return false, err
		}
	}
	return true, nil
}

// RoundTrip sends req and reads the answer's head; the body is read by
// the caller, and its connection goes back to the pool when the body has
// been read to its end and closed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if ok, err := t.handles(req); err != nil || !ok {
		if err != nil {
			closeBody(req)
			return nil, err
		}
		return t.Fallback.RoundTrip(req)
	}
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	c, err := t.get(ctx, req, trace)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	// Cancelling the request closes its connection: a blocked write or
	// read returns at once.
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		return nil, err
	}
	closing := t.DisableKeepAlives || req.Close
	if err := c.write(req, closing); err != nil {
		return fail(err)
	}
	resp, err := c.readHead(req, trace)
	if err != nil {
		return fail(err)
	}
	b := &body{nc: c.nc, t: t, c: c, ctx: ctx, stop: stop}
	if err := b.frame(resp, closing); err != nil {
		return fail(err)
	}
	resp.Body = b
	return resp, nil
}

// get returns an idle connection (the one returned last), or a new one.
// While a new one is dialled, a connection another request returns
// meanwhile is taken instead, and the dialled one, when it comes, goes to
// the pool (as net/http does): at thousands of streams starting at once,
// a dial can wait seconds in the server's accept queue while connections
// free up all the time.
func (t *Transport) get(ctx context.Context, req *http.Request, trace *httptrace.ClientTrace) (*conn, error) {
	if !t.DisableKeepAlives {
		if c := t.takeIdle(); c != nil {
			gotConn(trace, c, true)
			return c, nil
		}
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", addr)
	}
	done := func(err error) {
		if trace != nil && trace.ConnectDone != nil {
			trace.ConnectDone("tcp", addr, err)
		}
	}
	if t.DisableKeepAlives { // no pool to take one from
		nc, err := t.Dial(ctx, "tcp", addr)
		done(err)
		if err != nil {
			return nil, err
		}
		c := newConn(nc)
		gotConn(trace, c, false)
		return c, nil
	}
	w := t.wait()
	dialed := make(chan dialResult, 1)
	go func() {
		// Not cut off with the request: it may serve another (the
		// dialer's timeout bounds it).
		nc, err := t.Dial(context.WithoutCancel(ctx), "tcp", addr)
		dialed <- dialResult{nc, err}
	}()
	select {
	case r := <-dialed:
		done(r.err)
		if !t.unwait(w) { // handed one at the last moment: it goes back
			t.put(<-w.ch)
		}
		if r.err != nil {
			return nil, r.err
		}
		c := newConn(r.nc)
		gotConn(trace, c, false)
		return c, nil
	case c := <-w.ch:
		go t.pool(dialed)
		gotConn(trace, c, true)
		return c, nil
	case <-ctx.Done():
		if !t.unwait(w) {
			t.put(<-w.ch)
		}
		go t.pool(dialed)
		return nil, context.Cause(ctx)
	}
}

// dialResult is a dial's outcome.
type dialResult struct {
	nc  net.Conn
	err error
}

// pool puts the connection of a dial no request waits for any more in
// the pool.
func (t *Transport) pool(dialed <-chan dialResult) {
	if r := <-dialed; r.err == nil {
		t.put(newConn(r.nc))
	}
}

// newConn wraps a new connection.
func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, src: limitedConn{nc: nc}}
	c.br = bufio.NewReaderSize(&c.src, bufferBytes)
	c.bw = bufio.NewWriterSize(nc, bufferBytes)
	return c
}

// gotConn reports c to the trace.
func gotConn(trace *httptrace.ClientTrace, c *conn, reused bool) {
	if trace == nil || trace.GotConn == nil {
		return
	}
	info := httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused}
	if reused {
		info.IdleTime = time.Since(c.idleSince)
	}
	trace.GotConn(info)
}

// waiter is a request dialling a connection, which takes one that is
// returned meanwhile: put hands it over on ch (buffered: never blocks).
type waiter struct {
	ch    chan *conn
	since time.Time
	gone  bool // it stopped waiting (under Transport.mu)
}

// handOverAfter is how long a dial waits before a returned connection is
// handed to it rather than kept for the stream that returned it: a dial
// on a LAN takes well under a millisecond, and two streams sharing one
// connection while theirs are being dialled would halve the concurrency
// of a short run; a dial stuck in a full accept queue takes seconds.
const handOverAfter = 50 * time.Millisecond

// wait registers a waiter, after the ones before it.
func (t *Transport) wait() *waiter {
	w := &waiter{ch: make(chan *conn, 1), since: time.Now()}
	t.mu.Lock()
	t.waiting = append(t.waiting, w)
	t.mu.Unlock()
	return w
}

// unwait takes w off the waiting list. It returns false when a
// connection was handed to it already (it is then on w.ch).
func (t *Transport) unwait(w *waiter) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.gone {
		return false
	}
	w.gone = true
	// The list drops the ones gone when they are at its front (put);
	// it is compacted when they are most of it.
	if t.gone++; t.gone > len(t.waiting)/2 {
		t.waiting = slices.DeleteFunc(t.waiting, func(w *waiter) bool { return w.gone })
		t.gone = 0
	}
	return true
}

// takeIdle pops the connection returned last. It closes, and passes
// over, the ones idle for longer than IdleTimeout and the ones the server
// has closed (uvicorn, vLLM's server, closes a connection idle for 5 s),
// as net/http's reader of an idle connection does, so that a request
// goes out on a connection that was alive a moment ago (one system call,
// a non-blocking peek, per request).
func (t *Transport) takeIdle() *conn {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			return nil
		}
		c := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if t.IdleTimeout > 0 && time.Since(c.idleSince) > t.IdleTimeout || !alive(c.nc) {
			c.nc.Close()
			continue
		}
		return c
	}
}

// alive reports whether an idle connection has nothing queued on it: no
// end of stream, no reset, no bytes no request asked for.
func alive(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	return err == nil && peek(raw) == peekNothing
}

// put hands c to the request that has waited longest for one, or
// returns it to the pool, or closes it when the pool is full.
func (t *Transport) put(c *conn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	for len(t.waiting) > 0 {
		w := t.waiting[0]
		if !w.gone && c.idleSince.Sub(w.since) < handOverAfter {
			break // no one has waited long: the connection stays with its stream
		}
		t.waiting[0] = nil
		t.waiting = t.waiting[1:]
		if w.gone {
			t.gone--
			continue
		}
		w.gone = true
		t.mu.Unlock()
		w.ch <- c
		return
	}
	if len(t.idle) < max(t.MaxIdle, 2) {
		t.idle = append(t.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		c.nc.Close()
	}
}

// CloseIdleConnections closes the pooled connections, and Fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// headerSkip is what write sets itself rather than from the request's
// header.
var headerSkip = map[string]bool{"Host": true, "Content-Length": true, "Connection": true, "Transfer-Encoding": true}

// write sends req's line, header and body, as net/http does: Host,
// User-Agent (unless the header has one), Content-Length, then the
// header's fields in key order.
func (c *conn) write(req *http.Request, closing bool) error {
	w := c.bw
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	if req.ContentLength > 0 || req.Method == http.MethodPost {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(max(req.ContentLength, 0), 10))
		w.WriteString("\r\n")
	}
	if closing {
		w.WriteString("Connection: close\r\n")
	}
	if err := req.Header.WriteSubset(w, headerSkip); err != nil {
		return err
	}
	w.WriteString("\r\n")
	if req.Body != nil && req.Body != http.NoBody {
		n, err := io.Copy(w, req.Body)
		req.Body.Close()
		if err != nil {
			return err
		}
		if n != req.ContentLength {
			return fmt.Errorf("h1: the request body was %d bytes, its ContentLength %d", n, req.ContentLength)
		}
	}
	return w.Flush()
}

// readHead reads the response's status line and header, past any 1xx
// responses.
func (c *conn) readHead(req *http.Request, trace *httptrace.ClientTrace) (*http.Response, error) {
	c.src.limit, c.src.left = true, MaxHeadBytes-c.br.Buffered()
	defer func() { c.src.limit = false }()
	if _, err := c.br.Peek(1); err != nil {
		return nil, err
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	tp := textproto.NewReader(c.br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return nil, headErr(err)
		}
		resp, err := statusLine(line)
		if err != nil {
			return nil, err
		}
		mh, err := tp.ReadMIMEHeader()
		if err != nil {
			return nil, headErr(err)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // 100 Continue, 103 Early Hints: the answer follows
		}
		resp.Header, resp.Request = http.Header(mh), req
		return resp, nil
	}
}

// headErr is a failure to read a response head: an end of stream in the
// middle of it is unexpected.
func headErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// statusLine parses "HTTP/1.1 200 OK".
func statusLine(line string) (*http.Response, error) {
	proto, status, ok := strings.Cut(line, " ")
	if !ok {
		return nil, fmt.Errorf("h1: malformed HTTP response %q", line)
	}
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok || major != 1 {
		return nil, fmt.Errorf("h1: malformed HTTP version %q", proto)
	}
	status = strings.TrimLeft(status, " ")
	code, _, _ := strings.Cut(status, " ")
	n, err := strconv.Atoi(code)
	if len(code) != 3 || err != nil || n < 100 {
		return nil, fmt.Errorf("h1: malformed HTTP status code %q", code)
	}
	return &http.Response{Status: status, StatusCode: n, Proto: proto, ProtoMajor: major, ProtoMinor: minor, ContentLength: -1}, nil
}

// body is a response's body. Its connection goes back to the pool when
// it was read to its end and closed; otherwise it is closed. A body is
// read by one goroutine.
type body struct {
	// What a streamed chunk's read touches comes first: the framing
	// state and the connection. direct is set once the connection's
	// reader holds nothing more of the body (it read ahead with the
	// head), so that reads go straight to the connection without
	// touching the reader, whose cache line other streams have evicted
	// by the time the next chunk arrives.
	dc      dechunker
	nc      net.Conn
	direct  bool
	chunked bool
	// left bytes remain when not chunked (-1: until the connection
	// closes).
	left int64
	t    *Transport
	c    *conn
	ctx  context.Context
	stop func() bool // stops the cancellation hook; false once it ran
	// keep: the connection may be reused after the body.
	keep   bool
	done   bool // read to its end
	err    error
	closed bool
}

// frame reads how resp's body is delimited (RFC 9112 §6.3) and whether its
// connection may be reused.
func (b *body) frame(resp *http.Response, closing bool) error {
	h := resp.Header
	b.keep = !closing && !resp.Close
	switch conn := h.Values("Connection"); {
	case hasToken(conn, "close"):
		b.keep = false
	case resp.ProtoMinor == 0 && !hasToken(conn, "keep-alive"):
		b.keep = false
	}
	if te := h.Values("Transfer-Encoding"); len(te) > 0 {
		if !strings.EqualFold(strings.TrimSpace(lastToken(te)), "chunked") {
			return fmt.Errorf("h1: unsupported Transfer-Encoding %q", strings.Join(te, ", "))
		}
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length") // chunked framing wins (§6.3)
		resp.TransferEncoding = []string{"chunked"}
		b.chunked = true
	}
	switch code := resp.StatusCode; {
	case b.chunked:
	case code == http.StatusNoContent || code == http.StatusNotModified || resp.Request.Method == http.MethodHead:
		b.left, resp.ContentLength, b.done = 0, 0, true
	case len(h.Values("Content-Length")) > 0:
		n, err := strconv.ParseInt(strings.TrimSpace(h.Get("Content-Length")), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("h1: bad Content-Length %q", h.Get("Content-Length"))
		}
		b.left, resp.ContentLength, b.done = n, n, n == 0
	default:
		b.left, b.keep = -1, false // until the server closes
	}
	resp.Close = !b.keep
	return nil
}

// hasToken reports whether a comma-separated header value lists tok.
func hasToken(values []string, tok string) bool {
	for _, v := range values {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), tok) {
				return true
			}
		}
	}
	return false
}

// lastToken is the last element of a comma-separated header's values.
func lastToken(values []string) string {
	v := values[len(values)-1]
	if i := strings.LastIndexByte(v, ','); i >= 0 {
		return v[i+1:]
	}
	return v
}

// Read reads the body. Once the request's context is done it returns the
// context's cause.
func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var err error
	switch {
	case b.chunked:
		return b.readChunked(p)
	case b.left < 0:
		n, err = b.c.br.Read(p)
	default:
		n, err = b.c.br.Read(p[:min(int64(len(p)), b.left)])
		b.left -= int64(n)
		switch {
		case b.left == 0:
			b.done = true
		case err == io.EOF:
			err = io.ErrUnexpectedEOF
		}
	}
	switch {
	case err == io.EOF:
		b.done = true
	case err != nil:
		b.fail(err)
	}
	return n, err
}

// readChunked reads a chunked body into p: what the connection's reader
// holds (read with the head), then straight from the connection, the
// framing squeezed out in place (dechunker). It reads on while a read
// brought only framing.
func (b *body) readChunked(p []byte) (int, error) {
	for {
		var n int
		var err error
		switch {
		case b.direct:
			n, err = b.nc.Read(p)
		case b.c.br.Buffered() > 0:
			n, err = b.c.br.Read(p[:min(len(p), b.c.br.Buffered())])
		default:
			b.direct = true
			n, err = b.nc.Read(p)
		}
		data, extra, derr := b.dc.decode(p[:n])
		switch {
		case derr != nil:
			return data, b.fail(derr)
		case b.dc.state == ended:
			b.done = true
			if extra > 0 {
				b.keep = false // more than it framed: the connection's state is unknown
			}
			return data, io.EOF
		case err == io.EOF:
			return data, b.fail(io.ErrUnexpectedEOF)
		case err != nil:
			return data, b.fail(err)
		case data > 0:
			return data, nil
		}
	}
}

// fail makes err the body's sticky error (the request context's cause
// when it is done) and returns it.
func (b *body) fail(err error) error {
	if cause := context.Cause(b.ctx); cause != nil {
		err = cause
	}
	b.err = err
	return err
}

// Close ends the body: a body read to its end gives its connection back
// to the pool (if it may be reused); any other closes it.
func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.err == nil {
		b.err = http.ErrBodyReadAfterClose
	}
	reuse := b.done && b.keep && b.c.br.Buffered() == 0
	if !b.stop() || !reuse { // the hook ran: the connection is closed
		b.c.nc.Close()
		return nil
	}
	b.t.put(b.c)
	return nil
}

// closeBody closes a request's body the transport will not send.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
