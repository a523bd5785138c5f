package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// sectionTitle names a section of a comparison: its window's title, or
// "Whole run".
func sectionTitle(sec verdict.Section) string {
	if sec.Window == "" {
		return "Whole run"
	}
	return windowTitle(sec.Window)
}

// letter names run i in tables: A, B, C …
func letter(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

// fmtValue formats a figure for a table.
func fmtValue(v float64, fraction bool) string {
	if fraction {
		return pct(v)
	}
	return num(v)
}

// rowValue formats a value of row r's figure.
func rowValue(r verdict.Row, v float64) string {
	if r.Integer {
		return group(v)
	}
	return fmtValue(v, r.Fraction)
}

// fmtChange formats a relative change: "+12.3%".
func fmtChange(ch float64) string {
	switch {
	case math.IsInf(ch, 1):
		return "+∞"
	case math.IsInf(ch, -1):
		return "−∞"
	}
	if math.Abs(100*ch) < 0.05 {
		return "0.0%"
	}
	s := fmt.Sprintf("%+.1f%%", 100*ch)
	return strings.Replace(s, "-", "−", 1)
}

// fmtInterval formats an interval of a relative change: "[−3.1%, +9.0%]".
func fmtInterval(iv stats.Interval) string {
	if !iv.Known {
		return "no interval"
	}
	return "[" + fmtChange(iv.Lo) + ", " + fmtChange(iv.Hi) + "]"
}

func rowLabel(r verdict.Row) string {
	switch {
	case r.Unit == "" || r.Fraction || strings.Contains(r.Label, r.Unit):
		return r.Label
	}
	return r.Label + " (" + r.Unit + ")"
}

// WriteCompareText writes c as aligned text columns.
func WriteCompareText(w io.Writer, c *verdict.Comparison) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin compare — %d runs, each against A; changes with %s intervals (%s resamples, seed %d)\n",
		len(c.Runs), pct(c.Stats.Confidence), group(float64(c.Stats.Resamples)), c.Stats.Seed)
	writeCompareTextBody(p, c)
	writeCompareTextKey(p, c.Stats)
	return p.Err
}

// writeCompareTextBody writes the runs, their pins and every section.
func writeCompareTextBody(p *numfmt.Printer, c *verdict.Comparison) {
	wn := 0
	for _, in := range c.Runs {
		wn = max(wn, len(in.Name))
	}
	for i, in := range c.Runs {
		p.F("  %s  %-*s  %s\n", letter(i), wn, in.Name, runIdentity(in.Run))
	}
	p.F("\n")
	writePinsText(p, c)
	for _, sec := range c.Sections {
		title := sectionTitle(sec)
		p.F("\n%s\n", strings.ToUpper(title[:1])+title[1:])
		head := fmt.Sprintf("  %-46s", "")
		for i := range c.Runs {
			head += fmt.Sprintf(" %12s", letter(i))
			if i > 0 {
				head += fmt.Sprintf("  %-20s", letter(i)+" vs A")
			}
		}
		p.F("%s\n", strings.TrimRight(head, " "))
		for _, r := range sec.Rows {
			line := fmt.Sprintf("  %-46s", truncate(rowLabel(r), 46))
			for i, cell := range r.Cells {
				v := "–"
				if cell.OK {
					v = rowValue(r, cell.Value)
				}
				line += fmt.Sprintf(" %12s", v)
				if i > 0 {
					d := ""
					if cell.OK && r.Cells[0].OK {
						d = fmtChange(cell.Change)
						if cell.Verdict != "" {
							d += " " + cell.Verdict
						}
					}
					line += fmt.Sprintf("  %-20s", d)
				}
			}
			p.F("%s\n", strings.TrimRight(line, " "))
		}
	}
}

