package verdict

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// The sequential test behind a tier's verdict on a run, judged on the
// records as they arrive.
//
// A percentile bound is a bound on a share: the p90 of TTFT is at most
// 2 s exactly when at most 10% of the requests take longer (a floor on the
// p10 of decode tok/s: at most 10% run slower). So each value is a
// Bernoulli trial — beyond the bound or not — and the condition holds when
// the share beyond, p, is at most the allowed share s (Condition.Allowed;
// for error and 429 rates s is the bound itself). Wald's sequential
// probability ratio test (SPRT) of H0: p = p0 against H1: p = p1 on the
// running counts decides as soon as the evidence allows: fail when the log
// likelihood ratio k·ln(p1/p0) + (n−k)·ln((1−p1)/(1−p0)) reaches
// ln((1−β)/α), pass when it falls to ln(β/(1−α)), with α = β = 5%: a
// condition that holds by the margin is failed, or one broken by it
// passed, at most 5% of the time whenever the test stops — Wald's bounds
// hold for a test looked at after every value, which a fixed-sample test
// does not. The margin (the indifference zone) is an odds ratio of 2 each
// side of s: p0 = s/(2−s), p1 = 2s/(1+s) (s = 10%: 5.3% and 18.2%); a
// true share inside it takes longer to decide, and the run's own length
// bounds the wait (then the point estimate stands, marked undecided). It
// is chosen over a fixed-sample binomial test looked at repeatedly (whose
// error grows with every look) and over an anytime-valid confidence
// sequence (valid too, but slower to stop on a clear failure): a clear
// failure — most requests beyond the bound — stops after a handful of
// values, seconds, not minutes.
//
// A pass must also be earned by the data a percentile needs: at least
// stats.MinCount(q, 95%) values for a percentile (a p90 needs 36, a p99
// 368, the gate's own minimum for a percentile's interval; a share has no
// percentile, and the test alone decides it) and a steady stretch of at
// least MinSteady of run time. A fail needs only the
// test: breaking the bound needs no percentile estimate. Values come from
// the requests scheduled after the warmup; failed requests count towards
// error and 429 rates, not latencies (as in the results' windows), and
// requests cut by an interrupt towards nothing.
const (
	// SequentialAlpha and SequentialBeta are the test's error rates: a
	// held condition failed, a broken one passed, each at most 5%.
	SequentialAlpha = 0.05
	SequentialBeta  = 0.05
	// IndifferenceOdds is the odds ratio each side of the allowed share
	// within which the test is slow to decide.
	IndifferenceOdds = 2.0
)

// DefaultMinSteady is the shortest steady stretch a pass needs, in run
// time.
const DefaultMinSteady = 20 * time.Second

// Outcome is a verdict: pass, fail or undecided.
type Outcome string

// Outcomes.
const (
	Passed    Outcome = "pass"
	Failed    Outcome = "fail"
	Undecided Outcome = "undecided"
)

// CondVerdict is one condition's verdict on a run.
type CondVerdict struct {
	Condition Condition `json:"condition"`
	Outcome   Outcome   `json:"outcome"`
	// Decided is true when the sequential test decided at 95%; false when
	// the run ended first and Outcome is the point estimate's side of the
	// bound (or the end-of-run reading of a session metric).
	Decided bool `json:"decided"`
	// AtS is when it was decided, in seconds of run time from the start.
	AtS float64 `json:"at_s,omitempty"`
	// N values were judged, Beyond of them beyond the bound (weights: an
	// ITL chunk of k tokens counts k).
	N      int64 `json:"n"`
	Beyond int64 `json:"beyond"`
	// Value is the statistic the condition reads, in its unit (a fraction
	// for shares), from the run's steady window when it has one;
	// HasValue false otherwise.
	Value    float64 `json:"value"`
	HasValue bool    `json:"has_value"`
	// Why says how the verdict was reached, in a phrase.
	Why string `json:"why,omitempty"`
}

// TierVerdict is a tier's verdict on a run: failed when one condition
// fails, passed when all pass.
type TierVerdict struct {
	Tier    string  `json:"tier"`
	Outcome Outcome `json:"outcome"`
	Decided bool    `json:"decided"`
	AtS     float64 `json:"at_s,omitempty"`
	// First is the index of the condition whose failure decided a failed
	// tier first (the binding condition), or of the first condition left
	// undecided by an undecided tier; -1 for a passed one.
	First      int           `json:"first"`
	Conditions []CondVerdict `json:"conditions"`
}

