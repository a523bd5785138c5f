package sim

import (
	"testing"
	"time"
)

// trace is what a sched did, step by step, in virtual time.
type trace struct {
	steps      int
	now        time.Duration // virtual time after the last step
	first      map[*seq]int  // step (1-based) that gave a sequence its first token
	firstAt    map[*seq]time.Duration
	done       map[*seq]int // step that gave its last token
	doneAt     map[*seq]time.Duration
	durs       []time.Duration
	maxRunning int
	maxUsed    int // KV blocks
}

// drive runs s in virtual time until it is idle, checking the engine's
// invariants at every step. before, if not nil, runs before each step's
// plan (to add or cancel sequences).
func drive(t *testing.T, s *sched, before func(step int)) trace {
	t.Helper()
	tr := trace{first: map[*seq]int{}, firstAt: map[*seq]time.Duration{}, done: map[*seq]int{}, doneAt: map[*seq]time.Duration{}}
	gen := map[*seq]int{}
	for i := 1; i <= 100000; i++ {
		if before != nil {
			before(i)
		}
		st := s.plan()
		if st.idle() {
			if len(s.waiting) > 0 {
				t.Fatalf("step %d: idle with %d waiting", i, len(s.waiting))
			}
			if s.kv.used != 0 {
				t.Fatalf("idle with %d KV blocks in use", s.kv.used)
			}
			return tr
		}
		if len(s.running) > s.maxSeqs {
			t.Fatalf("step %d: %d running > max_num_seqs %d", i, len(s.running), s.maxSeqs)
		}
		checkBlocks(t, i, s)
		tr.maxRunning = max(tr.maxRunning, len(s.running))
		tr.maxUsed = max(tr.maxUsed, s.kv.used)
		if st.dur <= 0 {
			t.Fatalf("step %d takes %v", i, st.dur)
		}
		tr.now += st.dur
		tr.durs = append(tr.durs, st.dur)
		tr.steps = i
		for _, q := range s.apply(st) {
			// A token at a time, never taken back (preemption keeps them).
			if q.generated != gen[q]+1 {
				t.Fatalf("step %d: generated %d after %d", i, q.generated, gen[q])
			}
			gen[q] = q.generated
			if q.generated == 1 {
				tr.first[q], tr.firstAt[q] = i, tr.now
			}
			if q.generated == q.out {
				tr.done[q], tr.doneAt[q] = i, tr.now
			}
		}
	}
	t.Fatal("engine never went idle")
	return tr
}

// checkBlocks checks the KV accounting after plan: the blocks in use are
// those the running sequences hold (a shared block once), within the
// budget unless one sequence runs alone, and each sequence holds what its
// context needs.
func checkBlocks(t *testing.T, step int, s *sched) {
	t.Helper()
	held := map[*cachedBlock]bool{}
	used := 0
	for _, q := range s.running {
		used += q.own
		for _, b := range q.blocks {
			if !held[b] {
				held[b] = true
				used++
			}
		}
		ctx := q.fill
		if q.prefilled == q.fill {
			ctx = q.prompt + q.generated
		}
		if have, want := len(q.blocks)+q.own, s.kv.blocks(ctx); have != want {
			t.Fatalf("step %d: a sequence at %d tokens holds %d blocks, want %d", step, ctx, have, want)
		}
	}
	for _, q := range s.waiting {
		if len(q.blocks)+q.own != 0 {
			t.Fatalf("step %d: a waiting sequence holds blocks", step)
		}
	}
	if used != s.kv.used {
		t.Fatalf("step %d: %d blocks held, kv says %d", step, used, s.kv.used)
	}
	if s.kv.used > s.kv.total && len(s.running) > 1 {
		t.Fatalf("step %d: %d blocks in use > %d with %d running", step, s.kv.used, s.kv.total, len(s.running))
	}
}

func testSched(mut func(*Config)) *sched {
	c := Config{Roofline: DefaultRoofline(), MaxNumSeqs: 8, MaxBatchedTokens: 8192, KVBudgetTokens: 1 << 30}
	if mut != nil {
		mut(&c)
	}
	return newSched(Defaults(c))
}

// seqs adds sequences with the given prompt and output lengths.
func seqs(s *sched, prompt int, outs ...int) []*seq {
	var qs []*seq
	for _, out := range outs {
		q := newSeq(prompt, out, nil)
		s.add(q)
		qs = append(qs, q)
	}
	return qs
}

