package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// checkValue formats a check's figure in one run.
func checkValue(c Check, v float64, ok bool) string {
	if c.Rule.Kind == Validity {
		return ""
	}
	if !ok {
		return "–"
	}
	s := fmtValue(v, c.Rule.fig.Metric.Fraction)
	if u := c.Rule.fig.Metric.Unit; u != "" && u != "%" && !c.Rule.fig.Metric.Fraction {
		s += " " + u
	}
	return s
}

// checkChange formats a check's change (relative rules) or "".
func checkChange(c Check) string {
	if (c.Rule.Kind != MaxIncrease && c.Rule.Kind != MaxDecrease) || !c.HasBaseline || !c.HasCurrent {
		return ""
	}
	return fmtChange(c.Change)
}

// checkInterval formats a check's interval: of the change for relative
// rules, of the current value for absolute ones.
func checkInterval(c Check) string {
	switch {
	case c.Rule.Kind == Validity || !c.HasCurrent || c.Status == NotEvaluated:
		return ""
	case !c.Interval.Known:
		return "no interval"
	case c.Rule.Kind == MaxIncrease || c.Rule.Kind == MaxDecrease:
		return fmtInterval(c.Interval)
	}
	f := c.Rule.fig.Metric.Fraction
	return "[" + fmtValue(c.Interval.Lo, f) + ", " + fmtValue(c.Interval.Hi, f) + "]"
}

func statusWord(s Status) string { return strings.ToUpper(string(s)) }

// gateHeadline is the gate's one-line verdict.
func gateHeadline(g *GateResult) string {
	switch {
	case !g.Comparable():
		return "INCOMPARABLE — the runs' pins differ: " + strings.Join(g.Incomparable, "; ")
	case g.Passed():
		return fmt.Sprintf("PASS — %d rules, no regression", len(g.Checks))
	case len(g.Failed()) == 0:
		var names []string
		for _, c := range g.NotEvaluated() {
			names = append(names, c.Rule.Key)
		}
		return fmt.Sprintf("NOT EVALUATED — %d of %d rules could not be evaluated: %s", len(names), len(g.Checks), strings.Join(names, "; "))
	}
	var names []string
	for _, c := range g.Failed() {
		n := c.Rule.Key
		if ch := checkChange(c); ch != "" {
			n += " " + ch
		}
		names = append(names, n)
	}
	return fmt.Sprintf("FAIL — %d of %d rules regressed: %s", len(names), len(g.Checks), strings.Join(names, "; "))
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
func WriteGateText(w io.Writer, g *GateResult) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin gate — current against baseline\n")
	writeGateTextBody(p, g, "RESULT")
	return p.Err
}

// writeGateTextBody writes the runs, their pins and every check, and the
// verdict after result ("RESULT", or "POINT" for a point of a set).
func writeGateTextBody(p *numfmt.Printer, g *GateResult, result string) {
	wn := max(len(g.Baseline.Name), len(g.Current.Name))
	p.F("  baseline  %-*s  %s\n", wn, g.Baseline.Name, runIdentity(g.Baseline.Run))
	p.F("  current   %-*s  %s\n", wn, g.Current.Name, runIdentity(g.Current.Run))
	p.F("Pins of the current run: %s\n", compactCard(g.Current.Run))
	if !g.Comparable() {
		p.F("\nThe runs cannot be compared:\n")
		for _, s := range g.Incomparable {
			p.F("  ✗ %s\n", s)
		}
		p.F("\n%s: %s\n", result, gateHeadline(g))
		return
	}
	p.F("Pins agree within their tolerances.\n\n")
	p.F("A rule fails only when its figure is beyond the tolerance AND the difference is significant at %s (%s resamples, seed %d).\n",
		pct(g.Stats.Confidence), group(float64(g.Stats.Resamples)), g.Stats.Seed)
	sw := 4 // the status column: PASS, FAIL, or NOT EVALUATED
	if len(g.NotEvaluated()) > 0 {
		sw = len(statusWord(NotEvaluated))
	}
	line := func(cols ...any) {
		p.F("%s\n", strings.TrimRight(fmt.Sprintf("  %-*s  %-32s %-18s %14s %14s %9s  %-22s %s", append([]any{sw}, cols...)...), " "))
	}
	line("", "rule", "tolerance", "baseline", "current", "change", "interval", "")
	for _, c := range g.Checks {
		line(statusWord(c.Status), c.Rule.Key, c.Rule.Tolerance(), checkValue(c, c.Baseline, c.HasBaseline),
			checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), c.Why)
	}
	p.F("\n%s: %s\n", result, gateHeadline(g))
}

