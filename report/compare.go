package report

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// Comparison is runs side by side, each against the first (the
// reference), figure by figure.
type Comparison struct {
	Runs  []Input
	Stats stats.Settings
	// Mismatches[i] lists how run i's pins differ from the reference's
	// (Mismatches[0] is always empty).
	Mismatches [][]Mismatch
	Sections   []Section
}

// Section is one group of compared figures: a window, or the whole run.
type Section struct {
	Title string
	Rows  []Row
}

// Row is one figure across the runs.
type Row struct {
	// Key names the figure as gate rules do (steady.ttft_ms.p99).
	Key   string
	Label string
	Unit  string
	// Better says which direction is good; Fraction figures are 0–1.
	Better   Direction
	Fraction bool
	Integer  bool
	Cells    []Cell
}

// Cell is one run's value of a figure and, after the first run, its
// change against the reference.
type Cell struct {
	Value float64
	// OK is false when the run has no such figure.
	OK bool
	// Change is Value / reference − 1; Interval is the confidence interval
	// of that ratio minus one (for i > 0 with both values present).
	Change   float64
	Interval stats.Interval
	// Verdict is "better" or "worse" (beyond the interval), "noise" (the
	// interval holds no change), "same" (under 0.5%), "?" (no interval:
	// too few values for the percentile) or "" (no direction, or nothing
	// to compare).
	Verdict string
}

// Comparable reports whether every run's pins agree with the reference's.
func (c *Comparison) Comparable() bool {
	for _, ms := range c.Mismatches {
		if len(ms) > 0 {
			return false
		}
	}
	return true
}

// MismatchSummary names the differing pins of every run, for an error
// message, the reference's value first as the names are: "a.json vs
// b.json: concurrency: 4 vs 1; prompt p50: 519 vs 8,000".
func (c *Comparison) MismatchSummary() string {
	var parts []string
	for i, ms := range c.Mismatches {
		if len(ms) > 0 {
			parts = append(parts, fmt.Sprintf("%s vs %s: %s", c.Runs[0].Name, c.Runs[i].Name, JoinMismatches(ms)))
		}
	}
	return strings.Join(parts, "\n")
}

// compareFigures are the figures compared per window, in order.
var compareFigures = []struct {
	key   string
	stats []string
}{
	{"requests", nil},
	{"ttft_ms", []string{"p50", "p90", "p99"}},
	{"itl_ms", []string{"p50", "p99"}},
	{"tpot_ms", []string{"p50", "p99"}},
	{"e2e_ms", []string{"p50", "p99"}},
	{"decode_tok_s", []string{"p50"}},
	{"effective_tok_s", []string{"p10", "p50"}},
	{"aggregate_output_tok_s", nil},
	{"mean_in_flight", nil},
	{"aggregate_per_stream_tok_s", nil},
	{"peak_aggregate_output_tok_s", nil},
	{"goodput_rps", nil},
	{"goodput_fraction", nil},
	{"error_rate", nil},
}

