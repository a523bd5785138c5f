package endpoint

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/internal/h1"
	"github.com/sixpin/sixpin/record"
)

// keepAlive learns whether the server hangs up on kept-alive connections
// behind the client's back: it answers without "Connection: close", then
// closes the connection (llama-server does so after every streamed
// response). A request written to such a connection in the moment before
// the hang-up reaches the client is lost, and may have reached the server,
// so it cannot be sent again. Once the server has been seen to do it, every
// request goes out on a connection of its own, closed after it: none is
// then written to a connection the server is closing.
//
// The probe looks before load (checkKeepAlive). During load a hang-up is
// a kept-alive connection the server closed after an answer on it: found
// closed before a request was written to it, within hangUpIdle of the
// answer (longer is an idle timeout), or closed or reset after a request
// was written to it, before any answer. The latter is also what a server
// does that resets a connection on a request now and then (a fault, a
// worker's crash), which says nothing of its other connections: a server
// that hangs up after its answers loses about every request sent on a
// kept-alive connection, one that resets now and then a few in a
// thousand. So keep-alive goes off during load once hang-ups were seen
// more than once and at least one for every hangUpRatio requests answered
// on kept-alive connections.
//
// Counting costs one atomic add per request on a kept-alive connection,
// none per chunk; off is read once per request. Safe for concurrent use.
type keepAlive struct {
	off atomic.Bool
	// hungUp counts the hang-ups seen during load; answered the requests
	// answered on kept-alive connections.
	hungUp, answered atomic.Int64
	once             sync.Once
	// at is when it was learnt (wall clock); why, how.
	at  time.Time
	why string
}

// hangUpIdle is how soon after its last answer a kept-alive connection
// found closed by the server counts as a hang-up after the answer, not as
// an idle timeout (uvicorn's is 5 s, gunicorn's 2 s, nginx's 75 s).
const hangUpIdle = 500 * time.Millisecond

// hangUpRatio: keep-alive goes off during load when the hang-ups seen are
// at least one for every hangUpRatio requests answered on kept-alive
// connections (and more than one).
const hangUpRatio = 8

// learnKeepAlive records that the server hangs up on kept-alive
// connections, for why; only the first call counts. From then on every
// request goes through the client that opens a connection per request,
// and the pooled connections are let go.
func (r *Client) learnKeepAlive(why string) {
	r.keepAlive.once.Do(func() {
		r.keepAlive.at, r.keepAlive.why = time.Now(), why
		r.keepAlive.off.Store(true)
		r.httpc.CloseIdleConnections()
	})
}

// sawHangUps records n hang-ups seen during load (see keepAlive).
func (r *Client) sawHangUps(n int) {
	h := r.keepAlive.hungUp.Add(int64(n))
	if a := r.keepAlive.answered.Load(); h > 1 && h*hangUpRatio >= a {
		r.learnKeepAlive(fmt.Sprintf("%d times during load it closed or reset a kept-alive connection after an answer, "+
			"before answering the next request on it; %d requests were answered on kept-alive connections", h, a))
	}
}

// closedIdle hears of a kept-alive connection found closed by the server
// as a request was about to take it, idle that long: a hang-up if it came
// soon after the connection's last answer.
func (r *Client) closedIdle(idle time.Duration) {
	if idle < hangUpIdle {
		r.sawHangUps(1)
	}
}

// KeepAliveOff reports whether the client stopped reusing connections
// because the server hangs up on kept-alive ones, since when (wall
// clock) and why.
func (r *Client) KeepAliveOff() (off bool, at time.Time, why string) {
	if !r.keepAlive.off.Load() {
		return false, time.Time{}, ""
	}
	return true, r.keepAlive.at, r.keepAlive.why
}

// connSeen records the connection a request went out on, and whether its
// answer let it be kept alive (see watchConn); only the probe asks.
type connSeen struct {
	conn atomic.Pointer[net.Conn]
	kept atomic.Bool
}

type connSeenKey struct{}

