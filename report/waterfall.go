package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/waterfall"
)

// metricWords names a waterfall metric with its statistic and unit.
func metricWords(m string) string {
	switch m {
	case waterfall.MetricEffective:
		return "effective tok/s per stream (P50)"
	case waterfall.MetricDecode:
		return "decode tok/s per stream (P50)"
	case waterfall.MetricAggregate:
		return "aggregate output tok/s (all streams)"
	case waterfall.MetricTTFT:
		return "TTFT P50 (ms; lower is better)"
	}
	return m
}

// metricUnit is m's unit.
func metricUnit(m string) string {
	if m == waterfall.MetricTTFT {
		return "ms"
	}
	return "tok/s"
}

// WaterfallConfigLabel names a waterfall configuration for people: "the
// start (no pin moved)", "output, prompt moved".
func WaterfallConfigLabel(c waterfall.Config) string {
	if len(c.Moved) == 0 {
		return "the start (no pin moved)"
	}
	return strings.Join(c.Moved, ", ") + " moved"
}

// WriteWaterfallPlan writes what a waterfall will run before it starts:
// its steps in order, the pins skipped and why, its budget (runs of at
// most bound each), and which attribution it runs and why.
func WriteWaterfallPlan(w io.Writer, f *waterfall.File, runs int, bound string) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin waterfall: %s → %s\n", f.From, f.To)
	p.F("  %s, in order: %s\n", numfmt.Count(len(f.Order), "step", "steps"), strings.Join(f.Order, ", "))
	for _, s := range f.Skipped {
		p.F("  skipped: %s (%s: %s)\n", s.Pin, s.Reason, s.Value)
	}
	p.F("  plan: %s × %s = %s, each bounded by %s (the window and metric steps read the runs again)\n",
		numfmt.Count(len(f.Configs), "configuration", "configurations"), numfmt.Count(f.Repeat, "run", "runs"), numfmt.Count(runs, "run", "runs"), bound)
	p.F("  attribution: %s\n", planAttribution(f.Attribution))
	return p.Err
}

// planAttribution says which attribution a plan runs, and why.
func planAttribution(a waterfall.Attribution) string {
	const exact = "exact Shapley values over every subset of the moved pins, which depend on no order"
	need := ""
	if a.ExactRuns > 0 {
		need = fmt.Sprintf(" (exact Shapley values need %s)", numfmt.Count(a.ExactRuns, "run", "runs"))
	}
	switch {
	case a.Method == waterfall.MethodExact && a.Auto:
		return fmt.Sprintf("%s — the default, as its %s fit --max-runs %d", exact, numfmt.Count(a.ExactRuns, "run", "runs"), a.MaxRuns)
	case a.Method == waterfall.MethodExact:
		return fmt.Sprintf("%s (--exact: %s)", exact, numfmt.Count(a.ExactRuns, "run", "runs"))
	case a.Method == waterfall.MethodTwoOrder && a.Auto:
		return fmt.Sprintf("the order and its reverse — exact Shapley values would need %s, more than --max-runs %d — so the attribution DEPENDS ON THE ORDER, and the waterfall says by how much the two orders disagree",
			numfmt.Count(a.ExactRuns, "run", "runs"), a.MaxRuns)
	case a.Method == waterfall.MethodTwoOrder:
		return "the order and its reverse (--orders 2)" + need + ": the attribution DEPENDS ON THE ORDER, and the waterfall says by how much the two orders disagree"
	}
	return "one order (--orders 1): each step's change in this order; the attribution DEPENDS ON THE ORDER by an amount this waterfall does not measure" + need
}

func methodWords(m string) string {
	switch m {
	case waterfall.MethodTwoOrder:
		return "two orders (the order and its reverse; their mean is a two-order Shapley estimate)"
	case waterfall.MethodExact:
		return "exact Shapley values over every subset of the moved pins"
	}
	return "each step's change, in this order"
}

// flipMin is the least change a pin must make each way before the
// orders are said to disagree on its direction: 1%, so that a pin that
// costs nothing in either order does not "flip" on noise.
const flipMin = 0.01

