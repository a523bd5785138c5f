package results

import (
	"time"

	"github.com/sixpin/sixpin/record"
)

// Warmth follows a run's records, in the order they finish, until N
// agentic sessions have each had a turn answered (or ended): under a
// stationary start (scenario workload.start) the sessions running at the
// start join mid-life and send their whole history cold, a prefill burst
// no later minute repeats. At is then the latest end seen — every record
// that finished before it was scheduled before it — and the values of
// requests scheduled before At are the start's, not the steady state's.
// The zero Warmth (N 0) is warm at once. Owned by one goroutine, like
// the collector.
type Warmth struct {
	N        int
	answered map[int]struct{}
	seenEnd  time.Duration
	at       time.Duration
	warm     bool
}

// Observe counts r and reports whether the run is warm after it.
func (w *Warmth) Observe(r *record.Record) bool {
	if w.warm || w.N <= 0 {
		w.warm = true
		return true
	}
	w.seenEnd = max(w.seenEnd, r.End)
	if r.Session < 0 || (r.Failed() && r.SessionEnd == "") {
		return false
	}
	if w.answered == nil {
		w.answered = map[int]struct{}{}
	}
	w.answered[r.Session] = struct{}{}
	if len(w.answered) >= w.N {
		w.warm, w.at, w.answered = true, w.seenEnd, nil
	}
	return w.warm
}

// Warm reports whether N sessions have been answered (true when N is 0).
func (w *Warmth) Warm() bool { return w.warm || w.N <= 0 }

// At is when the run became warm, in run time (0 until then, or when N
// is 0).
func (w *Warmth) At() time.Duration { return w.at }

// Answered is how many sessions have had a turn answered while the run
// was not yet warm.
func (w *Warmth) Answered() int { return len(w.answered) }
