package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
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

// setGateHeadline is the set gate's one-line verdict: its outcome, then
// the baseline it judged against (runs per point, their spread).
func setGateHeadline(g *SetGateResult) string {
	n := len(g.Points)
	switch {
	case !g.Comparable():
		return "INCOMPARABLE — " + strings.Join(g.IncomparableReasons(), "; ")
	case g.Passed():
		rules := 0
		if p := g.Points[0]; p.Gate != nil {
			rules = len(p.Gate.Checks)
		}
		return fmt.Sprintf("PASS — %s, %d rules each, no regression; %s", numfmt.Count(n, "point", ""), rules, setBaselineWords(g))
	}
	failed := g.Failed()
	if len(failed) == 0 {
		var names []string
		for _, p := range g.Points {
			if !p.Passed() {
				names = append(names, p.Point.Label)
			}
		}
		return fmt.Sprintf("NOT EVALUATED — %d of %d points could not be evaluated: %s; %s", len(names), n, strings.Join(names, "; "), setBaselineWords(g))
	}
	verb, absent := "regressed", false
	var names []string
	for _, p := range failed {
		if p.Absent {
			absent = true
			names = append(names, p.Point.Label+" (missing from the current set)")
		} else {
			names = append(names, p.Point.Label)
		}
	}
	if absent {
		verb = "failed"
	}
	return fmt.Sprintf("FAIL — %d of %d points %s: %s; %s", len(failed), n, verb, strings.Join(names, "; "), setBaselineWords(g))
}

// setBaselineWords names the baseline of a set gate: "baseline 1 set, so
// no spread between runs: …" or "baseline 3 sets (3 runs per point),
// between-run sd 0.2–2.1% of the mean, by rule".
func setBaselineWords(g *SetGateResult) string {
	sets := numfmt.Count(len(g.Baseline), "set", "")
	if len(g.Baseline) == 1 {
		return "baseline " + sets + ", so no spread between runs: intervals from within each run"
	}
	var checks []Check
	lo, hi := len(g.Baseline), 0
	for _, p := range g.Points {
		if p.Gate != nil {
			checks = append(checks, p.Gate.Checks...)
			lo, hi = min(lo, len(p.Gate.Baseline.Runs)), max(hi, len(p.Gate.Baseline.Runs))
		}
	}
	per := strconv.Itoa(hi)
	if lo < hi {
		per = strconv.Itoa(lo) + "–" + per
	}
	return "baseline " + sets + " (" + per + " runs per point), " + spreadWords(checks)
}

// WriteSetGateText writes g for a terminal or CI log: each point's gate
// as WriteGateText writes one, then the set's verdict.
func WriteSetGateText(w io.Writer, g *SetGateResult) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin gate — current set against baseline set, point by point\n")
	p.F("  baseline  %s\n  current   %s\n", g.BaselineName, g.Current.Name)
	if len(g.Incomparable) > 0 {
		p.F("\nThe sets cannot be gated point by point:\n")
		for _, s := range g.Incomparable {
			p.F("  ✗ %s\n", s)
		}
	}
	for _, pg := range g.Points {
		p.F("\n══ %s ══\n", pg.Point.Label)
		switch {
		case pg.Gate != nil:
			writeGateTextBody(p, pg.Gate, "POINT")
		case pg.Absent:
			p.F("  FAIL  %s\n", pg.Missing)
		default:
			p.F("  NOT EVALUATED  %s\n", pg.Missing)
		}
	}
	p.F("\nRESULT: %s\n", setGateHeadline(g))
	return p.Err
}

// WriteSetGateMarkdown writes g as Markdown: the set's verdict, then a
// section per point.
func WriteSetGateMarkdown(w io.Writer, g *SetGateResult) error {
	p := &numfmt.Printer{W: w}
	n := len(g.Points)
	switch {
	case !g.Comparable():
		p.F("## sixpin gate: ⚠️ INCOMPARABLE\n\n")
	case g.Passed():
		p.F("## sixpin gate: ✅ PASS (%s)\n\n", numfmt.Count(n, "point", ""))
	case len(g.Failed()) == 0:
		p.F("## sixpin gate: ⚠️ NOT EVALUATED\n\n")
	default:
		p.F("## sixpin gate: ❌ FAIL (%d of %d points)\n\n", len(g.Failed()), n)
	}
	p.F("Current set `%s` against baseline set `%s`, point by point.\n\n**%s**\n", g.Current.Name, g.BaselineName, mdCell(setGateHeadline(g)))
	for _, s := range g.Incomparable {
		p.F("\n- ✗ %s\n", mdCell(s))
	}
	for _, pg := range g.Points {
		p.F("\n### %s\n\n", pg.Point.Label)
		switch {
		case pg.Gate != nil:
			writeGateMarkdownBody(p, pg.Gate)
		case pg.Absent:
			p.F("❌ %s\n", mdCell(pg.Missing))
		default:
			p.F("⚠️ %s\n", mdCell(pg.Missing))
		}
	}
	return p.Err
}

// WriteSetGateJUnit writes g as JUnit XML: a testsuite per point (a point
// in one set only is one testcase, failed).
func WriteSetGateJUnit(w io.Writer, g *SetGateResult) error {
	ss := &junitSuites{Name: "sixpin gate"}
	if len(g.Incomparable) > 0 {
		s := junitSuite{Name: "sixpin gate: sets"}
		s.add(junitCase{Name: "sets comparable", Classname: "sixpin.gate",
			Failure: &junitMessage{Message: strings.Join(g.Incomparable, "; "), Type: "incomparable"}})
		ss.add(s)
	}
	for _, pg := range g.Points {
		name := "sixpin gate: " + pg.Point.Label
		if pg.Gate != nil {
			ss.add(gateSuite(pg.Gate, name))
			continue
		}
		s := junitSuite{Name: name}
		c := junitCase{Name: "point in both sets", Classname: "sixpin.gate", SystemOut: pg.Missing}
		typ := "not-evaluated"
		if pg.Absent {
			typ = "missing"
		}
		c.Failure = &junitMessage{Message: pg.Missing, Type: typ}
		s.add(c)
		ss.add(s)
	}
	return writeJUnitXML(w, ss)
}
