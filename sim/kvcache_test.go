package sim

import (
	"testing"
	"time"
)

// chain returns n block hashes named by prefix: chain("a", 3) and
// chain("a", 5) share their first 3.
func chain(prefix string, n int) []uint64 {
	var hs []uint64
	h := hashString(fnvOffset, prefix)
	for i := range n {
		h = mix(hashUint64(h, uint64(i)))
		hs = append(hs, h)
	}
	return hs
}

func cachingSched(budgetBlocks int) *sched {
	return testSched(func(c *Config) {
		on := true
		c.PrefixCaching = &on
		c.KVBudgetTokens = budgetBlocks * 16
	})
}

func TestSchedPrefixCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		// a runs to its end, then b arrives.
		aPrompt, bPrompt int
		aHashes, bHashes []uint64
		wantCached       int
	}{
		{"b extends a", 64, 100, chain("x", 4), chain("x", 6), 64},
		{"b is a: one token is always computed", 64, 64, chain("x", 4), chain("x", 4), 48},
		{"partial last block is not cached", 70, 100, chain("x", 4), chain("x", 6), 64},
		{"shared prefix only", 64, 64, chain("x", 4), append(chain("x", 2), chain("y", 2)...), 32},
		{"nothing shared", 64, 64, chain("x", 4), chain("y", 4), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cachingSched(1000)
			a := newSeq(tc.aPrompt, 3, tc.aHashes)
			b := newSeq(tc.bPrompt, 3, tc.bHashes)
			s.add(a)
			var bPrefill int
			drive(t, s, func(step int) {
				if step == 4 { // a is done after step 3
					s.add(b)
				}
				// Before step 5's plan, s.st is still step 4's: b's prefill.
				if st := &s.st; step == 5 && len(st.prefill) == 1 && st.prefill[0].q == b {
					bPrefill = st.prefill[0].n
				}
			})
			if got := int(b.cached.Load()); got != tc.wantCached {
				t.Errorf("b found %d cached tokens, want %d", got, tc.wantCached)
			}
			if bPrefill != tc.bPrompt-tc.wantCached {
				t.Errorf("b prefilled %d tokens, want %d", bPrefill, tc.bPrompt-tc.wantCached)
			}
			if s.kv.hits != int64(tc.wantCached) || s.kv.queries != int64(tc.aPrompt+tc.bPrompt) {
				t.Errorf("hits %d, queries %d", s.kv.hits, s.kv.queries)
			}
		})
	}
}

func TestSchedPrefixCacheShortensTTFT(t *testing.T) {
	// The same 8K prompt, cold then warm: the warm one prefills only its
	// last block, behind 8,176 cached tokens.
	s := cachingSched(10000)
	cold := newSeq(8192, 2, chain("doc", 512))
	warm := newSeq(8192, 2, chain("doc", 512))
	s.add(cold)
	tr := drive(t, s, func(step int) {
		if step == 3 {
			s.add(warm)
		}
	})
	ttftCold := tr.firstAt[cold]
	ttftWarm := tr.firstAt[warm] - tr.doneAt[cold]
	rl := s.rl
	if want := rl.stepTime(rl.prefillFLOPs(16, 8176), 0, rl.weightBytes()+rl.KVBytesPerToken()*8192); ttftWarm != want {
		t.Errorf("warm TTFT %v, want %v", ttftWarm, want)
	}
	if ttftWarm*10 > ttftCold {
		t.Errorf("warm TTFT %v not far below cold %v", ttftWarm, ttftCold)
	}
}

func TestSchedPrefixCacheSharesRunningBlocks(t *testing.T) {
	// b arrives while a still runs: it shares a's committed prompt blocks,
	// which count once in the budget.
	s := cachingSched(1000)
	a := newSeq(64, 10, chain("x", 4))
	b := newSeq(64, 10, chain("x", 4))
	s.add(a)
	drive(t, s, func(step int) {
		switch step {
		case 3:
			s.add(b)
		case 4:
			if a.blocks[0] != b.blocks[0] || a.blocks[0].ref != 2 {
				t.Errorf("b does not share a's first block")
			}
			// a: 4 prompt blocks + 1 for its tokens; b: 1 own block for
			// its last prompt block, recomputed.
			if s.kv.used != 6 {
				t.Errorf("%d blocks in use, want 6", s.kv.used)
			}
		}
	})
	if got := b.cached.Load(); got != 48 {
		t.Errorf("b cached %d, want 48", got)
	}
}

