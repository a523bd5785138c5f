package scenario

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/trace"
)

func mustShard(t *testing.T, p *Plan, i, n int) *Plan {
	t.Helper()
	q, err := p.Shard(Shard{I: i, N: n})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// traceScenario is a replay of n sessions with random starts.
func traceScenario(t *testing.T, n int) *Scenario {
	s := mustParse(t, "pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 1}\nrequests: 5\n")
	s.Requests = 0
	r := rand.New(rand.NewPCG(1, 2))
	tr := &trace.Trace{}
	for i := range n {
		ss := trace.Session{ID: string(rune('a' + i%26)), Start: time.Duration(r.IntN(1000)) * time.Millisecond}
		for k := range 1 + r.IntN(3) {
			ss.Turns = append(ss.Turns, trace.Turn{Think: time.Duration(k) * time.Second, InputTokens: 100 + r.IntN(900), OutputTokens: 1 + r.IntN(50)})
		}
		tr.Sessions = append(tr.Sessions, ss)
	}
	s.Workload = Workload{Kind: WorkloadTrace, TimeScale: 0.5, Trace: trace.FromTrace(tr)}
	s.Pins.Concurrency = ConcurrencyPin{Mode: ModeTrace}
	return s
}

// Every workload kind splits into N shards that are disjoint and whose
// union is the whole plan: the same requests (closed loop), the same
// arrivals at the same times (open loop), the same agentic sessions, the
// same trace sessions; and the streams, rate and bounds add up.
func TestShardUnionIsWhole(t *testing.T) {
	const n = 4
	t.Run("closed", func(t *testing.T) {
		s := mustParse(t, "seed: 7\npins:\n  model: {name: m}\n  prompt: {tokens: {dist: uniform, min: 10, max: 900}}\n  output: {tokens: 20}\n  concurrency: {mode: closed, streams: 10}\nrequests: 103\n")
		whole := NewPlan(s)
		seen := map[int]record.Request{}
		streams, requests := 0, 0
		for i := range n {
			sh := mustShard(t, whole, i, n)
			if sh.Mode() != ModeClosed {
				t.Fatalf("mode %s", sh.Mode())
			}
			streams += sh.Streams()
			_, r := sh.Bounds()
			requests += r
			for j := range r {
				u := sh.Unit(j)
				if _, dup := seen[u]; dup {
					t.Fatalf("request %d in two shards", u)
				}
				seen[u] = sh.Request(u)
			}
		}
		if streams != 10 || requests != 103 || len(seen) != 103 {
			t.Fatalf("streams %d, requests %d, distinct %d: want 10, 103, 103", streams, requests, len(seen))
		}
		for i := range 103 {
			if seen[i] != whole.Request(i) {
				t.Fatalf("request %d differs from the whole plan's", i)
			}
		}
	})
	t.Run("open", func(t *testing.T) {
		for _, arrival := range []string{ArrivalPoisson, ArrivalGamma, ArrivalConstant} {
			s := openScenario(t, arrival)
			s.Duration = Duration(time.Minute)
			whole := NewPlan(s)
			var want []time.Duration
			a := whole.Arrivals()
			for range whole.Len() {
				want = append(want, a.Next())
			}
			type arr struct {
				i  int
				at time.Duration
			}
			var got []arr
			var rate float64
			total := 0
			for i := range n {
				sh := mustShard(t, whole, i, n)
				rate += sh.Rate()
				total += sh.Len()
				a := sh.Arrivals()
				for range sh.Len() {
					at := a.Next()
					got = append(got, arr{a.Unit(), at})
				}
				if d := sh.Declared(Wire{}).Concurrency; d.RateRPS != 5 {
					t.Errorf("%s: shard %d declares %v req/s, want 5", arrival, i, d.RateRPS)
				}
			}
			slices.SortFunc(got, func(x, y arr) int { return x.i - y.i })
			if total != len(want) || len(got) != len(want) || rate != 20 {
				t.Fatalf("%s: %d arrivals in shards (Len %d), %d whole; rate %v", arrival, len(got), total, len(want), rate)
			}
			for k, g := range got {
				if g.i != k || g.at != want[k] {
					t.Fatalf("%s: arrival %d is %+v, the whole plan's is %v", arrival, k, g, want[k])
				}
			}
		}
	})
	t.Run("agentic", func(t *testing.T) {
		s := mustParse(t, "pins:\n  model: {name: m}\n  prompt: {tokens: 1000}\n  output: {tokens: 50}\n  concurrency: {mode: closed, streams: 6}\n"+
			"workload: {kind: agentic, sessions: 21, turns: {dist: uniform, min: 1, max: 5}, growth_tokens: 300}\nduration: 1m\n")
		whole := NewPlan(s)
		seen := map[int]bool{}
		streams := 0
		for i := range n {
			sh := mustShard(t, whole, i, n)
			streams += sh.Streams()
			if sh.Mode() != ModeSessions {
				t.Fatalf("mode %s", sh.Mode())
			}
			for j := range sh.SessionLimit() {
				u := sh.Unit(j)
				if seen[u] {
					t.Fatalf("session %d in two shards", u)
				}
				seen[u] = true
				if !reflect.DeepEqual(sh.Session(u), whole.Session(u)) {
					t.Fatalf("session %d differs", u)
				}
			}
		}
		if streams != 6 || len(seen) != 21 {
			t.Fatalf("streams %d, sessions %d: want 6, 21", streams, len(seen))
		}
	})
	t.Run("trace", func(t *testing.T) {
		whole := NewPlan(traceScenario(t, 11))
		var all []TraceSession
		for j := range whole.TraceSessions() {
			all = append(all, whole.TraceSession(j))
		}
		for k := 1; k < len(all); k++ {
			if all[k].Start < all[k-1].Start {
				t.Fatal("trace sessions not in order of start")
			}
		}
		got := map[int]TraceSession{}
		for i := range n {
			sh := mustShard(t, whole, i, n)
			for j := range sh.TraceSessions() {
				ts := sh.TraceSession(sh.Unit(j))
				if _, dup := got[ts.Index]; dup {
					t.Fatalf("trace session %d in two shards", ts.Index)
				}
				got[ts.Index] = ts
			}
		}
		if len(got) != len(all) {
			t.Fatalf("%d trace sessions in the shards, %d in the trace", len(got), len(all))
		}
		for _, ts := range all {
			if !reflect.DeepEqual(got[ts.Index], ts) {
				t.Fatalf("trace session %d differs", ts.Index)
			}
		}
	})
}

// A shard that would get nothing is refused, and so is a bad --shard.
func TestShardRefusals(t *testing.T) {
	closed := NewPlan(mustParse(t, "pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 2}\nrequests: 100\n"))
	if _, err := closed.Shard(Shard{I: 0, N: 3}); err == nil || !strings.Contains(err.Error(), "2 streams") {
		t.Errorf("3 shards of 2 streams: %v", err)
	}
	few := NewPlan(mustParse(t, "pins:\n  model: {name: m}\n  prompt: {tokens: 10}\n  output: {tokens: 10}\n  concurrency: {mode: open, rate: 10}\nrequests: 3\n"))
	if _, err := few.Shard(Shard{I: 0, N: 4}); err == nil || !strings.Contains(err.Error(), "3 requests") {
		t.Errorf("4 shards of 3 requests: %v", err)
	}
	sh := mustShard(t, closed, 1, 2)
	if _, err := sh.Shard(Shard{I: 0, N: 2}); err == nil {
		t.Error("a shard of a shard")
	}
	for _, bad := range []string{"", "1", "2/2", "-1/2", "0/0", "a/b", "1/2/3"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
	if got, err := ParseShard("3/8"); err != nil || got != (Shard{3, 8}) || got.String() != "3/8" {
		t.Errorf("ParseShard(3/8) = %v, %v", got, err)
	}
}