// Compare compares runs against the first: pins first (Mismatches), then
// the steady and burst windows and the whole run, figure by figure, each
// change with its confidence interval and direction. Compare compares
// even when pins differ; callers decide whether to show it.
func Compare(runs []Input, st stats.Settings) (*Comparison, error) {
	if len(runs) < 2 {
		return nil, fmt.Errorf("compare: need at least two results files (got %d)", len(runs))
	}
	if err := st.Validate(); err != nil {
		return nil, err
	}
	c := &Comparison{Runs: runs, Stats: st, Mismatches: make([][]Mismatch, len(runs))}
	for i := 1; i < len(runs); i++ {
		c.Mismatches[i] = PinMismatches(runs[0].Run, runs[i].Run, st)
	}
	caches := make([]histCache, len(runs))
	for i := range caches {
		caches[i] = histCache{}
	}
	var refs [][]figureRef
	var titles []string
	for _, w := range []string{results.WindowSteady, results.WindowBurst} {
		var fs []figureRef
		for _, f := range compareFigures {
			if len(f.stats) == 0 {
				ref, err := parseFigure(w + "." + f.key)
				if err != nil {
					return nil, err
				}
				fs = append(fs, ref)
			}
			for _, s := range f.stats {
				ref, err := parseFigure(w + "." + f.key + "." + s)
				if err != nil {
					return nil, err
				}
				fs = append(fs, ref)
			}
		}
		refs = append(refs, fs)
		titles = append(titles, windowTitle(w))
	}
	var whole []figureRef
	for _, m := range runMetrics {
		ref, _ := parseFigure(m.Key)
		whole = append(whole, ref)
	}
	refs = append(refs, whole)
	titles = append(titles, "Whole run")

	for si, fs := range refs {
		sec := Section{Title: titles[si]}
		for _, f := range fs {
			row := Row{Key: f.Key(), Label: f.shortLabel(), Unit: f.Metric.Unit, Better: f.Metric.Better, Fraction: f.Metric.Fraction, Integer: f.Metric.Integer}
			ests := make([]stats.Estimate, len(runs))
			seen := false
			for i, in := range runs {
				e, ok, _ := f.estimate(in.Run, caches[i])
				ests[i] = e
				row.Cells = append(row.Cells, Cell{Value: e.Value, OK: ok})
				seen = seen || ok
			}
			if !seen {
				continue
			}
			for i := 1; i < len(runs); i++ {
				ref, cur := &row.Cells[0], &row.Cells[i]
				if !ref.OK || !cur.OK {
					continue
				}
				cur.Change = change(ref.Value, cur.Value)
				iv := st.RatioInterval(fmt.Sprintf("%s/%d", f.Key(), i), ests[0], ests[i])
				if iv.Known {
					iv.Lo, iv.Hi = iv.Lo-1, iv.Hi-1
				}
				cur.Interval = iv
				cur.Verdict = verdict(f.Metric.Better, cur.Change, iv)
			}
			sec.Rows = append(sec.Rows, row)
		}
		c.Sections = append(c.Sections, sec)
	}
	return c, nil
}

// change is cur/ref − 1 (±Inf from zero, 0 for zero to zero).
func change(ref, cur float64) float64 {
	switch {
	case ref != 0:
		return cur/ref - 1
	case cur == 0:
		return 0
	case cur > 0:
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// sameBand is the relative change below which a figure counts as the same.
const sameBand = 0.005

func verdict(better Direction, ch float64, iv stats.Interval) string {
	switch {
	case math.Abs(ch) < sameBand:
		return "same"
	case better == Neutral:
		return ""
	case !iv.Known:
		return "?"
	case iv.Lo <= 0 && iv.Hi >= 0:
		return "noise"
	case (ch > 0) == (better == HigherIsBetter):
		return "better"
	}
	return "worse"
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

func (r Row) value(v float64) string {
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

func rowLabel(r Row) string {
	switch {
	case r.Unit == "" || r.Fraction || strings.Contains(r.Label, r.Unit):
		return r.Label
	}
	return r.Label + " (" + r.Unit + ")"
}

// WriteCompareText writes c as aligned text columns.
func WriteCompareText(w io.Writer, c *Comparison) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin compare — %d runs, each against A; changes with %s intervals (%s resamples, seed %d)\n",
		len(c.Runs), pct(c.Stats.Confidence), group(float64(c.Stats.Resamples)), c.Stats.Seed)
	writeCompareTextBody(p, c)
	writeCompareTextKey(p, c.Stats)
	return p.Err
}

// writeCompareTextBody writes the runs, their pins and every section.
func writeCompareTextBody(p *numfmt.Printer, c *Comparison) {
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
		p.F("\n%s\n", strings.ToUpper(sec.Title[:1])+sec.Title[1:])
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
					v = r.value(cell.Value)
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
func (c *Comparison) pinCards() []Card {
	cards := make([]Card, len(c.Runs))
	for i, in := range c.Runs {
		cards[i] = PinCard(in.Run)
	}
	return cards
}

func writePinsText(p *numfmt.Printer, c *Comparison) {
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
	cards := c.pinCards()
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
func WriteCompareMarkdown(w io.Writer, c *Comparison) error {
	p := &numfmt.Printer{W: w}
	p.F("# sixpin compare\n\n")
	p.F("Each run against **A**; changes with %s confidence intervals (%s resamples, seed %d).\n\n", pct(c.Stats.Confidence), group(float64(c.Stats.Resamples)), c.Stats.Seed)
	writeCompareMarkdownBody(p, c)
	writeCompareMarkdownKey(p, c.Stats)
	return p.Err
}

// writeCompareMarkdownBody writes the runs, their pins and every section
// (### headings).
func writeCompareMarkdownBody(p *numfmt.Printer, c *Comparison) {
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
	cards := c.pinCards()
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
		p.F("\n### %s\n\n| figure |", sec.Title)
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
					v = r.value(cell.Value)
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
