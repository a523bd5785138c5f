package verdict

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// Sample is one side of a gate: the runs of one build. One results file,
// or several runs of one scenario — unchanged reruns, the runs of a
// --repeat set — whose differences are the noise between runs.
type Sample struct {
	// Name says where the runs came from, as given: "main.json",
	// "base-*.json", "repeat.json".
	Name string
	Runs []Input
}

// RunSpread is one figure across the runs of a gate whose sides hold
// several runs.
type RunSpread struct {
	// Baseline and Current are the figure in each run that has it, in
	// run order.
	Baseline, Current []float64
	// SD is the standard deviation between runs in the figure's unit:
	// pooled over both sides, each about its own mean, for a relative
	// rule; the current runs' for an absolute one. NaN when the runs are
	// too few to tell.
	SD float64
	// DF is SD's degrees of freedom (0 with SD NaN).
	DF int
}

// GateRuns checks the current sample against the baseline sample by
// rules. With one run on each side it is Gate: the within-run intervals
// of the two runs. With several runs on either side every rule is judged
// against the noise between runs, which one run cannot show:
//
//   - A relative rule fails when the mean of the current runs' figure is
//     beyond the tolerance from the mean of the baseline runs' AND the
//     difference is significant by Student's two-sample t-test with
//     pooled variance (NIST/SEMATECH e-Handbook of Statistical Methods
//     §1.3.5.3): the interval mean(current) − mean(baseline) ±
//     t_{conf, n_b+n_c−2} · s_p · √(1/n_b + 1/n_c), with s_p the
//     between-run standard deviation pooled over both sides, lies wholly
//     on the bad side of no change. For one current run this is the
//     prediction interval of one new run from the baseline runs,
//     mean ± t_{n_b−1} · s_b · √(1 + 1/n_b) (Geisser 1993, Predictive
//     Inference, Ex. 2.2): the current run fails only when it lies outside
//     the spread the baseline runs show among themselves AND beyond the
//     tolerance. Each run's figure is one observation; the test assumes
//     they are independent and roughly normal, and needs three runs in
//     all (two baseline runs and one current, say); with fewer the rule
//     is NotEvaluated.
//   - An absolute rule bounds the current runs: with several, their
//     mean's Student-t interval; with one, its within-run interval.
//   - Validity: every current run must be valid and complete.
//
// The pins of every run are compared with the first current run's
// (the first baseline run's, for the other current runs); any invalid or
// incomplete baseline run makes the result incomparable.
func GateRuns(baseline, current Sample, rules []Rule, st stats.Settings) (*GateResult, error) {
	if err := st.Validate(); err != nil {
		return nil, err
	}
	if len(baseline.Runs) == 0 || len(current.Runs) == 0 {
		return nil, fmt.Errorf("gate: no baseline run or no current run (%d and %d)", len(baseline.Runs), len(current.Runs))
	}
	g := &GateResult{Baseline: baseline, Current: current, Stats: st}
	b0, c0 := baseline.Runs[0], current.Runs[0]
	several := g.BetweenRuns()
	mismatch := func(in Input, a, b *results.Run) {
		for _, m := range PinMismatches(a, b, st) {
			g.Incomparable = append(g.Incomparable, runNamed(in.Name, m.String(), several))
		}
	}
	for _, b := range baseline.Runs {
		mismatch(b, b.Run, c0.Run)
	}
	for _, c := range current.Runs[1:] {
		mismatch(c, b0.Run, c.Run)
	}
	for _, b := range baseline.Runs {
		if !b.Run.Valid {
			g.Incomparable = append(g.Incomparable, runNamed(b.Name, "the baseline is invalid: "+strings.Join(b.Run.Invalid, "; "), several))
		}
		if b.Run.Incomplete {
			g.Incomparable = append(g.Incomparable, runNamed(b.Name, "the baseline is incomplete: "+b.Run.IncompleteReason, several))
		}
	}
	if !g.Comparable() {
		return g, nil
	}
	caches := map[*results.Run]histCache{}
	for _, in := range append(append([]Input(nil), baseline.Runs...), current.Runs...) {
		caches[in.Run] = histCache{}
	}
	for _, r := range rules {
		switch {
		case r.Kind == Validity:
			g.Checks = append(g.Checks, checkValidity(r, current))
		case several:
			g.Checks = append(g.Checks, checkBetween(r, baseline, current, caches, st))
		default:
			g.Checks = append(g.Checks, check(r, b0.Run, c0.Run, caches[b0.Run], caches[c0.Run], st))
		}
	}
	return g, nil
}

// BetweenRuns reports whether the gate judged the noise between runs: a
// side holds several.
func (g *GateResult) BetweenRuns() bool { return len(g.Baseline.Runs) > 1 || len(g.Current.Runs) > 1 }

// runNamed prefixes what with the run's name when a side holds several.
func runNamed(name, what string, several bool) string {
	if several {
		return name + ": " + what
	}
	return what
}

