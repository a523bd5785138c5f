package sim

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// seq is one request inside the roofline engine.
//
// prompt, out and hashes are set before submission and then only read.
// The fields from fill to admitted belong to the engine goroutine (or to
// the test driving a sched). The atomics and notify are the hand-over to
// the request's handler goroutine.
type seq struct {
	prompt int      // prompt tokens
	out    int      // output tokens to generate, ≥ 1
	hashes []uint64 // chain hashes of the prompt's full blocks; nil without prefix caching
	spec   *seqSpec // speculative decoding; nil without

	fill      int            // tokens to compute before decoding: prompt + generated at (re)admission
	prefilled int            // of fill, computed (or found cached) so far
	generated int            // output tokens generated so far; kept across preemption
	blocks    []*cachedBlock // cached blocks held, shared or committed
	own       int            // other blocks held
	hashed    int            // leading hashes matched or committed
	admitted  bool           // admitted at least once

	cached atomic.Int64  // prompt tokens found in the prefix cache at first admission
	avail  atomic.Int64  // generated, as published to the handler
	gone   atomic.Bool   // the handler no longer wants tokens: free the seq
	notify chan struct{} // 1-buffered; a token arrived

	// By the engine's clock, in Unix nanoseconds (0: not yet): the start
	// of the first step that prefilled q, and the ends of the steps that
	// gave q its first and its latest token. Each is stored before the
	// publish that hands its token over.
	scheduled, first, last atomic.Int64
}

func newSeq(prompt, out int, hashes []uint64) *seq {
	return &seq{prompt: prompt, out: out, hashes: hashes, notify: make(chan struct{}, 1)}
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
	decode  []*seq         // one token each, or more with speculative decoding
}

func (st *step) idle() bool { return len(st.prefill) == 0 && len(st.decode) == 0 }

// sched is the engine's scheduling state and decisions, free of clocks and
// goroutines: plan decides the next step, apply completes it. Production
// drives it with a timer (engine.run), tests with a loop over virtual time.
// It is not safe for concurrent use.
type sched struct {
	rl         Roofline
	scale      float64 // Config.TimeScale
	maxSeqs    int
	maxBatched int // prefill tokens per step
	static     bool
	kv         *kvCache
	k          int // draft tokens per decode step (SpecDecode); 0: none

	waiting     []*seq // not yet admitted, or preempted (at the head), in order
	running     []*seq // admitted, in admission order
	preemptions int64
	spec        specStats
	sglang      sglangGauges
	stepTokens  int // tokens the last apply generated

	st      step   // reused by plan
	touched []*seq // reused by apply
}

func newSched(c Config) *sched {
	s := &sched{
		rl:         c.Roofline,
		scale:      c.TimeScale,
		maxSeqs:    c.MaxNumSeqs,
		maxBatched: c.MaxBatchedTokens,
		static:     c.Batching == BatchingStatic,
		kv:         newKVCache(c.KVBudgetTokens, c.BlockSize, *c.PrefixCaching),
	}
	if c.SpecDecode != nil {
		s.k = c.SpecDecode.DraftTokens
		s.spec.perPos = make([]int64, s.k)
	}
	return s
}

// add queues q at the end of the waiting line.
func (s *sched) add(q *seq) { s.waiting = append(s.waiting, q) }

// plan drops sequences whose handlers left, gives every decoding sequence
// the KV block its next token needs (preempting the most recently
// admitted ones when none is free), admits waiting ones if nothing was
// preempted, and returns the next step: up to maxBatched prompt tokens
// across sequences still in prefill (FIFO) plus one decode token for each
// sequence past its prefill (with speculative decoding, 1 + its drafts,
// all verified in the step), timed by the roofline of both together. The
// step is valid until the next call of plan; an idle step means there is
// nothing to run.
func (s *sched) plan() *step {
	s.reap()
	if !s.reserveDecode() {
		s.admit()
	}

	st := &s.st
	st.prefill = st.prefill[:0]
	st.decode = st.decode[:0]
	st.dur = 0
	budget := s.maxBatched
	var pflops, dflops, bytes float64
	kvb := s.rl.KVBytesPerToken()
	for _, q := range s.running {
		if q.prefilled < q.fill {
			if budget == 0 {
				continue
			}
			n := min(q.fill-q.prefilled, budget)
			budget -= n
			st.prefill = append(st.prefill, prefillChunk{q, n})
			pflops += s.rl.prefillFLOPs(n, q.prefilled)
			bytes += kvb * float64(q.prefilled+n) // read the cached prefix, write the chunk
			continue
		}
		ctx := q.prompt + q.generated
		st.decode = append(st.decode, q)
		n := 1
		if q.spec != nil {
			q.spec.draft = s.drafts(q)
			n += q.spec.draft
		}
		dflops += float64(n) * (2*s.rl.params() + s.rl.attnFLOPsPerToken()*float64(ctx))
		bytes += kvb * float64(ctx)
	}
	if st.idle() {
		return st
	}
	bytes += s.rl.weightBytes() // read once per step, shared by the batch
	st.dur = scaleDuration(s.rl.stepTime(pflops, dflops, bytes), s.scale)
	return st
}

