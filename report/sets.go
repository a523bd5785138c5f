package report

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// headline is one run's figures in a set's tables: its headline window
// (steady), or the whole run when the steady window has no success.
type headline struct {
	window                string
	requests, ok          int
	aggregate, inFlight   float64
	perStream             float64
	decode, effective     float64
	ttft, ttftP99, tpot   float64
	promptP50             float64
	errorRate, rate429    float64
	valid                 bool
	lifetimeMin           float64
	costHour, costMOutput float64
}

func headlineOf(r *results.Run) headline {
	name := r.Headline
	w := r.Windows[name]
	if w == nil || w.Completed == 0 {
		name, w = results.WindowAll, r.Windows[results.WindowAll]
	}
	h := headline{window: name, valid: r.Valid && !r.Incomplete, errorRate: r.Errors.Rate}
	if w != nil {
		h.requests, h.ok = w.Requests, w.Completed
		h.aggregate, h.inFlight, h.perStream = w.AggregateOutputTokS, w.MeanInFlight, w.AggregatePerStreamTokS
		h.decode, h.effective = p50(w.DecodeTokS), p50(w.EffectiveTokS)
		h.ttft, h.tpot = p50(w.TTFTMs), p50(w.TPOTMs)
		if w.TTFTMs != nil {
			h.ttftP99 = w.TTFTMs.P99
		}
		if w.PromptTokens != nil {
			h.promptP50 = w.PromptTokens.P50
		}
	}
	if n := r.Errors.Requests; n > 0 {
		h.rate429 = float64(r.Errors.ByClass[string(results.ErrHTTP429)]) / float64(n)
	}
	if r.Sessions != nil && r.Sessions.LifetimeMin != nil {
		h.lifetimeMin = r.Sessions.LifetimeMin.P50
	}
	if c := r.Cost; c != nil {
		h.costHour, h.costMOutput = c.PerHourUSD, c.PerMOutputTokensUSD
	}
	return h
}

func p50(d *results.Dist) float64 {
	if d == nil {
		return math.NaN()
	}
	return d.P50
}