// checkValidity fails when any current run is invalid or incomplete.
func checkValidity(r Rule, current Sample) Check {
	c := Check{Rule: r}
	several := len(current.Runs) > 1
	var why []string
	for _, in := range current.Runs {
		if !in.Run.Valid {
			why = append(why, runNamed(in.Name, "invalid: "+strings.Join(in.Run.Invalid, "; "), several))
		}
		if in.Run.Incomplete {
			why = append(why, runNamed(in.Name, "incomplete: "+in.Run.IncompleteReason, several))
		}
	}
	c.Status, c.Why = Pass, validityWhy(several, nil)
	if len(why) > 0 {
		c.Status, c.Beyond, c.Significant, c.Why = Fail, true, true, validityWhy(several, why)
	}
	return c
}

// validityWhy explains the validity rule's outcome: why lists what is
// wrong with the current runs (none: it passed).
func validityWhy(several bool, why []string) string {
	subject := "the current run is "
	if several {
		subject = "every current run is "
		if len(why) > 0 {
			subject = "current runs: "
		}
	}
	if len(why) == 0 {
		return subject + "valid and complete"
	}
	return subject + strings.Join(why, "; ")
}

// RelSpread is c's standard deviation between runs as a fraction of the
// mean it is judged by (the baseline's for a relative rule, the current
// runs' for an absolute one); NaN when it was not judged between runs.
func (c Check) RelSpread() float64 {
	if c.Runs == nil || !c.Between || math.IsNaN(c.Runs.SD) {
		return math.NaN()
	}
	m := c.Current
	if c.Rule.relative() {
		m = c.Baseline
	}
	if m == 0 {
		return math.NaN()
	}
	return c.Runs.SD / math.Abs(m)
}

// sampleValues reads rule r's figure from each run of s: the values of
// the runs that have it, and why the others do not ("" when all do).
func sampleValues(r Rule, s Sample, caches map[*results.Run]histCache) (vs []float64, missing string) {
	var whys []string
	for _, in := range s.Runs {
		e, ok, why := r.ref.estimate(in.Run, caches[in.Run])
		if !ok {
			whys = append(whys, runNamed(in.Name, why, len(s.Runs) > 1))
			continue
		}
		vs = append(vs, e.Value)
	}
	return vs, strings.Join(whys, "; ")
}

// checkBetween judges rule r (not validity) against the noise between
// the runs of baseline and current (see GateRuns).
func checkBetween(r Rule, baseline, current Sample, caches map[*results.Run]histCache, st stats.Settings) Check {
	c := Check{Rule: r, Between: true}
	bv, whyb := sampleValues(r, baseline, caches)
	cv, whyc := sampleValues(r, current, caches)
	c.Runs = &RunSpread{Baseline: bv, Current: cv, SD: math.NaN()}
	c.Baseline, _ = stats.MeanSD(bv)
	c.Current, _ = stats.MeanSD(cv)
	c.HasBaseline, c.HasCurrent = len(bv) > 0, len(cv) > 0 && whyc == ""
	relative := r.relative()
	switch {
	case whyc != "" && len(bv) > 0:
		c.Status, c.Why = Fail, "the current run has no such figure ("+whyc+"); the baseline has"
		return c
	case len(cv) == 0:
		c.Status, c.Why = NotEvaluated, "no run has it: "+whyc
		return c
	case relative && len(bv) == 0:
		c.Status, c.Why = NotEvaluated, "the baseline has no such figure: "+whyb
		return c
	}
	if !relative && len(cv) == 1 {
		// One current run: its own interval bounds it (the baseline's
		// spread says nothing about another build's).
		in := current.Runs[0]
		e, _, _ := r.ref.estimate(in.Run, caches[in.Run])
		if missingData(e.NoInterval) {
			c.Status, c.Why = NotEvaluated, e.NoInterval+": its significance cannot be judged"
			return c
		}
		c.Between = false
		c.Interval = st.Interval(r.Key, e)
		noInterval := ""
		if !c.Interval.Known {
			_, noInterval = st.Usable(e)
			noInterval = cmp.Or(noInterval, "no sampling model")
		}
		settle(&c, noInterval)
		return c
	}
	c.Interval = stats.Interval{Level: st.Confidence}
	var diff, half float64
	if relative {
		c.Change = change(c.Baseline, c.Current)
		diff, half, c.Runs.DF = stats.TwoSample(bv, cv, st.Confidence)
		c.Runs.SD, _ = stats.PooledSD(bv, cv)
	} else {
		c.Runs.DF = len(cv) - 1
		diff, c.Runs.SD = stats.MeanSD(cv)
		half = stats.StudentT(c.Runs.DF, st.Confidence) * c.Runs.SD / math.Sqrt(float64(len(cv)))
	}
	noInterval := ""
	switch {
	case c.Runs.DF == 0:
		noInterval = fmt.Sprintf("%d runs have it, and the spread between runs needs 3", len(bv)+len(cv))
	case relative && c.Baseline <= 0:
		noInterval = "the baseline is zero: no relative change"
	case relative:
		c.Interval.Lo, c.Interval.Hi, c.Interval.Known = (diff-half)/c.Baseline, (diff+half)/c.Baseline, true
	default:
		c.Interval.Lo, c.Interval.Hi, c.Interval.Known = diff-half, diff+half, true
	}
	settle(&c, noInterval)
	return c
}