// attributionWords says how far the attribution depends on the order:
// not at all (exact), by how much the two orders measured disagree and
// on which pins even in direction, or by an amount not measured (one
// order). "" before the attribution is filled.
func attributionWords(f *waterfall.File) string {
	a := f.Attribution
	if len(a.Pins) == 0 {
		return ""
	}
	var flips []string
	for _, pc := range a.Pins {
		if pc.Lo < 1-flipMin && pc.Hi > 1+flipMin {
			flips = append(flips, pc.Pin)
		}
	}
	need := "exact Shapley values"
	if a.ExactRuns > 0 {
		need = fmt.Sprintf("exact Shapley values need %s (--max-runs %d)", numfmt.Count(a.ExactRuns, "run", "runs"), a.MaxRuns)
	}
	switch {
	case a.Method == waterfall.MethodExact:
		s := "Attribution: exact Shapley values over every subset of the moved pins, which depend on no order"
		if w := worstPin(a); w != nil && a.Spread > 1 {
			s += fmt.Sprintf("; one order's steps would say anything from ×%s to ×%s for %s, depending on the pins moved before it", numfmt.Sig(w.Lo), numfmt.Sig(w.Hi), w.Pin)
			if len(flips) > 0 {
				s += ", and some order would get the direction of " + strings.Join(flips, ", ") + " wrong"
			}
		}
		return s + "."
	case orderSpread(a) == "":
		return "Attribution DEPENDS ON THE ORDER: each step is the pin's cost in this order alone; how much another order differs was not measured (--orders 2, or " + need + ")."
	case a.Spread < 1+1e-9:
		return fmt.Sprintf("Attribution: the %s orders agree on every pin's cost (%s to confirm that no other order differs).", orderNames(a), need)
	}
	direction := ""
	if len(flips) > 0 {
		direction = "; they disagree in direction (a gain in one order, a loss in the other) on " + strings.Join(flips, ", ")
	}
	return fmt.Sprintf("Attribution DEPENDS ON THE ORDER: %s%s. Their mean is an estimate; %s.", orderSpread(a), direction, need)
}

// worstPin is the pin whose orders disagree most (nil: not known).
func worstPin(a waterfall.Attribution) *waterfall.PinCost {
	i := slices.IndexFunc(a.Pins, func(pc waterfall.PinCost) bool { return pc.Pin == a.SpreadPin })
	if i < 0 {
		return nil
	}
	return &a.Pins[i]
}

func orderNames(a waterfall.Attribution) string {
	return a.Orders[0].Name + " and " + a.Orders[1].Name
}

// orderSpread is how much the orders measured disagree: "the default and
// reverse orders disagree by up to ×9.4 (output: ×0.864 in the default
// order, ×8.12 in the reverse)"; "" when one order alone was measured.
func orderSpread(a waterfall.Attribution) string {
	w := worstPin(a)
	if len(a.Orders) < 2 || w == nil || len(w.Ratios) < 2 {
		return ""
	}
	return fmt.Sprintf("the %s orders disagree by up to ×%s (%s: ×%s in the %s order, ×%s in the %s)",
		orderNames(a), numfmt.Sig(a.Spread), w.Pin, numfmt.Sig(w.Ratios[0]), a.Orders[0].Name, numfmt.Sig(w.Ratios[1]), a.Orders[1].Name)
}

// orderNote is the chart's line on order dependence ("" when exact, or
// when the orders measured agree).
func orderNote(f *waterfall.File) string {
	a := f.Attribution
	switch {
	case a.Method == waterfall.MethodExact || len(a.Pins) == 0:
		return ""
	case orderSpread(a) == "":
		return "DEPENDS ON THE ORDER: another order would differ by an amount not measured"
	case a.Spread < 1+1e-9:
		return ""
	}
	return "DEPENDS ON THE ORDER: " + orderSpread(a)
}

// wfRow is one bar of a waterfall: the start, a step (or a pin's exact
// Shapley factor), or the end.
type wfRow struct {
	name, what, view string
	metric           string
	prev, value      float64
	// ratio is value / prev; noise is true when the step's change is
	// within noise; total marks the start and end.
	ratio float64
	noise bool
	total bool
	// valid is that of the runs the bar was read from; of is how many
	// runs that is (0: not known).
	valid waterfall.Validity
	of    int
}

