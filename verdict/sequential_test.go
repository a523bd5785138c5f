package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// req is a successful record scheduled at sched (s) whose first token came
// ttft later and whose out tokens took e2e in all, in even steps, each
// chunk a read of its own.
func req(sched float64, ttft, e2e time.Duration, out int) *record.Record {
	s := time.Duration(sched * float64(time.Second))
	r := &record.Record{Scheduled: s, Sent: s, End: s + e2e, Session: -1, TokenReads: out,
		HasUsage: true, Usage: record.Usage{CompletionTokens: out}}
	for i := range out {
		at := s + ttft
		if out > 1 {
			at += (e2e - ttft) * time.Duration(i) / time.Duration(out-1)
		}
		r.Chunks = append(r.Chunks, record.Chunk{At: at, Tokens: 1})
	}
	return r
}

func tier(t *testing.T, s string) Tier {
	t.Helper()
	tr, err := ParseTierFlag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A clear failure is decided after a handful of values: three TTFTs all
// above a p90 bound take the log likelihood ratio past ln 19.
func TestJudgeClearFailureStopsAtOnce(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{Warmup: 2 * time.Second})
	if j.Observe(req(1, 500*time.Millisecond, time.Second, 10)) {
		t.Fatal("a warmup request was judged")
	}
	for i := range 3 {
		decided := j.Observe(req(3+float64(i), 500*time.Millisecond, time.Second, 10))
		if decided != (i == 2) {
			t.Fatalf("value %d: decided %v", i+1, decided)
		}
	}
	stop, why := j.Broken()
	if !stop || why != "tier snappy broken at 6 s: ttft_ms.p90 <= 100: 3 of 3 above 100 ms (a p90 allows 10.0%)" {
		t.Errorf("stop %v: %q", stop, why)
	}
	v := j.Verdicts()[0]
	if v.Outcome != Failed || !v.Decided || v.First != 0 || v.AtS != 6 || v.Conditions[0].N != 3 {
		t.Errorf("%+v", v)
	}
}

// A pass is earned: the test alone would pass all-fast TTFTs after 21
// values, but a p90 needs 36 and the steady stretch MinSteady.
func TestJudgePassNeedsValuesAndTime(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		minSteady time.Duration
		passAt    int // the value that earns the pass
	}{{10 * time.Second, 36}, {50 * time.Second, 50}} {
		j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{Warmup: 5 * time.Second, MinSteady: c.minSteady})
		// One request a second from 5 s, each ending 1 s later: value i
		// ends at 5 + i s.
		for i := 1; i <= 60; i++ {
			if j.Observe(req(4+float64(i), 50*time.Millisecond, time.Second, 10)) {
				if i != c.passAt {
					t.Errorf("min steady %s: passed at value %d, want %d", c.minSteady, i, c.passAt)
				}
				break
			}
		}
		if !j.Decided(nil) || !j.Decided([]string{"snappy"}) {
			t.Errorf("min steady %s: not decided", c.minSteady)
		}
		if stop, _ := j.Broken(); stop {
			t.Error("abort_on stopped on a pass")
		}
	}
}

// A floor on a per-stream rate counts the values below it; an error rate
// counts failures and leaves interrupts out.
func TestJudgeFloorsAndShares(t *testing.T) {
	t.Parallel()
	// 10 tokens over 900 ms of decode: 10 tok/s, below a floor of 30.
	j := NewJudge([]Tier{tier(t, "fast: decode_tok_s.p10 >= 30"), tier(t, "reliable: error_rate <= 1%")}, JudgeOptions{})
	for i := range 3 {
		j.Observe(req(float64(i), 100*time.Millisecond, time.Second, 10))
	}
	vs := j.Verdicts()
	if vs[0].Outcome != Failed || vs[1].Outcome != Undecided || vs[1].Conditions[0].N != 3 {
		t.Fatalf("%+v", vs)
	}
	cut := &record.Record{Scheduled: 4 * time.Second, End: 5 * time.Second, Err: record.ErrInterrupted, Session: -1}
	j.Observe(cut)
	for i := range 3 {
		bad := &record.Record{Scheduled: time.Duration(5+i) * time.Second, End: time.Duration(6+i) * time.Second, Err: record.ErrHTTP5xx, Session: -1}
		j.Observe(bad)
	}
	v := j.Verdicts()[1]
	if v.Outcome != Failed || v.Conditions[0].N != 6 || v.Conditions[0].Beyond != 3 {
		t.Errorf("error rate: %+v", v)
	}
	if _, why := j.Broken(); !strings.Contains(why, "tier fast broken") {
		t.Errorf("the first tier broken is named: %q", why)
	}
}

