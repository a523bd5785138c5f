package report

import (
	"fmt"
	"math"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// fig is one figure of one vendor across its runs (one per repeat): the
// mean, the half-width of its 95% confidence interval (Student's t, as a
// repeat set's; NaN with one run) and how many runs had it.
type fig struct {
	mean, half float64
	n          int
}

// figOf is get's mean over hs, leaving out runs without the figure (NaN,
// or zero or less when positive).
func figOf(hs []headline, get func(headline) float64, positive bool) fig {
	var xs []float64
	for _, h := range hs {
		if v := get(h); finite(v) && (!positive || v > 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return fig{mean: math.NaN(), half: math.NaN()}
	}
	mean, half := stats.MeanCI(xs, 0.95)
	return fig{mean: mean, half: half, n: len(xs)}
}

// text is f printed by format: "85.8", or "85.8 ± 3.1" across repeats,
// or "–" when no run had it.
func (f fig) text(format func(float64) string) string {
	if !finite(f.mean) {
		return "–"
	}
	switch {
	case f.n > 1 && finite(f.half) && f.half <= 1e-9*math.Abs(f.mean):
		return format(f.mean) + " ± 0" // the same every run, to rounding
	case f.n > 1 && finite(f.half):
		return format(f.mean) + " ± " + format(f.half)
	}
	return format(f.mean)
}

// vendorView is one vendor of a bake-off with its figures across its
// runs.
type vendorView struct {
	verdict.Vendor
	hs []headline
	// effective … reliability are the usable view's dimensions:
	// effective tok/s p50 (per stream), context lifetime p50 in minutes,
	// $ per million output tokens, and the share of requests that
	// succeeded (0–1).
	effective, lifetime, costM, reliability fig
	// lifeCapped is true when a setting, not the vendor, ended its
	// sessions (lifeWhy says which): its lifetime is a lower bound.
	lifeCapped bool
	lifeWhy    string
}

// bakeoffView is a bake-off's vendors and, per dimension of the usable
// view, which of them hold its best value (ties within the printed
// precision all do).
type bakeoffView struct {
	vendors []vendorView
	// best[d][i] is true when vendor i holds dimension d's best.
	best map[string][]bool
}

// The usable view's dimensions, as bakeoffView.best keys them.
const (
	dimThroughput = "throughput"
	dimLifetime   = "lifetime"
	dimCost       = "cost"
	dimReliable   = "reliability"
)

// viewBakeoff groups set's runs by vendor and finds each dimension's
// best.
func viewBakeoff(set *results.Set) bakeoffView {
	var bv bakeoffView
	for _, v := range verdict.Vendors(set) {
		vv := vendorView{Vendor: v, lifeCapped: len(v.Runs) > 0}
		for _, r := range v.Runs {
			vv.hs = append(vv.hs, headlineOf(r))
			capped, why := verdict.SessionCap(r)
			vv.lifeCapped = vv.lifeCapped && capped
			if capped {
				vv.lifeWhy = why
			}
		}
		if !vv.lifeCapped {
			vv.lifeWhy = ""
		}
		vv.effective = figOf(vv.hs, func(h headline) float64 { return h.effective }, true)
		vv.lifetime = figOf(vv.hs, func(h headline) float64 { return h.lifetimeMin }, true)
		vv.costM = figOf(vv.hs, func(h headline) float64 { return h.costMOutput }, true)
		vv.reliability = figOf(vv.hs, func(h headline) float64 { return 1 - h.errorRate }, false)
		bv.vendors = append(bv.vendors, vv)
	}
	bv.best = map[string][]bool{
		dimThroughput: bv.bestOf(func(v vendorView) fig { return v.effective }, num, true),
		dimCost:       bv.bestOf(func(v vendorView) fig { return v.costM }, numfmt.Money, false),
		dimReliable:   bv.bestOf(func(v vendorView) fig { return v.reliability }, pct, true),
		dimLifetime:   bv.bestLifetime(),
	}
	return bv
}

// bestOf marks the vendors whose figure, printed by format, equals the
// best one printed so: a tie within the printed precision is a tie.
func (bv bakeoffView) bestOf(get func(vendorView) fig, format func(float64) string, higher bool) []bool {
	marks := make([]bool, len(bv.vendors))
	bi := -1
	for i, v := range bv.vendors {
		m := get(v).mean
		if !finite(m) {
			continue
		}
		if b := get(bv.vendors[max(bi, 0)]).mean; bi < 0 || higher && m > b || !higher && m < b {
			bi = i
		}
	}
	if bi < 0 {
		return marks
	}
	top := format(get(bv.vendors[bi]).mean)
	for i, v := range bv.vendors {
		marks[i] = finite(get(v).mean) && format(get(v).mean) == top
	}
	return marks
}

// bestLifetime marks the longest context lifetime, where it is known: a
// lifetime a setting capped is only a lower bound, so the best is known
// when the longest is a bound above every measured one and the only
// bound, or a measurement and no other vendor's is a bound.
func (bv bakeoffView) bestLifetime() []bool {
	marks := bv.bestOf(func(v vendorView) fig { return v.lifetime }, num, true)
	bounds, bestBound := 0, false
	for i, v := range bv.vendors {
		if v.lifeCapped && finite(v.lifetime.mean) {
			bounds++
			bestBound = bestBound || marks[i]
		}
	}
	if bounds > 1 || bounds == 1 && !bestBound {
		return make([]bool, len(bv.vendors))
	}
	return marks
}

// lifetimeText is v's context lifetime: "2.59 min", or "≥ 2.02 min —
// the run's length; no session ended" when a setting capped it.
func (v vendorView) lifetimeText() string {
	s := v.lifetime.text(num)
	if s == "–" {
		return s
	}
	if v.lifeCapped {
		return "≥ " + s + " min — " + v.lifeWhy
	}
	return s + " min"
}

// star appends " ★" to s when on.
func star(s string, on bool) string {
	if on {
		return s + " ★"
	}
	return s
}

// bakeoffRepeats is how many runs each profile of a bake-off had (the
// most any had).
func bakeoffRepeats(set *results.Set) int {
	n := 0
	for _, v := range verdict.Vendors(set) {
		n = max(n, len(v.Runs))
	}
	return n
}

// repeatsLine says what a repeated bake-off's figures are: "3 runs each
// (seeds 42–44); every figure is the mean ± its 95% interval across
// them (Student's t)"; "" for one run each.
func repeatsLine(set *results.Set) string {
	n := bakeoffRepeats(set)
	if n < 2 {
		return ""
	}
	lo, hi := set.Runs[0].Scenario.Seed, set.Runs[0].Scenario.Seed
	for _, r := range set.Runs {
		lo, hi = min(lo, r.Scenario.Seed), max(hi, r.Scenario.Seed)
	}
	return fmt.Sprintf("%d runs each (seeds %d–%d); every figure is the mean ± its 95%% interval across them (Student's t)", n, lo, hi)
}