func TestSchedMaxNumSeqs(t *testing.T) {
	s := testSched(func(c *Config) { c.MaxNumSeqs = 2 })
	qs := seqs(s, 10, 5, 5, 5, 5, 5)
	tr := drive(t, s, nil)
	if tr.maxRunning != 2 {
		t.Errorf("max running = %d, want 2", tr.maxRunning)
	}
	// Pairs run one after another: first token at the end of the step
	// that prefills, then one token per step.
	want := []struct{ first, done int }{{1, 5}, {1, 5}, {6, 10}, {6, 10}, {11, 15}}
	for i, q := range qs {
		if tr.first[q] != want[i].first || tr.done[q] != want[i].done {
			t.Errorf("seq %d: first token at step %d, done at %d; want %d, %d", i, tr.first[q], tr.done[q], want[i].first, want[i].done)
		}
	}
}

func TestSchedKVBlocks(t *testing.T) {
	// Budgets in 16-token blocks; prompt p needs ceil(p/16) blocks to be
	// admitted and a decoding sequence one more whenever its context
	// (prompt + generated) crosses a block boundary.
	type sq struct{ prompt, out int }
	for _, tc := range []struct {
		name        string
		budget      int // tokens
		maxSeqs     int
		seqs        []sq
		first, done []int // steps
		preemptions int64
		maxRunning  int
	}{
		{
			// Admission needs only the prompt's blocks: both fit at once
			// (a reservation of prompt + output would have run them one
			// after the other).
			name: "on demand, no preemption", budget: 8 * 16, seqs: []sq{{32, 20}, {32, 20}},
			first: []int{1, 1}, done: []int{20, 20}, maxRunning: 2,
		},
		{
			// Both fill the 4 blocks with their prompts; at step 2 the
			// first needs a third block, none is free: the second (the
			// most recently admitted) is preempted. It waits at the head
			// of the line until the first is done (its 33 tokens need 3
			// blocks, 1 is free), then recomputes 32 + 1 tokens in step 9,
			// which yields its second token, and decodes the rest.
			name: "preempt the latest", budget: 4 * 16, seqs: []sq{{32, 8}, {32, 8}},
			first: []int{1, 1}, done: []int{8, 15}, preemptions: 1, maxRunning: 2,
		},
		{
			// A sequence larger than the whole budget runs alone, beyond
			// it, and is never preempted; the next waits for it.
			name: "alone beyond the budget", budget: 2 * 16, seqs: []sq{{40, 30}, {8, 2}},
			first: []int{1, 31}, done: []int{30, 32}, maxRunning: 1,
		},
		{
			// max_num_seqs still bounds the batch when blocks are plenty.
			name: "max_num_seqs", budget: 1 << 20, maxSeqs: 2, seqs: []sq{{10, 5}, {10, 5}, {10, 5}},
			first: []int{1, 1, 6}, done: []int{5, 5, 10}, maxRunning: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSched(func(c *Config) {
				c.KVBudgetTokens = tc.budget
				if tc.maxSeqs > 0 {
					c.MaxNumSeqs = tc.maxSeqs
				}
			})
			var qs []*seq
			for _, x := range tc.seqs {
				qs = append(qs, seqs(s, x.prompt, x.out)...)
			}
			tr := drive(t, s, nil)
			for i, q := range qs {
				if tr.first[q] != tc.first[i] || tr.done[q] != tc.done[i] {
					t.Errorf("seq %d: first token at step %d, done at %d; want %d, %d", i, tr.first[q], tr.done[q], tc.first[i], tc.done[i])
				}
			}
			if s.preemptions != tc.preemptions {
				t.Errorf("preemptions = %d, want %d", s.preemptions, tc.preemptions)
			}
			if tr.maxRunning != tc.maxRunning {
				t.Errorf("max running = %d, want %d", tr.maxRunning, tc.maxRunning)
			}
		})
	}
}

