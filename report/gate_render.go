package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// checkValue formats a check's figure in one run.
func checkValue(c verdict.Check, v float64, ok bool) string {
	if c.Rule.Kind == verdict.Validity {
		return ""
	}
	if !ok {
		return "–"
	}
	f := c.Rule.Ref().Figure
	s := fmtValue(v, f.Fraction)
	if f.Unit != "" && f.Unit != "%" && !f.Fraction {
		s += " " + f.Unit
	}
	return s
}

// checkChange formats a check's change (relative rules) or "".
func checkChange(c verdict.Check) string {
	if (c.Rule.Kind != verdict.MaxIncrease && c.Rule.Kind != verdict.MaxDecrease) || !c.HasBaseline || !c.HasCurrent {
		return ""
	}
	return fmtChange(c.Change)
}

// checkInterval formats a check's interval: of the change for relative
// rules, of the current value for absolute ones.
func checkInterval(c verdict.Check) string {
	switch {
	case c.Rule.Kind == verdict.Validity || !c.HasCurrent || c.Status == verdict.NotEvaluated:
		return ""
	case !c.Interval.Known:
		return "no interval"
	case c.Rule.Kind == verdict.MaxIncrease || c.Rule.Kind == verdict.MaxDecrease:
		return fmtInterval(c.Interval)
	}
	f := c.Rule.Ref().Figure.Fraction
	return "[" + fmtValue(c.Interval.Lo, f) + ", " + fmtValue(c.Interval.Hi, f) + "]"
}

func statusWord(s verdict.Status) string { return strings.ToUpper(string(s)) }

// gateHeadline is the gate's one-line verdict: its outcome, then the
// baseline it judged against (how many runs, their spread).
func gateHeadline(g *verdict.GateResult) string {
	switch {
	case !g.Comparable():
		return "INCOMPARABLE — the runs' pins differ: " + strings.Join(g.Incomparable, "; ")
	case g.Passed():
		return fmt.Sprintf("PASS — %d rules, no regression; %s", len(g.Checks), baselineWords(g))
	case len(g.Failed()) == 0:
		var names []string
		for _, c := range g.NotEvaluated() {
			names = append(names, c.Rule.Key)
		}
		return fmt.Sprintf("NOT EVALUATED — %d of %d rules could not be evaluated: %s; %s", len(names), len(g.Checks), strings.Join(names, "; "), baselineWords(g))
	}
	var names []string
	for _, c := range g.Failed() {
		n := c.Rule.Key
		if ch := checkChange(c); ch != "" {
			n += " " + ch
		}
		if sd := checkSpread(c); sd != "" {
			n += " (between-run sd " + sd + ")"
		}
		names = append(names, n)
	}
	return fmt.Sprintf("FAIL — %d of %d rules regressed: %s; %s", len(names), len(g.Checks), strings.Join(names, "; "), baselineWords(g))
}

// baselineWords names what the gate judged against: "baseline 1 run: …"
// or "baseline 5 runs, between-run sd 0.2–2.1% of the mean, by rule".
func baselineWords(g *verdict.GateResult) string {
	n := numfmt.Count(len(g.Baseline.Runs), "run", "")
	if !g.BetweenRuns() {
		return "baseline " + n + ", so no spread between runs: intervals from within each run"
	}
	s := "baseline " + n
	if k := len(g.Current.Runs); k > 1 {
		s += ", current " + numfmt.Count(k, "run", "")
	}
	return s + ", " + spreadWords(g.Checks)
}

// spreadWords is the range of the checks' spread between runs:
// "between-run sd 0.2–2.1% of the mean, by rule".
func spreadWords(checks []verdict.Check) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range checks {
		if sd := c.RelSpread(); !math.IsNaN(sd) {
			lo, hi = min(lo, sd), max(hi, sd)
		}
	}
	switch {
	case math.IsInf(lo, 1):
		return "between-run spread unknown (too few runs have the figures)"
	case pct(lo) == pct(hi):
		return "between-run sd " + pct(hi) + " of the mean"
	}
	return "between-run sd " + strings.TrimSuffix(pct(lo), "%") + "–" + pct(hi) + " of the mean, by rule"
}

