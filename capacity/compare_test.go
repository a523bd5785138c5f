package capacity

import (
	"math"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
)

// Files side by side: each tier's N* with its change read as the gate
// reads it (a drop, a rise, the same, overlapping intervals; nothing for a
// tier one file lacks), and the curve value by value, the mean of a
// value's valid runs, its invalid ones counted apart.
func TestCompare(t *testing.T) {
	t.Parallel()
	base, cur, other := sample(t), sample(t), sample(t)
	cur.Answers[0] = Answer{Tier: "interactive", Kind: Found, Lo: 1, HasLo: true, Hi: 2, HasHi: true}
	other.Answers[0] = Answer{Tier: "interactive", Kind: Interval, Lo: 1, HasLo: true, Hi: 4, HasHi: true}
	for i := len(cur.Points) - 1; i >= 0; i-- {
		if cur.Points[i].Value == 2 {
			cur.Points[i].Valid = false // the confirmation at 2
			break
		}
	}
	c, err := Compare([]Input{{"a.json", base}, {"b.json", cur}, {"c.json", other}}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Comparable() || c.MismatchSummary() != "" {
		t.Fatalf("incomparable: %s", c.MismatchSummary())
	}
	if len(c.Tiers) != 1 || c.Tiers[0].Cells[0].Change != "" || c.Tiers[0].Cells[1].Change != "drop" || c.Tiers[0].Cells[2].Change != "overlap" {
		t.Errorf("tiers %+v", c.Tiers)
	}
	var values []float64
	for _, r := range c.Curve {
		values = append(values, r.Value)
	}
	if len(values) != 4 || values[0] != 1 || values[1] != 2 || values[2] != 3 || values[3] != 4 {
		t.Fatalf("curve values %v, want 1, 2, 3, 4", values)
	}
	// The sample runs 2 twice (found, then confirmed) with the same run:
	// the mean is its figure.
	at2 := c.Curve[1]
	want := base.Points[0].Curve.AggregateTokS
	if a := at2.Cells[0]; a.Runs != 2 || a.Invalid != 0 || math.Abs(a.Mean.AggregateTokS-want) > 1e-9 {
		t.Errorf("A at 2: %+v, want 2 runs of %v", a, want)
	}
	if b := at2.Cells[1]; b.Runs != 1 || b.Invalid != 1 || !b.HasChange || math.Abs(b.Change) > 1e-9 {
		t.Errorf("B at 2: %+v, want 1 valid run, 1 invalid, no change", b)
	}
}

// A tier judged by other conditions, a pin other than the varied one, or
// no shared tier makes files incomparable, each named; an axis of another
// kind is no comparison at all; a point's figures that are not numbers
// count as zero in the mean.
func TestCompareRefuses(t *testing.T) {
	t.Parallel()
	base, cur := sample(t), sample(t)
	cur.Plan.Tiers[0].Conditions[0].Bound = 1000
	cur.Plan.MinSteadyS, base.Plan.MinSteadyS = 20, 3
	for i := range cur.Points {
		run := *cur.Points[i].Run
		pins := run.Pins
		pins.Model.Declared.Name = "other-model"
		run.Pins = pins
		cur.Points[i].Run = &run
	}
	c, err := Compare([]Input{{"a.json", base}, {"b.json", cur}}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	why := c.MismatchSummary()
	for _, want := range []string{"a.json vs b.json: ", `tier interactive differs: "interactive: ttft_ms.p90 <= 2000" vs "interactive: ttft_ms.p90 <= 1000"`, "model: "} {
		if c.Comparable() || !strings.Contains(why, want) {
			t.Errorf("summary %q lacks %q", why, want)
		}
	}
	if len(c.Plan[1]) != 1 || !strings.Contains(c.Plan[1][0], "a pass needed 20 s of steady state, not 3 s") {
		t.Errorf("plan differences %q", c.Plan[1])
	}
	rate := sample(t)
	rate.Plan.Axis = Axis{Kind: AxisRate, Pin: "concurrency.rate", Min: 0.1, Max: 10, Resolution: 0.1}
	if _, err := Compare([]Input{{"a.json", base}, {"r.json", rate}}, stats.Default()); err == nil || !strings.Contains(err.Error(), "a.json searches streams and r.json rate") {
		t.Errorf("an axis of another kind: %v", err)
	}
	if _, err := Compare([]Input{{"a.json", base}}, stats.Default()); err == nil {
		t.Error("one file compared")
	}
	nan := sample(t)
	for i := range nan.Points {
		nan.Points[i].Curve.AggregateTokS = math.NaN()
	}
	c, err = Compare([]Input{{"a.json", base}, {"n.json", nan}}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Curve {
		if n := r.Cells[1]; n.Mean.AggregateTokS != 0 || n.HasChange && n.Change != -1 {
			t.Errorf("NaN figures at %v: %+v", r.Value, n)
		}
	}
}
