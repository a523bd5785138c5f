package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// mustParse parses src as "t.yaml" or fails.
func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openSrc is an open-loop scenario with a mix, for plan tests.
const openSrc = `seed: 42
pins:
  model: {name: m}
  prompt: {tokens: {dist: lognormal, median: 5000, sigma: 0.8, min: 100, max: 60000}}
  output: {tokens: {dist: uniform, min: 10, max: 900}}
  concurrency: {mode: open, rate: 20, arrival: %s}
  mix:
    classes:
      - {name: chat, weight: 3}
      - {name: agent, weight: 1, output: {tokens: 50}}
duration: 1h
`

func openScenario(t *testing.T, arrival string) *Scenario {
	return mustParse(t, fmt.Sprintf(openSrc, arrival))
}

func TestPlanDeterminism(t *testing.T) {
	s := openScenario(t, ArrivalPoisson)
	a := NewPlan(s).Materialize(1000)
	b := NewPlan(openScenario(t, ArrivalPoisson)).Materialize(1000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different plans")
	}

	other := openScenario(t, ArrivalPoisson)
	other.Seed = 43
	c := NewPlan(other).Materialize(1000)
	same := 0
	for i := range a {
		if a[i].PromptTokens == c[i].PromptTokens && a[i].Seed == c[i].Seed {
			same++
		}
		if a[i].Arrival == c[i].Arrival && i > 0 {
			t.Fatalf("arrival %d is %v under both seeds", i, a[i].Arrival)
		}
	}
	if same > 10 {
		t.Errorf("seeds 42 and 43 agree on %d of 1000 requests", same)
	}

	t.Run("Request is pure in i", func(t *testing.T) {
		p := NewPlan(s)
		for i := len(a) - 1; i >= 0; i-- {
			got := p.Request(i)
			got.Arrival = a[i].Arrival
			if got != a[i] {
				t.Fatalf("Request(%d) in reverse = %+v, want %+v", i, got, a[i])
			}
		}
	})
	t.Run("concurrent workers", func(t *testing.T) {
		p := NewPlan(s)
		got := make([]record.Request, len(a))
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < len(got); i += 8 {
					got[i] = p.Request(i)
					got[i].Arrival = a[i].Arrival
				}
			})
		}
		wg.Wait()
		if !reflect.DeepEqual(got, a) {
			t.Error("sharded requests differ from Materialize")
		}
	})
	t.Run("requests differ", func(t *testing.T) {
		seeds := map[uint64]bool{}
		for _, r := range a {
			seeds[r.Seed] = true
		}
		if len(seeds) != len(a) {
			t.Errorf("%d distinct prompt seeds in %d requests", len(seeds), len(a))
		}
	})
}

