package h1

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"syscall"
	"time"
)

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
		port := "80"
		if req.URL.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(req.URL.Hostname(), port)
	}
	host := req.URL.Hostname()
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", addr)
	}
	done := func(err error) {
		if trace != nil && trace.ConnectDone != nil {
			trace.ConnectDone("tcp", addr, err)
		}
	}
	if t.DisableKeepAlives { // no pool to take one from
		if t.MaxConns > 0 {
			select {
			case t.room() <- struct{}{}:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		nc, err := t.dial(ctx, req.URL.Scheme, addr, host)
		done(err)
		if err != nil {
			t.release()
			return nil, err
		}
		c := t.newConn(nc)
		gotConn(trace, c, false)
		return c, nil
	}
	w := t.wait()
	if t.MaxConns > 0 {
		if c, err := t.makeRoom(ctx, w); c != nil || err != nil {
			if c != nil {
				gotConn(trace, c, true)
			}
			return c, err
		}
	}
	dialed := make(chan dialResult, 1)
	go func() {
		// Not cut off with the request: it may serve another (the
		// dialer's timeout bounds it).
		nc, err := t.dial(context.WithoutCancel(ctx), req.URL.Scheme, addr, host)
		if err != nil {
			t.release()
		}
		dialed <- dialResult{nc, err}
	}()
	select {
	case r := <-dialed:
		done(r.err)
		t.leave(w)
		if r.err != nil {
			return nil, r.err
		}
		c := t.newConn(r.nc)
		gotConn(trace, c, false)
		return c, nil
	case c := <-w.ch:
		go t.pool(dialed)
		gotConn(trace, c, true)
		return c, nil
	case <-ctx.Done():
		t.leave(w)
		go t.pool(dialed)
		return nil, context.Cause(ctx)
	}
}

// room is the semaphore of MaxConns: a slot held per connection open or
// being dialled.
func (t *Transport) room() chan struct{} {
	t.roomOnce.Do(func() { t.slots = make(chan struct{}, t.MaxConns) })
	return t.slots
}

// release frees a connection's slot (none without MaxConns).
func (t *Transport) release() {
	if t.MaxConns > 0 {
		<-t.room()
	}
}

// makeRoom takes a slot to dial in, for w (registered, not yet handed a
// connection); with MaxConns connections open or dialling, it waits for
// a returned connection, handed over at once (it returns it), or a slot.
// It returns a connection, or the request's end, or neither: dial.
func (t *Transport) makeRoom(ctx context.Context, w *waiter) (*conn, error) {
	select {
	case t.room() <- struct{}{}:
		return nil, nil
	default:
	}
	t.mu.Lock()
	t.setNoDial(w, true)
	t.mu.Unlock()
	// One returned before w could not dial stayed in the pool.
	if c := t.takeIdle(); c != nil {
		t.leave(w)
		return c, nil
	}
	select {
	case t.room() <- struct{}{}:
		t.mu.Lock()
		t.setNoDial(w, false)
		t.mu.Unlock()
		return nil, nil
	case c := <-w.ch:
		return c, nil
	case <-ctx.Done():
		t.leave(w)
		return nil, context.Cause(ctx)
	}
}

// closeConn closes c, and frees its slot once.
func (t *Transport) closeConn(c *conn) {
	c.nc.Close()
	if c.slot && c.released.CompareAndSwap(false, true) {
		<-t.room()
	}
}

// dial opens a connection to addr: TCP, and for https the TLS handshake
// over it (ALPN http/1.1 only), bounded by TLSHandshakeTimeout.
func (t *Transport) dial(ctx context.Context, scheme, addr, host string) (net.Conn, error) {
	nc, err := t.Dial(ctx, "tcp", addr)
	if err != nil || scheme != "https" {
		return nc, err
	}
	cfg := t.TLS.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	hctx := ctx
	if t.TLSHandshakeTimeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, t.TLSHandshakeTimeout)
		defer cancel()
	}
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(hctx); err != nil {
		nc.Close()
		return nil, err
	}
	return tc, nil
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
		t.put(t.newConn(r.nc))
	}
}

// newConn wraps a new connection, which holds a slot under MaxConns.
func (t *Transport) newConn(nc net.Conn) *conn {
	return &conn{nc: nc, src: limitedConn{nc: nc}, dst: countedConn{nc: nc}, slot: t.MaxConns > 0}
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
	// noDial: it waits for a connection without dialling one (MaxConns
	// reached), and is handed one at once (under Transport.mu).
	noDial bool
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

// setNoDial marks w as waiting without dialling (MaxConns reached), or
// no longer, keeping count of such waiters (under t.mu).
func (t *Transport) setNoDial(w *waiter, on bool) {
	if w.noDial != on {
		w.noDial = on
		if on {
			t.noDial++
		} else {
			t.noDial--
		}
	}
}

// leave takes w off the waiting list; a connection handed to it
// meanwhile, at the last moment, goes back.
func (t *Transport) leave(w *waiter) {
	if !t.unwait(w) {
		t.put(<-w.ch)
	}
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
	t.setNoDial(w, false)
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
// has closed (uvicorn, vLLM's server, closes a connection idle for 5 s;
// llama-server one it has just answered on), as net/http's reader of an
// idle connection does, so that a request goes out on a connection that
// was alive a moment ago (one system call, a non-blocking peek, per
// request); it tells ClosedIdle of the latter.
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
		idle := time.Since(c.idleSince)
		if t.IdleTimeout > 0 && idle > t.IdleTimeout {
			t.closeConn(c)
			continue
		}
		switch c.peek() {
		case peekNothing:
			return c
		case peekClosed:
			if t.ClosedIdle != nil {
				t.ClosedIdle(idle)
			}
		}
		t.closeConn(c)
	}
}