func TestKVCacheLRU(t *testing.T) {
	// A budget of 4 blocks. a's 2 blocks are freed (kept), then b's; c
	// needs 2 blocks: there is no blank one left, so it evicts the least
	// recently used: a's, last block first.
	c := newKVCache(4*16, 16, true)
	run := func(prompt int, hashes []uint64) *seq {
		q := newSeq(prompt, 1, hashes)
		if !c.admit(q, false) {
			t.Fatalf("admit %d tokens: no room", prompt)
		}
		q.prefilled = q.fill
		c.commit(q)
		c.release(q)
		return q
	}
	found := func(hashes []uint64) int { n, _ := c.match(hashes); return n }
	run(33, chain("a", 2)) // 3 blocks: 2 full, committed
	if c.used != 0 || c.nlru != 2 {
		t.Fatalf("after a: %d used, %d cached free", c.used, c.nlru)
	}
	run(32, chain("b", 2))
	if found(chain("a", 2)) != 2 || found(chain("b", 2)) != 2 {
		t.Fatalf("a %d, b %d blocks cached; want both whole (2 blank blocks were free)", found(chain("a", 2)), found(chain("b", 2)))
	}
	q := newSeq(17, 1, chain("c", 1)) // 2 blocks, none blank
	c.admit(q, false)
	if found(chain("a", 2)) != 0 || found(chain("b", 2)) != 2 {
		t.Errorf("after c: a %d, b %d blocks cached; want a evicted", found(chain("a", 2)), found(chain("b", 2)))
	}
	c.release(q)
	// LRU now: b's last block, then its first; 2 blank. A 3-block
	// sequence evicts one: b's last, so b's first stays findable.
	q = newSeq(33, 1, nil)
	c.admit(q, false)
	if n := found(chain("b", 2)); n != 1 {
		t.Errorf("after evicting one block, b keeps %d, want its first", n)
	}
	c.release(q)
	// Reusing a free cached block takes it off the LRU list: held, it is
	// not evicted.
	held := newSeq(17, 1, chain("b", 1))
	if !c.admit(held, false) || held.prefilled != 16 {
		t.Fatalf("b's first block not reused: prefilled %d", held.prefilled)
	}
	if c.nlru != 0 || c.used != 2 {
		t.Errorf("cached free %d, used %d; want 0, 2", c.nlru, c.used)
	}
	if !c.admit(newSeq(32, 1, nil), false) || found(chain("b", 1)) != 1 || c.free() != 0 {
		t.Errorf("filling the cache lost the held block")
	}
}

func TestKVCacheAdmitNeedsRevivedBlocks(t *testing.T) {
	// Reviving a free cached block costs a free block: a prompt whose
	// cached blocks are all free needs them as well as its new ones.
	c := newKVCache(3*16, 16, true)
	a := newSeq(32, 1, chain("a", 2))
	c.admit(a, false)
	a.prefilled = a.fill
	c.commit(a)
	c.release(a)
	big := newSeq(16, 1, nil) // holds 1 of 3
	c.admit(big, false)
	b := newSeq(64, 1, chain("a", 4)) // 2 cached but free + 2 new: 4 blocks, 2 free
	if c.admit(b, false) {
		t.Errorf("admitted a prompt needing 4 blocks with 2 free")
	}
	if c.nlru != 2 || c.used != 1 {
		t.Errorf("a refused admission changed the cache: %d cached free, %d used", c.nlru, c.used)
	}
}

func TestTimeScaleSched(t *testing.T) {
	// The same steps at time_scale 0.05 take 5% of the time.
	run := func(scale float64) trace {
		s := testSched(func(c *Config) { c.TimeScale = scale; c.MaxBatchedTokens = 4096 })
		seqs(s, 10000, 20, 20)
		return drive(t, s, nil)
	}
	one, fast := run(1), run(0.05)
	if len(one.durs) != len(fast.durs) {
		t.Fatalf("%d steps vs %d", len(one.durs), len(fast.durs))
	}
	for i := range one.durs {
		if want := time.Duration(float64(one.durs[i]) * 0.05); (fast.durs[i] - want).Abs() > time.Nanosecond {
			t.Errorf("step %d: %v at scale 0.05, want %v", i, fast.durs[i], want)
		}
	}
}