// JudgeOptions set how a Judge decides.
type JudgeOptions struct {
	// Warmup: values of requests scheduled before it are not judged.
	Warmup time.Duration
	// MinSteady is the steady stretch, in run time after Warmup, a pass
	// needs (0: DefaultMinSteady).
	MinSteady time.Duration
	// PassAtEnd keeps a pass from being decided before the run ends (in
	// Finish): for a workload that deepens as it runs — agentic sessions,
	// whose every turn re-sends a longer context — the values of its first
	// minutes are shallower than the run's, and a pass read from them
	// would flatter it. A failure only grows with depth: it still stops
	// the run at once.
	PassAtEnd bool
	// WarmSessions, when > 0, also keeps out every request scheduled
	// before as many agentic sessions have each had a turn answered (or
	// ended): under a stationary start the sessions running at the start
	// join mid-life and send their whole history cold, a prefill burst no
	// later minute repeats.
	WarmSessions int
}

// condState is one condition's running test.
type condState struct {
	c      Condition
	m      tierMetric
	llrHit float64 // the log likelihood ratio added by a value beyond the bound
	llrMis float64 // … by one within it
	minN   int64
	// leanN is the fewest values (or sessions) an undecided condition
	// needs for its point estimate to stand when the run ends: a
	// percentile's minimum count, a share taken as the 1−s quantile.
	leanN int64
	n, k  int64
	llr   float64
	out   Outcome
	atS   float64
	// sample holds a per-request metric's judged values, so that the
	// value a verdict states is read from the values the test counted
	// (nil for shares and per-session metrics).
	sample *results.Sample
	// censored names the requests counted beyond the bound while still
	// in flight (Censor): their records add their values to the sample
	// only.
	censored map[censorKey]struct{}
}

// censorKey names a request: its plan index and when it was due.
type censorKey struct {
	index     int
	scheduled time.Duration
}

// tierState is one tier's running verdict.
type tierState struct {
	t     Tier
	conds []*condState
	out   Outcome
	atS   float64
	first int
}

// Judge follows tiers over a run's records as they arrive, each condition
// by the sequential test above. It is owned by one goroutine (the
// consumer of the runner's channel), like the collector: not safe for
// concurrent use. Observe costs a few operations per condition and
// record (an ITL condition: per chunk); it runs once per finished
// record, never on the stream's per-chunk path.
type Judge struct {
	tiers  []*tierState
	o      JudgeOptions
	latest time.Duration
	// steady is set once the judged records cover MinSteady after the
	// warmup.
	steady bool
	// warmth follows the sessions answered until WarmSessions have: its
	// At then extends the warmup.
	warmth results.Warmth
}

// NewJudge returns a Judge of tiers, which must have been parsed (their
// conditions valid).
func NewJudge(tiers []Tier, o JudgeOptions) *Judge {
	if o.MinSteady <= 0 {
		o.MinSteady = DefaultMinSteady
	}
	j := &Judge{o: o, warmth: results.Warmth{N: o.WarmSessions}}
	for _, t := range tiers {
		ts := &tierState{t: t, out: Undecided, first: -1}
		for _, c := range t.Conditions {
			m, _ := metricOf(c.Metric)
			s := c.Allowed()
			p0, p1 := s/(IndifferenceOdds-s*(IndifferenceOdds-1)), IndifferenceOdds*s/(1+s*(IndifferenceOdds-1))
			cs := &condState{c: c, m: m, out: Undecided,
				llrHit: math.Log(p1 / p0), llrMis: math.Log((1 - p1) / (1 - p0)),
				minN: minValues(c), leanN: stats.MinCount(1-s, stats.DefaultConfidence)}
			if m.kind == perRequest {
				cs.sample = results.NewSample(m.Hist)
			}
			ts.conds = append(ts.conds, cs)
		}
		j.tiers = append(j.tiers, ts)
	}
	return j
}

// minValues is the fewest values a pass of c needs: a percentile's
// minimum count for its order-statistic interval at 95% (the gate's:
// stats.MinCount; a p90 36, a p99 368). A share of requests has no
// percentile to estimate: the test's own bound decides (0 errors in 197
// requests pass error_rate <= 1%, in 40 error_rate <= 5%).
func minValues(c Condition) int64 {
	if c.IsShare() {
		return 0
	}
	return stats.MinCount(1-c.Allowed(), stats.DefaultConfidence)
}

// The SPRT's decision bounds on the log likelihood ratio.
var (
	failAt = math.Log((1 - SequentialBeta) / SequentialAlpha)
	passAt = math.Log(SequentialBeta / (1 - SequentialAlpha))
)

