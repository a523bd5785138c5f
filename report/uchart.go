package report

import (
	_ "embed"
	"encoding/json"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/uplot"
)

// An interactive chart is a chart drawn again by uPlot in the page: hover
// shows each series' exact value at the cursor's x, dragging zooms to a
// span, the wheel zooms around the cursor (with shift: pans), a double
// click returns to the whole. The SVG stays in the page beneath it, what
// the page shows without scripts (and what Markdown and static uses get).

// uSpec is what charts.js draws: one chart's data aligned on one x array
// (uPlot's data model), null where a series has no point. Every series is
// drawn across its nulls (another series' x), never beyond its own ends.
type uSpec struct {
	Title  string       `json:"title"`
	Width  float64      `json:"width"` // at most, in CSS pixels
	Height float64      `json:"height"`
	XLabel string       `json:"xLabel"`
	YLabel string       `json:"yLabel"`
	Y2     string       `json:"y2Label,omitempty"`
	XKind  string       `json:"xKind"` // "seconds" or "percentile" (x = log10(1/(1−q)))
	X      [2]float64   `json:"xRange"`
	Y      [2]float64   `json:"yRange"`
	Y2R    *[2]float64  `json:"y2Range,omitempty"`
	Series []uSeries    `json:"series"`
	Bands  []uBand      `json:"bands,omitempty"`
	Data   [][]*float64 `json:"data"` // data[0] is x; data[i+1] is Series[i]
}

type uSeries struct {
	Label  string  `json:"label"`
	Color  string  `json:"color"`
	Dash   bool    `json:"dash,omitempty"`
	Step   bool    `json:"step,omitempty"`
	Right  bool    `json:"right,omitempty"`
	Faint  bool    `json:"faint,omitempty"`
	Points bool    `json:"points,omitempty"` // a dot at each point
	NoLine bool    `json:"noLine,omitempty"` // dots alone (a scatter)
	Gaps   bool    `json:"spanGaps,omitempty"`
	Width  float64 `json:"width"`
}

type uBand struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Color string  `json:"color"`
	Label string  `json:"label"`
}

// chartScript draws every interactive chart of a page with uPlot.
//
//go:embed charts.js
var chartScript string

// chartScripts is what a page with interactive charts carries once, at
// the end of its body: uPlot (with its licence's notice), then charts.js.
func chartScripts() string {
	// CDATA-wrapped, so that the page still parses as XML (its SVGs are
	// checked so); an HTML parser reads the markers as comments.
	return "<script>//<![CDATA[\n/* uPlot " + uplot.Version + ", MIT licence, (c) Leon Sorokin */\n" +
		uplot.Script + "\n//]]>\n</script>\n<script>//<![CDATA[\n" + chartScript + "//]]>\n</script>\n"
}

// chartStyles is uPlot's stylesheet and the rules that hide a chart's SVG
// once uPlot has drawn it.
func chartStyles() string {
	return uplot.Style + `
figure.ufig .uchart { display: none; }
figure.ufig.live .uchart { display: block; }
figure.ufig.live > svg.chart { display: none; }
.uplot { font: 11px system-ui, sans-serif; color: #37474f; }
.uplot .u-title { font-size: 13px; font-weight: 600; text-align: left; padding-left: 8px; }
.uplot .u-legend { font-size: 11px; text-align: left; }
.uplot .u-legend .u-marker { width: 12px; height: 3px; }
.bandkey { font-size: 11px; color: #546e7a; margin: 2px 0 0 8px; }
.bandkey span.sw { display: inline-block; width: 10px; height: 10px; margin: 0 4px -1px 10px; opacity: .35; }
`
}