// checkSpread formats verdict.Check.RelSpread: "1.8%", or "".
func checkSpread(c verdict.Check) string {
	if sd := c.RelSpread(); !math.IsNaN(sd) {
		return pct(sd)
	}
	return ""
}

// sampleIdentity is a side's runs in one phrase: one run's identity, or
// "5 runs of smoke (seeds 7, 8, 9, 10, 11) · target".
func sampleIdentity(s verdict.Sample) string {
	first := s.Runs[0].Run
	if len(s.Runs) == 1 {
		return runIdentity(first)
	}
	var seeds []string
	invalid := 0
	for _, in := range s.Runs {
		if sd := strconv.FormatInt(in.Run.Scenario.Seed, 10); !slices.Contains(seeds, sd) {
			seeds = append(seeds, sd)
		}
		if !in.Run.Valid {
			invalid++
		}
	}
	seedWord := "seed "
	if len(seeds) > 1 {
		seedWord = "seeds "
	}
	id := fmt.Sprintf("%d runs of %s (%s%s) · %s", len(s.Runs), first.Scenario.Name, seedWord, strings.Join(seeds, ", "), TargetLabel(first.Target))
	if first.Target.Simulated {
		id += " [SIMULATED]"
	}
	if invalid > 0 {
		id += fmt.Sprintf(" [%d INVALID]", invalid)
	}
	return id
}

// gateMethod says how the gate judged significance, in a sentence.
func gateMethod(g *verdict.GateResult) string {
	st := g.Stats
	if g.BetweenRuns() {
		return fmt.Sprintf("A rule fails only when its figure is beyond the tolerance AND the difference is significant at %s against the spread between runs "+
			"(Student's two-sample t-test, pooled variance; for one current run, outside the baseline runs' %s prediction interval).",
			pct(st.Confidence), pct(st.Confidence))
	}
	return fmt.Sprintf("A rule fails only when its figure is beyond the tolerance AND the difference is significant at %s (%s resamples, seed %d) "+
		"within each run: one run a side cannot show the noise between runs.",
		pct(st.Confidence), group(float64(st.Resamples)), st.Seed)
}

// sideHeads head the baseline and current columns: "baseline mean" for a
// side of several runs.
func sideHeads(g *verdict.GateResult) (base, cur string) {
	base, cur = "baseline", "current"
	if len(g.Baseline.Runs) > 1 {
		base += " mean"
	}
	if len(g.Current.Runs) > 1 {
		cur += " mean"
	}
	return base, cur
}

// compactCard is the pin card in one line: "✓ model ✓ prompt …".
func compactCard(run *results.Run) string {
	card := PinCard(run)
	var parts []string
	for _, r := range card.Rows {
		parts = append(parts, r.Mark()+" "+r.Pin)
	}
	s := strings.Join(parts, "  ")
	if len(card.Unverified) > 0 {
		s += "  (not verified: " + strings.Join(card.Unverified, ", ") + ")"
	}
	return s
}

// WriteGateText writes g for a terminal or CI log.
func WriteGateText(w io.Writer, g *verdict.GateResult) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin gate — current against baseline\n")
	writeGateTextBody(p, g, "RESULT")
	return p.Err
}