// cell formats a figure, or "–" when there is none.
func cell(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return num(v)
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// table writes rows as a Markdown table, or as aligned text.
func table(p *numfmt.Printer, md bool, head []string, rows [][]string) {
	if md {
		p.F("| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
		for _, r := range rows {
			for i := range r {
				r[i] = mdCell(r[i])
			}
			p.F("| %s |\n", strings.Join(r, " | "))
		}
		return
	}
	width := make([]int, len(head))
	for i, h := range head {
		width[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(cells []string) {
		for i, c := range cells {
			p.F("  %-*s", width[i], c)
		}
		p.F("\n")
	}
	line(head)
	for _, r := range rows {
		line(r)
	}
}

// WriteSweep renders a sweep: the pin card of its first point (every
// point holds the same five other pins), then a row per point with the
// headline figures. md selects Markdown.
func WriteSweep(w io.Writer, set *results.Set, md bool) error {
	p := &numfmt.Printer{W: w}
	if md {
		p.F("# sixpin sweep: %s, %s = %s\n\n", set.Scenario, set.Pin, joinValues(set.Values))
	} else {
		p.F("SWEEP %s: %s = %s (the other five pins held; figures from each point's steady window)\n\n", set.Scenario, set.Pin, joinValues(set.Values))
	}
	writeSetIncomplete(p, set)
	if len(set.Runs) > 0 {
		writeCard(p, md, set.Runs[0], "Pins held (shown for the first point)")
	}
	head := []string{set.Pin, "requests ok", "aggregate tok/s", "in flight", "per stream (agg/in flight)", "decode tok/s p50", "effective tok/s p50", "TTFT ms p50", "TTFT ms p99", "TPOT ms p50", "valid"}
	var rows [][]string
	for i, r := range set.Runs {
		h := headlineOf(r)
		rows = append(rows, []string{value(set, i), fmt.Sprintf("%d/%d", h.ok, h.requests), cell(h.aggregate), cell(h.inFlight),
			cell(h.perStream), cell(h.decode), cell(h.effective), cell(h.ttft), cell(h.ttftP99), cell(h.tpot), yesNo(h.valid)})
	}
	p.F("\n")
	table(p, md, head, rows)
	return p.Err
}

func value(set *results.Set, i int) string {
	if i < len(set.Values) {
		return strconv.FormatFloat(set.Values[i], 'f', -1, 64)
	}
	return "?"
}

func joinValues(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// writeCard writes a run's pin card, titled.
func writeCard(p *numfmt.Printer, md bool, r *results.Run, title string) {
	card := PinCard(r)
	if !md {
		p.F("%s:\n", title)
		if p.Err == nil {
			p.Err = WritePinCard(p.W, card)
		}
		return
	}
	p.F("**%s** (%s)\n\n| | pin | declared | observed | verdict |\n| --- | --- | --- | --- | --- |\n", title, card.Window)
	for _, row := range card.Rows {
		p.F("| %s | %s | %s | %s | %s |\n", row.Mark(), row.Pin, mdCell(row.Declared), mdCell(row.Observed), mdCell(row.Reason))
	}
}

// WriteSweepHTML renders a sweep as one self-contained page: the table,
// aggregate against per-stream throughput (the throughput–latency Pareto
// view: every point is a concurrency, or a length, and moving along the
// curve trades one for the other) and effective throughput against
// context length.
func WriteSweepHTML(w io.Writer, set *results.Set) error {
	var b strings.Builder
	esc := html.EscapeString
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>sixpin sweep: %s</title>\n<style>%s</style>\n</head>\n<body>\n",
		esc(set.Scenario), htmlStyle)
	var tb strings.Builder
	if err := WriteSweep(&tb, set, true); err != nil {
		return err
	}
	fmt.Fprintf(&b, "<h1>sixpin sweep: %s</h1>\n<pre>%s</pre>\n", esc(set.Scenario), esc(tb.String()))
	var pareto, context [][2]float64
	for _, r := range set.Runs {
		h := headlineOf(r)
		if !math.IsNaN(h.perStream) && h.aggregate > 0 {
			pareto = append(pareto, [2]float64{h.perStream, h.aggregate})
		}
		if h.promptP50 > 0 && !math.IsNaN(h.effective) {
			context = append(context, [2]float64{h.promptP50, h.effective})
		}
	}
	for _, c := range []struct {
		title, x, y string
		pts         [][2]float64
	}{
		{fmt.Sprintf("Aggregate vs per-stream throughput, one point per %s", set.Pin), "per-stream output tok/s (aggregate / mean in flight)", "aggregate output tok/s", pareto},
		{"Effective throughput vs context length", "prompt tokens (p50, usage)", "effective tok/s per stream (p50)", context},
	} {
		if len(c.pts) == 0 {
			continue
		}
		ch := scatterChart(c.title, c.x, c.y, c.pts)
		ch.render(&b)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// scatterChart is a line through points in order, on axes that fit them.
func scatterChart(title, xl, yl string, pts [][2]float64) *chart {
	lox, hix, loy, hiy := pts[0][0], pts[0][0], pts[0][1], pts[0][1]
	for _, p := range pts {
		lox, hix = math.Min(lox, p[0]), math.Max(hix, p[0])
		loy, hiy = math.Min(loy, p[1]), math.Max(hiy, p[1])
	}
	if hix == lox {
		hix = lox + 1
	}
	xt, x0, x1 := niceTicks(0, hix, 6, num)
	yt, y0, y1 := niceTicks(0, hiy, 5, num)
	return &chart{
		title: title, width: 720, height: 320, xLabel: xl, yLabel: yl,
		x:      axis{min: x0, max: x1, ticks: xt},
		y:      axis{min: y0, max: y1, ticks: yt},
		series: []series{{name: "sweep points, in order", color: "#1f6feb", pts: pts}},
	}
}

// writeSetIncomplete says that set is incomplete, and how far it got.
func writeSetIncomplete(p *numfmt.Printer, set *results.Set) {
	if set.Incomplete {
		p.F("INCOMPLETE: %s\n\n", set.IncompleteReason)
	}
}

// WriteRepeat renders repeated runs: per headline figure the mean across
// runs with its 95% confidence interval (Student's t), and the spread.
func WriteRepeat(w io.Writer, set *results.Set, md bool) error {
	p := &numfmt.Printer{W: w}
	n := len(set.Runs)
	if md {
		p.F("# sixpin: %s, %d runs\n\n", set.Scenario, n)
	} else {
		p.F("REPEATS %s: %d runs, seeds from the scenario's on; means with 95%% confidence intervals across runs (Student's t), each run's steady window\n\n", set.Scenario, n)
	}
	writeSetIncomplete(p, set)
	if n > 0 {
		writeCard(p, md, set.Runs[0], "Pins (shown for the first run)")
	}
	hs := make([]headline, n)
	for i, r := range set.Runs {
		hs[i] = headlineOf(r)
	}
	rows := [][]string{}
	for _, m := range []struct {
		name string
		get  func(headline) float64
	}{
		{"aggregate output tok/s", func(h headline) float64 { return h.aggregate }},
		{"per-stream tok/s (aggregate / in flight)", func(h headline) float64 { return h.perStream }},
		{"decode tok/s p50 (per stream)", func(h headline) float64 { return h.decode }},
		{"effective tok/s p50 (per stream)", func(h headline) float64 { return h.effective }},
		{"TTFT ms p50", func(h headline) float64 { return h.ttft }},
		{"TTFT ms p99", func(h headline) float64 { return h.ttftP99 }},
		{"TPOT ms p50", func(h headline) float64 { return h.tpot }},
		{"error rate", func(h headline) float64 { return h.errorRate }},
	} {
		var xs []float64
		for _, h := range hs {
			if v := m.get(h); !math.IsNaN(v) {
				xs = append(xs, v)
			}
		}
		mean, half := stats.MeanCI(xs, 0.95)
		lo, hi := stats.MinMax(xs)
		rows = append(rows, []string{m.name, cell(mean), "± " + cell(half), cell(lo), cell(hi)})
	}
	p.F("\n")
	table(p, md, []string{"figure", "mean", "95% CI", "min", "max"}, rows)
	invalid := 0
	for _, h := range hs {
		if !h.valid {
			invalid++
		}
	}
	if invalid > 0 {
		p.F("\n%d of %d runs were invalid or incomplete: see their results.\n", invalid, n)
	}
	return p.Err
}

// WriteBakeoff renders a bake-off: the scenario's pins (shared by every
// vendor), each vendor's figures, and the "usable" view — intelligence
// as a gate the user declares, then throughput, context lifetime, cost and
// reliability each in its own column, the best of each marked, so that a
// reader sees where each vendor wins and loses; no blended score.
func WriteBakeoff(w io.Writer, set *results.Set, md bool) error {
	p := &numfmt.Printer{W: w}
	if md {
		p.F("# sixpin bake-off: %s\n\n", set.Scenario)
	} else {
		p.F("BAKE-OFF %s: %s\n\n", set.Scenario, strings.Join(set.Profiles, " vs "))
	}
	writeSetIncomplete(p, set)
	if len(set.Runs) > 0 {
		writeCard(p, md, set.Runs[0], "Pins shared by every vendor (card of the first; each vendor's own card is in its results)")
	}
	hs := make([]headline, len(set.Runs))
	for i, r := range set.Runs {
		hs[i] = headlineOf(r)
	}
	name := func(i int) string {
		if i < len(set.Profiles) {
			return set.Profiles[i]
		}
		return set.Runs[i].Target.Profile
	}
	var rows [][]string
	for i, h := range hs {
		rows = append(rows, []string{name(i), cell(h.effective), cell(h.decode), cell(h.aggregate), cell(h.ttft),
			lifetime(h), money(h.costHour), money(h.costMOutput), pct(h.errorRate), pct(h.rate429), yesNo(h.valid)})
	}
	p.F("\n")
	if md {
		p.F("## Figures (each vendor's steady window)\n\n")
	} else {
		p.F("Figures (each vendor's steady window; per stream unless marked aggregate):\n")
	}
	table(p, md, []string{"profile", "effective tok/s p50", "decode tok/s p50", "aggregate tok/s", "TTFT ms p50",
		"context lifetime", "$/hour", "$/M output", "errors", "429s", "valid"}, rows)

	// The usable view: a gate, then four columns never blended.
	best := func(get func(headline) float64, higher bool) int {
		bi := -1
		for i, h := range hs {
			v := get(h)
			if math.IsNaN(v) || v <= 0 && higher {
				continue
			}
			if bi < 0 || (higher && v > get(hs[bi])) || (!higher && v < get(hs[bi])) {
				bi = i
			}
		}
		return bi
	}
	mark := func(i, b int, s string) string {
		if i == b {
			return s + " ★"
		}
		return s
	}
	bThr := best(func(h headline) float64 { return h.effective }, true)
	bLife := best(func(h headline) float64 { return lifeOrNaN(h) }, true)
	bCost := best(func(h headline) float64 { return costOrNaN(h) }, false)
	bRel := best(func(h headline) float64 { return 1 - h.errorRate }, true)
	rows = nil
	for i, h := range hs {
		gate := set.Gates[name(i)]
		if gate == "" {
			gate = "not declared"
		}
		rows = append(rows, []string{name(i), gate, mark(i, bThr, cell(h.effective)+" tok/s"), mark(i, bLife, lifetime(h)),
			mark(i, bCost, money(h.costMOutput)+" /M out"), mark(i, bRel, pct(1-h.errorRate))})
	}
	p.F("\n")
	if md {
		p.F("## Usable? (intelligence is a gate, not a multiplier; ★ marks the best of each column)\n\n")
	} else {
		p.F("Usable? Intelligence is a gate, not a multiplier; then each dimension on its own (★ the best):\n")
	}
	table(p, md, []string{"profile", "intelligence gate", "effective throughput", "context lifetime", "cost", "reliability"}, rows)
	return p.Err
}

func lifetime(h headline) string {
	if h.lifetimeMin <= 0 {
		return "–"
	}
	return num(h.lifetimeMin) + " min"
}

func lifeOrNaN(h headline) float64 {
	if h.lifetimeMin <= 0 {
		return math.NaN()
	}
	return h.lifetimeMin
}

func costOrNaN(h headline) float64 {
	if h.costMOutput <= 0 {
		return math.NaN()
	}
	return h.costMOutput
}

func money(v float64) string {
	switch {
	case v <= 0 || math.IsNaN(v):
		return "–"
	}
	return numfmt.Money(v)
}