// Observe judges one finished record (its chunk tokens assigned, as
// results.Collector.Add leaves them) and reports whether a tier's verdict
// was decided by it.
func (j *Judge) Observe(r *record.Record) bool {
	if !j.warmth.Warm() {
		j.warmth.Observe(r)
		return false // scheduled before the warm point, which lies ahead
	}
	from := max(j.o.Warmup, j.warmth.At())
	if r.Scheduled < from {
		return false
	}
	j.latest = max(j.latest, r.End)
	steady := j.latest-from >= j.o.MinSteady
	j.steady = steady
	at := r.End.Seconds()
	decided := false
	for _, ts := range j.tiers {
		if ts.out != Undecided {
			continue
		}
		pending := false
		for i, cs := range ts.conds {
			if cs.out == Undecided && cs.m.values != nil {
				cs.observe(r, cs.uncensor(r))
				cs.decide(steady && !j.o.PassAtEnd, at)
			}
			switch cs.out {
			case Failed:
				if ts.out != Failed {
					ts.out, ts.atS, ts.first = Failed, cs.atS, i
				}
			case Undecided:
				pending = true
			}
		}
		if ts.out == Undecided && !pending {
			ts.out, ts.atS = Passed, at
		}
		decided = decided || ts.out != Undecided
	}
	return decided
}

// observe counts r's values; one already counted while in flight
// (counted) adds its value to the sample only.
func (cs *condState) observe(r *record.Record, counted bool) {
	cs.m.values(r, func(v float64, w int64) {
		if cs.sample != nil {
			cs.sample.Add(v, w)
		}
		if counted {
			return
		}
		cs.n += w
		beyond := cs.c.Beyond(v)
		if cs.m.kind == share {
			beyond = v > 0
		}
		if beyond {
			cs.k += w
			cs.llr += float64(w) * cs.llrHit
		} else {
			cs.llr += float64(w) * cs.llrMis
		}
	})
}

// uncensor reports whether r was counted while in flight, and forgets it.
func (cs *condState) uncensor(r *record.Record) bool {
	k := censorKey{r.Index, r.Scheduled}
	if _, ok := cs.censored[k]; !ok {
		return false
	}
	delete(cs.censored, k)
	return true
}

// Censor judges a request still in flight at run time now: due at
// scheduled (plan index index), its first token come (answered) or not.
// Once it has waited past a TTFT ceiling without a first token, or past
// an E2E ceiling, its value is beyond that bound whatever it turns out to
// be, and the test counts it so, once — past a server's cliff the values
// that decide would otherwise come minutes late. Its record, when it
// ends, adds its value to the condition's sample but not again to the
// test (a request that then fails stays counted: it did wait). Called
// from the judge's goroutine (once a second, for every request in
// flight); reports whether a tier was decided by it.
func (j *Judge) Censor(index int, scheduled, now time.Duration, answered bool) bool {
	if !j.warmth.Warm() || scheduled < max(j.o.Warmup, j.warmth.At()) {
		return false
	}
	waited := msOf(float64(now - scheduled))
	decided := false
	for _, ts := range j.tiers {
		if ts.out != Undecided {
			continue
		}
		for i, cs := range ts.conds {
			if cs.out != Undecided || !cs.censors(answered) || waited <= cs.c.Bound {
				continue
			}
			k := censorKey{index, scheduled}
			if _, ok := cs.censored[k]; ok {
				continue
			}
			if cs.censored == nil {
				cs.censored = map[censorKey]struct{}{}
			}
			cs.censored[k] = struct{}{}
			cs.n, cs.k, cs.llr = cs.n+1, cs.k+1, cs.llr+cs.llrHit
			cs.decide(false, now.Seconds())
			if cs.out == Failed && ts.out != Failed {
				ts.out, ts.atS, ts.first, decided = Failed, cs.atS, i, true
			}
		}
	}
	return decided
}

// censors reports whether a request still in flight can be counted by
// cs once it has waited past the bound: a ceiling on a latency it is
// still accruing (tierMetric.waiting: TTFT before its first token, E2E).
func (cs *condState) censors(answered bool) bool {
	return cs.c.Op == AtMost && cs.m.waiting != nil && cs.m.waiting(answered)
}

// Censors reports whether any condition can count requests in flight
// (Censor): whether a run need keep them.
func (j *Judge) Censors() bool {
	for _, ts := range j.tiers {
		for _, cs := range ts.conds {
			if cs.censors(false) {
				return true
			}
		}
	}
	return false
}