// writeGateTextBody writes the runs, their pins and every check, and the
// verdict after result ("RESULT", or "POINT" for a point of a set).
func writeGateTextBody(p *numfmt.Printer, g *verdict.GateResult, result string) {
	wn := max(len(g.Baseline.Name), len(g.Current.Name))
	p.F("  baseline  %-*s  %s\n", wn, g.Baseline.Name, sampleIdentity(g.Baseline))
	p.F("  current   %-*s  %s\n", wn, g.Current.Name, sampleIdentity(g.Current))
	p.F("Pins of the current run: %s\n", compactCard(g.Current.Runs[0].Run))
	if !g.Comparable() {
		p.F("\nThe runs cannot be compared:\n")
		for _, s := range g.Incomparable {
			p.F("  ✗ %s\n", s)
		}
		p.F("\n%s: %s\n", result, gateHeadline(g))
		return
	}
	p.F("Pins agree within their tolerances.\n\n")
	p.F("%s\n", gateMethod(g))
	sw := 4 // the status column: PASS, FAIL, or NOT EVALUATED
	if len(g.NotEvaluated()) > 0 {
		sw = len(statusWord(verdict.NotEvaluated))
	}
	spread := g.BetweenRuns()
	line := func(status, rule, tol, base, cur, ch, iv, sd, why string) {
		s := fmt.Sprintf("  %-*s  %-32s %-18s %14s %14s %9s  %-22s", sw, status, rule, tol, base, cur, ch, iv)
		if spread {
			s += fmt.Sprintf(" %9s", sd)
		}
		p.F("%s\n", strings.TrimRight(s+" "+why, " "))
	}
	bh, ch := sideHeads(g)
	line("", "rule", "tolerance", bh, ch, "change", "interval", "run sd", "")
	for _, c := range g.Checks {
		line(statusWord(c.Status), c.Rule.Key, c.Rule.Tolerance(), checkValue(c, c.Baseline, c.HasBaseline),
			checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), checkSpread(c), c.Why)
	}
	p.F("\n%s: %s\n", result, gateHeadline(g))
}

// WriteGateMarkdown writes g as Markdown for a pull request or
// $GITHUB_STEP_SUMMARY, with the current run's pin card folded below.
func WriteGateMarkdown(w io.Writer, g *verdict.GateResult) error {
	p := &numfmt.Printer{W: w}
	switch {
	case !g.Comparable():
		p.F("## sixpin gate: ⚠️ INCOMPARABLE\n\n")
	case g.Passed():
		p.F("## sixpin gate: ✅ PASS\n\n")
	case len(g.Failed()) == 0:
		p.F("## sixpin gate: ⚠️ NOT EVALUATED (%d of %d rules)\n\n", len(g.NotEvaluated()), len(g.Checks))
	default:
		p.F("## sixpin gate: ❌ FAIL (%d of %d rules)\n\n", len(g.Failed()), len(g.Checks))
	}
	writeGateMarkdownBody(p, g)
	return p.Err
}

// writeGateMarkdownBody writes the runs, every check, the verdict and the
// current run's pin card.
func writeGateMarkdownBody(p *numfmt.Printer, g *verdict.GateResult) {
	icon := map[bool]string{true: "✅", false: "❌"}
	p.F("Current `%s` — %s\n\nBaseline `%s` — %s\n\n", g.Current.Name, mdCell(sampleIdentity(g.Current)),
		g.Baseline.Name, mdCell(sampleIdentity(g.Baseline)))
	if !g.Comparable() {
		p.F("The runs cannot be compared:\n\n")
		for _, s := range g.Incomparable {
			p.F("- ✗ %s\n", mdCell(s))
		}
	} else {
		p.F("Pins agree within their tolerances. %s\n\n", strings.Replace(gateMethod(g), "AND", "**and**", 1))
		spread := g.BetweenRuns()
		bh, ch := sideHeads(g)
		if spread {
			p.F("| | rule | tolerance | %s | %s | change | interval | run sd | verdict |\n|:-:|---|---|--:|--:|--:|---|--:|---|\n", bh, ch)
		} else {
			p.F("| | rule | tolerance | %s | %s | change | interval | verdict |\n|:-:|---|---|--:|--:|--:|---|---|\n", bh, ch)
		}
		for _, c := range g.Checks {
			mark := icon[c.Status != verdict.Fail]
			if c.Status == verdict.NotEvaluated {
				mark = "⚠️"
			}
			sd := ""
			if spread {
				sd = " " + checkSpread(c) + " |"
			}
			p.F("| %s | `%s` | %s | %s | %s | %s | %s |%s %s |\n", mark, c.Rule.Key, c.Rule.Tolerance(),
				checkValue(c, c.Baseline, c.HasBaseline), checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), sd, mdCell(c.Why))
		}
	}
	p.F("\n**%s**\n\n", mdCell(gateHeadline(g)))
	p.F("<details><summary>Pin card of the current run</summary>\n\n")
	writeMarkdownPinCard(p, PinCard(g.Current.Runs[0].Run))
	p.F("\n</details>\n")
}

