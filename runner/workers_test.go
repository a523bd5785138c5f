package runner

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/testserve"
)

// An arrival never waits for another request to end: with every worker
// busy a new one starts at once; a worker whose request ended takes the
// next arrival instead of a new goroutine being started for it.
func TestWorkersNeverHoldAnArrival(t *testing.T) {
	release := make(chan struct{})
	var done atomic.Int64
	var mu sync.Mutex
	var seen []time.Duration
	w := newWorkers(func(a arrival) {
		mu.Lock()
		seen = append(seen, a.at)
		mu.Unlock()
		if a.at < 3 {
			<-release // the first three hold their workers
		}
		done.Add(1)
	})
	for i := range 3 {
		w.send(arrival{at: time.Duration(i)})
	}
	testserve.WaitFor(t, "three arrivals taken by three workers while all are busy", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 3 })
	close(release)
	testserve.WaitFor(t, "the three requests ending", func() bool { return done.Load() == 3 })
	// The three workers are idle now (given a moment to wait for the
	// next arrival): the next arrivals go to them. One more may start on
	// a machine so loaded that a worker has not come back yet.
	before := w.started
	for i := 3; i < 6; i++ {
		time.Sleep(50 * time.Millisecond)
		w.send(arrival{at: time.Duration(i)})
		testserve.WaitFor(t, "an arrival taken by an idle worker", func() bool { return done.Load() == int64(i+1) })
	}
	if after := w.started; before != 3 || after > before+1 {
		t.Errorf("%d workers before the later arrivals, %d after: idle workers were not reused", before, after)
	}
	w.wait()
	if len(seen) != 6 {
		t.Errorf("%d arrivals done, want 6", len(seen))
	}
}
