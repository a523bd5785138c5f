package report

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/verdict"
)

// tierColours colour the tiers of a capacity page, in order (then again).
var tierColours = []string{colStream, colBurst, colInFlight, colDecode, "#ad1457", "#5d4037"}

func tierColour(i int) string { return tierColours[i%len(tierColours)] }

// colFrontier draws the Pareto staircase.
const colFrontier = "#78909c"

// capacityStyle adds the capacity page's own rules to htmlStyle.
const capacityStyle = `
table.answers td { font-size: 13px; }
table.answers td.nstar { font-size: 16px; font-weight: 600; white-space: nowrap; }
table.plan th { white-space: nowrap; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 8px; display: flex; flex-wrap: wrap; gap: 4px 18px; font-size: 12px; color: #37474f; }
ul.legend svg { vertical-align: middle; margin-right: 4px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: middle; }
`

// perStreamAxis is a per-stream figure the curve can be drawn against.
type perStreamAxis struct {
	// key names it in the page ("effective", "tps_per_user"); title and
	// label say it.
	key, title, label string
	get               func(capacity.Curve) float64
}

// curveAxes are the curve's x axes: sixpin's own per-stream figure, and
// MLPerf's beside it.
var curveAxes = []perStreamAxis{
	{"effective", "Aggregate vs per-stream tok/s: effective p50 (sixpin)",
		"per stream: effective tok/s p50 (prefill included)", func(c capacity.Curve) float64 { return c.EffectiveP50TokS }},
	{"tps_per_user", "Aggregate vs per-stream tok/s: tps_per_user (MLPerf)",
		"per stream: tps_per_user = 1000 / TPOT p90", func(c capacity.Curve) float64 { return c.TPSPerUser }},
}

// finite reports whether v is a number (not NaN, not infinite).
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// WriteCapacityHTML writes a capacity file as one self-contained page (no
// scripts, no network): N* per tier with what binds one step above it and
// its confirmation, the throughput–interactivity curve against sixpin's
// and MLPerf's per-stream figures (a Pareto staircase over the points, no
// interpolation; every point marked by each tier's verdict and labelled
// with its concurrency; N* ringed per tier), each tier's conditions
// against the concurrency, every point, the plan and the notes.
func WriteCapacityHTML(w io.Writer, name string, f *capacity.File) error {
	var b strings.Builder
	esc := html.EscapeString
	title := fmt.Sprintf("sixpin capacity: %s against %s", f.ScenarioName, f.Profile)
	writePageHead(&b, title, capacityStyle)
	fmt.Fprintf(&b, "<h1>%s", esc(title))
	if f.Simulated {
		b.WriteString(`<span class="badge sim">SIMULATED</span>`)
	}
	if f.Incomplete {
		b.WriteString(`<span class="badge" style="background:#ffebee;color:#c62828">INCOMPLETE</span>`)
	}
	b.WriteString("</h1>\n")
	fmt.Fprintf(&b, "<p class=\"ident\">Scenario <b>%s</b> (<code>%s</code>) · varies %s · target profile %s · sixpin %s · <code>%s</code></p>\n",
		esc(f.ScenarioName), esc(f.Scenario), esc(axisWords(f.Plan.Axis)), esc(f.Profile), esc(f.SixpinVersion), esc(name))
	if f.Incomplete {
		fmt.Fprintf(&b, "<div class=\"warn\"><b>INCOMPLETE:</b> %s — the answers cover the points measured whole until then.</div>\n", esc(f.IncompleteReason))
	}

	b.WriteString("<h2>N* per tier</h2>\n<div class=\"cards\">\n")
	for i, a := range f.Answers {
		fmt.Fprintf(&b, "<div class=\"card\" style=\"border-left:4px solid %s\"><div class=\"k\">%s</div><div class=\"v\">%s</div><div class=\"s\">%s</div></div>\n",
			tierColour(tierIndex(f, a.Tier, i)), esc(a.Tier), esc(nStarLabel(f, a)), esc(tierConditions(f, a.Tier)))
	}
	b.WriteString("</div>\n")
	writeAnswersTable(&b, f)

	b.WriteString("<h2>The throughput–interactivity curve</h2>\n")
	writeMarksLegend(&b, f)
	var off []string
	b.WriteString("<div class=\"charts\">\n")
	for _, ax := range curveAxes {
		c, missing := capacityCurve(f, ax)
		off = append(off, missing...)
		if c == nil {
			fmt.Fprintf(&b, "<p class=\"note\">No point measured %s: no curve against it.</p>\n", esc(ax.label))
			continue
		}
		caption := "Aggregate output tok/s (all streams, steady window) against " + ax.label +
			": one mark per point, labelled with its " + pointValueWords(f.Plan.Axis) + "; the staircase is the Pareto frontier of the valid points, drawn without interpolation (only what was measured)."
		if len(c.unplaced) > 0 {
			caption += " Labels left off where they would overprint: " + strings.Join(c.unplaced, ", ") + "."
		}
		figure(&b, c, caption)
	}
	b.WriteString("</div>\n")
	for _, o := range off {
		fmt.Fprintf(&b, "<p class=\"note\">Not on the curve: %s.</p>\n", esc(o))
	}
	if charts, notes := conditionCharts(f); len(charts) > 0 {
		b.WriteString("<h2>The tiers' conditions against the concurrency</h2>\n<div class=\"charts\">\n")
		for _, c := range charts {
			figure(&b, c.chart, c.caption)
		}
		b.WriteString("</div>\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(n))
		}
	}

	b.WriteString("<h2>Points</h2>\n")
	t := capacityPointsTable(f)
	t.title = ""
	t.html(&b)

	b.WriteString("<h2>Plan</h2>\n<table class=\"plan\">\n<tbody>\n")
	for _, l := range capacityPlan(f) {
		fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(l.key), strings.Join(escAll(l.lines), "<br/>"))
	}
	b.WriteString("</tbody>\n</table>\n<h3>Notes</h3>\n")
	for _, n := range capacityNotes(f) {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(n))
	}
	fmt.Fprintf(&b, "<footer>Generated by sixpin from a capacity search of %d points; each point's full results and pin card are in the file. Every figure is bound to its pins; per-stream and aggregate throughput are different metrics.</footer>\n</body>\n</html>\n", len(f.Points))
	_, err := io.WriteString(w, b.String())
	return err
}

