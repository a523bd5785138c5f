package capacity

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// The gate fails a tier whose N* drops beyond both answers' intervals,
// and passes a rise, the same N*, or intervals that overlap.
func TestGate(t *testing.T) {
	t.Parallel()
	ax := Axis{Kind: AxisSessions, Min: 1, Max: 64}
	found := func(n float64) Answer {
		return Answer{Tier: "interactive", Kind: Found, Lo: n, HasLo: true, Hi: n + 1, HasHi: true}
	}
	for _, c := range []struct {
		name      string
		base, cur Answer
		status    verdict.Status
		change    string
	}{
		{"12 → 10", found(12), found(10), verdict.Fail, "drop"},
		{"10 → 12", found(10), found(12), verdict.Pass, "rise"},
		{"same", found(10), found(10), verdict.Pass, "same"},
		{"an interval that reaches the baseline", found(10), Answer{Tier: "interactive", Kind: Interval, Lo: 6, HasLo: true, Hi: 11, HasHi: true}, verdict.Pass, "overlap"},
		{"an interval wholly below", found(10), Answer{Tier: "interactive", Kind: Interval, Lo: 6, HasLo: true, Hi: 9, HasHi: true}, verdict.Fail, "drop"},
		{"fails at 1 now", found(2), Answer{Tier: "interactive", Kind: FailsAtMin, Hi: 1, HasHi: true}, verdict.Fail, "drop"},
		{"≥ max both", Answer{Tier: "interactive", Kind: AtLeast, Lo: 64, HasLo: true}, Answer{Tier: "interactive", Kind: AtLeast, Lo: 64, HasLo: true}, verdict.Pass, "same"},
	} {
		base, cur := sample(t), sample(t)
		base.Plan.Axis, cur.Plan.Axis = ax, ax
		base.Answers, cur.Answers = []Answer{c.base}, []Answer{c.cur}
		g := Gate(base, cur, stats.Default())
		if len(g.Incomparable) > 0 || len(g.Tiers) != 1 || g.Tiers[0].Status != c.status || g.Tiers[0].Change != c.change || g.Passed() != (c.status == verdict.Pass) {
			t.Errorf("%s: %+v", c.name, g)
		}
	}
}

// Files that vary another pin, or judge a tier by other conditions, are
// not compared.
func TestGateIncomparable(t *testing.T) {
	t.Parallel()
	base, cur := sample(t), sample(t)
	cur.Plan.Axis.Kind, cur.Plan.Axis.Pin = AxisRate, "concurrency.rate"
	cur.Plan.Tiers[0].Conditions[0].Bound = 1000
	g := Gate(base, cur, stats.Default())
	why := strings.Join(g.Incomparable, "; ")
	if g.Passed() || !strings.Contains(why, "they vary different pins") || !strings.Contains(why, `tier interactive differs: "interactive: ttft_ms.p90 <= 2000" vs "interactive: ttft_ms.p90 <= 1000"`) {
		t.Errorf("%q", why)
	}
	if g := Gate(sample(t), sample(t), stats.Default()); !g.Passed() || len(g.Incomparable) > 0 {
		t.Errorf("a file against itself: %+v", g)
	}
}

// Two rate searches that share no value differ in the rate they vary
// and in nothing else: they compare.
func TestIncomparableRates(t *testing.T) {
	t.Parallel()
	at := func(rate float64) *File {
		f := sample(t)
		f.Plan.Axis = Axis{Kind: AxisRate, Pin: "concurrency.rate", Min: 0.5, Max: 64, Resolution: 0.1}
		f.Points = f.Points[:1]
		run := *f.Points[0].Run
		run.Pins.Concurrency.Declared = scenario.ConcurrencyDeclared{Mode: scenario.ModeOpen, RateRPS: rate, Arrival: "poisson"}
		f.Points[0].Run, f.Points[0].Value = &run, rate
		return f
	}
	if why := Incomparable(at(1), at(2), stats.Default()); len(why) > 0 {
		t.Errorf("%q", why)
	}
}
