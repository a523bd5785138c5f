package runner

import (
	"sync"
	"sync/atomic"
	"time"
)

// Pending holds the requests in flight, for a judge that counts a request
// which has waited past a TTFT or E2E bound as beyond it before it ends
// (verdict.Judge.Censor): past its cliff a server answers in minutes, and
// the values that decide a point would otherwise come that late. Safe for
// concurrent use: a request adds itself when it is sent and removes
// itself when it is done (a mutex held for a map insert or delete, once
// per request, never per chunk); Each is called from the judge's
// goroutine.
type Pending struct {
	mu  sync.Mutex
	set map[*InFlight]struct{}
}

// InFlight is one request in flight.
type InFlight struct {
	// Index and Scheduled are the request's (record.Record's): together
	// they name it.
	Index     int
	Scheduled time.Duration
	// first is the run time of its first token, in ns, plus one (0:
	// none yet); set by the stream (endpoint.Call.First).
	first atomic.Int64
}

// Answered reports whether its first token has come.
func (f *InFlight) Answered() bool { return f.first.Load() != 0 }

// NewPending returns an empty Pending.
func NewPending() *Pending { return &Pending{set: map[*InFlight]struct{}{}} }

func (p *Pending) add(f *InFlight) {
	p.mu.Lock()
	p.set[f] = struct{}{}
	p.mu.Unlock()
}

func (p *Pending) remove(f *InFlight) {
	p.mu.Lock()
	delete(p.set, f)
	p.mu.Unlock()
}

// Each calls fn for every request in flight, holding the lock: fn must
// not block.
func (p *Pending) Each(fn func(f *InFlight)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for f := range p.set {
		fn(f)
	}
}

// WithPending keeps the requests in flight in p.
func WithPending(p *Pending) Option { return func(r *Runner) { r.pending = p } }
