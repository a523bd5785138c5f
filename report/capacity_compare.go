package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// capacityIdentity says what a capacity file searched, against what, and
// how far it got: "capacity (gen/capacity.yaml) against profile
// sim-two-seq [SIMULATED] · 7 points, every tier answered".
func capacityIdentity(f *capacity.File) string {
	s := fmt.Sprintf("%s (%s) against profile %s", f.ScenarioName, f.Scenario, f.Profile)
	if f.Simulated {
		s += " [SIMULATED]"
	}
	if f.Incomplete {
		s += " [INCOMPLETE]"
	}
	s += " · " + numfmt.Count(len(f.Points), "point", "points") + ", "
	if f.Stop == capacity.StopDone {
		return s + "every tier answered"
	}
	return s + "stopped: " + stopWords(f.Stop)
}

// changeWords says how tier cell i moved against the reference's.
func changeWords(i int, tc capacity.TierCell) string {
	l := letter(i)
	switch tc.Change {
	case "drop":
		return "lower: " + l + "'s N* lies below A's"
	case "rise":
		return "higher: " + l + "'s N* lies above A's"
	case "same":
		return "unchanged"
	case "overlap":
		return "the intervals overlap: no change can be told"
	}
	return "no change can be told: the tier is missing or not measured on one side"
}

// tierChangeLine is a tier's N* across the files with its unit, and each
// change against A: "tight: 2 → 3 streams — B higher: B's N* lies above
// A's".
func tierChangeLine(c *capacity.Comparison, row capacity.TierRow) string {
	var ns, changes []string
	for i, tc := range row.Cells {
		n := "–"
		if tc.Has {
			n = nStar(c.Files[i].File, tc.Answer)
		}
		ns = append(ns, n)
		if i > 0 {
			w := changeWords(i, tc)
			if len(c.Files) > 2 {
				w = letter(i) + " " + w
			}
			changes = append(changes, w)
		}
	}
	return fmt.Sprintf("%s: %s %s — %s", row.Tier, strings.Join(ns, " → "), capacityUnit(c.Files[0].File.Plan.Axis, 2), strings.Join(changes, "; "))
}

// tierAnswerLines are each file's answer for the tier, in full.
func tierAnswerLines(c *capacity.Comparison, row capacity.TierRow) []string {
	var out []string
	for i, tc := range row.Cells {
		s := "no such tier"
		if tc.Has {
			s = strings.TrimPrefix(CapacityAnswer(c.Files[i].File, tc.Answer), row.Tier+": ")
			if w := confirmWords(c.Files[i].File, tc.Answer); w != "" {
				s += "; " + w
			}
		}
		out = append(out, letter(i)+": "+s)
	}
	return out
}

// capacityCurveTable is the curve value by value, each file's runs side
// by side: aggregate tok/s (with its change against A), and the two
// per-stream figures.
func capacityCurveTable(c *capacity.Comparison) setTable {
	head := []string{"value"}
	for i := range c.Files {
		l := letter(i)
		head = append(head, l+" aggregate tok/s")
		if i > 0 {
			head = append(head, l+" vs A")
		}
		head = append(head, l+" effective p50", l+" tps_per_user")
	}
	t := setTable{title: "The curve, value by value (steady windows; a value run more than once: the mean of its valid runs)", head: head}
	for _, row := range c.Curve {
		cells := []string{CapacityPointLabel(c.Files[0].File, row.Value)}
		for i, cc := range row.Cells {
			agg, eff, tps := "–", "–", "–"
			if cc.Runs > 0 {
				agg, eff, tps = cell(cc.Mean.AggregateTokS), cell(cc.Mean.EffectiveP50TokS), cell(cc.Mean.TPSPerUser)
			}
			var more []string
			if cc.Runs > 1 {
				more = append(more, fmt.Sprintf("mean of %d", cc.Runs))
			}
			if cc.Invalid > 0 {
				more = append(more, fmt.Sprintf("%d invalid", cc.Invalid))
			}
			if len(more) > 0 {
				agg += " (" + strings.Join(more, ", ") + ")"
			}
			cells = append(cells, agg)
			if i > 0 {
				ch := "–"
				if cc.HasChange {
					ch = fmtChange(cc.Change)
				}
				cells = append(cells, ch)
			}
			cells = append(cells, eff, tps)
		}
		t.rows = append(t.rows, cells)
	}
	return t
}