// reserveDecode makes room in the KV cache for the token each decoding
// sequence writes next step, in admission order. When no block is free,
// the most recently admitted running sequence is preempted (possibly the
// one that needs the block); a sequence alone never is: it outgrows the
// budget instead. It reports whether anything was preempted.
func (s *sched) reserveDecode() bool {
	preempted := false
	for i := 0; i < len(s.running); i++ {
		q := s.running[i]
		if q.prefilled < q.fill {
			continue // its blocks were taken at admission
		}
		for s.kv.blocks(q.prompt+q.generated+s.drafts(q)) > len(q.blocks)+q.own {
			if s.kv.grow(q, len(s.running) == 1) {
				continue
			}
			victim := s.running[len(s.running)-1]
			s.preempt(victim)
			preempted = true
			if victim == q {
				break
			}
		}
	}
	return preempted
}

// preempt frees the blocks of q, the last running sequence, and puts it at
// the head of the waiting line. It keeps its generated tokens: when it is
// admitted again it recomputes prompt + generated and goes on from there.
func (s *sched) preempt(q *seq) {
	s.kv.release(q)
	q.prefilled, q.fill = 0, 0
	s.running[len(s.running)-1] = nil
	s.running = s.running[:len(s.running)-1]
	s.waiting = append(s.waiting, nil)
	copy(s.waiting[1:], s.waiting)
	s.waiting[0] = q
	s.preemptions++
}

// apply completes st, the step plan returned: prefilled chunks commit
// their full blocks to the prefix cache, a sequence whose prefill
// completes gets its next token (its first, or the next after a
// preemption), every decoding one its next token (or, speculating, 1 +
// the drafts it accepted), and a sequence with all
// its tokens leaves and frees its blocks. It returns the sequences whose
// generated count changed (valid until the next apply).
func (s *sched) apply(st *step) []*seq {
	s.touched = s.touched[:0]
	s.stepTokens = 0
	for _, c := range st.prefill {
		q := c.q
		q.prefilled += c.n
		s.kv.commit(q)
		if q.prefilled == q.fill {
			q.generated++
			s.stepTokens++
			s.touched = append(s.touched, q)
		}
	}
	var seqs, tokens int64
	for _, q := range st.decode {
		n := s.verify(q)
		q.generated += n
		s.stepTokens += n
		s.touched = append(s.touched, q)
		if q.spec != nil {
			seqs++
			tokens += int64(n)
		}
	}
	if seqs > 0 {
		s.sglang.observe(seqs, tokens, tokens-seqs, s.k)
	}
	kept := s.running[:0]
	for _, q := range s.running {
		if q.generated >= q.out {
			s.kv.release(q)
			continue
		}
		kept = append(kept, q)
	}
	clear(s.running[len(kept):])
	s.running = kept
	return s.touched
}

// reap removes running sequences whose handlers left and frees their
// blocks.
func (s *sched) reap() {
	kept := s.running[:0]
	for _, q := range s.running {
		if q.gone.Load() {
			s.kv.release(q)
			continue
		}
		kept = append(kept, q)
	}
	clear(s.running[len(kept):])
	s.running = kept
}

// admit moves waiting sequences to running, first come first served: while
// the batch has room and the head's blocks fit the free ones (continuous),
// or only into an empty batch (static). A sequence that fits nowhere runs
// when it is alone.
func (s *sched) admit() {
	if s.static && len(s.running) > 0 {
		return
	}
	for len(s.waiting) > 0 && len(s.running) < s.maxSeqs {
		q := s.waiting[0]
		if !q.gone.Load() {
			if !s.kv.admit(q, len(s.running) == 0) {
				return
			}
			if !q.admitted {
				q.admitted = true
				q.cached.Store(int64(q.prefilled))
			}
			s.running = append(s.running, q)
		}
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
	}
}

