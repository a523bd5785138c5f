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
	durs       []time.Duration
	maxRunning int
}

// drive runs s in virtual time until it is idle. before, if not nil, runs
// before each step's plan (to add or cancel sequences).
func drive(t *testing.T, s *sched, before func(step int)) trace {
	t.Helper()
	tr := trace{first: map[*seq]int{}, firstAt: map[*seq]time.Duration{}, done: map[*seq]int{}}
	for i := 1; i <= 100000; i++ {
		if before != nil {
			before(i)
		}
		st := s.plan()
		if st.idle() {
			return tr
		}
		if len(s.running) > s.maxSeqs {
			t.Fatalf("step %d: %d running > max_num_seqs %d", i, len(s.running), s.maxSeqs)
		}
		if s.kvUsed > s.kvBudget {
			t.Fatalf("step %d: KV %d > budget %d", i, s.kvUsed, s.kvBudget)
		}
		tr.maxRunning = max(tr.maxRunning, len(s.running))
		if st.dur <= 0 {
			t.Fatalf("step %d takes %v", i, st.dur)
		}
		tr.now += st.dur
		tr.durs = append(tr.durs, st.dur)
		tr.steps = i
		for _, q := range s.apply(st) {
			if q.generated == 1 {
				tr.first[q], tr.firstAt[q] = i, tr.now
			}
			if q.generated == q.out {
				tr.done[q] = i
			}
		}
	}
	t.Fatal("engine never went idle")
	return tr
}

func testSched(mut func(*Config)) *sched {
	c := Config{Roofline: DefaultRoofline(), MaxNumSeqs: 8, MaxBatchedTokens: 8192, KVBudgetTokens: 1 << 30}
	if mut != nil {
		mut(&c)
	}
	return newSched(Defaults(c))
}

// seqs makes sequences with the given prompt and output lengths, each
// reserving prompt + output.
func seqs(s *sched, prompt int, outs ...int) []*seq {
	var qs []*seq
	for _, out := range outs {
		q := newSeq(prompt, out, prompt+out)
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

func TestSchedKVBudget(t *testing.T) {
	// Each of the first two reserves 10 + 50 = 60 tokens of a 100-token
	// budget, so the second waits for the first although max_num_seqs has
	// room; the third (41) does not fit beside the second either.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 100 })
	qs := seqs(s, 10, 50, 50, 31)
	tr := drive(t, s, nil)
	if tr.maxRunning != 1 {
		t.Errorf("max running = %d, want 1", tr.maxRunning)
	}
	if tr.done[qs[0]] != 50 || tr.first[qs[1]] != 51 || tr.first[qs[2]] != 101 {
		t.Errorf("first done %d; second starts %d, third %d; want 50, 51, 101", tr.done[qs[0]], tr.first[qs[1]], tr.first[qs[2]])
	}
	if s.kvUsed != 0 {
		t.Errorf("KV in use after the run: %d", s.kvUsed)
	}
}

func TestSchedKVBudgetHeadOfLine(t *testing.T) {
	// First come, first served: a small request behind a big waiting one
	// waits too.
	s := testSched(func(c *Config) { c.KVBudgetTokens = 100 })
	a := newSeq(10, 40, 50) // admitted
	b := newSeq(10, 60, 70) // does not fit beside a
	c := newSeq(10, 10, 20) // would fit, but is behind b
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
	short := newSeq(10, 100, 110)
	long := newSeq(10000, 5, 10005)
	late := newSeq(100, 5, 105)
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
	s := testSched(func(c *Config) { c.KVBudgetTokens = 100 })
	a := newSeq(10, 80, 90)
	b := newSeq(10, 80, 90)
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
	if s.kvUsed != 0 {
		t.Errorf("KV in use after the run: %d", s.kvUsed)
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
	e := startEngine(c, done)
	defer func() { close(done); <-e.exited }()
	q := newSeq(5, 7, 12)
	e.submit(q)
	for q.avail.Load() < 7 {
		<-q.notify
	}
	if got := q.avail.Load(); got != 7 {
		t.Errorf("avail = %d", got)
	}
}
