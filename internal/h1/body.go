package h1

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

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
	// drained is set when the last read from the connection took less
	// than it asked for: all the connection had at the time (Drained).
	drained bool
}

// Drained reports whether the body's last read from the connection
// drained it: it got less than it asked for, so what the next read gets
// arrived after it. What Read returns is no guide for a chunked body, its
// framing squeezed out of what was read.
func (b *body) Drained() bool { return b.drained }

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
	if b.chunked {
		return b.readChunked(p)
	}
	ask := p // a body of a length is asked no more than is left of it
	if b.left >= 0 {
		ask = p[:min(int64(len(p)), b.left)]
	}
	n, err := b.c.br.Read(ask)
	b.drained = n < len(ask)
	n, _ = b.squeeze(ask[:n]) // a length's framing finds no error
	switch {
	case err == io.EOF:
		err = b.atEOF()
	case b.done:
		err = io.EOF
	}
	if err != nil && err != io.EOF {
		b.fail(err)
	}
	return n, err
}

// readChunked reads a chunked body into p: what the connection's reader
// holds (read with the head), then straight from the connection, the
// framing squeezed out in place. It reads on while a read brought only
// framing.
func (b *body) readChunked(p []byte) (int, error) {
	for {
		var n int
		var err error
		switch {
		case b.direct:
			n, err = b.nc.Read(p)
			b.drained = n < len(p)
		case b.c.buffered() > 0:
			// What came with the head: the connection may hold more.
			n, err = b.c.br.Read(p[:min(len(p), b.c.br.Buffered())])
			b.drained = false
		default:
			b.direct = true
			b.c.unread()
			n, err = b.nc.Read(p)
			b.drained = n < len(p)
		}
		data, derr := b.squeeze(p[:n])
		switch {
		case derr != nil:
			return data, b.fail(derr)
		case b.done:
			return data, io.EOF
		case err == io.EOF:
			return data, b.fail(b.atEOF())
		case err != nil:
			return data, b.fail(err)
		case data > 0:
			return data, nil
		}
	}
}

// squeeze is the body's framing (RFC 9112 §6.3), the one place it is
// applied: it takes p, the bytes read next from the connection, and
// squeezes the framing out of them in place. It returns how many data
// bytes are now at p's start, and sets done when the body ended with
// them. Bytes past the end leave the connection's state unknown: keep is
// cleared. Both a body's Read and a detached body's Decode call it.
func (b *body) squeeze(p []byte) (data int, err error) {
	switch {
	case b.done:
	case b.chunked:
		data, extra, err := b.dc.decode(p)
		if err != nil {
			return data, err
		}
		if b.dc.state == ended {
			b.done = true
			b.keep = b.keep && extra == 0
		}
		return data, nil
	case b.left < 0: // until the server closes
		return len(p), nil
	default:
		data = int(min(int64(len(p)), b.left))
		b.left -= int64(data)
		b.done = b.left == 0
	}
	b.keep = b.keep && data == len(p)
	return data, nil
}

// atEOF is the error of the connection's end as the framing reads it: a
// body that lasts until the server closes ends there (done is set); any
// other that has not ended ends unexpectedly.
func (b *body) atEOF() error {
	if !b.done && (b.chunked || b.left >= 0) {
		return io.ErrUnexpectedEOF
	}
	b.done = true
	return io.EOF
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
	reuse := b.done && b.keep && b.c.buffered() == 0
	if !b.stop() || !reuse { // the hook ran: the connection is closed
		b.t.closeConn(b.c)
		return nil
	}
	b.c.unread() // an idle connection holds no buffer either
	b.t.put(b.c)
	return nil
}