// scaleDuration is d times scale.
func scaleDuration(d time.Duration, scale float64) time.Duration {
	if scale == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) * scale))
}

// engine runs a sched in real time on one goroutine. Handlers submit
// sequences and then only read their seq's hand-over fields; the engine
// never blocks on a handler. mu guards the inbox and the sched while a
// step is planned or applied, so that handlers may look up the prefix
// cache (peek) in between.
type engine struct {
	s *sched
	m *serverMetrics

	mu    sync.Mutex
	inbox []*seq // submitted, not yet seen by the engine

	wake   chan struct{} // 1-buffered; the inbox grew
	done   <-chan struct{}
	exited chan struct{}
	stats  engineStats
}

// engineStats are the engine's figures for /metrics, published after
// every plan and apply.
type engineStats struct {
	running, waiting atomic.Int64
	preemptions      atomic.Int64
	queries, hits    atomic.Int64 // prefix cache, in tokens
	blocksUsed       atomic.Int64
	// vLLM's spec-decode counters (see specStats); perPos has K entries.
	drafts, draftTokens, accepted atomic.Int64
	perPos                        []atomic.Int64
	// SGLang's spec_accept_length and spec_accept_rate gauges
	// (sglangGauges), as float64 bits.
	sglangLength, sglangRate atomic.Uint64
}

// startEngine starts an engine for c that stops when done is closed and
// counts its tokens in m.
func startEngine(c Config, done <-chan struct{}, m *serverMetrics) *engine {
	e := &engine{
		s:      newSched(c),
		m:      m,
		wake:   make(chan struct{}, 1),
		done:   done,
		exited: make(chan struct{}),
	}
	e.stats.perPos = make([]atomic.Int64, e.s.k)
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

// queued is how many submitted sequences wait for admission now: the
// inbox and the waiting line. Safe for concurrent use.
func (e *engine) queued() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.inbox) + len(e.s.waiting)
}

// peek returns how many prompt tokens of a request with these block
// hashes and prompt length the prefix cache holds now; safe for
// concurrent use.
func (e *engine) peek(prompt int, hashes []uint64) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return peekCache(e.s.kv, prompt, hashes)
}

// peekCache is the cached tokens a request with prompt tokens and these
// block hashes would reuse if it were admitted now.
func peekCache(c *kvCache, prompt int, hashes []uint64) int {
	found, _ := c.match(hashes[:min(len(hashes), (prompt-1)/c.blockSize)])
	return found * c.blockSize
}

// drain moves the inbox to the waiting line; e.mu must be held.
func (e *engine) drain() {
	for _, q := range e.inbox {
		e.s.add(q)
	}
	clear(e.inbox)
	e.inbox = e.inbox[:0]
}

// publish stores the sched's figures for /metrics; e.mu must be held.
func (e *engine) publish() {
	st := &e.stats
	st.running.Store(int64(len(e.s.running)))
	st.waiting.Store(int64(len(e.s.waiting)))
	st.preemptions.Store(e.s.preemptions)
	st.queries.Store(e.s.kv.queries)
	st.hits.Store(e.s.kv.hits)
	st.blocksUsed.Store(int64(e.s.kv.used))
	st.sglangLength.Store(math.Float64bits(e.s.sglang.length))
	st.sglangRate.Store(math.Float64bits(e.s.sglang.rate))
	st.drafts.Store(e.s.spec.drafts)
	st.draftTokens.Store(e.s.spec.draftTokens)
	st.accepted.Store(e.s.spec.accepted)
	for i, n := range e.s.spec.perPos {
		st.perPos[i].Store(n)
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
		e.mu.Lock()
		e.drain()
		st := e.s.plan()
		e.publish()
		e.mu.Unlock()
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
		for _, c := range st.prefill {
			if c.q.scheduled.Load() == 0 {
				c.q.scheduled.Store(deadline.UnixNano())
			}
		}
		deadline = deadline.Add(st.dur)
		timer.Reset(deadline.Sub(now))
		select {
		case <-timer.C:
		case <-e.done:
			return
		}
		e.mu.Lock()
		touched := e.s.apply(st)
		e.publish()
		e.mu.Unlock()
		end := deadline.UnixNano()
		e.m.generationTokens.Add(int64(e.s.stepTokens))
		for _, q := range touched {
			if prev := q.last.Load(); prev == 0 {
				q.first.Store(end)
			} else {
				e.m.itl.observe(time.Duration(end - prev))
			}
			q.last.Store(end)
			q.publish()
		}
	}
}
