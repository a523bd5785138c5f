package endpoint

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/record"
)

// health records when the endpoint could not be reached: an outage opens
// at the first request that fails to connect and closes at the first
// real answer to a request sent after it, once the endpoint has answered
// one of those on a connection opened for it. An answer on a kept-alive
// connection says only that the connection still works (a server going
// down closes its listener before its connections), not that the endpoint
// accepts connections again; a 503 (a server still loading its model) or
// 529 (overloaded) says it does, but is not a real answer. It is updated
// once per request (never per chunk) from any goroutine; while the
// endpoint is up an answer costs one atomic load.
type health struct {
	down atomic.Bool
	mu   sync.Mutex
	// open is the outage in progress (valid while down); last is its
	// latest failure.
	open    record.Outage
	openAt  time.Duration
	last    time.Duration
	outages []record.Outage
	// accepting is set once, since the latest failure, a request sent
	// during the outage was answered on a new connection.
	accepting bool
}

// failed records a request sent at sent that could not connect.
func (h *health) failed(sent time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() {
		h.open, h.openAt, h.last = record.Outage{StartS: sent.Seconds()}, sent, sent
		h.down.Store(true)
	}
	h.open.FailedRequests++
	h.last = max(h.last, sent)
	h.accepting = false
}

// answered records an answer, at at, to a request sent at sent; fresh
// is whether it came on a connection opened for the request, real whether
// it was a real answer (not a 503 or 529).
func (h *health) answered(sent, at time.Duration, fresh, real bool) {
	if !h.down.Load() || !fresh && !real {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() || sent < h.openAt {
		return // sent before the outage began: it says nothing of the endpoint now
	}
	h.accepting = h.accepting || fresh
	if !real || !h.accepting {
		return
	}
	h.open.EndS, h.open.Recovered = at.Seconds(), true
	h.outages = append(h.outages, h.open)
	h.down.Store(false)
}

// list returns the outages so far, the one in progress last (Recovered
// false, EndS its latest failure).
func (h *health) list() []record.Outage {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]record.Outage(nil), h.outages...)
	if h.down.Load() {
		o := h.open
		o.EndS = h.last.Seconds()
		out = append(out, o)
	}
	return out
}
