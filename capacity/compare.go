package capacity

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/verdict"
)

// Input is a capacity file and the name it was given by (its path).
type Input struct {
	Name string
	File *File
}

// Comparison is capacity searches side by side, each against the first
// (the reference): N* per tier with its change, and the curve's points
// value by value. It is data; report words it.
type Comparison struct {
	Files []Input
	// Incomparable[i] says why file i cannot be compared with the
	// reference (Incomparable[0] is always empty): the pin it varies, a
	// tier of the same name judged by other conditions, no tier shared,
	// or a pin other than the varied one that differs.
	Incomparable [][]string
	// Plan[i] notes how file i's search was run differently from the
	// reference's in ways that move N* without being pins: the range
	// searched, the steady stretch a pass needs, a point's longest run.
	Plan [][]string
	// Tiers is every tier of any file, the reference's first, in order.
	Tiers []TierRow
	// Curve is every value any file ran, ascending.
	Curve []CurveRow
}

// TierRow is one tier across the files.
type TierRow struct {
	Tier  string
	Cells []TierCell
}

// TierCell is one file's answer for a tier and, after the first file,
// its change against the reference's.
type TierCell struct {
	// Has is false when the file has no such tier.
	Has    bool
	Answer Answer
	// Range is the N* the answer allows (RangeOf).
	Range Range
	// Change is how N* moved from the reference's, as the gate reads it:
	// "drop", "rise", "same", "overlap" (the intervals overlap: no change
	// can be told), or "" (the first file, or a tier missing or not
	// measured on either side).
	Change string
}

// CurveRow is one value of the axis across the files.
type CurveRow struct {
	Value float64
	Cells []CurveCell
}

// CurveCell is one file's runs at a value: how many were valid (and
// measured whole) and invalid, the mean of the valid ones' curve
// figures, and, after the first file, the relative change of the mean
// aggregate tok/s against the reference's (HasChange false when either
// has no valid run there or the reference's is zero).
type CurveCell struct {
	Runs, Invalid int
	Mean          Curve
	Change        float64
	HasChange     bool
}

// Comparable reports whether every file can be compared with the
// reference.
func (c *Comparison) Comparable() bool {
	for _, why := range c.Incomparable {
		if len(why) > 0 {
			return false
		}
	}
	return true
}

// MismatchSummary says why files cannot be compared, one line per file
// against the reference, the reference's value first: "a.json vs b.json:
// prompt: 40 tokens vs 80 tokens; tier tight differs: …".
func (c *Comparison) MismatchSummary() string {
	var lines []string
	for i, why := range c.Incomparable {
		if len(why) > 0 {
			lines = append(lines, fmt.Sprintf("%s vs %s: %s", c.Files[0].Name, c.Files[i].Name, strings.Join(why, "; ")))
		}
	}
	return strings.Join(lines, "\n")
}

// Compare sets capacity files side by side, each against the first. It
// compares even when files are incomparable (Incomparable says why, as
// Incomparable does for the gate); callers decide whether to show it.
// Every file must vary the same kind of axis: N* in sessions against N*
// in req/s is no comparison, and that is an error.
func Compare(files []Input, st stats.Settings) (*Comparison, error) {
	if len(files) < 2 {
		return nil, fmt.Errorf("compare: need at least two capacity files (got %d)", len(files))
	}
	c := &Comparison{Files: files, Incomparable: make([][]string, len(files)), Plan: make([][]string, len(files))}
	ref := files[0].File
	for i := 1; i < len(files); i++ {
		f := files[i].File
		if f.Plan.Axis.Kind != ref.Plan.Axis.Kind {
			return nil, fmt.Errorf("compare: %s searches %s and %s %s: N* in one unit is no comparison with N* in the other",
				files[0].Name, ref.Plan.Axis.Kind, files[i].Name, f.Plan.Axis.Kind)
		}
		c.Incomparable[i] = Incomparable(ref, f, st)
		c.Plan[i] = planDifferences(ref.Plan, f.Plan)
	}
	var tiers []string
	for _, in := range files {
		for _, t := range in.File.Plan.Tiers {
			if !slices.Contains(tiers, t.Name) {
				tiers = append(tiers, t.Name)
			}
		}
	}
	for _, name := range tiers {
		row := TierRow{Tier: name, Cells: make([]TierCell, len(files))}
		for i, in := range files {
			j := slices.IndexFunc(in.File.Answers, func(a Answer) bool { return a.Tier == name })
			if j < 0 {
				continue
			}
			a := in.File.Answers[j]
			row.Cells[i] = TierCell{Has: true, Answer: a, Range: RangeOf(in.File.Plan.Axis, a)}
			if ref := row.Cells[0]; i > 0 && ref.Has {
				_, row.Cells[i].Change = change(ref.Answer, a, ref.Range, row.Cells[i].Range)
			}
		}
		c.Tiers = append(c.Tiers, row)
	}
	var values []float64
	for _, in := range files {
		for _, p := range in.File.Points {
			if !slices.Contains(values, p.Value) {
				values = append(values, p.Value)
			}
		}
	}
	slices.Sort(values)
	for _, v := range values {
		row := CurveRow{Value: v, Cells: make([]CurveCell, len(files))}
		for i, in := range files {
			row.Cells[i] = curveAt(in.File, v)
			if ref := row.Cells[0]; i > 0 && ref.Runs > 0 && row.Cells[i].Runs > 0 && ref.Mean.AggregateTokS > 0 {
				row.Cells[i].Change = row.Cells[i].Mean.AggregateTokS/ref.Mean.AggregateTokS - 1
				row.Cells[i].HasChange = true
			}
		}
		c.Curve = append(c.Curve, row)
	}
	return c, nil
}