// Wald's bounds hold for a test looked at after every value: at the
// indifference zone's edges (p0 and p1 of a p90 bound), each wrong
// verdict comes out at most 5% of the time, over 400 seeded runs each.
func TestJudgeErrorRates(t *testing.T) {
	t.Parallel()
	const runs = 400
	s := 0.10
	p0, p1 := s/(IndifferenceOdds-s*(IndifferenceOdds-1)), IndifferenceOdds*s/(1+s*(IndifferenceOdds-1))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		p     float64
		wrong Outcome
	}{{p0, Failed}, {p1, Passed}} {
		wrong := 0
		for range runs {
			j := NewJudge([]Tier{tier(t, "t: ttft_ms.p90 <= 100")}, JudgeOptions{MinSteady: time.Nanosecond})
			for i := 0; i < 20000 && j.Verdicts()[0].Outcome == Undecided; i++ {
				ttft := 50 * time.Millisecond
				if rng.Float64() < c.p {
					ttft = 200 * time.Millisecond
				}
				j.Observe(req(float64(i)*0.01, ttft, time.Second, 2))
			}
			if j.Verdicts()[0].Outcome == c.wrong {
				wrong++
			}
		}
		if wrong > runs*SequentialAlpha {
			t.Errorf("share %.3f beyond: %d of %d runs came out %s, more than 5%%", c.p, wrong, runs, c.wrong)
		}
	}
}

// Finish gives every condition its steady-window value, leans an
// undecided one to its point estimate's side (not decided) when the run
// gave it enough values, leaves it undecided on too few (not a pass),
// and judges session metrics when the run has ended.
func TestJudgeFinish(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100"), tier(t, "long: lifetime_min.p50 >= 2")}, JudgeOptions{})
	// 40 values a second apart, one in ten beyond the bound: the share
	// the p90 allows, which the test cannot decide.
	for i := range 40 {
		ttft := 50 * time.Millisecond
		if i%10 == 9 {
			ttft = 200 * time.Millisecond
		}
		j.Observe(req(float64(i), ttft, time.Second, 10))
	}
	sessions := make([]*results.Session, 8)
	for i := range sessions {
		sessions[i] = &results.Session{}
	}
	run := &results.Run{Windows: map[string]*results.Window{
		results.WindowSteady: {TTFTMs: &results.Dist{P90: 80}},
		results.WindowAll:    {EndS: 41},
	}, Sessions: &results.Sessions{All: sessions, LifetimeMin: &results.Dist{P50: 1.5}}}
	vs := j.Finish(run)
	// The value is the judged values' own p90 (50 ms: 36 of the 40 at 50),
	// never a window's that holds other requests (80 there).
	if v := vs[0]; v.Outcome != Passed || v.Decided || math.Abs(v.Conditions[0].Value-50) > 0.1 || !strings.Contains(v.Conditions[0].Why, "not decided at 95%") {
		t.Errorf("snappy: %+v", v)
	}
	if v := vs[1]; v.Outcome != Failed || !v.Decided || v.First != 0 || v.Conditions[0].Value != 1.5 || v.AtS != 41 {
		t.Errorf("long: %+v", v)
	}
	// Five values: too few for a p90 — undecided, not a pass; with their
	// p90 beyond the bound they still fail it.
	for _, c := range []struct {
		slow int
		out  Outcome
	}{{0, Undecided}, {1, Failed}} {
		few := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{})
		for i := range 5 {
			ttft := 50 * time.Millisecond
			if i < c.slow {
				ttft = 150 * time.Millisecond
			}
			few.Observe(req(float64(i), ttft, time.Second, 10))
		}
		if v := few.Finish(run)[0]; v.Outcome != c.out || v.Decided || v.First != 0 || !strings.Contains(v.Conditions[0].Why, "5 of the 36 values a p90 needs") {
			t.Errorf("%d slow of five values: %+v", c.slow, v)
		}
	}
	// Nothing judged: nothing earned, a fail.
	empty := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{}).Finish(&results.Run{Windows: map[string]*results.Window{}})
	if v := empty[0]; v.Outcome != Failed || v.Decided || !strings.Contains(v.Conditions[0].Why, "nothing measured") {
		t.Errorf("empty: %+v", v)
	}
}

