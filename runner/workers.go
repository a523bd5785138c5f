package runner

import (
	"sync"
	"time"

	"github.com/sixpin/sixpin/record"
)

// arrival is an open loop's request, due at at (run time).
type arrival struct {
	req  record.Request
	text string
	at   time.Duration
}

// workers send an open loop's requests: each arrival goes to an idle
// worker, or to a new one when none is idle, so that no arrival waits
// for another request to end (the schedule, not the pool, decides when a
// request goes out). A worker stays for the next arrival once its
// request is done: a goroutine per request made a new stack every time
// and grew it on the way down the request path — at 6,000 requests/s,
// a tenth of the process's CPU was spent allocating, copying and
// clearing stacks. send is called from one goroutine, the loop's.
type workers struct {
	jobs chan arrival // unbuffered: taken by an idle worker only
	do   func(arrival)
	wg   sync.WaitGroup
	// started counts the workers started (send's goroutine only).
	started int
}

func newWorkers(do func(arrival)) *workers {
	return &workers{jobs: make(chan arrival), do: do}
}

// send hands a to an idle worker, or starts one for it.
func (w *workers) send(a arrival) {
	select {
	case w.jobs <- a:
	default:
		w.started++
		w.wg.Go(func() {
			for {
				w.do(a)
				var ok bool
				if a, ok = <-w.jobs; !ok {
					return
				}
			}
		})
	}
}

// wait lets the workers finish their requests and end; no send after it.
func (w *workers) wait() {
	close(w.jobs)
	w.wg.Wait()
}