// decide settles cs when the test allows: a fail at once, a pass once
// the values and the steady stretch earn it. at is the run time in s.
func (cs *condState) decide(steady bool, at float64) {
	switch {
	case cs.llr >= failAt:
		cs.out, cs.atS = Failed, at
	case cs.llr <= passAt && steady && cs.n >= cs.minN:
		cs.out, cs.atS = Passed, at
	}
}

// Broken says whether a tier has failed, the test decided, and which
// first with the evidence: what stops a run under abort_on.
func (j *Judge) Broken() (broken bool, why string) {
	for _, ts := range j.tiers {
		if ts.out == Failed {
			cs := ts.conds[ts.first]
			return true, fmt.Sprintf("tier %s broken at %s s: %s", ts.t.Name, Seconds(ts.atS), cs.evidence())
		}
	}
	return false, ""
}

// starvedNote says, when some of the sessions that joined mid-life were
// never answered before the judging began, how many: "; 6 of the 12
// sessions that joined mid-life were starved (still waiting for their
// first answer)" ("" otherwise).
func (j *Judge) starvedNote() string {
	if n := j.warmth.Starved(); n > 0 {
		return fmt.Sprintf("; %d of the %d sessions that joined mid-life were starved (still waiting for their first answer when half of them had had %d more)", n, j.o.WarmSessions, results.StarvedAfter)
	}
	return ""
}

// Seconds formats a run time in seconds to a tenth: "6", "6.3".
func Seconds(s float64) string { return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) }

// Decided reports whether every tier named is decided (every tier when
// names is empty).
func (j *Judge) Decided(names []string) bool {
	for _, ts := range j.tiers {
		if ts.out == Undecided && (len(names) == 0 || slices.Contains(names, ts.t.Name)) {
			return false
		}
	}
	return true
}

// evidence says what decided cs: "31 of 40 values beyond 2000 ms (a p90
// allows 10%)".
func (cs *condState) evidence() string {
	c := cs.c
	bound := c.BoundText()
	if u := c.Unit(); u != "" && !c.IsShare() {
		bound += " " + u
	}
	what := "beyond " + bound
	switch {
	case c.IsShare():
		what = "counted"
	case c.Op == AtLeast:
		what = "below " + bound
	case c.Op == AtMost:
		what = "above " + bound
	}
	return fmt.Sprintf("%s: %d of %d %s (%s allows %s)", c, cs.k, cs.n, what, allowsWho(c), numfmt.Percent(c.Allowed()))
}

// allowsWho names what sets a condition's allowed share: "a p90", "the
// bound".
func allowsWho(c Condition) string {
	if c.IsShare() {
		return "the bound"
	}
	return "a " + c.Stat
}

// Verdicts are the tiers' verdicts so far: what was decided, and
// Undecided for the rest.
func (j *Judge) Verdicts() []TierVerdict {
	out := make([]TierVerdict, len(j.tiers))
	for i, ts := range j.tiers {
		tv := TierVerdict{Tier: ts.t.Name, Outcome: ts.out, Decided: ts.out != Undecided, AtS: ts.atS, First: ts.first}
		for _, cs := range ts.conds {
			cv := CondVerdict{Condition: cs.c, Outcome: cs.out, Decided: cs.out != Undecided, AtS: cs.atS, N: cs.n, Beyond: cs.k}
			if cv.Decided {
				cv.Why = "decided at 95% by the sequential test: " + cs.evidence() + j.starvedNote()
			}
			tv.Conditions = append(tv.Conditions, cv)
		}
		out[i] = tv
	}
	return out
}