// A share has no percentile to estimate: the test alone earns its pass,
// after 40 clean requests for error_rate <= 5%, 197 for <= 1%.
func TestJudgeSharePass(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tier   string
		passAt int
	}{{"r: error_rate <= 5%", 40}, {"r: error_rate <= 1%", 197}} {
		j := NewJudge([]Tier{tier(t, c.tier)}, JudgeOptions{MinSteady: time.Nanosecond})
		for i := 1; i <= 400; i++ {
			if j.Observe(req(float64(i)*0.1, 50*time.Millisecond, time.Second, 2)) {
				if i != c.passAt {
					t.Errorf("%s: passed at request %d, want %d", c.tier, i, c.passAt)
				}
				break
			}
		}
		if !j.Decided(nil) {
			t.Errorf("%s: not decided after 400 clean requests", c.tier)
		}
	}
}

// On a workload that deepens as it runs (agentic sessions: every turn
// re-sends a longer context), a pass decided early would judge shallower
// contexts than the run's: with PassAtEnd the test still fails a tier at
// once, but a pass waits for Finish, decided there when the test had it.
func TestJudgePassAtEnd(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{MinSteady: time.Second, PassAtEnd: true})
	for i := range 200 {
		if j.Observe(req(float64(i)/10, 20*time.Millisecond, time.Second, 10)) {
			t.Fatalf("decided at value %d: a pass must wait for the end", i)
		}
	}
	if j.Decided(nil) {
		t.Fatal("decided")
	}
	run := &results.Run{Windows: map[string]*results.Window{results.WindowAll: {EndS: 21}}}
	if v := j.Finish(run)[0]; v.Outcome != Passed || !v.Decided || !strings.Contains(v.Conditions[0].Why, "read when the run ended") {
		t.Errorf("%+v", v)
	}
	f := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{PassAtEnd: true})
	decided := false
	for i := range 5 {
		decided = decided || f.Observe(req(float64(i), 300*time.Millisecond, time.Second, 10))
	}
	if !decided {
		t.Error("a clear failure must still stop the run")
	}
}

// Under a stationary start the judge waits for each of the first sessions
// to have a turn answered: their cold prefills, and every request
// scheduled before the last of them ends, are not judged — slow as they
// are, they decide nothing; the values after it pass.
func TestJudgeWarmSessions(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{MinSteady: time.Second, WarmSessions: 3})
	turn := func(session int, sched float64, ttft, e2e time.Duration) *record.Record {
		r := req(sched, ttft, e2e, 10)
		r.Session = session
		return r
	}
	// Sessions 0 and 1 answer their cold turns at 4 s and 6 s; a later
	// turn of session 0 (slow, behind session 2's prefill) arrives too;
	// session 2's cold turn ends at 9 s; its request failed first.
	failed := turn(2, 0, 0, time.Second)
	failed.Err = record.ErrHTTP5xx
	for _, r := range []*record.Record{turn(0, 0, 3*time.Second, 4*time.Second), turn(1, 0, 5*time.Second, 6*time.Second),
		failed, turn(0, 5, 2*time.Second, 3*time.Second), turn(2, 1, 7*time.Second, 8*time.Second)} {
		if j.Observe(r) {
			t.Fatalf("a request before the warm point decided %+v", j.Verdicts()[0])
		}
	}
	// Scheduled at 8.5 s, before the warm point (9 s): not judged.
	for range 10 {
		if j.Observe(turn(1, 8.5, time.Second, 2*time.Second)) {
			t.Fatal("a request scheduled before the warm point was judged")
		}
	}
	passed := 0
	for i := range 60 {
		if j.Observe(turn(i%3, 9+float64(i)/10, 20*time.Millisecond, time.Second)) {
			passed = i + 1
			break
		}
	}
	if v := j.Verdicts()[0]; passed != 36 || v.Outcome != Passed || v.Conditions[0].N != 36 {
		t.Errorf("decided at value %d: %+v", passed, v)
	}
	never := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{WarmSessions: 2})
	never.Observe(turn(0, 0, 20*time.Millisecond, time.Second))
	run := &results.Run{Windows: map[string]*results.Window{results.WindowAll: {EndS: 10}}}
	if v := never.Finish(run)[0]; v.Outcome != Failed || !strings.Contains(v.Conditions[0].Why, "1 of the 2 sessions running at the start") {
		t.Errorf("%+v", v.Conditions[0])
	}
}