// peek looks at what is queued on c's idle connection: nothing, an end
// of stream or a reset, or bytes no request asked for. On a TLS
// connection it looks at the socket under it, where a server closing the
// connection sends close_notify first: bytes queued there are taken as
// the server closing it (a server sends nothing else unasked once a
// response has been read, its session tickets having come before it).
// The socket's RawConn and the function that peeks are made at the
// connection's first look, not at every request's.
func (c *conn) peek() peekState {
	p, err := c.socket()
	switch {
	case err != nil:
		return peekClosed
	case p == nil:
		return peekNothing
	}
	st := p.peek()
	if p.tls && st != peekNothing {
		return peekClosed
	}
	return st
}

// waits reports whether c's reads can wait for the socket to have
// something (peeker.wait): a plain TCP connection on a system that can
// peek at it. A TLS connection may hold decrypted bytes its socket no
// longer has.
func (c *conn) waits() bool {
	p, _ := c.socket()
	return canPeek && p != nil && !p.tls
}

// socket is c's peeker, made at the first look: nil when its
// connection has no socket to look at, an error when the socket is gone.
func (c *conn) socket() (*peeker, error) {
	if c.pk == nil {
		nc, tlsConn := c.nc, false
		if tc, ok := nc.(*tls.Conn); ok {
			nc, tlsConn = tc.NetConn(), true
		}
		sc, ok := nc.(syscall.Conn)
		if !ok {
			return nil, nil
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return nil, err
		}
		c.pk = newPeeker(raw)
		c.pk.tls = tlsConn
	}
	return c.pk, nil
}

// peekState is what a non-blocking peek at an idle socket found.
type peekState uint8

const (
	peekNothing peekState = iota // nothing queued: the connection is idle
	peekClosed                   // an end of stream or a reset
	peekData                     // bytes no request asked for
)

// peeker peeks at one socket (peekFD) through its RawConn, with the
// function RawConn.Control runs made once: a closure made per look, and
// the variable it sets, were two allocations per request.
type peeker struct {
	raw syscall.RawConn
	fn  func(fd uintptr)
	st  peekState
	// tls: the socket is under a TLS connection.
	tls bool
	// waitFn is wait's function; woken: it has waited on the poller.
	waitFn func(fd uintptr) bool
	woken  bool
}

func newPeeker(raw syscall.RawConn) *peeker {
	p := &peeker{raw: raw}
	p.fn = func(fd uintptr) { p.st = peekFD(fd) }
	p.waitFn = func(fd uintptr) bool {
		if p.woken {
			return true
		}
		p.woken = true
		return peekFD(fd) != peekNothing
	}
	return p
}

// wait returns once the socket has something to read — bytes, an end of
// stream, a reset — or has been closed here (an error), holding no
// buffer while it waits: a peek, and when it finds nothing, the
// runtime's poller. It may return early (the poller's readiness is
// edge-triggered and may be left over from bytes already read), which
// costs the read after it a wait of its own, nothing more.
func (p *peeker) wait() error {
	p.woken = false
	return p.raw.Read(p.waitFn)
}

// peek returns what is queued on the socket; peekClosed when it is
// closed here already.
func (p *peeker) peek() peekState {
	p.st = peekNothing
	if err := p.raw.Control(p.fn); err != nil {
		return peekClosed
	}
	return p.st
}

// put hands c to a request that cannot dial (MaxConns reached), else to
// the request that has waited longest for one, or returns it to the
// pool, or closes it when the pool is full. Past the first loop no
// waiter is one that cannot dial: t.noDial counts them all.
func (t *Transport) put(c *conn) {
	c.idleSince = time.Now()
	t.mu.Lock()
	if t.noDial > 0 {
		for _, w := range t.waiting {
			if !w.gone && w.noDial {
				w.gone = true
				t.gone++ // dropped from the list as the others gone are
				t.setNoDial(w, false)
				t.mu.Unlock()
				w.ch <- c
				return
			}
		}
	}
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
		t.closeConn(c)
	}
}

// CloseIdleConnections closes the pooled connections, and Fallback's.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		t.closeConn(c)
	}
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
