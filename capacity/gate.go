package capacity

import (
	"fmt"
	"math"
	"slices"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/verdict"
)

// Range is what an answer allows N* to be: [Lo, Hi], Hi +Inf when the
// tier passed at the largest value tried, Lo and Hi below Min (0) when it
// failed at the smallest.
type Range struct{ Lo, Hi float64 }

// RangeOf is the values a's N* may take on axis ax: N* itself when
// found; from the largest pass (else Min less a step: nothing passed)
// to one step below the smallest failure (else +Inf) otherwise.
func RangeOf(ax Axis, a Answer) Range {
	switch a.Kind {
	case Found:
		return Range{a.Lo, a.Lo}
	case FailsAtMin:
		return Range{0, 0}
	case Unmeasured:
		return Range{0, math.Inf(1)}
	}
	r := Range{0, math.Inf(1)}
	if a.HasLo {
		r.Lo = a.Lo
	}
	if a.HasHi {
		r.Hi = a.Hi
		if ax.Integer() {
			r.Hi = a.Hi - 1
		}
	}
	return r
}

// TierChange is one tier's answer in a baseline and a current search,
// and the gate's verdict on it.
type TierChange struct {
	Tier              string
	Baseline, Current Answer
	// BaseRange and CurRange are the N* each allows.
	BaseRange, CurRange Range
	// Status is verdict.Fail when the current N* lies wholly below the
	// baseline's (a drop beyond both answers' intervals), verdict.Pass
	// otherwise, verdict.NotEvaluated when the tier is missing from one.
	Status verdict.Status
	// Change says which way it went: "drop", "rise", "same", "overlap"
	// (the intervals overlap: no change can be told).
	Change string
}

// GateResult is the gate's verdict on a current capacity search against a
// baseline: incomparable (differing pins, axes or tiers), or a change
// per tier.
type GateResult struct {
	Incomparable []string
	Tiers        []TierChange
}

// Passed reports whether the files were comparable and no tier dropped
// or went unevaluated.
func (g *GateResult) Passed() bool {
	if len(g.Incomparable) > 0 {
		return false
	}
	for _, t := range g.Tiers {
		if t.Status != verdict.Pass {
			return false
		}
	}
	return true
}

// Gate compares cur against base tier by tier. They must vary the same
// pin over the same kind of axis, declare the same conditions for the
// tiers they share, and hold every other pin alike (verdict.PinMismatches
// on a run of each, at the same value when both ran one; the concurrency
// pin itself is what varies). A tier fails when the current N* lies wholly
// below the baseline's, each answer taken with its interval: a found N*
// is exact, an interval (the budget ran out) allows every value in it.
func Gate(base, cur *File, st stats.Settings) *GateResult {
	g := &GateResult{Incomparable: Incomparable(base, cur, st)}
	if len(g.Incomparable) > 0 {
		return g
	}
	for _, b := range base.Answers {
		tc := TierChange{Tier: b.Tier, Baseline: b, BaseRange: RangeOf(base.Plan.Axis, b), Status: verdict.NotEvaluated}
		i := slices.IndexFunc(cur.Answers, func(a Answer) bool { return a.Tier == b.Tier })
		if i >= 0 {
			c := cur.Answers[i]
			tc.Current, tc.CurRange = c, RangeOf(cur.Plan.Axis, c)
			tc.Status, tc.Change = change(b, c, tc.BaseRange, tc.CurRange)
		}
		g.Tiers = append(g.Tiers, tc)
	}
	return g
}

// Incomparable says why two capacity files cannot be compared ("" none):
// different axes, tiers of one name with different conditions, or pins
// (other than the one varied) that differ.
func Incomparable(a, b *File, st stats.Settings) []string {
	var why []string
	if a.Plan.Axis.Kind != b.Plan.Axis.Kind || a.Plan.Axis.Pin != b.Plan.Axis.Pin {
		why = append(why, fmt.Sprintf("they vary different pins: %s (%s) vs %s (%s)", a.Plan.Axis.Pin, a.Plan.Axis.Kind, b.Plan.Axis.Pin, b.Plan.Axis.Kind))
	}
	shared := 0
	for _, ta := range a.Plan.Tiers {
		for _, tb := range b.Plan.Tiers {
			if ta.Name == tb.Name {
				shared++
				if ta.String() != tb.String() {
					why = append(why, fmt.Sprintf("tier %s differs: %q vs %q", ta.Name, ta.String(), tb.String()))
				}
			}
		}
	}
	if shared == 0 {
		why = append(why, "they share no tier")
	}
	ra, rb := pairedRuns(a, b)
	if ra != nil && rb != nil {
		for _, m := range verdict.PinMismatches(ra.Run, rb.Run, st) {
			if ra.Value != rb.Value && m.Pin == variedPin(a.Plan.Axis) {
				continue // the pin the searches vary
			}
			why = append(why, m.String())
		}
	}
	return why
}

// variedPin is the name verdict.PinMismatches gives the pin axis a
// varies: "concurrency" (streams, sessions) or "concurrency rate".
func variedPin(a Axis) string {
	if a.Kind == AxisRate {
		return "concurrency rate"
	}
	return "concurrency"
}

// pairedRuns are a point of each file at the same value when they share
// one, else each file's first point (nil when either has none).
func pairedRuns(a, b *File) (*Point, *Point) {
	for i := range a.Points {
		for j := range b.Points {
			if a.Points[i].Value == b.Points[j].Value && a.Points[i].Run != nil && b.Points[j].Run != nil {
				return &a.Points[i], &b.Points[j]
			}
		}
	}
	if len(a.Points) == 0 || len(b.Points) == 0 || a.Points[0].Run == nil || b.Points[0].Run == nil {
		return nil, nil
	}
	return &a.Points[0], &b.Points[0]
}
