package runner

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/record"
)

// Bounds of the wait after an answer that asks to slow down, as the
// OpenAI and Anthropic SDKs set them: a server's hint is honoured up to
// maxHint (the SDKs ignore a longer one; sixpin waits maxHint instead),
// and without one the exponential backoff stops growing at maxBackoff
// (their MAX_RETRY_DELAY). Run time.
const (
	maxHint    = time.Minute
	maxBackoff = 8 * time.Second
)

// slowDown reports whether rec's answer asked sixpin to slow down (429,
// 503, 529).
func slowDown(rec *record.Record) bool {
	return rec.Failed() && record.AsksToSlowDown(rec.HTTPStatus)
}

// backoffDelay is the wait, in run time, after the (attempt+1)-th answer
// in a row that asked to slow down, the last with the server's hint (0:
// none): the hint, up to maxHint, else the jittered exponential backoff
// from WithBackoff's first delay up to maxBackoff.
func (r *Runner) backoffDelay(rng *rand.Rand, attempt int, hint time.Duration) time.Duration {
	if hint > 0 {
		return min(hint, maxHint)
	}
	return backoff.Jittered(rng, r.backoff, maxBackoff, attempt)
}

// pacer is one stream's backoff: a closed-loop worker's, an agentic
// session worker's (across its sessions) or a replayed session's. It
// counts the answers that asked to slow down, and the connect failures,
// each in a row. Owned by its stream's goroutine.
type pacer struct {
	r                   *Runner
	rng                 *rand.Rand
	slowed, unreachable int
}

func (r *Runner) newPacer(stream uint64) *pacer {
	return &pacer{r: r, rng: rand.New(rand.NewPCG(r.plan.Seed(), stream^0x6a6974746572))} // "jitter"
}

// delay is the wall-clock time the stream waits after rec before its next
// request: after a connect failure WithConnectBackoff's, after an answer
// that asked to slow down backoffDelay's (scaled to wall-clock time); 0
// after any other answer, which ends both runs of failures.
func (p *pacer) delay(rec *record.Record) time.Duration {
	switch {
	case rec.Err == record.ErrConnect:
		p.unreachable++
		return p.r.connectDelay(p.rng, p.unreachable-1)
	case slowDown(rec):
		p.slowed++
		return p.r.wallTime(p.r.backoffDelay(p.rng, p.slowed-1, rec.RetryAfter))
	case rec.Err == record.ErrInterrupted:
		return 0
	}
	p.slowed, p.unreachable = 0, 0
	return 0
}

// wait sleeps d (wall-clock) after rec, but no longer than the run's
// duration leaves, and not at all when left is false (the run can send
// nothing more), adding the time waited to rec.Backoff in run time. It
// reports false when issuing was stopped.
func (r *Runner) wait(issue context.Context, rec *record.Record, d time.Duration, left bool) bool {
	if r.duration > 0 {
		d = min(d, r.wallTime(r.duration-r.since()))
	}
	if d <= 0 || !left {
		return issue.Err() == nil
	}
	from := r.since()
	ok := backoff.Sleep(issue, d)
	if ok {
		rec.Backoff += r.clock.Run(d)
	} else {
		rec.Backoff += r.since() - from
	}
	return ok
}

// pause is the open loop's backoff. Arrivals have no stream to hold back,
// and an answer that asks to slow down concerns the whole client (one
// key, one rate limit: what an SDK's shared client meets), so it pauses
// every arrival: those that fall inside the pause are withheld — counted,
// never sent late. The server's hint sets the pause's end; without one,
// the jittered exponential backoff over pauses in a row, an answer to a
// request sent before the pause began not counting as another. Safe for
// concurrent use: requests' goroutines make the pause, the arrival loop
// reads it, each once per request or arrival.
type pause struct {
	r   *Runner
	mu  sync.Mutex
	rng *rand.Rand
	// slowed counts pauses in a row; began and until bound the latest,
	// in run time.
	slowed       int
	began, until time.Duration
	// held are the records that made the pause, each with the stretch it
	// added (its Backoff) ending at end; they are handed back when the
	// pause is over. withheld counts the arrivals withheld meanwhile.
	held     []heldRecord
	withheld int
}

type heldRecord struct {
	rec *record.Record
	end time.Duration
}

func (r *Runner) newPause() *pause {
	return &pause{r: r, rng: rand.New(rand.NewPCG(r.plan.Seed(), 0x7061757365))} // "pause"
}

// hold takes a finished request's record and reports whether it kept it:
// an answer that asks to slow down and starts or lengthens the pause is
// kept until the pause is over, its Backoff the stretch it added.
func (p *pause) hold(rec *record.Record) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slowDown(rec) {
		if rec.Err != record.ErrInterrupted && rec.Err != record.ErrConnect {
			p.slowed = 0
		}
		return false
	}
	again := rec.Sent >= p.began // not in flight when the latest pause began
	if !again && rec.RetryAfter <= 0 {
		return false // the same refusal as the one that paused: already waited for
	}
	now := p.r.since()
	end := now + p.r.backoffDelay(p.rng, p.slowed, rec.RetryAfter)
	if again {
		p.slowed++
	}
	if end <= p.until {
		return false
	}
	if p.until <= now {
		p.began = now
	}
	rec.Backoff = end - max(p.until, now)
	p.until = end
	p.held = append(p.held, heldRecord{rec, end})
	return true
}

// admit reports whether the arrival due at at may be sent, counting it
// withheld when not; once the pause is over it hands back the records
// that made it, the first carrying the count of arrivals withheld.
func (p *pause) admit(at time.Duration) (ok bool, over []*record.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at < p.until {
		p.withheld++
		return false, nil
	}
	return true, p.release(at)
}

// release hands back the held records, each Backoff cut at stop (run
// time), the first carrying the withheld arrivals. Called with mu held.
func (p *pause) release(stop time.Duration) []*record.Record {
	if len(p.held) == 0 {
		return nil
	}
	out := make([]*record.Record, len(p.held))
	for i, h := range p.held {
		if h.end > stop {
			h.rec.Backoff = max(h.rec.Backoff-(h.end-stop), 0)
		}
		out[i] = h.rec
	}
	out[0].Withheld += p.withheld
	p.held, p.withheld = nil, 0
	return out
}

// end hands back the records of the pause the run ended in, their waits
// cut at stop, when issuing stopped (run time).
func (p *pause) end(stop time.Duration) []*record.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.release(stop)
}