func TestSchedPreemptionOrder(t *testing.T) {
	// Three 16-token prompts fill 3 of 4 blocks. At step 2 each needs a
	// second block: a takes the free one, b's need preempts c (the most
	// recently admitted), not a. Later a's third block preempts b; the
	// preempted go back to the head of the line, b before c, and every
	// one of them ends with all its tokens.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 4 * 16 })
	qs := seqs(s, 16, 20, 20, 20)
	a, b, c := qs[0], qs[1], qs[2]
	var order []*seq // preempted, in order
	prev := map[*seq]bool{}
	tr := drive(t, s, func(step int) {
		for _, q := range s.waiting {
			if q.admitted && !prev[q] {
				order = append(order, q)
			}
		}
		clear(prev)
		for _, q := range s.waiting {
			prev[q] = q.admitted
		}
	})
	if len(order) < 2 || order[0] != c || order[1] != b {
		t.Fatalf("preempted in the order %v; want c then b (a is %p, b %p, c %p)", order, a, b, c)
	}
	if tr.done[a] >= tr.done[b] || tr.done[b] >= tr.done[c] {
		t.Errorf("done at steps a %d, b %d, c %d; want in admission order", tr.done[a], tr.done[b], tr.done[c])
	}
	if s.preemptions < 2 {
		t.Errorf("preemptions = %d", s.preemptions)
	}
}

func TestSchedPreemptedRecomputes(t *testing.T) {
	// A preempted sequence recomputes its prompt and the tokens it had
	// generated: its second prefill costs more than its first.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 4 * 16 })
	a, b := newSeq(32, 8, nil), newSeq(32, 8, nil)
	s.add(a)
	s.add(b)
	var fills []int
	for {
		st := s.plan()
		if st.idle() {
			break
		}
		for _, c := range st.prefill {
			if c.q == b {
				fills = append(fills, c.n)
			}
		}
		s.apply(st)
	}
	if len(fills) != 2 || fills[0] != 32 || fills[1] != 33 {
		t.Errorf("b's prefills %v, want [32 33] (prompt, then prompt + its one token)", fills)
	}
	if b.generated != 8 {
		t.Errorf("b generated %d, want 8", b.generated)
	}
}

func TestSchedHeadOfLine(t *testing.T) {
	// First come, first served: a small request behind a big waiting one
	// waits too.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 6 * 16 })
	a := newSeq(64, 10, nil) // 4 blocks, admitted
	b := newSeq(48, 10, nil) // 3 blocks: does not fit beside a
	c := newSeq(8, 5, nil)   // 1 block: would fit, but is behind b
	s.add(a)
	s.add(b)
	s.add(c)
	tr := drive(t, s, nil)
	if tr.first[b] != tr.done[a]+1 || tr.first[c] != tr.first[b] {
		t.Errorf("a done %d; b first %d; c first %d", tr.done[a], tr.first[b], tr.first[c])
	}
}

func TestSchedChunkedPrefill(t *testing.T) {
	for _, tc := range []struct{ prompt, steps int }{
		{1, 1}, {4096, 1}, {4097, 2}, {10000, 3}, {3 * 4096, 3},
	} {
		s := testSched(func(c *Config) { c.MaxBatchedTokens = 4096 })
		qs := seqs(s, tc.prompt, 1)
		tr := drive(t, s, nil)
		if tr.first[qs[0]] != tc.steps {
			t.Errorf("prompt %d: first token at step %d, want %d (ceil(n/4096))", tc.prompt, tr.first[qs[0]], tc.steps)
		}
	}
}

func TestSchedChunkedPrefillInterleavesDecode(t *testing.T) {
	// A decoding sequence keeps getting a token every step while a long
	// prompt prefills beside it; prefill goes FIFO within the budget.
	s := testSched(func(c *Config) { c.MaxBatchedTokens = 4096 })
	short := newSeq(10, 100, nil)
	long := newSeq(10000, 5, nil)
	late := newSeq(100, 5, nil)
	s.add(short)
	s.add(long)
	s.add(late)
	tr := drive(t, s, nil)
	// step 1: short 10 + long 4086; step 2: long 4096; step 3: long 1818 + late 100.
	if tr.first[short] != 1 || tr.first[long] != 3 || tr.first[late] != 3 {
		t.Errorf("first tokens at steps %d, %d, %d; want 1, 3, 3", tr.first[short], tr.first[long], tr.first[late])
	}
	if tr.done[short] != 100 {
		t.Errorf("short done at step %d, want 100 (a token every step)", tr.done[short])
	}
}