// stepRows are the waterfall's measured bars: the start, each step in
// the order, the end.
func stepRows(f *waterfall.File) []wfRow {
	rows := []wfRow{{name: "start", what: startWords(f), view: f.Start.Window + ", " + f.Start.Metric, metric: f.Start.Metric,
		value: f.Start.Value, total: true, valid: f.Start.Validity, of: f.Repeat}}
	prev := f.Start.Value
	for i := range f.Steps {
		s := &f.Steps[i]
		rows = append(rows, wfRow{name: s.Pin, what: s.From + " → " + s.To, view: s.Window + ", " + s.Metric, metric: s.Metric,
			prev: prev, value: s.Value, ratio: s.Ratio, noise: s.Noise, valid: s.Validity, of: f.Repeat})
		prev = s.Value
	}
	if !f.Incomplete {
		rows = append(rows, wfRow{name: "end", what: "production pins (" + f.To + ")", view: f.End.Window + ", " + f.End.Metric, metric: f.End.Metric,
			value: f.End.Value, total: true, valid: f.End.Validity, of: f.Repeat})
	}
	return rows
}

// shapleyView is the view of a pin's bar in the exact attribution.
const shapleyView = "exact Shapley"

// shapleyRows are the exact attribution as a waterfall: the start, each
// pin's Shapley factor applied in the order (no order changes them),
// the end. Every factor reads every configuration, so each carries the
// invalid configurations of them all.
func shapleyRows(f *waterfall.File) []wfRow {
	steps := stepRows(f)
	rows := []wfRow{steps[0]}
	var all waterfall.Validity
	for _, c := range f.Configs {
		all = all.Merge(f.Validity(c))
	}
	prev := f.Start.Value
	for _, pc := range f.Attribution.Pins {
		cur := prev * pc.Shapley
		r := wfRow{name: pc.Pin, what: f.Start.Pins[pc.Pin] + " → " + f.End.Pins[pc.Pin], view: shapleyView, prev: prev, value: cur, ratio: pc.Shapley, valid: all}
		if pc.Pin == waterfall.PinMetric {
			r.metric = waterfall.SwitchTo
		}
		rows = append(rows, r)
		prev = cur
	}
	return append(rows, steps[len(steps)-1])
}

// exactBars reports whether f's bars are its exact attribution.
func exactBars(f *waterfall.File) bool {
	return f.Attribution.Method == waterfall.MethodExact && len(f.Attribution.Pins) > 0
}

// barRows are the bars f is drawn with: its exact attribution when it
// has one, else its steps.
func barRows(f *waterfall.File) []wfRow {
	if exactBars(f) {
		return shapleyRows(f)
	}
	return stepRows(f)
}

// invalidHeads is "pin, pin" of the reasons ("pin: why").
func invalidHeads(v waterfall.Validity) string {
	var heads []string
	for _, why := range v.Invalid {
		h, _, _ := strings.Cut(why, ":")
		if !slices.Contains(heads, h) {
			heads = append(heads, h)
		}
	}
	return strings.Join(heads, ", ")
}

// invalidLines label a bar read from invalid runs, narrow enough for its
// slot: "invalid:", then one pin (or budget) a line.
func invalidLines(v waterfall.Validity) []string {
	heads := strings.Split(invalidHeads(v), ", ")
	for i := range heads[:len(heads)-1] {
		heads[i] += ","
	}
	return append([]string{"invalid:"}, heads...)
}

// invalidWords is the row's validity for the steps table: "✓ valid", or
// "✗ invalid (1 of 3 runs): errors, prompt".
func (r wfRow) invalidWords() string {
	if r.valid.InvalidRuns == 0 {
		return "✓ valid"
	}
	of := ""
	if r.of > 0 {
		of = fmt.Sprintf(" (%d of %s)", r.valid.InvalidRuns, numfmt.Count(r.of, "run", "runs"))
	}
	return "✗ invalid" + of + ": " + invalidHeads(r.valid)
}