// WriteGateJUnit writes g as JUnit XML: one testsuite, a testcase for the
// pins' agreement and one per rule (failed when the rule failed or could
// not be evaluated).
func WriteGateJUnit(w io.Writer, g *verdict.GateResult) error {
	ss := &junitSuites{Name: "sixpin gate"}
	ss.add(gateSuite(g, "sixpin gate"))
	return writeJUnitXML(w, ss)
}

// gateSuite is g as one testsuite named name.
func gateSuite(g *verdict.GateResult, name string) junitSuite {
	s := junitSuite{
		Name:      name,
		Timestamp: g.Current.Runs[0].Run.StartedAt.UTC().Format(time.RFC3339),
		Properties: []junitProperty{
			{"baseline", g.Baseline.Name},
			{"baseline_runs", fmt.Sprint(len(g.Baseline.Runs))},
			{"current", g.Current.Name},
			{"current_runs", fmt.Sprint(len(g.Current.Runs))},
			{"between_runs", fmt.Sprint(g.BetweenRuns())},
			{"confidence", strconv.FormatFloat(g.Stats.Confidence, 'f', -1, 64)},
			{"resamples", fmt.Sprint(g.Stats.Resamples)},
			{"seed", fmt.Sprint(g.Stats.Seed)},
		},
	}
	pins := junitCase{Name: "pins comparable", Classname: "sixpin.gate", SystemOut: compactCard(g.Current.Runs[0].Run)}
	if !g.Comparable() {
		pins.Failure = &junitMessage{Message: "the runs' pins differ: " + strings.Join(g.Incomparable, "; "), Type: "incomparable"}
	}
	s.add(pins)
	for _, c := range g.Checks {
		jc := junitCase{Name: c.Rule.Key + " " + c.Rule.Tolerance(), Classname: "sixpin.gate",
			SystemOut: fmt.Sprintf("baseline %s, current %s, change %s, interval %s%s: %s", checkValue(c, c.Baseline, c.HasBaseline),
				checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), runsWords(c), c.Why)}
		switch c.Status {
		case verdict.Fail:
			jc.Failure = &junitMessage{Message: c.Why, Type: "regression", Text: jc.SystemOut}
		case verdict.NotEvaluated:
			jc.Failure = &junitMessage{Message: c.Why, Type: "not-evaluated", Text: jc.SystemOut}
		}
		s.add(jc)
	}
	return s
}

// runsWords is a check's runs for JUnit's output: ", runs 6.21, 6.35 →
// 6.90 (sd 1.8%)", or "" for a gate of one run each.
func runsWords(c verdict.Check) string {
	if c.Runs == nil {
		return ""
	}
	f := func(vs []float64) string {
		ss := make([]string, len(vs))
		for i, v := range vs {
			ss[i] = fmtValue(v, c.Rule.Ref().Figure.Fraction)
		}
		return strings.Join(ss, ", ")
	}
	s := ", runs " + f(c.Runs.Baseline) + " → " + f(c.Runs.Current)
	if sd := checkSpread(c); sd != "" {
		s += " (between-run sd " + sd + ")"
	}
	return s
}

// setGateHeadline is the set gate's one-line verdict: its outcome, then
// the baseline it judged against (runs per point, their spread).
func setGateHeadline(g *verdict.SetGateResult) string {
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
func setBaselineWords(g *verdict.SetGateResult) string {
	sets := numfmt.Count(len(g.Baseline), "set", "")
	if len(g.Baseline) == 1 {
		return "baseline " + sets + ", so no spread between runs: intervals from within each run"
	}
	var checks []verdict.Check
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
func WriteSetGateText(w io.Writer, g *verdict.SetGateResult) error {
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
func WriteSetGateMarkdown(w io.Writer, g *verdict.SetGateResult) error {
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
func WriteSetGateJUnit(w io.Writer, g *verdict.SetGateResult) error {
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