func TestSchedStaticBatching(t *testing.T) {
	for _, tc := range []struct {
		batching   string
		thirdFirst int
	}{
		{BatchingContinuous, 3}, // joins when the first finishes (step 2)
		{BatchingStatic, 11},    // waits for the whole batch (step 10)
	} {
		t.Run(tc.batching, func(t *testing.T) {
			s := testSched(func(c *Config) { c.MaxNumSeqs = 2; c.Batching = tc.batching })
			qs := seqs(s, 10, 2, 10, 2, 2)
			tr := drive(t, s, nil)
			if tr.first[qs[2]] != tc.thirdFirst {
				t.Errorf("third request's first token at step %d, want %d", tr.first[qs[2]], tc.thirdFirst)
			}
			if tc.batching == BatchingStatic && tr.first[qs[3]] != tr.first[qs[2]] {
				t.Errorf("static: third and fourth start at %d and %d, want one batch", tr.first[qs[2]], tr.first[qs[3]])
			}
		})
	}
}

func TestSchedGoneFreesKV(t *testing.T) {
	// b's 5 blocks do not fit beside a's; a's handler leaves before step
	// 4, whose plan frees a and admits b.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 6 * 16 })
	a := newSeq(80, 80, nil)
	b := newSeq(80, 80, nil)
	s.add(a)
	s.add(b)
	tr := drive(t, s, func(step int) {
		if step == 4 {
			a.gone.Store(true)
		}
	})
	if tr.first[b] != 4 {
		t.Errorf("b's first token at step %d, want 4 (admitted when a left)", tr.first[b])
	}
	if _, ok := tr.done[a]; ok {
		t.Error("a finished after leaving")
	}
}

func TestSchedGoneWhilePreempted(t *testing.T) {
	// A preempted sequence whose handler leaves is dropped from the line.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 4 * 16 })
	a := newSeq(32, 30, nil)
	b := newSeq(32, 30, nil)
	s.add(a)
	s.add(b)
	tr := drive(t, s, func(step int) {
		if step == 3 {
			if len(s.waiting) != 1 || s.waiting[0] != b {
				t.Fatalf("step 3: b not preempted")
			}
			b.gone.Store(true)
		}
	})
	if tr.done[a] != 30 || tr.steps != 30 {
		t.Errorf("a done at %d, %d steps; want 30, 30", tr.done[a], tr.steps)
	}
}

func TestSchedStepTimes(t *testing.T) {
	rl := DefaultRoofline()
	rl.StepOverhead = time.Millisecond
	s := testSched(func(c *Config) { c.Roofline = rl; c.MaxBatchedTokens = 4096 })
	qs := seqs(s, 4096, 3, 3)
	tr := drive(t, s, nil)
	// Step 1 prefills the first prompt: compute-bound.
	if want := rl.PrefillTime(4096, 0) + rl.StepOverhead; tr.durs[0] != want {
		t.Errorf("prefill step %v, want %v", tr.durs[0], want)
	}
	// Step 2 decodes the first and prefills the second: a mixed step costs
	// more than either part alone.
	decode := rl.DecodeStepTime(1, 4097)
	if tr.durs[1] <= rl.PrefillTime(4096, 0)+rl.StepOverhead || tr.durs[1] <= decode {
		t.Errorf("mixed step %v, prefill alone %v, decode alone %v", tr.durs[1], rl.PrefillTime(4096, 0), decode)
	}
	// Step 3 decodes both.
	if want := rl.DecodeStepTime(2, 4098+4097); (tr.durs[2] - want).Abs() > time.Nanosecond {
		t.Errorf("decode step %v, want %v", tr.durs[2], want)
	}
	// TTFT in virtual time of the first request is its prefill step.
	if tr.firstAt[qs[0]] != tr.durs[0] {
		t.Errorf("first TTFT %v, want %v", tr.firstAt[qs[0]], tr.durs[0])
	}
}

func TestEngineDelivers(t *testing.T) {
	// The real engine publishes every token and notifies.
	c := Defaults(Config{Roofline: fastRoofline()})
	done := make(chan struct{})
	e := startEngine(c, done, newServerMetrics())
	defer func() { close(done); <-e.exited }()
	q := newSeq(5, 7, nil)
	e.submit(q)
	for q.avail.Load() < 7 {
		<-q.notify
	}
	if got := q.avail.Load(); got != 7 {
		t.Errorf("avail = %d", got)
	}
}
