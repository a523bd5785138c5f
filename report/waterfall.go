package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"os"
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
// its steps in order, the pins skipped and why, and its budget (runs of
// at most bound each).
func WriteWaterfallPlan(w io.Writer, f *waterfall.File, runs int, bound string) error {
	p := &numfmt.Printer{W: w}
	p.F("sixpin waterfall: %s → %s\n", f.From, f.To)
	p.F("  %s, in order: %s\n", numfmt.Count(len(f.Order), "step", "steps"), strings.Join(f.Order, ", "))
	for _, s := range f.Skipped {
		p.F("  skipped: %s (%s: %s)\n", s.Pin, s.Reason, s.Value)
	}
	p.F("  plan: %s × %s = %s, each bounded by %s (the window and metric steps read the runs again)\n",
		numfmt.Count(len(f.Configs), "configuration", "configurations"), numfmt.Count(f.Repeat, "run", "runs"), numfmt.Count(runs, "run", "runs"), bound)
	p.F("  attribution: %s\n", methodWords(f.Attribution.Method))
	return p.Err
}

func methodWords(m string) string {
	switch m {
	case waterfall.MethodTwoOrder:
		return "two orders (the order and its reverse; their mean is a two-order Shapley estimate)"
	case waterfall.MethodExact:
		return "exact Shapley values over every subset of the moved pins"
	}
	return "each step's change, in this order (pins that interact cost differently in another order: --orders 2, --exact)"
}

// wfRow is one bar of a waterfall: the start, a step, or the end.
type wfRow struct {
	name, what, view string
	prev, value      float64
	step             *waterfall.Step
	total            bool
}

