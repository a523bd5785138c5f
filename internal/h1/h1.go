// Package h1 is a lean HTTP/1.1 client transport for sixpin's streamed
// requests over TCP, and TLS. A streamed answer is read a chunk at a time,
// millions of times per run, and net/http's transport reads each through
// five layers of its own (a body with a mutex, an EOF signal with another,
// the persistent connection, its buffered reader, the chunked reader) and
// a goroutine pair per connection; here a chunk goes from the
// connection straight into the caller's buffer, its framing squeezed out
// in place (dechunker). BenchmarkStream reads the same streams through
// both, alternating over seven rounds: on the 2-core machine this was
// written on, the medians were 0.89–0.96× net/http's process CPU per
// event over four runs (the test server's share, the same in both,
// included); net/http's best rounds match this transport's, its worst
// cost 1.3–1.5× them.
//
// It speaks HTTP/1.1 only, to http:// URLs that no proxy is set for, and
// to https:// ones when given a TLS config (HTTP/1.1 over TLS, a
// connection per stream); every other request (https without one, which
// net/http may carry over HTTP/2; a proxied URL; a method other than GET
// or POST; a body of unknown length) goes to its Fallback. It reports to
// an httptrace.ClientTrace in the request's context as net/http does for
// the hooks sixpin uses (GotConn with Reused and IdleTime,
// GotFirstResponseByte) and for ConnectStart and ConnectDone, reuses the connection returned last (LIFO, as net/http),
// and never sends a request twice by itself: a request that failed
// before any byte of it was written is marked ErrUnsent, and its caller
// may send it again.
package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds on what a response may send besides its body.
const (
	// MaxHeadBytes bounds a response's status line and header (and any
	// 1xx responses before it).
	MaxHeadBytes = 1 << 20
	// headBytes is the reader of a response's head over TLS, held by a
	// request from the moment it is sent until its head is read: at
	// thousands of streams waiting for their first byte, every KiB is
	// megabytes. A head is a few hundred bytes; a longer line is read in
	// pieces (textproto), and a body goes straight to the connection.
	// (TLS reads whole records into its own buffer: a small reader
	// costs it copies, not system calls.)
	headBytes = 512
	// waitedHeadBytes is the reader of a response's head over plain
	// TCP, taken only once the socket has something to read (wait): a
	// stream waiting for its first byte holds none, and the head comes
	// with the first events in one read where 512 bytes took two.
	waitedHeadBytes = 4 << 10
	// bufferBytes is a request's write buffer, held while it is written:
	// the 4 KiB net/http uses.
	bufferBytes = 4 << 10
)

// ErrHeadTooLong is returned for a response whose head is longer than
// MaxHeadBytes.
var ErrHeadTooLong = errors.New("h1: the response's header is longer than 1 MiB")

// ErrUnsent marks (errors.Is) the failure of a request of which no byte
// was written to its connection: the write failed at once (the server had
// reset the connection an instant after the transport looked at it), so
// the server cannot have read any of it. A failure after the first byte
// went out is not marked, whatever it is: the server may have read the
// request.
var ErrUnsent = errors.New("h1: nothing of the request was written")

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
	// TLS, if not nil, makes the transport carry https requests itself,
	// over HTTP/1.1 (ALPN offers http/1.1 alone): a TLS handshake with a
	// clone of it after Dial (ServerName from the URL when unset). nil:
	// https goes to Fallback. A ClientSessionCache in it resumes
	// sessions on the connections after the first.
	TLS *tls.Config
	// TLSHandshakeTimeout bounds a handshake (0: the dial's context
	// alone).
	TLSHandshakeTimeout time.Duration
	// MaxConns, if > 0, bounds the connections open and being dialled:
	// a request that finds none idle with as many open waits for one to
	// be returned (handed over at once) or closed. sixpin sets it to a
	// closed loop's streams, so that a storm of slow dials at thousands
	// of streams never holds more descriptors than the streams need.
	MaxConns int
	// ClosedIdle, if not nil, is told of each idle connection found
	// closed by the server (an end of stream or a reset) as a request was
	// about to take it, and passed over, with how long it had been idle.
	// It is called from the request's goroutine.
	ClosedIdle func(idle time.Duration)

	roomOnce sync.Once
	slots    chan struct{} // MaxConns' (room)

	mu   sync.Mutex
	idle []*conn // the last returned last
	// waiting are the requests dialling (oldest first), gone of them
	// no longer waiting.
	waiting []*waiter
	gone    int
	// noDial counts the waiting that cannot dial (MaxConns reached).
	noDial int
}