// uplotSpec is c as uPlot draws it, or nil when c holds what uPlot's
// version does not draw (bars, boxes, labelled marks): those stay SVG.
// Reference lines become dashed series over their span, so the legend
// gives their value; xKind says how x reads.
func (c *chart) uplotSpec(xKind string) *uSpec {
	if c == nil || len(c.bars)+len(c.floats)+len(c.boxes)+len(c.marks) > 0 || len(c.series) == 0 {
		return nil
	}
	for _, s := range c.series {
		if len(s.labels) > 0 {
			return nil
		}
	}
	u := &uSpec{Title: c.title, Width: c.width, Height: c.height, XLabel: c.xLabel, YLabel: c.yLabel, XKind: xKind,
		X: [2]float64{c.x.min, c.x.max}, Y: [2]float64{c.y.min, c.y.max}}
	if c.y2 != nil {
		u.Y2 = c.y2.label
		u.Y2R = &[2]float64{c.y2.min, c.y2.max}
	}
	for _, b := range c.bands {
		u.Bands = append(u.Bands, uBand{b.from, b.to, b.color, b.label})
	}
	// Every series' points, and each reference line as a series of two.
	pts := make([][][2]float64, 0, len(c.series)+len(c.hlines))
	for _, s := range c.series {
		u.Series = append(u.Series, uSeries{Label: s.name, Color: s.color, Dash: s.dash, Step: s.step, Right: s.right,
			Faint: s.class == "faint", Points: s.marks || s.dots, NoLine: s.noLine, Width: seriesWidth(s)})
		pts = append(pts, s.pts)
	}
	for _, h := range c.hlines {
		u.Series = append(u.Series, uSeries{Label: h.label, Color: h.color, Dash: true, Width: 1.25})
		pts = append(pts, [][2]float64{{h.from, h.y}, {h.to, h.y}})
	}
	if sharedX(pts) {
		// Rows as they are (a scatter's x may repeat).
		u.Data = make([][]*float64, len(pts)+1)
		for k := range u.Data {
			u.Data[k] = make([]*float64, len(pts[0]))
		}
		for i, q := range pts[0] {
			u.Data[0][i] = numOrNull(q[0])
		}
		for k, p := range pts {
			for i, q := range p {
				u.Data[k+1][i] = numOrNull(q[1])
			}
		}
		return u
	}
	// One x array: every series' x, sorted, once.
	var xs []float64
	for _, p := range pts {
		for _, q := range p {
			xs = append(xs, q[0])
		}
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	at := make(map[float64]int, len(xs))
	u.Data = make([][]*float64, len(pts)+1)
	u.Data[0] = make([]*float64, len(xs))
	for i, x := range xs {
		at[x] = i
		u.Data[0][i] = numOrNull(x)
	}
	for k, p := range pts {
		col := make([]*float64, len(xs))
		for _, q := range p {
			col[at[q[0]]] = numOrNull(q[1])
		}
		u.Data[k+1] = col
	}
	return u
}

// sharedX reports whether every series has the same x at each point,
// ascending (then its rows are uPlot's data as they are).
func sharedX(pts [][][2]float64) bool {
	for _, p := range pts {
		if len(p) != len(pts[0]) {
			return false
		}
		for i, q := range p {
			if q[0] != pts[0][i][0] || (i > 0 && q[0] < p[i-1][0]) {
				return false
			}
		}
	}
	return len(pts) > 0
}

// seriesWidth is a series' stroke in pixels: a line the eye should follow
// is heavier than the raw values beneath it.
func seriesWidth(s series) float64 {
	switch {
	case s.class == "faint":
		return 1
	case s.dots && s.noLine:
		return 0
	}
	return 1.75
}

// numOrNull is &v, or nil (JSON null: no point) when v is not a number
// uPlot can place.
func numOrNull(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// interactiveFigure writes c as a figure uPlot draws (its SVG beneath, for
// a page without scripts), or as figure does when c cannot be.
func interactiveFigure(b *strings.Builder, c *chart, xKind, caption string) error {
	u := c.uplotSpec(xKind)
	if u == nil {
		figure(b, c, caption)
		return nil
	}
	spec, err := json.Marshal(u) // escapes <, > and &: safe inside a script element
	if err != nil {
		return err
	}
	b.WriteString("<figure class=\"ufig\">\n<div class=\"uchart\"></div>\n<script type=\"application/json\" class=\"uspec\">")
	b.Write(spec)
	b.WriteString("</script>\n")
	c.render(b)
	b.WriteString("<figcaption>" + html.EscapeString(caption) + "</figcaption>\n</figure>\n")
	return nil
}