// Finish completes the tiers' verdicts from the finished run. Every
// condition gets its value from the values the test judged — the
// requests scheduled after the warmup until it was decided, the same
// ones its counts are of, never a window that holds others — and a
// session metric from the run's sessions. A condition the test left undecided takes its point
// estimate's side of the bound (Decided false) when the run gave it
// enough to stand on — the values a percentile needs (a share: as the
// 1−s quantile; sessions: as many sessions) over MinSteady; with less, a
// point estimate beyond the bound still fails it, one within leaves it
// Undecided: not a pass. No value at all fails it. Session metrics are
// judged here.
func (j *Judge) Finish(run *results.Run) []TierVerdict {
	vs := j.Verdicts()
	end := 0.0
	if w := run.Windows[results.WindowAll]; w != nil {
		end = w.EndS
	}
	for i := range vs {
		tv := &vs[i]
		for k := range tv.Conditions {
			cv := &tv.Conditions[k]
			cs := j.tiers[i].conds[k]
			cv.Value, cv.HasValue = readValue(run, cs)
			if cv.Decided {
				continue
			}
			cv.AtS = end
			n, what, enough := cs.n, "values", j.steady
			if cs.m.kind == perSession {
				n, what, enough = sessionCount(run), "sessions", true
			}
			enough = enough && n >= cs.leanN
			switch {
			case j.o.PassAtEnd && cs.m.kind != perSession && cs.llr <= passAt && j.steady && cs.n >= cs.minN:
				cv.Outcome, cv.Decided = Passed, true
				cv.Why = "decided at 95% by the sequential test, read when the run ended (a pass on a deepening workload waits for its end): " + cs.evidence()
			case !cv.HasValue && !j.warmth.Warm():
				cv.Outcome, cv.Why = Failed, fmt.Sprintf("nothing measured: %d of the %d sessions running at the start had a turn answered, and the warmup waits for them all (or for half of them to have had %d more)", j.warmth.Answered(), j.o.WarmSessions, results.StarvedAfter)
			case !cv.HasValue:
				cv.Outcome, cv.Why = Failed, "nothing measured: no value after the warmup"
			case cs.m.kind == perSession && enough:
				cv.Outcome, cv.Decided = leaning(cv.Condition, cv.Value), true
				cv.Why = fmt.Sprintf("read when the run ended, over %d sessions", n)
			case enough:
				cv.Outcome = leaning(cv.Condition, cv.Value)
				cv.Why = "not decided at 95% before the run ended: the point estimate's side of the bound (" + cs.evidence() + ")"
			case leaning(cv.Condition, cv.Value) == Failed:
				cv.Outcome = Failed
				cv.Why = fmt.Sprintf("the point estimate is beyond the bound, on too little to decide (%d of the %d %s a %s needs)", n, cs.leanN, what, allowsWhat(cv.Condition))
			default:
				cv.Why = fmt.Sprintf("too little to judge: %d of the %d %s a %s needs, or less than the steady stretch; lengthen the run", n, cs.leanN, what, allowsWhat(cv.Condition))
			}
		}
		settleTier(tv)
	}
	return vs
}

// allowsWhat names what sets a condition's minimum: "p90", "1% share".
func allowsWhat(c Condition) string {
	if c.IsShare() {
		return c.BoundText() + " share"
	}
	return c.Stat
}

// settleTier sets a tier's outcome from its conditions': failed when one
// failed (First the one the test failed first, else the first in order);
// else undecided when one is (First the first such: the tier is not
// passed); else passed. Decided when the outcome's conditions were.
func settleTier(tv *TierVerdict) {
	if tv.Outcome == Failed {
		return // the test failed it while the run went on
	}
	tv.Outcome, tv.Decided, tv.First = Passed, true, -1
	for k, cv := range tv.Conditions {
		if cv.Outcome == Failed {
			tv.Outcome, tv.First, tv.AtS, tv.Decided = Failed, k, cv.AtS, cv.Decided
			return
		}
	}
	for k, cv := range tv.Conditions {
		switch {
		case cv.Outcome == Undecided && tv.Outcome == Passed:
			tv.Outcome, tv.First, tv.AtS, tv.Decided = Undecided, k, cv.AtS, false
		case tv.Outcome == Passed:
			tv.Decided = tv.Decided && cv.Decided
			tv.AtS = max(tv.AtS, cv.AtS)
		}
	}
}

// leaning is the side of its bound value v is on.
func leaning(c Condition, v float64) Outcome {
	if c.Beyond(v) {
		return Failed
	}
	return Passed
}

// sessionCount is how many whole sessions the run followed (not those
// that joined mid-life).
func sessionCount(run *results.Run) int64 {
	if run.Sessions == nil {
		return 0
	}
	return int64(run.Sessions.Whole())
}

// readValue is the statistic cs states: the percentile or share of the
// values it judged, or the sessions' percentile from run.
func readValue(run *results.Run, cs *condState) (float64, bool) {
	c := cs.c
	switch {
	case cs.m.kind == perSession:
		if run.Sessions == nil || run.Sessions.LifetimeMin == nil {
			return 0, false
		}
		return StatOf(run.Sessions.LifetimeMin, c.Stat), true
	case cs.m.kind == share:
		if cs.n <= 0 {
			return 0, false
		}
		return float64(cs.k) / float64(cs.n), true
	}
	d := cs.sample.Dist()
	if d == nil {
		return 0, false
	}
	return StatOf(d, c.Stat), true
}