func wfRows(f *waterfall.File) []wfRow {
	rows := []wfRow{{name: "start", what: startWords(f), view: f.Start.Window + ", " + f.Start.Metric, value: f.Start.Value, total: true}}
	prev := f.Start.Value
	for i := range f.Steps {
		s := &f.Steps[i]
		rows = append(rows, wfRow{name: s.Pin, what: s.From + " → " + s.To, view: s.Window + ", " + s.Metric, prev: prev, value: s.Value, step: s})
		prev = s.Value
	}
	if !f.Incomplete {
		rows = append(rows, wfRow{name: "end", what: "production pins (" + f.To + ")", view: f.End.Window + ", " + f.End.Metric, value: f.End.Value, total: true})
	}
	return rows
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

// stepsTable is the waterfall as a table: a row per bar.
func stepsTable(f *waterfall.File) setTable {
	t := setTable{head: []string{"step", "from → to", "window, metric", "value", "change", "ratio", "share", "95% CI of change"}}
	for _, r := range wfRows(f) {
		row := []string{r.name, r.what, r.view, numfmt.Sig(r.value) + " " + metricUnit(metricOf(r.view)), "", "", "", ""}
		if s := r.step; s != nil {
			row[4], row[5], row[6] = signed(s.Delta), ratioWords(s.Ratio), sharePct(s.Share)
			switch {
			case s.CI == nil:
				row[7] = "— (one run)"
			case s.Noise:
				row[7] = fmt.Sprintf("[%s, %s] within noise", signed(s.CI.Lo), signed(s.CI.Hi))
			default:
				row[7] = fmt.Sprintf("[%s, %s]", signed(s.CI.Lo), signed(s.CI.Hi))
			}
		} else if r.name == "end" && f.Start.Value > 0 {
			row[5] = ratioWords(f.End.Value / f.Start.Value)
			row[6] = "100.0%"
		}
		t.rows = append(t.rows, row)
	}
	return t
}

func metricOf(view string) string {
	_, m, _ := strings.Cut(view, ", ")
	return m
}

// attributionTable is each pin's cost in every order, and its Shapley
// factor (nil for one order: the steps say it all).
func attributionTable(f *waterfall.File) *setTable {
	a := f.Attribution
	if a.Method == waterfall.MethodOrder || len(a.Pins) == 0 {
		return nil
	}
	t := setTable{title: "Attribution: " + methodWords(a.Method), head: []string{"pin"}}
	for _, o := range a.Orders {
		t.head = append(t.head, "in the "+o.Name+" order")
	}
	shap := "Shapley (mean of the orders)"
	if a.Method == waterfall.MethodExact {
		shap = "Shapley (exact)"
	}
	t.head = append(t.head, shap, "share")
	for _, pc := range a.Pins {
		row := []string{pc.Pin}
		for _, r := range pc.Ratios {
			row = append(row, ratioWords(r))
		}
		row = append(row, ratioWords(pc.Shapley), sharePct(pc.Share))
		t.rows = append(t.rows, row)
	}
	return &t
}

// waterfallFacts are the lines under a waterfall's title: the metric, the
// claim, the skipped pins, the target, notes.
func waterfallFacts(f *waterfall.File) []string {
	var fs []string
	if f.Metric == "" {
		fs = append(fs, fmt.Sprintf("Metric: %s at the start, %s at the end; the switch is its own step.", metricWords(waterfall.SwitchFrom), metricWords(waterfall.SwitchTo)))
	} else {
		fs = append(fs, "Metric: "+metricWords(f.Metric)+", held through every step.")
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
		fs = append(fs, fmt.Sprintf("%d of %d runs were invalid (a pin did not hold): see their pin cards in the file.", invalid, len(f.Runs)))
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

// barWidth is the width of the terminal waterfall's widest bar, in cells.
const barWidth = 40

// textBars draws the waterfall in the terminal: the start and end as
// full bars, each step as the part it kept (█) and the part it lost (░)
// or gained (▓).
func textBars(p *numfmt.Printer, f *waterfall.File) {
	rows := wfRows(f)
	top := 0.0
	width := 0
	for _, r := range rows {
		top = math.Max(top, math.Max(r.value, r.prev))
		width = max(width, len([]rune(r.name)))
	}
	if !(top > 0) {
		return
	}
	cells := func(v float64) int { return int(math.Round(v / top * barWidth)) }
	for _, r := range rows {
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
		if s := r.step; s != nil {
			label += "  " + ratioWords(s.Ratio)
			if s.Noise {
				label += ", within noise"
			}
		}
		p.F("  %-*s %-*s %s\n", width, r.name, barWidth, bar, label)
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
	stepsTable(f).write(p, md)
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

// waterfallChart draws the waterfall: the start and end as bars from
// zero, each step as a floating bar from the value before it to the value
// after (red a loss, green a gain, grey within noise), the claim as a
// dashed line.
func waterfallChart(f *waterfall.File) *chart {
	rows := wfRows(f)
	top := 0.0
	for _, r := range rows {
		top = math.Max(top, math.Max(r.value, r.prev))
	}
	if f.Claim != nil {
		top = math.Max(top, f.Claim.Value)
	}
	yt, y0, y1 := niceTicks(0, top*1.05, 6, tickLabel)
	n := float64(len(rows))
	c := &chart{
		title:  "Where the figure went: one pin at a time",
		width:  math.Max(640, 120+96*n),
		height: 380,
		xLabel: "step (in order)",
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
		s := r.step
		if s == nil {
			c.bars = append(c.bars, bar{from: x + 0.15, to: x + 0.85, y: r.value, color: colTotal,
				title: fmt.Sprintf("%s: %s %s (%s)", r.name, numfmt.Sig(r.value), metricUnit(metricOf(r.view)), r.view)})
			continue
		}
		fb := floatBar{from: x + 0.15, to: x + 0.85, lo: math.Min(r.prev, r.value), hi: math.Max(r.prev, r.value), color: colGain,
			title: fmt.Sprintf("%s: %s; %s → %s %s, %s", r.name, r.what, numfmt.Sig(r.prev), numfmt.Sig(r.value), metricUnit(s.Metric), ratioWords(s.Ratio))}
		switch {
		case s.Noise:
			fb.color = colNoise
		case s.Value < r.prev:
			fb.color = colLoss
		}
		c.floats = append(c.floats, fb)
	}
	if cl := f.Claim; cl != nil {
		c.hlines = append(c.hlines, hline{y: cl.Value, from: 0, to: n, color: colBurst, label: "claimed " + numfmt.Sig(cl.Value)})
	}
	return c
}

// WriteWaterfallHTML writes a waterfall as one self-contained page: its
// facts, the SVG waterfall chart, the table of steps and the attribution.
func WriteWaterfallHTML(w io.Writer, f *waterfall.File) error {
	var b strings.Builder
	esc := html.EscapeString
	title := fmt.Sprintf("sixpin waterfall: %s → %s", f.From, f.To)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<link rel=\"icon\" href=\"data:,\"/>\n<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n",
		esc(title), htmlStyle)
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
	figure(&b, waterfallChart(f), "Start and end from zero; each step floats from the value before it to the value after: red a loss, green a gain, grey within noise.")
	b.WriteString("</div>\n")
	t := stepsTable(f)
	t.title = "Steps"
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
	p.F("step,pin,from,to,config,window,metric,value,delta,ratio,share,ci_lo,ci_hi,noise\n")
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	p.F("0,start,,,%s,%s,%s,%s,,,,,,\n", q(f.Start.Config), f.Start.Window, f.Start.Metric, g(f.Start.Value))
	for i, s := range f.Steps {
		lo, hi := "", ""
		if s.CI != nil {
			lo, hi = g(s.CI.Lo), g(s.CI.Hi)
		}
		p.F("%d,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%t\n", i+1, s.Pin, q(s.From), q(s.To), q(s.Config), s.Window, s.Metric,
			g(s.Value), g(s.Delta), g(s.Ratio), g(s.Share), lo, hi, s.Noise)
	}
	if !f.Incomplete {
		p.F("%d,end,,,%s,%s,%s,%s,,,,,,\n", len(f.Steps)+1, q(f.End.Config), f.End.Window, f.End.Metric, g(f.End.Value))
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
