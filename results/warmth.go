package results

import (
	"time"

	"github.com/sixpin/sixpin/record"
)

// StarvedAfter is how many further turns answered, in half of the N
// sessions, make the rest starved: a server that admits requests in their
// order answers a cold turn, sent at the start, before the later turns of
// others; one that shares its prefill among them answers it while they
// run. A session still waiting for its first answer once half of them
// have had StarvedAfter more is not being served — the server holds
// fewer contexts than the run sends it — and that is the steady state to
// judge, not a start to wait out.
const StarvedAfter = 3

// Warmth follows a run's records, in the order they finish, until N
// agentic sessions have each had a turn answered (or ended): under a
// stationary start (scenario workload.start) the sessions running at the
// start join mid-life and send their whole history cold, a prefill burst
// no later minute repeats. At is then the latest end seen — every record
// that finished before it was scheduled before it — and the values of
// requests scheduled before At are the start's, not the steady state's.
// When half of them have had StarvedAfter more turns answered and some
// are still waiting, the run is warm then too, and Starved counts those
// waiting. The zero Warmth (N 0) is warm at once. Owned by one goroutine,
// like the collector.
type Warmth struct {
	N int
	// answers counts each session's answered turns while the run warms.
	answers map[int]int
	// ahead counts the sessions with StarvedAfter turns answered after
	// their first.
	ahead   int
	seenEnd time.Duration
	at      time.Duration
	warm    bool
	starved int
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
	if w.answers == nil {
		w.answers = map[int]int{}
	}
	w.answers[r.Session]++
	if w.answers[r.Session] == 1+StarvedAfter {
		w.ahead++
	}
	switch {
	case len(w.answers) >= w.N:
		w.warm, w.at, w.answers = true, w.seenEnd, nil
	case 2*w.ahead >= w.N:
		w.warm, w.at, w.starved, w.answers = true, w.seenEnd, w.N-len(w.answers), nil
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
func (w *Warmth) Answered() int { return len(w.answers) }

// Starved is how many of the N sessions were still waiting for their
// first answer when the run was deemed warm (0: every one was answered).
func (w *Warmth) Starved() int { return w.starved }