// prefillLines say why the metric switch costs what it costs, at the
// production pins, in four short lines for the chart (nil without the
// switch); prefillText says it in one line.
func prefillLines(f *waterfall.File) []string {
	p := f.Prefill
	if p == nil {
		return nil
	}
	return []string{
		fmt.Sprintf("prefill %s%% of the time", strconv.FormatFloat(p.Share*100, 'f', 0, 64)),
		"(Σ TTFT / Σ E2E)",
		fmt.Sprintf("TTFT p50 %s ms", numfmt.Sig(p.TTFTMs)),
		"at production pins",
	}
}

func prefillText(f *waterfall.File) string {
	l := prefillLines(f)
	if l == nil {
		return ""
	}
	return fmt.Sprintf("%s %s, %s %s", l[0], l[1], l[2], l[3])
}

// stepsTitle heads the steps table: in an exact waterfall, whose bars
// are the attribution, it says the steps are one order's.
func stepsTitle(f *waterfall.File, otherwise string) string {
	if exactBars(f) {
		return "Steps as measured, in the " + f.Attribution.Orders[0].Name + " order"
	}
	return otherwise
}

func startWords(f *waterfall.File) string {
	if f.From == waterfall.Brochure {
		return "brochure pins: 1 stream, 128-token prompt, 32 tokens out"
	}
	return "start pins (" + f.From + ")"
}

// ratioWords is a ratio as a factor and a percentage: "×0.62 (−38%)".
func ratioWords(r float64) string {
	return "×" + numfmt.Sig(r) + " (" + signedPct(r-1) + ")"
}

func signedPct(f float64) string {
	s := strconv.FormatFloat(f*100, 'f', 0, 64)
	if s == "-0" {
		s = "0"
	}
	if f > 0 && s != "0" {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1) + "%"
}

// sharePct is a share in percent, one decimal, a true minus sign.
func sharePct(f float64) string { return strings.Replace(pct(f), "-", "−", 1) }

func signed(v float64) string {
	if v > 0 {
		return "+" + numfmt.Sig(v)
	}
	return strings.Replace(numfmt.Sig(v), "-", "−", 1)
}