// pointValueWords names what a point's label gives: "concurrency
// (streams)", "concurrent sessions", "arrival rate (req/s)".
func pointValueWords(a capacity.Axis) string {
	switch a.Kind {
	case capacity.AxisRate:
		return "arrival rate (req/s)"
	case capacity.AxisSessions:
		return "concurrent sessions"
	}
	return "concurrency (streams)"
}

func escAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = html.EscapeString(s)
	}
	return out
}

// tierIndex is the tier's place in f's plan (else def).
func tierIndex(f *capacity.File, tier string, def int) int {
	if i := slices.IndexFunc(f.Plan.Tiers, func(t verdict.Tier) bool { return t.Name == tier }); i >= 0 {
		return i
	}
	return def
}

// tierConditions are the tier's conditions as written.
func tierConditions(f *capacity.File, tier string) string {
	for _, t := range f.Plan.Tiers {
		if t.Name == tier {
			return strings.TrimPrefix(t.String(), t.Name+": ")
		}
	}
	return ""
}

// nStarLabel is an answer's N* with its unit: "2 streams", "≥ 64
// sessions", "6 ≤ N* < 9 sessions", "fails at 1 session".
func nStarLabel(f *capacity.File, a capacity.Answer) string {
	switch a.Kind {
	case capacity.Found:
		return CapacityPointLabel(f, a.Lo)
	case capacity.FailsAtMin:
		return "fails at " + CapacityPointLabel(f, a.Hi)
	case capacity.Unmeasured:
		return "not measured"
	}
	return nStar(f, a) + " " + capacityUnit(f.Plan.Axis, 2)
}