// change is how a tier's N* moved from base (allowing br) to cur
// (allowing cr), and the gate's status for it: a drop fails; a rise, the
// same N* or overlapping intervals pass; an unmeasured side is not
// evaluated.
func change(base, cur Answer, br, cr Range) (verdict.Status, string) {
	switch {
	case base.Kind == Unmeasured || cur.Kind == Unmeasured:
		return verdict.NotEvaluated, ""
	case cr.Hi < br.Lo:
		return verdict.Fail, "drop"
	case cr.Lo > br.Hi:
		return verdict.Pass, "rise"
	case cr == br:
		return verdict.Pass, "same"
	}
	return verdict.Pass, "overlap"
}

// curveAt is f's runs at value v: the mean curve of the valid ones
// (measured whole), and how many were invalid. A figure that is not a
// finite number counts as zero.
func curveAt(f *File, v float64) CurveCell {
	var c CurveCell
	for _, p := range f.Points {
		if p.Value != v {
			continue
		}
		if !p.Valid || p.Run == nil || p.Run.Incomplete {
			c.Invalid++
			continue
		}
		c.Runs++
		sum := c.Mean.figures()
		for k, v := range p.Curve.figures() {
			if !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				*sum[k] += *v
			}
		}
	}
	if c.Runs > 1 {
		for _, v := range c.Mean.figures() {
			*v /= float64(c.Runs)
		}
	}
	return c
}

// figures are c's figures, in order, to sum and scale them alike.
func (c *Curve) figures() []*float64 {
	return []*float64{&c.AggregateTokS, &c.EffectiveP50TokS, &c.DecodeP50TokS, &c.TPOTP90Ms, &c.TPSPerUser, &c.TTFTP90Ms,
		&c.CompletedRPS, &c.MeanInFlight}
}

// planDifferences says how b's search was run differently from a's in
// what moves N* without being a pin.
func planDifferences(a, b Plan) []string {
	var out []string
	if a.Axis.Min != b.Axis.Min || a.Axis.Max != b.Axis.Max {
		out = append(out, fmt.Sprintf("searched between %s and %s, not %s and %s (a bound such as N* ≥ max moves with it)",
			trim(b.Axis.Min), trim(b.Axis.Max), trim(a.Axis.Min), trim(a.Axis.Max)))
	}
	if a.Axis.Resolution != b.Axis.Resolution {
		out = append(out, fmt.Sprintf("resolution %s, not %s", trim(b.Axis.Resolution), trim(a.Axis.Resolution)))
	}
	if a.MinSteadyS != b.MinSteadyS {
		out = append(out, fmt.Sprintf("a pass needed %s s of steady state, not %s s", trim(b.MinSteadyS), trim(a.MinSteadyS)))
	}
	if a.PointS != b.PointS {
		out = append(out, fmt.Sprintf("a point ran at most %s s, not %s s", trim(b.PointS), trim(a.PointS)))
	}
	return out
}