// WriteCapacityCompare writes capacity searches side by side, each
// against A (text, or Markdown when md): the files, any pins or tiers
// that differ (shown only when compared anyway), how the searches were
// run differently, the pins they held, N* per tier with its change and
// what binds one step above in each, then the curve value by value.
func WriteCapacityCompare(w io.Writer, c *capacity.Comparison, md bool) error {
	p := &numfmt.Printer{W: w}
	ref := c.Files[0].File
	title := fmt.Sprintf("sixpin compare — %d capacity searches in %s, each against A", len(c.Files), axisWords(ref.Plan.Axis))
	line := func(format string, args ...any) {
		if md {
			p.F("- "+format+"\n", args...)
		} else {
			p.F("  "+format+"\n", args...)
		}
	}
	heading := func(s string) {
		if md {
			p.F("\n### %s\n\n", s)
		} else {
			p.F("\n%s\n", s)
		}
	}
	if md {
		p.F("# %s\n\n| search | file | scenario, target, points |\n|---|---|---|\n", title)
		for i, in := range c.Files {
			p.F("| %s | `%s` | %s |\n", letter(i), in.Name, mdCell(capacityIdentity(in.File)))
		}
	} else {
		p.F("%s\n", title)
		wn := 0
		for _, in := range c.Files {
			wn = max(wn, len(in.Name))
		}
		for i, in := range c.Files {
			p.F("  %s  %-*s  %s\n", letter(i), wn, in.Name, capacityIdentity(in.File))
		}
	}
	if !c.Comparable() {
		if md {
			p.F("\n> **PIN MISMATCH** — these searches do not hold the same workload or judge by the same tiers; their answers mix workload and performance:\n")
		} else {
			p.F("\nPIN MISMATCH — these searches do not hold the same workload or judge by the same tiers; their answers mix workload and performance:\n")
		}
		for i, why := range c.Incomparable {
			for _, w := range why {
				if md {
					p.F("> - ✗ A vs %s: %s\n", letter(i), mdCell(w))
				} else {
					p.F("  ✗ A vs %s: %s\n", letter(i), w)
				}
			}
		}
	}
	var plan []string
	for i, ds := range c.Plan {
		for _, d := range ds {
			plan = append(plan, fmt.Sprintf("%s's search differs from A's: %s", letter(i), d))
		}
	}
	if len(plan) > 0 {
		heading("How the searches differ (not pins, but they move N*)")
		for _, s := range plan {
			line("%s", s)
		}
	}
	if len(ref.Points) > 0 && ref.Points[0].Run != nil {
		heading("Pins held (declared in A; the concurrency is what each search varies)")
		for _, ps := range pinSummary(ref.Points[0].Run) {
			if ps.pin == "concurrency" {
				a := ref.Plan.Axis
				ps.declared = fmt.Sprintf("varied: %s, between %s and %s", axisWords(a), numfmt.Plain(a.Min), numfmt.Plain(a.Max))
			}
			if md {
				line("**%s**: %s", ps.pin, mdCell(ps.declared))
			} else {
				p.F("  %-12s %s\n", ps.pin, ps.declared)
			}
		}
		if c.Comparable() {
			const alike = "Every search holds them alike (its pins within their tolerances of A's) and judges its tiers by the same conditions."
			if md {
				p.F("\n%s\n", alike)
			} else {
				line("%s", alike)
			}
		}
	}
	heading("N* per tier, and what binds one step above")
	for _, row := range c.Tiers {
		if md {
			p.F("- **%s**\n", mdCell(tierChangeLine(c, row)))
			for _, l := range tierAnswerLines(c, row) {
				p.F("  - %s\n", mdCell(l))
			}
			continue
		}
		p.F("  %s\n", tierChangeLine(c, row))
		for _, l := range tierAnswerLines(c, row) {
			p.F("      %s\n", l)
		}
	}
	t := capacityCurveTable(c)
	heading(t.title)
	t.title = ""
	t.write(p, md)
	key := "A change is the gate's reading of the two answers, each with its interval (a budget's interval allows every value in it). Per stream: effective tok/s p50 (prefill included) and MLPerf's tps_per_user = 1000 / TPOT p90; aggregate: every stream's output together."
	if md {
		p.F("\n_%s_\n", key)
	} else {
		p.F("\n%s\n", key)
	}
	return p.Err
}