// conn is one connection: its reader holds what was read and not yet
// consumed.
type conn struct {
	nc  net.Conn
	src limitedConn
	dst countedConn
	// br holds what was read and not yet consumed: taken from readers
	// (waitedReaders, once the socket has something) for a response's
	// head, given back once a streamed body reads
	// straight from the connection (nil then), so that a connection
	// streaming an answer holds no buffer of its own — at 10,000
	// streams, 40 MB.
	br *bufio.Reader
	// idleSince is when it was returned to the pool.
	idleSince time.Time
	// pk looks at it while it is idle (peek); made at the first look.
	pk *peeker
	// slot: it holds one of MaxConns' slots, freed once (released) when
	// it is closed.
	slot     bool
	released atomic.Bool
}

// limitedConn reads nc, at most left bytes while limit is set (the
// response head); a read past the limit is ErrHeadTooLong.
type limitedConn struct {
	nc    net.Conn
	limit bool
	left  int
}

// countedConn writes to nc and counts the bytes it took.
type countedConn struct {
	nc      net.Conn
	written int64
}

func (w *countedConn) Write(p []byte) (int, error) {
	n, err := w.nc.Write(p)
	w.written += int64(n)
	return n, err
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
	if !(req.URL.Scheme == "http" || req.URL.Scheme == "https" && t.TLS != nil) || req.Method != http.MethodPost && req.Method != http.MethodGet {
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
	stop := context.AfterFunc(ctx, func() { t.closeConn(c) })
	fail := func(err error) (*http.Response, error) {
		stop()
		t.closeConn(c)
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		return nil, err
	}
	closing := t.DisableKeepAlives || req.Close
	before := c.dst.written
	if err := c.write(req, closing); err != nil {
		if c.dst.written == before {
			err = fmt.Errorf("%w: %w", ErrUnsent, err)
		}
		return fail(err)
	}
	resp, err := c.readHead(req, trace)
	if err != nil {
		return fail(err)
	}
	if tc, ok := c.nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		resp.TLS = &st
	}
	b := &body{nc: c.nc, t: t, c: c, ctx: ctx, stop: stop}
	if err := b.frame(resp, closing); err != nil {
		return fail(err)
	}
	resp.Body = b
	return resp, nil
}

// headerSkip is what write sets itself rather than from the request's
// header.
var headerSkip = map[string]bool{"Host": true, "Content-Length": true, "Connection": true, "Transfer-Encoding": true}

// write sends req's line, header and body, as net/http does: Host,
// User-Agent (unless the header has one), Content-Length, then the
// header's fields in key order.
func (c *conn) write(req *http.Request, closing bool) error {
	w := writers.Get().(*bufio.Writer)
	w.Reset(&c.dst)
	defer func() { w.Reset(nil); writers.Put(w) }()
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
	if c.br == nil && c.waits() {
		if err := c.pk.wait(); err != nil {
			return nil, err
		}
		c.br = waitedReaders.Get().(*bufio.Reader)
		c.br.Reset(&c.src)
	}
	c.reader()
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

// The buffers connections share: a request's writer while it is written,
// a connection's reader while it holds anything (conn.br).
var (
	writers       = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, bufferBytes) }}
	readers       = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, headBytes) }}
	waitedReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, waitedHeadBytes) }}
)

// reader gives c a reader, if it gave its own back.
func (c *conn) reader() {
	if c.br == nil {
		c.br = readers.Get().(*bufio.Reader)
		c.br.Reset(&c.src)
	}
}

// unread gives c's reader back, when it holds nothing.
func (c *conn) unread() {
	if c.br != nil && c.br.Buffered() == 0 {
		c.br.Reset(nil)
		if c.br.Size() == waitedHeadBytes {
			waitedReaders.Put(c.br)
		} else {
			readers.Put(c.br)
		}
		c.br = nil
	}
}

// buffered is how many bytes c's reader holds.
func (c *conn) buffered() int {
	if c.br == nil {
		return 0
	}
	return c.br.Buffered()
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

// closeBody closes a request's body the transport will not send.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
