package endpoint

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog is a request's one timer. It cuts the request off, with its
// end's cause, at the first of three ends:
//
//   - the request timeout, counted from when the watch starts
//     (context.DeadlineExceeded);
//   - a stall: no chunk for the stall timeout once the stream's first
//     chunk came (errStalled);
//   - a drain that outlasts drainTimeout: the rest of a finished answer,
//     read to find its end so that the connection is reused (errDrained).
//
// A timer for each made three timers, three closures and three entries
// in the runtime's timer heap a request; the one timer is re-armed for
// whichever end comes first. The stream's reader (its goroutine or the
// event loop) publishes chunk times and starts and ends the stall watch
// and the drain; the timer's goroutine checks. A timer reset per chunk
// would touch the timer heap millions of times, and even an atomic store
// per chunk is a full barrier: the reader publishes a chunk's time in
// last only once it has moved on by a sixty-fourth of the stall timeout
// since the last one it published (stallStep), so a stall is found at
// most that much late. The deadline and the drain are wall-clock offsets
// from the run clock's start; the stall, like the chunks' times, is in
// run time.
type watchdog struct {
	clk    Clock
	cancel context.CancelCauseFunc
	timer  *time.Timer
	// last is the run-time offset of the last published chunk, ns.
	last atomic.Int64
	// mu orders what arms the timer: the reader starting or ending a
	// stall watch or a drain, and the timer's own check.
	mu       sync.Mutex
	deadline time.Duration // wall
	drainBy  time.Duration // wall; 0: not draining
	stall    time.Duration // run time; 0: not watching for a stall
}

// start arms w to cancel the request after timeout (wall time); stop
// must follow.
func (w *watchdog) start(clk Clock, timeout time.Duration, cancel context.CancelCauseFunc) {
	w.clk, w.cancel = clk, cancel
	w.deadline = time.Since(clk.Start) + timeout
	w.timer = time.AfterFunc(timeout, w.check)
}

// stop ends the watch: nothing is cancelled after it.
func (w *watchdog) stop() { w.timer.Stop() }

// stallStep is how far the stream moves on before the reader publishes a
// chunk's time again, for a stall timeout of stall.
func stallStep(stall time.Duration) time.Duration { return stall / 64 }

// watchStall starts watching for a stall of stall (run time) from a
// chunk at at (a run-time offset).
func (w *watchdog) watchStall(stall, at time.Duration) {
	w.last.Store(int64(at))
	w.mu.Lock()
	w.stall = stall
	w.arm(time.Since(w.clk.Start))
	w.mu.Unlock()
}

// endStall stops watching for a stall (the stream has ended).
func (w *watchdog) endStall() {
	w.mu.Lock()
	w.stall = 0
	w.mu.Unlock()
}

// drain starts the drain's bound, drainTimeout from now; endDrain ends
// it.
func (w *watchdog) drain() {
	w.mu.Lock()
	now := time.Since(w.clk.Start)
	w.drainBy = now + drainTimeout
	w.arm(now)
	w.mu.Unlock()
}

func (w *watchdog) endDrain() {
	w.mu.Lock()
	w.drainBy = 0
	w.mu.Unlock()
}

// check runs on the timer: it cancels the request if an end has come,
// else re-arms for the next.
func (w *watchdog) check() {
	w.mu.Lock()
	now := time.Since(w.clk.Start)
	var cause error
	switch {
	case now >= w.deadline:
		cause = context.DeadlineExceeded
	case w.drainBy > 0 && now >= w.drainBy:
		cause = errDrained
	case w.stall > 0 && w.clk.Since()-time.Duration(w.last.Load()) >= w.stall:
		cause = errStalled
	default:
		w.arm(now)
	}
	w.mu.Unlock()
	if cause != nil {
		w.cancel(cause)
	}
}

// arm sets the timer for the first end to come after now (wall); w.mu is
// held.
func (w *watchdog) arm(now time.Duration) {
	next := w.deadline - now
	if w.drainBy > 0 {
		next = min(next, w.drainBy-now)
	}
	if w.stall > 0 {
		next = min(next, w.stall-(w.clk.Since()-time.Duration(w.last.Load())))
	}
	w.timer.Reset(max(next, 0))
}
