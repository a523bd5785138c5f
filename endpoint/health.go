package endpoint

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/results"
)

// health records when the endpoint could not be reached: an outage opens
// at the first request that fails to connect and closes at the first
// real answer to a request sent after it on a connection opened for it:
// a 503 (a server still loading its model) or 529 (overloaded) is not
// one. An answer on a kept-alive connection says only that the connection
// still works (a server going down closes its listener before its
// connections), not that the endpoint accepts connections again. It is
// updated once per request (never per chunk) from any goroutine; while
// the endpoint is up an answer costs one atomic load.
type health struct {
	down atomic.Bool
	mu   sync.Mutex
	// open is the outage in progress (valid while down); last is its
	// latest failure.
	open    results.Outage
	openAt  time.Duration
	last    time.Duration
	outages []results.Outage
}

// failed records a request sent at sent that could not connect.
func (h *health) failed(sent time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() {
		h.open, h.openAt, h.last = results.Outage{StartS: sent.Seconds()}, sent, sent
		h.down.Store(true)
	}
	h.open.FailedRequests++
	h.last = max(h.last, sent)
}

// answered records an answer, at at, to a request sent at sent; fresh
// is whether it came on a connection opened for the request.
func (h *health) answered(sent, at time.Duration, fresh bool) {
	if !fresh || !h.down.Load() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down.Load() || sent < h.openAt {
		return // sent before the outage began: it says nothing of the endpoint now
	}
	h.open.EndS, h.open.Recovered = at.Seconds(), true
	h.outages = append(h.outages, h.open)
	h.down.Store(false)
}

// list returns the outages so far, the one in progress last (Recovered
// false, EndS its latest failure).
func (h *health) list() []results.Outage {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := append([]results.Outage(nil), h.outages...)
	if h.down.Load() {
		o := h.open
		o.EndS = h.last.Seconds()
		out = append(out, o)
	}
	return out
}
