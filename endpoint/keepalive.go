package endpoint

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/results"
)

// keepAlive learns whether the server hangs up on kept-alive connections
// behind the client's back: it answers without "Connection: close", then
// closes the connection (llama-server does so after every streamed
// response). A request written to such a connection in the moment before
// the hang-up reaches the client is lost, and may have reached the server,
// so it cannot be sent again. Once the server has been seen to do it, every
// request goes out on a connection of its own, closed after it: none is
// then written to a connection the server is closing. It is read once per
// request (an atomic load) and written at most once; safe for concurrent
// use.
type keepAlive struct {
	off  atomic.Bool
	once sync.Once
	// at is when it was learnt (wall clock); why, how.
	at  time.Time
	why string
}

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

// KeepAliveOff reports whether the client stopped reusing connections
// because the server hangs up on kept-alive ones, since when (wall
// clock) and why.
func (r *Client) KeepAliveOff() (off bool, at time.Time, why string) {
	if !r.keepAlive.off.Load() {
		return false, time.Time{}, ""
	}
	return true, r.keepAlive.at, r.keepAlive.why
}

// connSeen records the connection a request went out on (see
// watchConn); only the probe asks.
type connSeen struct{ conn atomic.Pointer[net.Conn] }

type connSeenKey struct{}

// watchConn makes the request sent with ctx record its connection in c.
func watchConn(ctx context.Context, c *connSeen) context.Context {
	return context.WithValue(ctx, connSeenKey{}, c)
}

// keepAliveCheckDelay is how long the probe waits after a streamed answer
// before it sends the next request, for a server that hangs up to have
// done so.
const keepAliveCheckDelay = 25 * time.Millisecond

// checkKeepAlive learns, before load, whether the server hangs up after
// a streamed answer: send (a probe request, returning its error class)
// goes out twice, keepAliveCheckDelay apart; the transport reuses the
// most recently returned connection, so a second request on another
// connection, or one that failed to connect, means the server closed the
// first one.
func (r *Client) checkKeepAlive(ctx context.Context, send func(ctx context.Context) results.ErrorClass) {
	var first, second connSeen
	if send(watchConn(ctx, &first)) != results.OK || !backoff.Sleep(ctx, keepAliveCheckDelay) {
		return
	}
	switch err := send(watchConn(ctx, &second)); {
	case err == results.ErrConnect:
		r.learnKeepAlive("the probe's second request found its kept-alive connection closed by the server")
	case err != results.OK:
	default:
		if a, b := first.conn.Load(), second.conn.Load(); a != nil && b != nil && *a != *b {
			r.learnKeepAlive("the server closed the probe's kept-alive connection after its streamed answer, without saying so")
		}
	}
}