// writeCompareTextKey explains the verdicts.
func writeCompareTextKey(p *numfmt.Printer, st stats.Settings) {
	p.F("\nbetter/worse: the change is beyond its %s interval in that direction; noise: the interval includes no change;\nsame: under 0.5%%; ?: no interval (too few values for that percentile, or no sampling model).\n",
		pct(st.Confidence))
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// runIdentity is a run's scenario, seed and target in one phrase.
func runIdentity(run *results.Run) string {
	s := fmt.Sprintf("%s (seed %d) · %s", run.Scenario.Name, run.Scenario.Seed, TargetLabel(run.Target))
	if run.Target.Simulated {
		s += " [SIMULATED]"
	}
	if !run.Valid {
		s += " [INVALID]"
	}
	return s
}

// pinSummary is the reference's declared pins, one line each.
func pinSummary(run *results.Run) []struct{ pin, declared string } {
	card := PinCard(run)
	out := make([]struct{ pin, declared string }, len(card.Rows))
	for i, r := range card.Rows {
		out[i].pin, out[i].declared = r.Pin, r.Declared
	}
	return out
}

// pinCards returns each run's pin card, in run order.
func pinCards(c *verdict.Comparison) []Card {
	cards := make([]Card, len(c.Runs))
	for i, in := range c.Runs {
		cards[i] = PinCard(in.Run)
	}
	return cards
}

func writePinsText(p *numfmt.Printer, c *verdict.Comparison) {
	if !c.Comparable() {
		p.F("PIN MISMATCH — these runs do not measure the same workload; differences below mix workload and performance:\n")
		for i, ms := range c.Mismatches {
			for _, m := range ms {
				p.F("  ✗ A vs %s: %s\n", letter(i), m)
			}
		}
		p.F("\n")
	}
	p.F("Pins (declared in A; verdict per run: ✓ verified, ✗ contradicted, ? unverifiable)\n")
	cards := pinCards(c)
	for j, ps := range pinSummary(c.Runs[0].Run) {
		marks := ""
		for i := range c.Runs {
			marks += letter(i) + cards[i].Rows[j].Mark() + " "
		}
		p.F("  %-12s %s %s\n", ps.pin, marks, ps.declared)
	}
	if c.Comparable() {
		p.F("All pins agree within their tolerances.\n")
	}
}

// WriteCompareMarkdown writes c as Markdown tables.
func WriteCompareMarkdown(w io.Writer, c *verdict.Comparison) error {
	p := &numfmt.Printer{W: w}
	p.F("# sixpin compare\n\n")
	p.F("Each run against **A**; changes with %s confidence intervals (%s resamples, seed %d).\n\n", pct(c.Stats.Confidence), group(float64(c.Stats.Resamples)), c.Stats.Seed)
	writeCompareMarkdownBody(p, c)
	writeCompareMarkdownKey(p, c.Stats)
	return p.Err
}

// writeCompareMarkdownBody writes the runs, their pins and every section
// (### headings).
func writeCompareMarkdownBody(p *numfmt.Printer, c *verdict.Comparison) {
	p.F("| run | file | scenario and target |\n|---|---|---|\n")
	for i, in := range c.Runs {
		p.F("| %s | `%s` | %s |\n", letter(i), in.Name, mdCell(runIdentity(in.Run)))
	}
	p.F("\n")
	if !c.Comparable() {
		p.F("> **PIN MISMATCH** — these runs do not measure the same workload; the differences below mix workload and performance:\n")
		for i, ms := range c.Mismatches {
			for _, m := range ms {
				p.F("> - ✗ A vs %s: %s\n", letter(i), mdCell(m.String()))
			}
		}
		p.F("\n")
	}
	p.F("### Pins\n\n| pin | declared (A) |")
	for i := range c.Runs {
		p.F(" %s |", letter(i))
	}
	p.F("\n|---|---|")
	for range c.Runs {
		p.F(":-:|")
	}
	p.F("\n")
	cards := pinCards(c)
	for j, ps := range pinSummary(c.Runs[0].Run) {
		p.F("| %s | %s |", ps.pin, mdCell(ps.declared))
		for i := range c.Runs {
			p.F(" %s |", cards[i].Rows[j].Mark())
		}
		p.F("\n")
	}
	if c.Comparable() {
		p.F("\nAll pins agree within their tolerances.\n")
	}
	for _, sec := range c.Sections {
		p.F("\n### %s\n\n| figure |", sectionTitle(sec))
		for i := range c.Runs {
			p.F(" %s |", letter(i))
			if i > 0 {
				p.F(" %s vs A |", letter(i))
			}
		}
		p.F("\n|---|")
		for i := range c.Runs {
			p.F("--:|")
			if i > 0 {
				p.F("---|")
			}
		}
		p.F("\n")
		for _, r := range sec.Rows {
			p.F("| %s |", mdCell(rowLabel(r)))
			for i, cell := range r.Cells {
				v := "–"
				if cell.OK {
					v = rowValue(r, cell.Value)
				}
				p.F(" %s |", v)
				if i > 0 {
					d := ""
					if cell.OK && r.Cells[0].OK {
						d = fmtChange(cell.Change)
						switch cell.Verdict {
						case "better":
							d += " **better**"
						case "worse":
							d += " **worse**"
						case "":
						default:
							d += " " + cell.Verdict
						}
						if cell.Interval.Known && cell.Verdict != "same" {
							d += " " + fmtInterval(cell.Interval)
						}
					}
					p.F(" %s |", d)
				}
			}
			p.F("\n")
		}
	}
}

// writeCompareMarkdownKey explains the verdicts.
func writeCompareMarkdownKey(p *numfmt.Printer, st stats.Settings) {
	p.F("\n_better/worse: the change lies beyond its %s interval in that direction; noise: the interval includes no change; same: under 0.5%%; ?: no interval (too few values for that percentile, or no sampling model)._\n", pct(st.Confidence))
}

// setsWords is "2 sweeps", "2 sets of repeats", "3 bake-offs".
func setsWords(sc *verdict.SetComparison) string {
	n := len(sc.Sets)
	switch sc.Sets[0].Set.Kind {
	case results.SetSweep:
		return numfmt.Count(n, "sweep", "")
	case results.SetBakeoff:
		return numfmt.Count(n, "bake-off", "")
	}
	return numfmt.Count(n, "set of repeats", "sets of repeats")
}

// WriteSetCompareText writes sc as text: the sets, then each point's
// comparison as WriteCompareText writes one.
func WriteSetCompareText(w io.Writer, sc *verdict.SetComparison) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin compare — %s, point by point, each against A; changes with %s intervals (%s resamples, seed %d)\n",
		setsWords(sc), pct(sc.Stats.Confidence), group(float64(sc.Stats.Resamples)), sc.Stats.Seed)
	for i, s := range sc.Sets {
		p.F("  %s  %s\n", letter(i), s.Name)
	}
	for _, pc := range sc.Points {
		p.F("\n══ %s ══\n", pc.Point.Label)
		writeCompareTextBody(p, pc.Comparison)
	}
	writeCompareTextKey(p, sc.Stats)
	return p.Err
}

// WriteSetCompareMarkdown writes sc as Markdown: a section per point.
func WriteSetCompareMarkdown(w io.Writer, sc *verdict.SetComparison) error {
	p := &numfmt.Printer{W: w}
	p.F("# sixpin compare: %s, point by point\n\n", setsWords(sc))
	p.F("Each set's point against the same point of **A**; changes with %s confidence intervals (%s resamples, seed %d).\n\n",
		pct(sc.Stats.Confidence), group(float64(sc.Stats.Resamples)), sc.Stats.Seed)
	for i, s := range sc.Sets {
		p.F("- **%s**: `%s`\n", letter(i), s.Name)
	}
	for _, pc := range sc.Points {
		p.F("\n## %s\n\n", pc.Point.Label)
		writeCompareMarkdownBody(p, pc.Comparison)
	}
	writeCompareMarkdownKey(p, sc.Stats)
	return p.Err
}
