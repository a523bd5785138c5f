package sim

import (
	"sync"
	"sync/atomic"
	"time"
)

// seq is one request inside the roofline engine.
//
// prompt, out and reserve are set before submission and then only read.
// prefilled and generated belong to the engine goroutine (or to the test
// driving a sched). avail, gone and notify are the hand-over to the
// request's handler goroutine.
type seq struct {
	prompt  int // prompt tokens to prefill
	out     int // output tokens to generate, ≥ 1
	reserve int // KV tokens held from admission to the end

	prefilled int // prompt tokens prefilled so far
	generated int // output tokens generated so far

	avail  atomic.Int64  // generated, as published to the handler
	gone   atomic.Bool   // the handler no longer wants tokens: free the seq
	notify chan struct{} // 1-buffered; a token arrived
}

func newSeq(prompt, out, reserve int) *seq {
	return &seq{prompt: prompt, out: out, reserve: reserve, notify: make(chan struct{}, 1)}
}

// publish hands generated to the handler without ever blocking.
func (q *seq) publish() {
	q.avail.Store(int64(q.generated))
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

// prefillChunk is n prompt tokens of q prefilled in one step.
type prefillChunk struct {
	q *seq
	n int
}

// step is what one engine step does and how long it takes.
type step struct {
	dur     time.Duration
	prefill []prefillChunk // FIFO
	decode  []*seq         // one token each
}

func (st *step) idle() bool { return len(st.prefill) == 0 && len(st.decode) == 0 }

// sched is the engine's scheduling state and decisions, free of clocks and
// goroutines: plan decides the next step, apply completes it. Production
// drives it with a timer (engine.run), tests with a loop over virtual time.
// It is not safe for concurrent use.
type sched struct {
	rl         Roofline
	maxSeqs    int
	kvBudget   int // tokens
	maxBatched int // prefill tokens per step
	static     bool

	waiting []*seq // FIFO, not yet admitted
	running []*seq // admitted, in admission order
	kvUsed  int    // Σ reserve of running

	st      step   // reused by plan
	touched []*seq // reused by apply
}

func newSched(c Config) *sched {
	return &sched{
		rl:         c.Roofline,
		maxSeqs:    c.MaxNumSeqs,
		kvBudget:   c.KVBudgetTokens,
		maxBatched: c.MaxBatchedTokens,
		static:     c.Batching == BatchingStatic,
	}
}

// add queues q at the end of the waiting line.
func (s *sched) add(q *seq) { s.waiting = append(s.waiting, q) }

// plan drops sequences whose handlers left, admits waiting ones, and
// returns the next step: up to maxBatched prompt tokens across sequences
// still in prefill (FIFO) plus one decode token for each sequence past its
// prefill, timed by the roofline of both together. The step is valid until
// the next call of plan; an idle step means there is nothing to run.
func (s *sched) plan() *step {
	s.reap()
	s.admit()

	st := &s.st
	st.prefill = st.prefill[:0]
	st.decode = st.decode[:0]
	st.dur = 0
	budget := s.maxBatched
	var flops, bytes float64
	kvb := s.rl.KVBytesPerToken()
	for _, q := range s.running {
		if q.prefilled < q.prompt {
			if budget == 0 {
				continue
			}
			n := min(q.prompt-q.prefilled, budget)
			budget -= n
			st.prefill = append(st.prefill, prefillChunk{q, n})
			flops += s.rl.prefillFLOPs(n, q.prefilled)
			bytes += kvb * float64(q.prefilled+n) // read the cached prefix, write the chunk
			continue
		}
		ctx := q.prompt + q.generated
		st.decode = append(st.decode, q)
		flops += 2*s.rl.params() + s.rl.attnFLOPsPerToken()*float64(ctx)
		bytes += kvb * float64(ctx)
	}
	if st.idle() {
		return st
	}
	bytes += s.rl.weightBytes() // read once per step, shared by the batch
	st.dur = s.rl.stepTime(flops, bytes)
	return st
}

// apply completes st, the step plan returned: a sequence whose prefill
// completes gets its first token, every decoding one its next token, and a
// sequence with all its tokens leaves and frees its KV. It returns the
// sequences whose generated count changed (valid until the next apply).
func (s *sched) apply(st *step) []*seq {
	s.touched = s.touched[:0]
	for _, c := range st.prefill {
		q := c.q
		q.prefilled += c.n
		if q.prefilled == q.prompt {
			q.generated = 1
			s.touched = append(s.touched, q)
		}
	}
	for _, q := range st.decode {
		q.generated++
		s.touched = append(s.touched, q)
	}
	kept := s.running[:0]
	for _, q := range s.running {
		if q.generated >= q.out {
			s.kvUsed -= q.reserve
			continue
		}
		kept = append(kept, q)
	}
	clear(s.running[len(kept):])
	s.running = kept
	return s.touched
}

// reap removes running sequences whose handlers left and frees their KV.
func (s *sched) reap() {
	kept := s.running[:0]
	for _, q := range s.running {
		if q.gone.Load() {
			s.kvUsed -= q.reserve
			continue
		}
		kept = append(kept, q)
	}
	clear(s.running[len(kept):])
	s.running = kept
}

// admit moves waiting sequences to running, first come first served: while
// the batch has room and the head's reservation fits the KV budget
// (continuous), or only into an empty batch (static).
func (s *sched) admit() {
	if s.static && len(s.running) > 0 {
		return
	}
	for len(s.waiting) > 0 && len(s.running) < s.maxSeqs {
		q := s.waiting[0]
		if !q.gone.Load() {
			if s.kvUsed+q.reserve > s.kvBudget {
				return
			}
			s.running = append(s.running, q)
			s.kvUsed += q.reserve
		}
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
	}
}

// engine runs a sched in real time on one goroutine. Handlers submit
// sequences and then only read their seq's hand-over fields; the engine
// never blocks on a handler.
type engine struct {
	s *sched

	mu    sync.Mutex
	inbox []*seq // submitted, not yet seen by the engine

	wake    chan struct{} // 1-buffered; the inbox grew
	done    <-chan struct{}
	exited  chan struct{}
	running atomic.Int64 // for /metrics
	waiting atomic.Int64
}

func startEngine(c Config, done <-chan struct{}) *engine {
	e := &engine{
		s:      newSched(c),
		wake:   make(chan struct{}, 1),
		done:   done,
		exited: make(chan struct{}),
	}
	go e.run()
	return e
}

// submit queues q; safe for concurrent use.
func (e *engine) submit(q *seq) {
	e.mu.Lock()
	e.inbox = append(e.inbox, q)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *engine) drain() {
	e.mu.Lock()
	in := e.inbox
	e.inbox = nil
	e.mu.Unlock()
	for _, q := range in {
		e.s.add(q)
	}
}

// run steps until done is closed. Each step ends at an absolute deadline
// (the previous one plus the step time), so steps do not drift; after an
// idle spell the clock restarts from now.
func (e *engine) run() {
	defer close(e.exited)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var deadline time.Time
	for {
		e.drain()
		st := e.s.plan()
		e.running.Store(int64(len(e.s.running)))
		e.waiting.Store(int64(len(e.s.waiting)))
		if st.idle() {
			deadline = time.Time{}
			select {
			case <-e.wake:
				continue
			case <-e.done:
				return
			}
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now
		}
		deadline = deadline.Add(st.dur)
		timer.Reset(deadline.Sub(now))
		select {
		case <-timer.C:
		case <-e.done:
			return
		}
		for _, q := range e.s.apply(st) {
			q.publish()
		}
	}
}
