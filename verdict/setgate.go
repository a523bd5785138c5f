package verdict

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/stats"
)

// SetGateResult is a gate's verdict on a current set against baseline
// sets, point by point.
type SetGateResult struct {
	// BaselineName names the baseline set files as given; Baseline holds
	// them (several sets of one sweep are several runs at each point).
	BaselineName string
	Baseline     []SetInput
	Current      SetInput
	Stats        stats.Settings
	// Incomparable says why the sets cannot be gated point by point
	// (another kind, another swept pin); then Points is empty.
	Incomparable []string
	Points       []PointGate
}

// PointGate is one point's gate. Gate is nil when the point is in one set
// only: Missing then says so, and a point the current set lacks fails
// (a point not measured is no pass) while one the baseline lacks is not
// evaluated (there is nothing to gate it against).
type PointGate struct {
	Point   Point
	Gate    *GateResult
	Missing string
	// Absent is true when the current set lacks the point.
	Absent bool
}

// Failed reports whether the point fails: it regressed, or the current
// set lacks it.
func (pg PointGate) Failed() bool { return pg.Absent || pg.Gate != nil && len(pg.Gate.Failed()) > 0 }

// Passed reports whether the point was gated and passed.
func (pg PointGate) Passed() bool { return pg.Gate != nil && pg.Gate.Passed() }

// GateSets gates current against the baseline sets (named baseName) point
// by point: every rule at every point, as GateRuns gates runs — one
// baseline set gives one run at each point, several give several, and
// the rules then judge the spread between them. The sets must be of one
// kind and sweep one pin, else the result is incomparable; a baseline
// point the current set lacks fails, a current point the baseline lacks
// is not evaluated.
func GateSets(baseName string, baseline []SetInput, current SetInput, rules []Rule, st stats.Settings) (*SetGateResult, error) {
	if err := st.Validate(); err != nil {
		return nil, err
	}
	if len(baseline) == 0 {
		return nil, fmt.Errorf("gate: no baseline set")
	}
	g := &SetGateResult{BaselineName: baseName, Baseline: baseline, Current: current, Stats: st}
	c := current.Set
	for _, bs := range baseline {
		b, name := bs.Set, ""
		if len(baseline) > 1 {
			name = " " + bs.Name
		}
		switch {
		case b.Kind != c.Kind:
			g.Incomparable = append(g.Incomparable, fmt.Sprintf("the baseline%s is %s, the current set %s", name, kindName(b.Kind), kindName(c.Kind)))
		case b.Pin != c.Pin:
			g.Incomparable = append(g.Incomparable, fmt.Sprintf("the baseline%s sweeps %s, the current set %s", name, b.Pin, c.Pin))
		}
	}
	if len(g.Incomparable) > 0 {
		return g, nil
	}
	cur := map[string]Point{}
	for _, p := range Points(c) {
		cur[p.Key] = p
	}
	// The baseline's points in order of first appearance, each with the
	// runs the baseline sets hold at it.
	var order []Point
	runs := map[string][]Input{}
	for _, bs := range baseline {
		for _, p := range Points(bs.Set) {
			if _, seen := runs[p.Key]; !seen {
				order = append(order, p)
			}
			runs[p.Key] = append(runs[p.Key], Input{Name: bs.Name + "#" + p.Key, Run: p.Run})
		}
	}
	for _, bp := range order {
		cp, ok := cur[bp.Key]
		delete(cur, bp.Key)
		if !ok {
			g.Points = append(g.Points, PointGate{Point: bp, Absent: true,
				Missing: "the current set has no point " + bp.Label + ": a point not measured is not a pass"})
			continue
		}
		pg, err := GateRuns(Sample{Name: baseName + "#" + bp.Key, Runs: runs[bp.Key]},
			Sample{Name: current.Name + "#" + cp.Key, Runs: []Input{{Name: current.Name + "#" + cp.Key, Run: cp.Run}}}, rules, st)
		if err != nil {
			return nil, err
		}
		g.Points = append(g.Points, PointGate{Point: bp, Gate: pg})
	}
	for _, cp := range Points(c) {
		if _, extra := cur[cp.Key]; extra {
			g.Points = append(g.Points, PointGate{Point: cp,
				Missing: "the baseline has no point " + cp.Label + ": nothing to gate it against"})
		}
	}
	return g, nil
}

// Comparable reports whether the sets and every point gated could be
// compared.
func (g *SetGateResult) Comparable() bool {
	if len(g.Incomparable) > 0 {
		return false
	}
	for _, p := range g.Points {
		if p.Gate != nil && !p.Gate.Comparable() {
			return false
		}
	}
	return true
}

// IncomparableReasons lists why the sets, or which points, cannot be
// compared.
func (g *SetGateResult) IncomparableReasons() []string {
	why := append([]string(nil), g.Incomparable...)
	for _, p := range g.Points {
		if p.Gate != nil && !p.Gate.Comparable() {
			why = append(why, p.Point.Label+": "+strings.Join(p.Gate.Incomparable, "; "))
		}
	}
	return why
}

// Failed returns the points that failed.
func (g *SetGateResult) Failed() []PointGate {
	var out []PointGate
	for _, p := range g.Points {
		if p.Failed() {
			out = append(out, p)
		}
	}
	return out
}

// Passed reports whether the sets were comparable and every point was
// gated and passed.
func (g *SetGateResult) Passed() bool {
	if !g.Comparable() || len(g.Points) == 0 {
		return false
	}
	for _, p := range g.Points {
		if !p.Passed() {
			return false
		}
	}
	return true
}