// Sessions the server never answers do not hold the judging back for the
// whole run: once half of them have had three more turns answered, the
// starved ones are the steady state, the slow turns after it fail the
// tier at once, and the evidence says how many starved.
func TestJudgeStarvedSessions(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100")}, JudgeOptions{MinSteady: time.Second, WarmSessions: 4})
	decidedAt := -1
	for k := range 20 {
		r := req(float64(k), 2*time.Second, 3*time.Second, 10)
		r.Session = k % 2 // sessions 2 and 3 are never answered
		if j.Observe(r) {
			decidedAt = k
			break
		}
	}
	v := j.Verdicts()[0]
	if decidedAt < 0 || decidedAt > 12 || v.Outcome != Failed || !strings.Contains(v.Conditions[0].Why, "2 of the 4 sessions that joined mid-life were starved") {
		t.Errorf("decided at record %d: %+v", decidedAt, v)
	}
}

// A request in flight past a TTFT ceiling without its first token counts
// as beyond it, once, however often it is looked at; its record, when it
// ends, adds its value to the sample but not again to the test. One that
// has its first token, or has not waited past the bound, or was due
// before the warmup, is not counted; a floor is never censored.
func TestJudgeCensorsRequestsInFlight(t *testing.T) {
	t.Parallel()
	j := NewJudge([]Tier{tier(t, "snappy: ttft_ms.p90 <= 100, decode_tok_s.p10 >= 10")}, JudgeOptions{Warmup: time.Second})
	if !j.Censors() {
		t.Fatal("a TTFT ceiling can count requests in flight")
	}
	at := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	for range 3 {
		j.Censor(1, at(2), at(2.5), false) // waited 500 ms, no token: beyond
	}
	j.Censor(2, at(2), at(2.05), false) // 50 ms: not yet
	j.Censor(3, at(2), at(3), true)     // its first token came
	j.Censor(4, at(0.5), at(3), false)  // due in the warmup
	v := j.Verdicts()[0].Conditions[0]
	if v.N != 1 || v.Beyond != 1 || v.Outcome != Undecided {
		t.Fatalf("after censoring: %+v", v)
	}
	r := req(2, 600*time.Millisecond, time.Second, 10)
	r.Index = 1
	j.Observe(r)
	if v := j.Verdicts()[0].Conditions[0]; v.N != 1 || v.Beyond != 1 {
		t.Errorf("the censored request's record counted again: %+v", v)
	}
	if d := j.Verdicts()[0].Conditions[1]; d.N != 1 {
		t.Errorf("the decode floor judged %d values, want its record's 1", d.N)
	}
	// Two more past the bound decide the failure.
	if j.Censor(5, at(3), at(4), false); !j.Censor(6, at(3), at(4), false) {
		t.Errorf("three values beyond did not fail the tier: %+v", j.Verdicts()[0])
	}
	if other := NewJudge([]Tier{tier(t, "fast: decode_tok_s.p10 >= 10")}, JudgeOptions{}); other.Censors() {
		t.Error("a floor on decode speed has nothing to censor")
	}
}