// TestPlanGolden pins the exact plan of a seed. If it fails, recorded
// scenarios no longer replay the same requests: change it only on purpose.
func TestPlanGolden(t *testing.T) {
	got := NewPlan(openScenario(t, ArrivalGamma)).Materialize(3)
	var b strings.Builder
	for _, r := range got {
		fmt.Fprintf(&b, "%d %s %d %d %#x %v\n", r.Index, r.Class, r.PromptTokens, r.OutputTokens, r.Seed, r.Arrival)
	}
	want := `0 agent 2549 50 0x2c3bce953ac0e26e 0s
1 agent 2569 50 0xdd0be8e80bbe573b 31.250434ms
2 chat 1806 559 0x9041e5a08bbdfbb7 72.854918ms
`
	if b.String() != want {
		t.Errorf("plan =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPlanClasses(t *testing.T) {
	p := NewPlan(openScenario(t, ArrivalPoisson))
	const n = 40_000
	counts := map[string]int{}
	for i := range n {
		r := p.Request(i)
		counts[r.Class]++
		switch r.Class {
		case "agent":
			if r.OutputTokens != 50 {
				t.Fatalf("agent request %d has %d output tokens, want its own 50", i, r.OutputTokens)
			}
		case "chat":
			if r.OutputTokens < 10 || r.OutputTokens > 900 {
				t.Fatalf("chat request %d has %d output tokens, want the inherited [10, 900]", i, r.OutputTokens)
			}
		default:
			t.Fatalf("request %d has class %q", i, r.Class)
		}
		if r.PromptTokens < 100 || r.PromptTokens > 60000 {
			t.Fatalf("request %d has %d prompt tokens", i, r.PromptTokens)
		}
	}
	if share := float64(counts["chat"]) / n; math.Abs(share-0.75) > 0.01 {
		t.Errorf("chat share = %.3f, want 0.75 (weights 3:1)", share)
	}
}

func TestArrivals(t *testing.T) {
	const n = 200_000
	gaps := func(t *testing.T, arrival string) []float64 {
		t.Helper()
		a := NewPlan(openScenario(t, arrival)).Arrivals()
		if first := a.Next(); first != 0 {
			t.Fatalf("first arrival = %v, want 0", first)
		}
		prev, gs := time.Duration(0), make([]float64, n)
		for i := range gs {
			next := a.Next()
			gs[i] = (next - prev).Seconds()
			if gs[i] < 0 {
				t.Fatalf("arrival %d goes back in time", i+1)
			}
			prev = next
		}
		return gs
	}
	const rate = 20.0 // from openSrc

	t.Run("constant", func(t *testing.T) {
		for i, g := range gaps(t, ArrivalConstant)[:1000] {
			if math.Abs(g-1/rate) > 1e-6 {
				t.Fatalf("gap %d = %v s, want %v", i, g, 1/rate)
			}
		}
	})
	t.Run("poisson", func(t *testing.T) {
		gs := gaps(t, ArrivalPoisson)
		if m := mean(gs); math.Abs(m-1/rate) > 0.03/rate {
			t.Errorf("mean gap = %v s, want %v ± 3%%", m, 1/rate)
		}
		if cv := stddev(gs) / mean(gs); math.Abs(cv-1) > 0.03 {
			t.Errorf("coefficient of variation = %v, want 1", cv)
		}
	})
	for _, b := range []float64{0.25, 1, 4} {
		t.Run(fmt.Sprintf("gamma burstiness %v", b), func(t *testing.T) {
			s := openScenario(t, ArrivalGamma)
			s.Pins.Concurrency.Burstiness = b
			a := NewPlan(s).Arrivals()
			a.Next()
			gs, prev := make([]float64, n), time.Duration(0)
			for i := range gs {
				next := a.Next()
				gs[i], prev = (next - prev).Seconds(), next
			}
			if m := mean(gs); math.Abs(m-1/rate) > 0.03/rate {
				t.Errorf("mean gap = %v s, want %v ± 3%%", m, 1/rate)
			}
			want := 1 / math.Sqrt(b)
			if cv := stddev(gs) / mean(gs); math.Abs(cv-want) > 0.05*want {
				t.Errorf("coefficient of variation = %v, want %v", cv, want)
			}
		})
	}
	t.Run("repeatable and independent of requests", func(t *testing.T) {
		p := NewPlan(openScenario(t, ArrivalPoisson))
		a, b := p.Arrivals(), p.Arrivals()
		for range 100 {
			p.Request(7) // must not disturb the arrival stream
			if x, y := a.Next(), b.Next(); x != y {
				t.Fatalf("two iterators disagree: %v vs %v", x, y)
			}
		}
	})
	t.Run("closed loop", func(t *testing.T) {
		p := NewPlan(mustParse(t, valid))
		for _, r := range p.Materialize(10) {
			if r.Arrival != 0 {
				t.Fatalf("closed-loop arrival = %v", r.Arrival)
			}
		}
	})
}

func TestPlanLen(t *testing.T) {
	closed := func(run string) string { return strings.Replace(valid, "requests: 10\n", run, 1) }
	open := func(run string) string {
		return strings.Replace(closed(run), "{mode: closed, streams: 1}", "{mode: open, rate: 2.5, arrival: constant}", 1)
	}
	tests := []struct {
		name string
		src  string
		want int
	}{
		{"requests", closed("requests: 10\n"), 10},
		{"closed loop until the duration", closed("duration: 5m\n"), -1},
		{"closed loop, both", closed("duration: 5m\nrequests: 10\n"), 10},
		// Arrivals at i/2.5 s before 60 s: i = 0..149.
		{"open over a duration", open("duration: 1m\n"), 150},
		{"open, requests first", open("duration: 1h\nrequests: 10\n"), 10},
		{"open, duration first", open("duration: 1m\nrequests: 1000\n"), 150},
		{"open, requests only", open("requests: 7\n"), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewPlan(mustParse(t, tt.src)).Len(); got != tt.want {
				t.Errorf("Len() = %d, want %d", got, tt.want)
			}
		})
	}
	t.Run("poisson matches the arrivals", func(t *testing.T) {
		p := NewPlan(openScenario(t, ArrivalPoisson))
		n := p.Len()
		reqs := p.Materialize(n + 1)
		if reqs[n-1].Arrival >= time.Hour || reqs[n].Arrival < time.Hour {
			t.Errorf("Len() = %d but arrivals %v, %v straddle the 1h duration", n, reqs[n-1].Arrival, reqs[n].Arrival)
		}
		if math.Abs(float64(n)-20*3600) > 4*math.Sqrt(20*3600) {
			t.Errorf("Len() = %d, want about %d", n, 20*3600)
		}
	})
}

func TestPlanExpected(t *testing.T) {
	s := mustParse(t, strings.Replace(valid, "{tokens: 100}", "{tokens: 8000}", 1))
	e := NewPlan(s).Expected()
	if e.MeanPromptTokens != 8000 || e.MeanOutputTokens != 10 || e.Ratio != 800 {
		t.Errorf("Expected() = %+v", e)
	}
	// An empirical {1000, 33000} means 17,000 exactly, not what 20,000
	// draws happen to average (it showed 16,803).
	s = mustParse(t, strings.Replace(valid, "{tokens: 100}", "{tokens: {dist: empirical, values: [1000, 33000]}}", 1))
	if e := NewPlan(s).Expected(); e.MeanPromptTokens != 17000 {
		t.Errorf("empirical {1000, 33000}: mean %v, want 17000", e.MeanPromptTokens)
	}

	e = NewPlan(openScenario(t, ArrivalPoisson)).Expected()
	// Output: chat (3/4) uniform [10, 900] with mean 455; agent (1/4) 50.
	if want := 0.75*455 + 0.25*50; math.Abs(e.MeanOutputTokens-want) > 0.02*want {
		t.Errorf("mean output = %v, want %v", e.MeanOutputTokens, want)
	}
	if math.Abs(e.Ratio-e.MeanPromptTokens/e.MeanOutputTokens) > 1e-9 {
		t.Errorf("ratio %v ≠ %v / %v", e.Ratio, e.MeanPromptTokens, e.MeanOutputTokens)
	}
	if again := NewPlan(openScenario(t, ArrivalPoisson)).Expected(); again != e {
		t.Errorf("Expected() not deterministic: %+v vs %+v", again, e)
	}
}

func TestSharedPrefixGroups(t *testing.T) {
	s, err := Parse("t.yaml", []byte(strings.Replace(valid, "{tokens: 100}", "{tokens: 100, shared_prefix_tokens: 40, prefix_groups: 3}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(s)
	seen := map[int]int{}
	for _, r := range p.Materialize(300) {
		if r.PrefixGroup < 0 || r.PrefixGroup >= 3 {
			t.Fatalf("request %d: prefix group %d", r.Index, r.PrefixGroup)
		}
		seen[r.PrefixGroup]++
	}
	for g := 0; g < 3; g++ {
		if seen[g] < 60 {
			t.Errorf("group %d drawn %d times of 300", g, seen[g])
		}
		n, seed := p.SharedPrefix(g)
		n2, seed2 := p.SharedPrefix(g)
		if n != 40 || seed != seed2 || n2 != n {
			t.Errorf("SharedPrefix(%d) = %d, %d; not stable", g, n, seed)
		}
	}
	if _, a := p.SharedPrefix(0); a == func() uint64 { _, b := p.SharedPrefix(1); return b }() {
		t.Error("groups 0 and 1 share a text seed")
	}
	if r := NewPlan(mustParse(t, valid)).Request(0); r.PrefixGroup != -1 {
		t.Errorf("no sharing: PrefixGroup %d, want -1", r.PrefixGroup)
	}
}

const agenticYAML = `pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 9000, max: 13000}}
  output: {tokens: {dist: uniform, min: 150, max: 450}}
  concurrency: {mode: closed, streams: 2}
  kv_cache: {max_model_len: 131072}
workload:
  kind: agentic
  turns: {dist: uniform, min: 20, max: 40}
  growth_tokens: {dist: lognormal, median: 3000, sigma: 0.6, min: 300, max: 20000}
  think_seconds: {dist: uniform, min: 1, max: 5}
  max_context_tokens: 120000
duration: 10m
`

func TestSessions(t *testing.T) {
	p := NewPlan(mustParse(t, agenticYAML))
	w := p.Scenario().Workload
	if w.On429 != On429Backoff || w.MaxRetries != DefaultMaxRetries {
		t.Errorf("defaults: %+v", w)
	}
	a, b := p.Session(3), p.Session(3)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("Session(3) is not a pure function of the seed")
	}
	if fmt.Sprint(p.Session(4)) == fmt.Sprint(a) {
		t.Fatal("sessions 3 and 4 are the same")
	}
	if a.Turns < 20 || a.Turns > 40 || a.Growth[0] != 0 || a.Think[0] != 0 || len(a.Outputs) != a.Turns {
		t.Fatalf("session %+v", a)
	}
	// The history snowballs: every turn's prompt is the last one plus its
	// output and the new tool result.
	for k := 1; k < a.Turns; k++ {
		if a.PromptTokens(k) != a.PromptTokens(k-1)+a.Outputs[k-1]+a.Growth[k] {
			t.Fatalf("turn %d prompt %d", k, a.PromptTokens(k))
		}
		if a.Think[k] < time.Second || a.Think[k] > 5*time.Second {
			t.Fatalf("think %v", a.Think[k])
		}
	}
	// Input:output in the hundreds, as the field report measured.
	if e := p.Expected(); e.Ratio < 100 || e.Ratio > 400 || e.MeanPromptTokens > 120000 {
		t.Errorf("expected %+v", e)
	}
}

// A stationary session joins at a turn drawn uniformly from its stratum's
// share of its life — the turns whose prompt and output fit
// max_context_tokens — the same for a seed; over the strata the turns
// spread over the whole life.
func TestJoiningWithinLife(t *testing.T) {
	p := NewPlan(mustParse(t, strings.Replace(agenticYAML, "max_context_tokens: 120000", "max_context_tokens: 120000\n  start: stationary", 1)))
	if !p.SessionPolicy().Stationary {
		t.Fatal("not stationary")
	}
	const strata = 4
	var sum, lives float64
	for i := range 400 {
		s := p.Session(i)
		life := 0
		for k := range s.Turns {
			if s.PromptTokens(k)+s.Outputs[k] > 120000 {
				break
			}
			life = k + 1
		}
		st := i % strata
		j := p.Joining(s, st, strata)
		lo, hi := st*life/strata, (st+1)*life/strata+1
		if j != p.Joining(s, st, strata) || j.Turn < lo || j.Turn >= min(hi, life) || j.Wait < 0 || j.Wait > s.Think[j.Turn] {
			t.Fatalf("session %d (life %d turns), stratum %d of %d: joins at %+v", i, life, st, strata, j)
		}
		sum += float64(j.Turn)
		lives += float64(max(life-1, 0))
	}
	// Uniform over the life: the mean turn is half the mean last turn.
	if r := sum / lives; r < 0.4 || r > 0.6 {
		t.Errorf("mean joining turn is %.2f of the mean life, want about half", r)
	}
	if j := p.Joining(p.Session(0), 4, 4); j != (Joining{}) {
		t.Errorf("a stratum out of range joins at %+v, want the first turn", j)
	}
}

func TestAgenticValidation(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		{"kind: agentic", "workload.turns: required for kind agentic"},
		{"kind: sessions", `workload.kind: must be requests, agentic or trace (got "sessions")`},
		{"kind: requests\n  turns: 3", "workload.turns: only for kind agentic"},
		{"kind: agentic\n  turns: 3\n  growth_tokens: 100\n  on_429: retry", `workload.on_429: must be backoff, abort-session or count-only (got "retry")`},
		{"kind: agentic\n  turns: 3\n  growth_tokens: 100\n  max_context_tokens: 200000", "workload.max_context_tokens: exceeds pins.kv_cache.max_model_len (200000 > 131072)"},
		{"kind: agentic\n  turns: 3\n  growth_tokens: 100\n  start: mid", `workload.start: must be fresh or stationary (got "mid")`},
		{"kind: requests\n  start: stationary", "workload.start: only for kind agentic"},
	} {
		src := strings.Replace(agenticYAML, "kind: agentic\n  turns: {dist: uniform, min: 20, max: 40}\n  growth_tokens: {dist: lognormal, median: 3000, sigma: 0.6, min: 300, max: 20000}\n  think_seconds: {dist: uniform, min: 1, max: 5}\n  max_context_tokens: 120000", c.edit, 1)
		_, err := Parse("t.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.edit, err, c.want)
		}
	}
}

func TestSweep(t *testing.T) {
	s := mustParse(t, valid+"sweep: {pin: concurrency.streams, values: [1, 2, 4, 8]}\n")
	at := s.At(8)
	if at.Pins.Concurrency.Streams != 8 || at.Sweep != nil || at.Name == s.Name || s.Pins.Concurrency.Streams != 1 {
		t.Errorf("At(8): streams %d, sweep %v, name %q (original streams %d)", at.Pins.Concurrency.Streams, at.Sweep, at.Name, s.Pins.Concurrency.Streams)
	}
	if err := at.Validate(); err != nil {
		t.Errorf("a sweep point must be a valid scenario: %v", err)
	}
	p := mustParse(t, valid+"sweep: {pin: prompt.tokens, values: [512, 8000]}\n").At(8000)
	if d := p.Pins.Prompt.Tokens; d.Kind != DistFixed || d.Value != 8000 {
		t.Errorf("prompt sweep point: %v", p.Pins.Prompt.Tokens)
	}
	for _, c := range []struct{ sweep, want string }{
		{"sweep: [{pin: concurrency.streams, values: [1, 2]}, {pin: prompt.tokens, values: [512, 8000]}]",
			"t.yaml:7:8: sweep: sweeps one pin at a time (got 2): varying two pins at once confounds them"},
		{"sweep: {pin: temperature, values: [1]}", `sweep.pin: must be concurrency.streams, concurrency.rate, prompt.tokens or output.tokens (got "temperature")`},
		{"sweep: {pin: concurrency.streams, values: [1, 2.5]}", "sweep.values[1]: must be a whole number for concurrency.streams (got 2.5)"},
		{"sweep: {pin: concurrency.rate, values: [1]}", "sweep.pin: concurrency.rate needs pins.concurrency.mode open"},
		{"sweep: {pin: output.tokens}", "sweep.values: required: at least one value"},
	} {
		_, err := Parse("t.yaml", []byte(valid+c.sweep+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.sweep, err, c.want)
		}
	}
}

// Expected draws only the session turns it averages: an agentic scenario
// of 10,000-turn sessions cut after the first turn by its context plans
// 20,000 turns, not 200 million (sixpin validate took 37 s on it).
func TestExpectedSessionsDrawsOnlyWhatItAverages(t *testing.T) {
	s := mustParse(t, "pins:\n  model: {name: m}\n  prompt: {tokens: 100}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 2}\n"+
		"workload:\n  kind: agentic\n  turns: 10000\n  growth_tokens: 100\n  max_context_tokens: 150\nduration: 10m\n")
	p := NewPlan(s)
	turns := 0
	for i := range ExpectationSamples {
		p.drawSession(i, func(Session) {}, func(k, output, growth int, _ time.Duration) bool {
			turns++
			return k == 0
		})
	}
	if turns != 2*ExpectationSamples {
		t.Fatalf("drew %d turns", turns)
	}
	if e := p.Expected(); e.Samples != ExpectationSamples || e.MeanPromptTokens != 100 || e.MeanOutputTokens != 10 {
		t.Errorf("Expected = %+v", e)
	}
	// Session draws what drawSession draws, in the same order.
	a := p.Session(5)
	var outs []int
	p.drawSession(5, func(Session) {}, func(_ int, output, _ int, _ time.Duration) bool { outs = append(outs, output); return true })
	if !reflect.DeepEqual(outs, a.Outputs) {
		t.Error("Session and drawSession disagree")
	}
}