// WriteGateMarkdown writes g as Markdown for a pull request or
// $GITHUB_STEP_SUMMARY, with the current run's pin card folded below.
func WriteGateMarkdown(w io.Writer, g *GateResult) error {
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
func writeGateMarkdownBody(p *numfmt.Printer, g *GateResult) {
	icon := map[bool]string{true: "✅", false: "❌"}
	p.F("Current `%s` — %s\n\nBaseline `%s` — %s\n\n", g.Current.Name, mdCell(runIdentity(g.Current.Run)),
		g.Baseline.Name, mdCell(runIdentity(g.Baseline.Run)))
	if !g.Comparable() {
		p.F("The runs cannot be compared:\n\n")
		for _, s := range g.Incomparable {
			p.F("- ✗ %s\n", mdCell(s))
		}
	} else {
		p.F("Pins agree within their tolerances. A rule fails only when its figure is beyond the tolerance **and** the difference is significant at %s (%s resamples, seed %d).\n\n",
			pct(g.Stats.Confidence), group(float64(g.Stats.Resamples)), g.Stats.Seed)
		p.F("| | rule | tolerance | baseline | current | change | interval | verdict |\n|:-:|---|---|--:|--:|--:|---|---|\n")
		for _, c := range g.Checks {
			mark := icon[c.Status != Fail]
			if c.Status == NotEvaluated {
				mark = "⚠️"
			}
			p.F("| %s | `%s` | %s | %s | %s | %s | %s | %s |\n", mark, c.Rule.Key, c.Rule.Tolerance(),
				checkValue(c, c.Baseline, c.HasBaseline), checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), mdCell(c.Why))
		}
	}
	p.F("\n**%s**\n\n", mdCell(gateHeadline(g)))
	p.F("<details><summary>Pin card of the current run</summary>\n\n")
	writeMarkdownPinCard(p, PinCard(g.Current.Run))
	p.F("\n</details>\n")
}

// WriteGateJUnit writes g as JUnit XML: one testsuite, a testcase for the
// pins' agreement and one per rule (failed when the rule failed or could
// not be evaluated).
func WriteGateJUnit(w io.Writer, g *GateResult) error {
	ss := &junitSuites{Name: "sixpin gate"}
	ss.add(gateSuite(g, "sixpin gate"))
	return writeJUnitXML(w, ss)
}

// gateSuite is g as one testsuite named name.
func gateSuite(g *GateResult, name string) junitSuite {
	s := junitSuite{
		Name:      name,
		Timestamp: g.Current.Run.StartedAt.UTC().Format(time.RFC3339),
		Properties: []junitProperty{
			{"baseline", g.Baseline.Name},
			{"current", g.Current.Name},
			{"confidence", trimFloat(g.Stats.Confidence)},
			{"resamples", fmt.Sprint(g.Stats.Resamples)},
			{"seed", fmt.Sprint(g.Stats.Seed)},
		},
	}
	pins := junitCase{Name: "pins comparable", Classname: "sixpin.gate", SystemOut: compactCard(g.Current.Run)}
	if !g.Comparable() {
		pins.Failure = &junitMessage{Message: "the runs' pins differ: " + strings.Join(g.Incomparable, "; "), Type: "incomparable"}
	}
	s.add(pins)
	for _, c := range g.Checks {
		jc := junitCase{Name: c.Rule.Key + " " + c.Rule.Tolerance(), Classname: "sixpin.gate",
			SystemOut: fmt.Sprintf("baseline %s, current %s, change %s, interval %s: %s", checkValue(c, c.Baseline, c.HasBaseline),
				checkValue(c, c.Current, c.HasCurrent), checkChange(c), checkInterval(c), c.Why)}
		switch c.Status {
		case Fail:
			jc.Failure = &junitMessage{Message: c.Why, Type: "regression", Text: jc.SystemOut}
		case NotEvaluated:
			jc.Failure = &junitMessage{Message: c.Why, Type: "not-evaluated", Text: jc.SystemOut}
		}
		s.add(jc)
	}
	return s
}