// watchConn makes the request sent with ctx record its connection in c.
func watchConn(ctx context.Context, c *connSeen) context.Context {
	return context.WithValue(ctx, connSeenKey{}, c)
}

// hangUpWatch is how long the probe watches its kept-alive connection
// after a streamed answer for the server to hang up: forty times the 5 ms
// llama-server takes, for a loaded machine that delays the hang-up. It is
// what the probe costs a server that keeps its connections.
const hangUpWatch = 200 * time.Millisecond

// hangUpLook is how often the probe looks while it watches; a look that
// comes more than hangUpStall after the last one ends a stall of the
// client's process (a loaded machine), in which the server's hang-up may
// have been held up too, and the time since the last look does not count
// as watched; hangUpWatchMax bounds a watch in wall-clock time.
const (
	hangUpLook     = 2 * time.Millisecond
	hangUpStall    = 10 * time.Millisecond
	hangUpWatchMax = 2 * time.Second
)

// watch is the clock of one watch for a hang-up: how long it has watched,
// stalls left out. Its methods take the time of each look, so that its
// arithmetic is tested on given timestamps.
type watch struct {
	start, last time.Time
	watched     time.Duration
}

func newWatch(now time.Time) *watch { return &watch{start: now, last: now} }

// look counts the time since the last look as watched, unless it was a
// stall, and reports whether the watch is over.
func (w *watch) look(now time.Time) bool {
	if gap := now.Sub(w.last); gap <= hangUpStall {
		w.watched += gap
	}
	w.last = now
	return w.watched >= hangUpWatch || now.Sub(w.start) >= hangUpWatchMax
}

// checkKeepAlive learns, before load, whether the server hangs up after a
// streamed answer. first is the connection of a probe request just
// answered, idle in the transport's pool: it is watched, for up to
// hangUpWatch, for the server to close it, without anything being sent
// on it. If it stays open, send (a probe request) goes out on it (the
// transport reuses the connection returned last): a new connection for
// it (the transport found the first one closed), or the request failing
// as the server closes the connection, says the server hangs up too.
func (r *Client) checkKeepAlive(ctx context.Context, first *connSeen, send func(ctx context.Context) *record.Record) {
	p := first.conn.Load()
	if p == nil || !first.kept.Load() {
		return // no connection kept alive: nothing to learn
	}
	c := *p
	if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().NegotiatedProtocol == "h2" {
		return // shared by requests; a server closing it says so (GOAWAY)
	}
	if waited, closed := watchHangUp(ctx, c); closed {
		r.learnKeepAlive(fmt.Sprintf("the probe's kept-alive connection was closed by the server within %d ms of its streamed answer", waited.Milliseconds()+1))
		return
	}
	if ctx.Err() != nil {
		return
	}
	var second connSeen
	rec := send(watchConn(ctx, &second))
	switch q := second.conn.Load(); {
	case q == nil:
	case *q != c:
		r.learnKeepAlive("the probe's kept-alive connection was found closed by the server when the next probe request took it")
	case rec.Err == record.ErrConnect || rec.Err == record.ErrStreamCut:
		r.learnKeepAlive(fmt.Sprintf("the server closed the probe's kept-alive connection as the next probe request went out on it (%s)", rec.Err))
	}
}

// watchHangUp watches c, a kept-alive connection idle in its transport's
// pool, for hangUpWatch (see watch), for the server to close it; it
// reports how long it watched and whether the server did. A non-blocking
// peek every hangUpLook, which reads nothing.
func watchHangUp(ctx context.Context, c net.Conn) (time.Duration, bool) {
	w := newWatch(time.Now())
	for {
		closed := peerClosed(c)
		now := time.Now()
		if closed || w.look(now) || !backoff.Sleep(ctx, hangUpLook) {
			return now.Sub(w.start), closed
		}
	}
}

// peerClosed looks, without waiting or reading, whether the server has
// closed c: an end of stream or a reset is queued on it, or its transport
// closed it already (net/http does when its reader of an idle connection
// meets the end of stream; a TLS server's close_notify comes first, as
// data).
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	return err == nil && h1.PeerClosed(raw)
}