// stepsTable is the waterfall's measured steps as a table: a row per
// bar, each marked by the validity of the runs it was read from.
func stepsTable(f *waterfall.File) setTable {
	t := setTable{head: []string{"step", "from → to", "window, metric", "value", "change", "ratio", "share", "95% CI of change", "runs"}}
	for i, r := range stepRows(f) {
		row := []string{r.name, r.what, r.view, numfmt.Sig(r.value) + " " + metricUnit(r.metric), "", "", "", "", r.invalidWords()}
		switch {
		case !r.total:
			s := f.Steps[i-1]
			row[4], row[5], row[6] = signed(s.Delta), ratioWords(s.Ratio), sharePct(s.Share)
			switch {
			case s.CI == nil:
				row[7] = "— (one run)"
			case s.Noise:
				row[7] = fmt.Sprintf("[%s, %s] within noise", signed(s.CI.Lo), signed(s.CI.Hi))
			default:
				row[7] = fmt.Sprintf("[%s, %s]", signed(s.CI.Lo), signed(s.CI.Hi))
			}
		case r.name == "end" && f.Start.Value > 0:
			row[5] = ratioWords(f.End.Value / f.Start.Value)
			row[6] = "100.0%"
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// attributionTable is each pin's cost in every order, the range the
// orders give it, and its Shapley factor (nil for one order: the steps
// say it all).
func attributionTable(f *waterfall.File) *setTable {
	a := f.Attribution
	if a.Method == waterfall.MethodOrder || len(a.Pins) == 0 {
		return nil
	}
	t := setTable{title: "Attribution: " + methodWords(a.Method), head: []string{"pin"}}
	for _, o := range a.Orders {
		t.head = append(t.head, "in the "+o.Name+" order")
	}
	span, shap := "the orders' range", "Shapley (mean of the orders)"
	if a.Method == waterfall.MethodExact {
		span, shap = "range over every order", "Shapley (exact)"
	}
	t.head = append(t.head, span, shap, "share")
	for _, pc := range a.Pins {
		row := []string{pc.Pin}
		for _, r := range pc.Ratios {
			row = append(row, ratioWords(r))
		}
		row = append(row, "×"+numfmt.Sig(pc.Lo)+" to ×"+numfmt.Sig(pc.Hi), ratioWords(pc.Shapley), sharePct(pc.Share))
		t.rows = append(t.rows, row)
	}
	return &t
}

// waterfallFacts are the lines under a waterfall's title: the metric, the
// attribution's order dependence, the claim, the skipped pins, the
// target, notes.
func waterfallFacts(f *waterfall.File) []string {
	var fs []string
	if f.Metric == "" {
		fs = append(fs, fmt.Sprintf("Metric: %s at the start, %s at the end; the switch is its own step.", metricWords(waterfall.SwitchFrom), metricWords(waterfall.SwitchTo)))
	} else {
		fs = append(fs, "Metric: "+metricWords(f.Metric)+", held through every step.")
	}
	if s := attributionWords(f); s != "" {
		fs = append(fs, s)
	}
	if c := f.Claim; c != nil {
		fs = append(fs, fmt.Sprintf("Claimed %s; measured at the start's pins %s (%s).", numfmt.Sig(c.Value), numfmt.Sig(c.Measured), signedPct(c.DeltaPct/100)))
	}
	for _, s := range f.Skipped {
		fs = append(fs, fmt.Sprintf("Skipped %s: %s (%s).", s.Pin, s.Reason, s.Value))
	}
	if len(f.Runs) > 0 {
		t := f.Runs[0].Target
		line := "Target: " + TargetLabel(t)
		if t.Simulated {
			line += " — SIMULATED figures, not a measurement of real hardware"
		}
		fs = append(fs, line+".")
	}
	if s := compressedFact(f); s != "" {
		fs = append(fs, s)
	}
	runs := "run"
	if f.Repeat > 1 {
		runs = "runs (seeds paired across steps)"
	}
	fs = append(fs, fmt.Sprintf("Each configuration: %d %s; %s in all.", f.Repeat, runs, numfmt.Count(len(f.Runs), "run", "runs")))
	invalid := 0
	for _, r := range f.Runs {
		if !r.Valid {
			invalid++
		}
	}
	if invalid > 0 {
		fs = append(fs, fmt.Sprintf("%d of %d runs were invalid (a pin did not hold): the bars read from them are marked invalid; see their pin cards in the file.", invalid, len(f.Runs)))
	}
	if f.Incomplete {
		fs = append(fs, "INCOMPLETE: "+f.IncompleteReason+".")
	}
	for _, n := range f.Fallbacks {
		fs = append(fs, "Note: "+n+".")
	}
	fs = append(fs, f.Notes...)
	return fs
}

// compressedFact says a waterfall ran in compressed time and how far the
// unscaled time moved TTFT across its runs ("" in real time).
func compressedFact(f *waterfall.File) string {
	var z *results.Compressed
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range f.Runs {
		if c := r.Compressed; c != nil {
			z = c
			lo, hi = math.Min(lo, c.TTFTOverPct), math.Max(hi, c.TTFTOverPct)
		}
	}
	if z == nil {
		return ""
	}
	s := compressedHead(z.Scale)
	if hi > 0 {
		s += fmt.Sprintf(", so TTFT p50 reads %s–%s%% high across the runs", strconv.FormatFloat(lo, 'f', 0, 64), strconv.FormatFloat(hi, 'f', 0, 64))
	}
	return s + "; latencies and the rates made of them (effective, decode and aggregate tok/s) are distorted, each run's note says how. Run without --time-scale for figures real time reproduces."
}

// barWidth is the width of the terminal waterfall's widest bar, in cells.
const barWidth = 40

// textBars draws the waterfall in the terminal: the start and end as
// full bars, each step (or, exact, each pin's Shapley factor) as the
// part it kept (█) and the part it lost (░) or gained (▓); the claim as
// a line of its own.
func textBars(p *numfmt.Printer, f *waterfall.File) {
	rows := barRows(f)
	top := 0.0
	width := len("claimed")
	for _, r := range rows {
		top = math.Max(top, math.Max(r.value, r.prev))
		width = max(width, len([]rune(r.name)))
	}
	if f.Claim != nil {
		top = math.Max(top, f.Claim.Value)
	}
	if !(top > 0) {
		return
	}
	if exactBars(f) {
		p.F("  Each pin's exact Shapley factor (no order changes it), applied from the start:\n")
		if v := rows[1].valid; v.InvalidRuns > 0 {
			p.F("  (every factor reads every configuration's runs, and %d of the %d were invalid: %s)\n", v.InvalidRuns, len(f.Runs), invalidHeads(v))
		}
	}
	cells := func(v float64) int { return int(math.Round(v / top * barWidth)) }
	for i, r := range rows {
		var bar string
		if r.total {
			bar = strings.Repeat("█", cells(r.value))
		} else {
			lo, hi := cells(math.Min(r.prev, r.value)), cells(math.Max(r.prev, r.value))
			mark := "░"
			if r.value > r.prev {
				mark = "▓"
			}
			bar = strings.Repeat("█", lo) + strings.Repeat(mark, max(hi-lo, 0))
		}
		label := numfmt.Sig(r.value)
		if !r.total {
			label += "  " + ratioWords(r.ratio)
			if r.noise {
				label += ", within noise"
			}
		}
		if w := prefillText(f); w != "" && r.name == waterfall.PinMetric {
			label += " — " + w
		}
		if r.valid.InvalidRuns > 0 && r.view != shapleyView {
			label += "  [invalid: " + invalidHeads(r.valid) + "]"
		}
		p.F("  %-*s %-*s %s\n", width, r.name, barWidth, bar, label)
		if c := f.Claim; i == 0 && c != nil {
			p.F("  %-*s %-*s %s (the start measured %s, %s)\n", width, "claimed", barWidth, strings.Repeat("┄", cells(c.Value)),
				numfmt.Sig(c.Value), numfmt.Sig(c.Measured), signedPct(c.DeltaPct/100))
		}
	}
}

// WriteWaterfallText writes a waterfall as text (md: Markdown): its
// facts, the bars drawn in characters, the table of steps and the
// attribution.
func WriteWaterfallText(w io.Writer, f *waterfall.File, md bool) error {
	p := &numfmt.Printer{W: w}
	title := fmt.Sprintf("Waterfall: %s → %s", f.From, f.To)
	if md {
		p.F("# %s\n\n", title)
		for _, l := range waterfallFacts(f) {
			p.F("- %s\n", l)
		}
		p.F("\n```text\n")
	} else {
		p.F("%s\n", title)
		for _, l := range waterfallFacts(f) {
			p.F("  %s\n", l)
		}
		p.F("\n")
	}
	textBars(p, f)
	if md {
		p.F("```\n")
	}
	p.F("\n")
	t := stepsTable(f)
	t.title = stepsTitle(f, "")
	t.write(p, md)
	if t := attributionTable(f); t != nil {
		p.F("\n")
		t.write(p, md)
	}
	p.F("\n%s\n", shareWords(md))
	return p.Err
}

func shareWords(md bool) string {
	s := "Share is the step's part of the whole change, multiplicatively (ln ratio / ln(end / start)): the shares sum to 100% and start × Π ratios = end."
	if md {
		return "_" + s + "_"
	}
	return s
}

// Waterfall chart colours.
const (
	colLoss  = colFailed
	colGain  = colSteady
	colNoise = colOK
	colTotal = colStream
)

// waterfallChart draws the waterfall's answer: with exact attribution
// each pin's Shapley factor, which no order changes; otherwise the steps
// in their order, saying plainly that another order differs.
func waterfallChart(f *waterfall.File) *chart {
	if exactBars(f) {
		rows := shapleyRows(f)
		c := barChart(f, rows, "Where the figure went: each pin's exact Shapley factor (order-independent)", "pin")
		if v := rows[1].valid; v.InvalidRuns > 0 {
			c.note = append(c.note, fmt.Sprintf("hatched: every Shapley factor reads every configuration's runs, and %d of the %d were invalid (invalid: %s)",
				v.InvalidRuns, len(f.Runs), invalidHeads(v)))
		}
		return c
	}
	return stepsChart(f)
}

// stepsChart draws the measured steps in their order.
func stepsChart(f *waterfall.File) *chart {
	title := "Where the figure went: one pin at a time, in the " + f.Attribution.Orders[0].Name + " order"
	c := barChart(f, stepRows(f), title, "step (in order)")
	if n := orderNote(f); n != "" {
		c.note = append(c.note, n)
	}
	return c
}

// barChart draws rows: the start and end as bars from zero, each other
// row as a floating bar from the value before it to the value after (red
// a loss, green a gain, grey within noise), hatched and labelled
// "invalid: …" when read from invalid runs; the metric switch says why
// it costs what it costs above its bar; the claim is a dashed line.
func barChart(f *waterfall.File, rows []wfRow, title, xLabel string) *chart {
	top := 0.0
	for _, r := range rows {
		top = math.Max(top, math.Max(r.value, r.prev))
	}
	if f.Claim != nil {
		top = math.Max(top, f.Claim.Value)
	}
	// Room above the tallest bar for the lines written over bars.
	yt, y0, y1 := niceTicks(0, top*1.2, 6, tickLabel)
	n := float64(len(rows))
	c := &chart{
		title:  title,
		width:  math.Max(640, 120+96*n),
		height: 400,
		xLabel: xLabel,
		yLabel: metricWords(f.End.Metric),
		x:      axis{min: 0, max: n},
		y:      axis{min: y0, max: y1, ticks: yt},
		left:   72,
	}
	if f.Metric == "" {
		c.yLabel = "tok/s per stream (P50): decode, then effective"
	}
	for i, r := range rows {
		x := float64(i)
		c.x.ticks = append(c.x.ticks, tick{x + 0.5, r.name})
		fb := floatBar{from: x + 0.15, to: x + 0.85, lo: math.Min(r.prev, r.value), hi: math.Max(r.prev, r.value), color: colGain}
		switch {
		case r.total:
			fb.lo, fb.hi, fb.color = 0, r.value, colTotal
			fb.title = fmt.Sprintf("%s: %s %s (%s)", r.name, numfmt.Sig(r.value), metricUnit(r.metric), r.view)
		case r.noise:
			fb.color = colNoise
		case r.value < r.prev:
			fb.color = colLoss
		}
		if !r.total {
			fb.title = fmt.Sprintf("%s: %s; %s → %s %s, %s", r.name, r.what, numfmt.Sig(r.prev), numfmt.Sig(r.value), metricUnit(r.metric), ratioWords(r.ratio))
		}
		if r.name == waterfall.PinMetric {
			fb.labels = append(fb.labels, prefillLines(f)...)
		}
		if r.valid.InvalidRuns > 0 {
			fb.hatched = true
			fb.title += "; INVALID: " + strings.Join(r.valid.Invalid, "; ")
			if r.view != shapleyView {
				fb.labels = append(invalidLines(r.valid), fb.labels...)
			}
		}
		c.floats = append(c.floats, fb)
	}
	if cl := f.Claim; cl != nil {
		c.hlines = append(c.hlines, hline{y: cl.Value, from: 0, to: n, color: colBurst,
			label: fmt.Sprintf("claimed %s · measured %s at the start (%s)", numfmt.Sig(cl.Value), numfmt.Sig(cl.Measured), signedPct(cl.DeltaPct/100))})
	}
	return c
}

// WriteWaterfallHTML writes a waterfall as one self-contained page: its
// facts, the SVG waterfall chart, the table of steps and the attribution.
func WriteWaterfallHTML(w io.Writer, f *waterfall.File) error {
	var b strings.Builder
	esc := html.EscapeString
	title := fmt.Sprintf("sixpin waterfall: %s → %s", f.From, f.To)
	writePageHead(&b, title, "")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(title))
	if len(f.Runs) > 0 && f.Runs[0].Target.Simulated {
		b.WriteString("<p class=\"ident\"><span class=\"badge sim\">SIMULATED</span></p>\n")
	}
	if f.Incomplete {
		fmt.Fprintf(&b, "<div class=\"warn\"><b>INCOMPLETE:</b> %s</div>\n", esc(f.IncompleteReason))
	}
	b.WriteString("<ul class=\"facts\">\n")
	for _, l := range waterfallFacts(f) {
		fmt.Fprintf(&b, "<li>%s</li>\n", esc(l))
	}
	b.WriteString("</ul>\n<div class=\"charts\">\n")
	const legend = "red a loss, green a gain, grey within noise; hatched: read from invalid runs."
	if exactBars(f) {
		figure(&b, waterfallChart(f), "Start and end measured, from zero; each pin floats by its exact Shapley factor, the same in every order: "+legend)
		figure(&b, stepsChart(f), stepsTitle(f, "")+": each floats from the value before it to the value after; "+legend)
	} else {
		figure(&b, waterfallChart(f), "Start and end from zero; each step floats from the value before it to the value after: "+legend)
	}
	b.WriteString("</div>\n")
	t := stepsTable(f)
	t.title = stepsTitle(f, "Steps")
	t.html(&b)
	if a := attributionTable(f); a != nil {
		a.html(&b)
	}
	fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(shareWords(false)))
	fmt.Fprintf(&b, "<footer>Generated by sixpin from a waterfall of %d runs; each run's full results and pin card are in the file.</footer>\n</body>\n</html>\n", len(f.Runs))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteWaterfallCSV writes a row per bar of the waterfall.
func WriteWaterfallCSV(w io.Writer, f *waterfall.File) error {
	p := &numfmt.Printer{W: w}
	p.F("step,pin,from,to,config,window,metric,value,delta,ratio,share,ci_lo,ci_hi,noise,invalid_runs,invalid\n")
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	inv := func(v waterfall.Validity) string {
		return strconv.Itoa(v.InvalidRuns) + "," + q(strings.Join(v.Invalid, "; "))
	}
	p.F("0,start,,,%s,%s,%s,%s,,,,,,,%s\n", q(f.Start.Config), f.Start.Window, f.Start.Metric, g(f.Start.Value), inv(f.Start.Validity))
	for i, s := range f.Steps {
		lo, hi := "", ""
		if s.CI != nil {
			lo, hi = g(s.CI.Lo), g(s.CI.Hi)
		}
		p.F("%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%t,%s\n", i+1, s.Pin, q(s.From), q(s.To), q(s.Config), s.Window, s.Metric,
			g(s.Value), g(s.Delta), g(s.Ratio), g(s.Share), lo, hi, s.Noise, inv(s.Validity))
	}
	if !f.Incomplete {
		p.F("%d,end,,,%s,%s,%s,%s,,,,,,,%s\n", len(f.Steps)+1, q(f.End.Config), f.End.Window, f.End.Metric, g(f.End.Value), inv(f.End.Validity))
	}
	return p.Err
}

// waterfallInputs are a waterfall's runs as report inputs, named
// FILE#CONFIG/seed=N.
func waterfallInputs(name string, f *waterfall.File) []Input {
	var ins []Input
	for _, c := range f.Configs {
		key := c.Key
		if key == "" {
			key = "start"
		}
		for j, r := range c.Runs {
			if r >= 0 && r < len(f.Runs) && j < len(c.Seeds) {
				ins = append(ins, Input{Name: fmt.Sprintf("%s#%s/seed=%d", name, key, c.Seeds[j]), Run: f.Runs[r]})
			}
		}
	}
	return ins
}

// RenderWaterfall renders a waterfall file in format ft: text, Markdown
// and HTML draw the waterfall; CSV writes a row per step; JUnit its runs'
// suites, named FILE#CONFIG/seed=N.
func RenderWaterfall(w io.Writer, ft Format, name string, f *waterfall.File) error {
	switch ft {
	case FormatMarkdown:
		return WriteWaterfallText(w, f, true)
	case FormatHTML:
		return WriteWaterfallHTML(w, f)
	case FormatCSV:
		return WriteWaterfallCSV(w, f)
	case FormatJUnit:
		return WriteJUnit(w, waterfallInputs(name, f))
	}
	return WriteWaterfallText(w, f, false)
}

// isWaterfall reports whether the file at path declares the waterfall
// schema (a file that cannot be read is left to the results reader).
func isWaterfall(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && results.SchemaOf(data) == waterfall.Schema
}