// writeAnswersTable writes each tier's answer in full: N*, what binds at
// N*+1, its confirmation, the normalised figures and any notes.
func writeAnswersTable(b *strings.Builder, f *capacity.File) {
	esc := html.EscapeString
	b.WriteString("<table class=\"answers\">\n<thead><tr><th>tier</th><th>N*</th><th>the answer, and what binds one step above</th><th>confirmed</th><th>per deployment</th></tr></thead>\n<tbody>\n")
	for i, a := range f.Answers {
		answer := CapacityAnswer(f, a)
		for _, n := range a.Notes {
			answer += "\n" + n
		}
		if u := unsettledWords(f, a); u != "" {
			answer += "\n" + u
		}
		fmt.Fprintf(b, "<tr><td><span class=\"swatch\" style=\"background:%s\"></span><b>%s</b><br/><small>%s</small></td><td class=\"nstar\">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			tierColour(tierIndex(f, a.Tier, i)), esc(a.Tier), esc(tierConditions(f, a.Tier)), esc(nStarLabel(f, a)),
			strings.ReplaceAll(esc(answer), "\n", "<br/>"), esc(orDash(confirmWords(f, a))), esc(orDash(normalisedWords(f, a.PerDeployment))))
	}
	b.WriteString("</tbody>\n</table>\n")
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// writeMarksLegend says what the marks mean: a glyph per tier in its
// colour, its shape the verdict; rings N*.
func writeMarksLegend(b *strings.Builder, f *capacity.File) {
	esc := html.EscapeString
	icon := func(g glyph, ring bool) string {
		var s strings.Builder
		s.WriteString(`<svg class="icon" width="14" height="14" viewBox="0 0 14 14">`)
		if ring {
			fmt.Fprintf(&s, `<circle cx="7" cy="7" r="6" fill="none" stroke="%s" stroke-width="1.8"/>`, g.color)
		} else {
			drawGlyph(&s, g, 7, 7)
		}
		s.WriteString("</svg>")
		return s.String()
	}
	b.WriteString("<ul class=\"legend\">\n")
	for i, t := range f.Plan.Tiers {
		fmt.Fprintf(b, "<li><span class=\"swatch\" style=\"background:%s\"></span>%s</li>\n", tierColour(i), esc(t.String()))
	}
	for _, l := range []struct {
		g     glyph
		ring  bool
		words string
	}{
		{glyph{shape: glyphDot, color: colFrontier}, false, "passed"},
		{glyph{shape: glyphCross, color: colFrontier}, false, "failed"},
		{glyph{shape: glyphCircle, color: colFrontier}, false, "undecided (too little to judge: not a pass)"},
		{glyph{shape: glyphSquare, color: colFrontier}, false, "invalid point (never a pass)"},
		{glyph{shape: glyphDot, color: colFrontier, faint: true}, false, "faint: shown, not counted for that tier"},
		{glyph{color: colFrontier}, true, "N* of a tier (its colour)"},
	} {
		fmt.Fprintf(b, "<li>%s%s</li>\n", icon(l.g, l.ring), esc(l.words))
	}
	b.WriteString("</ul>\n<p class=\"ident\">Each point carries a glyph per tier, side by side in the tiers' order; its shape is that tier's verdict on the point.</p>\n")
}

// tierGlyphs are p's glyphs: one per tier of f, in order, its shape the
// tier's verdict (an invalid point a square whatever its verdicts), faint
// when the point was not run for the tier.
func tierGlyphs(f *capacity.File, p *capacity.Point) []glyph {
	gs := make([]glyph, len(f.Plan.Tiers))
	for i, t := range f.Plan.Tiers {
		g := glyph{shape: glyphCircle, color: tierColour(i), faint: !slices.Contains(p.Judged, t.Name)}
		switch v := p.Verdict(t.Name); {
		case !p.Valid:
			g.shape = glyphSquare
		case v == nil:
			g.faint = true
		case v.Outcome == verdict.Passed:
			g.shape = glyphDot
		case v.Outcome == verdict.Failed:
			g.shape = glyphCross
		}
		gs[i] = g
	}
	return gs
}

// pointTitle is p's tooltip: where and why it ran, each tier's verdict,
// its place on the curve.
func pointTitle(f *capacity.File, i int) string {
	p := &f.Points[i]
	var vs []string
	for _, v := range p.Verdicts {
		s := v.Tier + " " + string(v.Outcome)
		if !p.Valid {
			s = v.Tier + " invalid"
		}
		if !slices.Contains(p.Judged, v.Tier) {
			s += " (not counted)"
		}
		vs = append(vs, s)
	}
	c := p.Curve
	s := fmt.Sprintf("point %d (%s): %s, seed %d — %s; aggregate %s tok/s, effective p50 %s tok/s per stream, tps_per_user %s",
		i+1, p.Role, CapacityPointLabel(f, p.Value), p.Seed, strings.Join(vs, ", "), cell(c.AggregateTokS), cell(c.EffectiveP50TokS), cell(c.TPSPerUser))
	if !p.Valid {
		s += "; invalid: " + strings.Join(p.Invalid, "; ")
	}
	return s
}

// nStarMarkLabel labels a tier's N* on a chart: "tight: N* = 2",
// "loose: N* ≥ 8", "tight: 6 ≤ N* < 9".
func nStarMarkLabel(f *capacity.File, a capacity.Answer) string {
	switch n := nStar(f, a); {
	case a.Kind == capacity.Found:
		return a.Tier + ": N* = " + n
	case strings.Contains(n, "N*"):
		return a.Tier + ": " + n
	default:
		return a.Tier + ": N* " + n
	}
}

// capacityCurve draws f's points as aggregate output tok/s against ax's
// per-stream figure: a mark per point (a glyph per tier, labelled with
// its concurrency), the Pareto staircase of the valid points, and each
// tier's N* ringed and labelled. Points without a positive, finite
// per-stream figure or a finite aggregate are left off and named in off;
// nil when none remains.
func capacityCurve(f *capacity.File, ax perStreamAxis) (c *chart, off []string) {
	type at struct{ x, y float64 }
	pos := make([]*at, len(f.Points))
	var xmax, ymax float64
	var valid [][2]float64
	for i := range f.Points {
		p := &f.Points[i]
		x, y := ax.get(p.Curve), p.Curve.AggregateTokS
		if !finite(x) || x <= 0 || !finite(y) || y < 0 {
			off = append(off, fmt.Sprintf("point %d (%s) has no %s", i+1, CapacityPointLabel(f, p.Value), ax.label))
			continue
		}
		pos[i] = &at{x, y}
		xmax, ymax = math.Max(xmax, x), math.Max(ymax, y)
		if p.Valid && (p.Run == nil || !p.Run.Incomplete) {
			valid = append(valid, [2]float64{x, y})
		}
	}
	if xmax == 0 {
		return nil, off
	}
	xt, x0, x1 := niceTicks(0, xmax*1.12, 6, tickLabel)
	yt, y0, y1 := niceTicks(0, math.Max(ymax*1.18, 1), 6, tickLabel)
	c = &chart{title: ax.title, width: 520, height: 420, xLabel: ax.label, yLabel: "aggregate output tok/s", class: "curve",
		x: axis{min: x0, max: x1, ticks: xt}, y: axis{min: y0, max: y1, ticks: yt}}
	if len(valid) > 0 {
		c.series = append(c.series, series{name: "Pareto frontier (valid points)", class: "frontier", color: colFrontier, step: true,
			pts: staircase(valid, x0, y0)})
	}
	half := glyphStep*float64(max(len(f.Plan.Tiers)-1, 0))/2 + glyphR
	for i, p := range pos {
		if p == nil {
			continue
		}
		pt := &f.Points[i]
		c.marks = append(c.marks, mark{x: p.x, y: p.y, glyphs: tierGlyphs(f, pt), class: "pt",
			data:  [][2]string{{"point", strconv.Itoa(i + 1)}, {"value", numfmt.Plain(pt.Value)}},
			title: pointTitle(f, i), label: numfmt.Plain(pt.Value)})
	}
	rings := map[int]int{}
	for k, a := range f.Answers {
		np := f.NStarPoint(a)
		if np == nil {
			continue
		}
		i := -1
		for j := range f.Points {
			if &f.Points[j] == np {
				i = j
			}
		}
		if i < 0 || pos[i] == nil {
			off = append(off, fmt.Sprintf("%s's N* (%s) lies at a point without %s", a.Tier, CapacityPointLabel(f, a.Lo), ax.label))
			continue
		}
		col := tierColour(tierIndex(f, a.Tier, k))
		c.marks = append(c.marks, mark{x: pos[i].x, y: pos[i].y, ring: half + 4 + 4*float64(rings[i]), ringColor: col, class: "nstar",
			data:  [][2]string{{"tier", a.Tier}, {"point", strconv.Itoa(i + 1)}},
			title: CapacityAnswer(f, a), label: nStarMarkLabel(f, a), labelColor: col, bold: true, first: true})
		rings[i]++
	}
	c.layout()
	return c, off
}

// staircase is the Pareto frontier of pts (more is better on both axes)
// as a step series with no interpolation: from the y axis (x0) at the
// best aggregate, across to each frontier point, then down to the next
// one's level, and after the last down to y0 — the boundary of what the
// measured points show can be had together, and nothing between them.
func staircase(pts [][2]float64, x0, y0 float64) [][2]float64 {
	sorted := slices.Clone(pts)
	slices.SortFunc(sorted, func(a, b [2]float64) int { return cmp.Or(cmp.Compare(b[0], a[0]), cmp.Compare(b[1], a[1])) })
	var front [][2]float64 // by x descending, y rising
	best := math.Inf(-1)
	for _, p := range sorted {
		if p[1] > best {
			front = append(front, p)
			best = p[1]
		}
	}
	slices.Reverse(front) // by x ascending, y falling
	out := [][2]float64{{x0, front[0][1]}}
	for i, p := range front {
		next := y0
		if i+1 < len(front) {
			next = front[i+1][1]
		}
		out = append(out, [2]float64{p[0], next})
	}
	return out
}

// captioned is a chart and what its figure says under it.
type captioned struct {
	chart   *chart
	caption string
}

// conditionCharts draw, for each condition the tiers bound (ttft_ms.p90
// …), its value at every point against the concurrency, with each tier's
// bound as a dashed line: where the curve of the figure crosses the bound
// is where the tier stops passing. A bound far beyond every value is left
// off the chart and said in notes.
func conditionCharts(f *capacity.File) (out []captioned, notes []string) {
	var keys []string
	for _, t := range f.Plan.Tiers {
		for _, c := range t.Conditions {
			if !slices.Contains(keys, c.Key()) {
				keys = append(keys, c.Key())
			}
		}
	}
	for _, key := range keys {
		var cond verdict.Condition
		type bound struct {
			tier int
			c    verdict.Condition
		}
		var bounds []bound
		for i, t := range f.Plan.Tiers {
			for _, c := range t.Conditions {
				if c.Key() == key {
					cond = c
					bounds = append(bounds, bound{i, c})
				}
			}
		}
		scale := 1.0
		unit := cond.Unit()
		if cond.IsShare() {
			scale, unit = 100, "%"
		}
		var marks []mark
		var xmax, ymax float64
		for i := range f.Points {
			p := &f.Points[i]
			v, ok := pointStatistic(p, key)
			if !ok || !finite(v) {
				continue
			}
			var gs []glyph
			for _, bd := range bounds {
				g := glyph{shape: glyphCircle, color: tierColour(bd.tier), faint: !slices.Contains(p.Judged, f.Plan.Tiers[bd.tier].Name)}
				if cv := conditionVerdict(p, f.Plan.Tiers[bd.tier].Name, key); !p.Valid {
					g.shape = glyphSquare
				} else if cv != nil && cv.Outcome == verdict.Passed {
					g.shape = glyphDot
				} else if cv != nil && cv.Outcome == verdict.Failed {
					g.shape = glyphCross
				}
				gs = append(gs, g)
			}
			marks = append(marks, mark{x: p.Value, y: v * scale, glyphs: gs, class: "cp", title: fmt.Sprintf("point %d: %s, %s %s",
				i+1, CapacityPointLabel(f, p.Value), cond.Label(), conditionValue(cond, v))})
			xmax, ymax = math.Max(xmax, p.Value), math.Max(ymax, v*scale)
		}
		if len(marks) == 0 {
			continue
		}
		c := &chart{title: cond.Label() + " against the concurrency", width: 520, height: 320,
			xLabel: axisWords(f.Plan.Axis), yLabel: strings.TrimSpace(cond.Label() + " " + unit), class: "condition", marks: marks}
		top := ymax
		var shown []hline
		for _, bd := range bounds {
			b := bd.c.Bound * scale
			if ymax > 0 && b > 4*ymax {
				notes = append(notes, fmt.Sprintf("%s's bound %s lies far above every value (at most %s): left off the chart of %s.",
					f.Plan.Tiers[bd.tier].Name, bd.c.String(), conditionValue(cond, ymax/scale), cond.Label()))
				continue
			}
			top = math.Max(top, b)
			shown = append(shown, hline{y: b, color: tierColour(bd.tier), label: f.Plan.Tiers[bd.tier].Name + ": " + string(bd.c.Op) + " " + conditionValue(cond, bd.c.Bound)})
		}
		xt, x0, x1 := niceTicks(0, math.Max(xmax*1.08, f.Plan.Axis.Min), 6, tickLabel)
		yt, y0, y1 := niceTicks(0, math.Max(top*1.18, 1e-9), 6, tickLabel)
		c.x, c.y = axis{min: x0, max: x1, ticks: xt}, axis{min: y0, max: y1, ticks: yt}
		for _, h := range shown {
			h.from, h.to = x0, x1
			c.hlines = append(c.hlines, h)
		}
		out = append(out, captioned{c, fmt.Sprintf("%s at each point (its steady window, as the tiers' verdicts read it) against %s; dashed: each tier's bound.",
			cond.Label(), axisWords(f.Plan.Axis))})
	}
	return out, notes
}

// pointStatistic is the statistic key reads at p, from the first verdict
// that has it.
func pointStatistic(p *capacity.Point, key string) (float64, bool) {
	for _, v := range p.Verdicts {
		for _, cv := range v.Conditions {
			if cv.Condition.Key() == key && cv.HasValue {
				return cv.Value, true
			}
		}
	}
	return 0, false
}

// conditionVerdict is tier's verdict on its condition key at p (nil:
// none).
func conditionVerdict(p *capacity.Point, tier, key string) *verdict.CondVerdict {
	if v := p.Verdict(tier); v != nil {
		for i := range v.Conditions {
			if v.Conditions[i].Condition.Key() == key {
				return &v.Conditions[i]
			}
		}
	}
	return nil
}
