package report

import (
	"fmt"
	"hash/fnv"
	"html"
	"math"
	"slices"
	"strings"
)

// A chart is one inline SVG figure: axes with ticks, shaded bands,
// reference lines, bars and line series, drawn without scripts or
// external resources. Coordinates are in data units; the chart maps them.
type chart struct {
	title string
	// note is lines said under the title, before any figure is read
	// (a caveat the whole chart carries).
	note           []string
	width, height  float64
	xLabel, yLabel string
	x, y           axis
	// y2 is an optional right-hand axis for series with right set.
	y2     *axis
	bands  []band
	hlines []hline
	bars   []bar
	floats []floatBar
	boxes  []box
	series []series
	// left is the left margin in pixels (0: chartLeft), wider for long
	// y tick labels.
	left float64
	// marks are points drawn as glyphs, each labelled where its label
	// overprints nothing (layout places the labels).
	marks []mark
	// class is added to the svg element's class ("chart").
	class string
	// standalone carries the chart's stylesheet inside it, for an SVG
	// file of its own (a page's stylesheet styles it otherwise).
	standalone bool
	// labels are the marks' labels as layout placed them; unplaced the
	// labels it found no room for (left off the chart).
	labels   []placedLabel
	unplaced []string
	laid     bool
}

// axis is a linear axis over [min, max] with labelled ticks.
type axis struct {
	min, max float64
	ticks    []tick
	label    string
}

type tick struct {
	v     float64
	label string
}

// band shades [from, to] of the x axis.
type band struct {
	from, to float64
	color    string
	name     string
	label    string
}

// hline is a horizontal reference line over [from, to] of the x axis.
type hline struct {
	y, from, to float64
	color       string
	label       string
}

// bar is a vertical bar over [from, to] of the x axis, from 0 to y.
type bar struct {
	from, to, y float64
	color       string
	title       string
}

// floatBar is a vertical bar over [from, to] of the x axis, from lo to
// hi (a waterfall's step); hatched draws it in diagonal stripes of its
// colour (a figure to distrust), labels are lines written above it.
type floatBar struct {
	from, to, lo, hi float64
	color, title     string
	hatched          bool
	labels           []string
}

// box is a horizontal box-and-whisker at y: whiskers from lo to hi, the
// box from q1 to q3, a bar at the median.
type box struct {
	y                   float64
	lo, q1, med, q3, hi float64
	color, title        string
}

// series is a line through points; class, when set, is its path's
// class; step draws it as a step function
// (each value held until the next x); right plots it on y2; dots draws
// the points alone, as faint dots (a scatter); marks adds a dot at each
// point of a line, and noLine leaves the line out; labels, when set, name
// each point beside it.
type series struct {
	name   string
	class  string
	color  string
	dash   bool
	step   bool
	right  bool
	dots   bool
	marks  bool
	noLine bool
	pts    [][2]float64
	labels []string
}

const (
	chartLeft   = 64.0
	chartRight  = 24.0
	chartTop    = 52.0
	chartBottom = 48.0
)

func (c *chart) plotW() float64 { return c.width - c.leftM() - c.right() }

// leftM is the left margin: c.left, or room for the widest y tick label
// beside the rotated axis label (chartLeft at least).
func (c *chart) leftM() float64 {
	if c.left > 0 {
		return c.left
	}
	w := 0.0
	for _, t := range c.y.ticks {
		w = max(w, tickWidth(t.label))
	}
	return max(chartLeft, w+6+24)
}

// xTick is an x tick as drawn: its position, its label ("" when it
// would overprint a neighbour's) and the label's anchor.
type xTick struct {
	x             float64
	label, anchor string
}

// xTickLabels lays out the x ticks' labels between x0 and x1: the ends'
// stay inside the frame, clear of the y ticks'; one that would overprint
// the label before it loses its label (the last tick keeps its own and
// takes the room of the one before).
func (c *chart) xTickLabels(x0, x1 float64) []xTick {
	out := make([]xTick, len(c.x.ticks))
	lo, hi := make([]float64, len(out)), make([]float64, len(out))
	last := -1 // the last tick that kept its label
	for i, t := range c.x.ticks {
		x, w := c.px(t.v), tickWidth(t.label)
		out[i] = xTick{x: x, label: t.label}
		lo[i], hi[i] = x-w/2, x+w/2
		switch {
		case lo[i] < x0:
			out[i].anchor, lo[i], hi[i] = ` style="text-anchor: start"`, x, x+w
		case hi[i] > x1:
			out[i].anchor, lo[i], hi[i] = ` style="text-anchor: end"`, x-w, x
		}
		if last >= 0 && lo[i] < hi[last]+4 {
			if i < len(out)-1 {
				out[i].label = ""
				continue
			}
			out[last].label = ""
		}
		last = i
	}
	return out
}

// tickWidth is the width in pixels of a tick or reference-line label
// (the charts' 11-px text).
func tickWidth(s string) float64 { return textWidth(s, 11, false) }
func (c *chart) plotH() float64  { return c.height - chartTop - chartBottom }

func (c *chart) right() float64 {
	if c.y2 != nil {
		return 64
	}
	return chartRight
}

func (c *chart) px(x float64) float64 {
	if c.x.max == c.x.min {
		return c.leftM()
	}
	return c.leftM() + (x-c.x.min)/(c.x.max-c.x.min)*c.plotW()
}

func (c *chart) pyOn(a axis, y float64) float64 {
	if a.max == a.min {
		return chartTop + c.plotH()
	}
	y = math.Min(math.Max(y, a.min), a.max)
	return chartTop + c.plotH() - (y-a.min)/(a.max-a.min)*c.plotH()
}

func (c *chart) py(y float64) float64 { return c.pyOn(c.y, y) }

// svgNum formats a pixel coordinate.
func svgNum(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
}

// render writes the chart as an <svg> element.
func (c *chart) render(b *strings.Builder) {
	esc := html.EscapeString
	class := "chart"
	if c.class != "" {
		class += " " + c.class
	}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="%s" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`+"\n",
		class, svgNum(c.width), svgNum(c.height), svgNum(c.width), svgNum(c.height), esc(c.title))
	fmt.Fprintf(b, `<title>%s</title>`+"\n", esc(c.title))
	if c.standalone {
		fmt.Fprintf(b, "<style>%s</style>\n", chartStyle)
	}
	fmt.Fprintf(b, `<text x="%s" y="18" class="ct">%s</text>`+"\n", svgNum(c.leftM()), esc(c.title))
	for i, l := range c.note {
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", svgNum(c.leftM()), svgNum(float64(32+13*i)), colFailed, esc(l))
	}
	c.hatches(b)
	x0, x1 := c.leftM(), c.leftM()+c.plotW()
	y0, y1 := chartTop, chartTop+c.plotH()
	for _, bd := range c.bands {
		l, r := c.px(math.Max(bd.from, c.x.min)), c.px(math.Min(bd.to, c.x.max))
		if r <= l {
			continue
		}
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.13"><title>%s</title></rect>`+"\n",
			svgNum(l), svgNum(y0), svgNum(r-l), svgNum(y1-y0), bd.color, esc(bd.label))
	}
	// Grid and y ticks.
	for _, t := range c.y.ticks {
		y := c.py(t.v)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, svgNum(x0), svgNum(y), svgNum(x1), svgNum(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" class="yt">%s</text>`+"\n", svgNum(x0-6), svgNum(y+4), esc(t.label))
	}
	if c.y2 != nil {
		for _, t := range c.y2.ticks {
			y := c.pyOn(*c.y2, t.v)
			fmt.Fprintf(b, `<text x="%s" y="%s" class="y2t">%s</text>`+"\n", svgNum(x1+6), svgNum(y+4), esc(t.label))
		}
	}
	for _, t := range c.xTickLabels(x0, x1) {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, svgNum(t.x), svgNum(y0), svgNum(t.x), svgNum(y1))
		if t.label != "" {
			fmt.Fprintf(b, `<text x="%s" y="%s" class="xt"%s>%s</text>`+"\n", svgNum(t.x), svgNum(y1+16), t.anchor, esc(t.label))
		}
	}
	for _, br := range c.bars {
		c.rect(b, br.from, br.to, c.py(br.y), y1, br.color, br.title, false, nil)
	}
	for _, fb := range c.floats {
		top := c.py(fb.hi)
		c.rect(b, fb.from, fb.to, top, math.Max(c.py(fb.lo), top+1), fb.color, fb.title, fb.hatched, fb.labels)
	}
	for _, bx := range c.boxes {
		y := c.py(bx.y)
		l, q1, md, q3, r := c.px(bx.lo), c.px(bx.q1), c.px(bx.med), c.px(bx.q3), c.px(bx.hi)
		fmt.Fprintf(b, `<g><title>%s</title><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`,
			esc(bx.title), svgNum(l), svgNum(y), svgNum(r), svgNum(y), bx.color,
			svgNum(l), svgNum(y-5), svgNum(l), svgNum(y+5), bx.color, svgNum(r), svgNum(y-5), svgNum(r), svgNum(y+5), bx.color)
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="14" fill="%s" fill-opacity="0.35" stroke="%s"/><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"/></g>`+"\n",
			svgNum(q1), svgNum(y-7), svgNum(math.Max(q3-q1, 0.5)), bx.color, bx.color, svgNum(md), svgNum(y-7), svgNum(md), svgNum(y+7), bx.color)
	}
	// A reference line's label goes above it, else below, where it
	// overprints no other; with no room it is left off (the line's own
	// title names it on hover).
	var placed [][4]float64
	for _, h := range c.hlines {
		y := c.py(h.y)
		l, r := c.px(math.Max(h.from, c.x.min)), c.px(math.Min(h.to, c.x.max))
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="6 3"><title>%s</title></line>`+"\n",
			svgNum(l), svgNum(y), svgNum(r), svgNum(y), h.color, esc(h.label))
		w := tickWidth(h.label)
		for _, base := range []float64{y - 4, y + 13} {
			box := [4]float64{l + 4, base - 11, l + 4 + w, base + 3}
			if box[1] < y0 || box[3] > y1 || slices.ContainsFunc(placed, func(p [4]float64) bool {
				return box[0] < p[2] && p[0] < box[2] && box[1] < p[3] && p[1] < box[3]
			}) {
				continue
			}
			placed = append(placed, box)
			fmt.Fprintf(b, `<text x="%s" y="%s" class="hl" fill="%s">%s</text>`+"\n", svgNum(l+4), svgNum(base), h.color, esc(h.label))
			break
		}
	}
	for _, s := range c.series {
		if len(s.pts) == 0 {
			continue
		}
		a := c.y
		if s.right && c.y2 != nil {
			a = *c.y2
		}
		if s.dots || s.marks {
			r, op := "2", "0.35"
			if s.marks {
				r, op = "3", "1"
			}
			fmt.Fprintf(b, `<g fill="%s" fill-opacity="%s"><title>%s</title>`, s.color, op, esc(s.name))
			for _, p := range s.pts {
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s"/>`, svgNum(c.px(p[0])), svgNum(c.pyOn(a, p[1])), r)
			}
			b.WriteString("</g>\n")
		}
		// Beside the point, on the side with room; a label that would
		// overprint another goes below it, or stacks further off (points
		// that coincide keep each its own label).
		var taken [][4]float64
		for i, l := range s.labels {
			if i >= len(s.pts) {
				break
			}
			x, anchor := c.px(s.pts[i][0])+6, ""
			w := tickWidth(l)
			lo, hi := x, x+w
			if x > c.leftM()+c.plotW()/2 {
				x, anchor = x-12, ` text-anchor="end"`
				lo, hi = x-w, x
			}
			py := c.pyOn(a, s.pts[i][1])
			for _, dy := range []float64{-6, 14, -19, 27, -32, 40, -45, 53} {
				box := [4]float64{lo, py + dy - 11, hi, py + dy + 3}
				if slices.ContainsFunc(taken, func(p [4]float64) bool {
					return box[0] < p[2] && p[0] < box[2] && box[1] < p[3] && p[1] < box[3]
				}) {
					continue
				}
				taken = append(taken, box)
				fmt.Fprintf(b, `<text x="%s" y="%s" class="pl"%s>%s</text>`+"\n", svgNum(x), svgNum(py+dy), anchor, esc(l))
				break
			}
		}
		if s.dots || s.noLine {
			continue
		}
		var d strings.Builder
		for i, p := range s.pts {
			x, y := c.px(p[0]), c.pyOn(a, p[1])
			switch {
			case i == 0:
				fmt.Fprintf(&d, "M%s %s", svgNum(x), svgNum(y))
			case s.step:
				fmt.Fprintf(&d, "H%sV%s", svgNum(x), svgNum(y))
			default:
				fmt.Fprintf(&d, "L%s %s", svgNum(x), svgNum(y))
			}
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="5 3"`
		}
		class := ""
		if s.class != "" {
			class = ` class="` + s.class + `"`
		}
		// Inside the plot area only: a value past the axis (a raw second
		// under its rolling mean) is cut at the frame, not drawn over the
		// title. A nested svg clips what it holds, with no id to clash.
		fmt.Fprintf(b, `<svg x="%[1]s" y="%[2]s" width="%[3]s" height="%[4]s" viewBox="%[1]s %[2]s %[3]s %[4]s" overflow="hidden">`,
			svgNum(c.leftM()-2), svgNum(chartTop-2), svgNum(c.plotW()+4), svgNum(c.plotH()+4))
		fmt.Fprintf(b, `<path%s d="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></path></svg>`+"\n", class, d.String(), s.color, dash, esc(s.name))
	}
	c.renderMarks(b)
	// Frame, axis labels, legend.
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`+"\n", svgNum(x0), svgNum(y0), svgNum(x1-x0), svgNum(y1-y0))
	fmt.Fprintf(b, `<text x="%s" y="%s" class="xl">%s</text>`+"\n", svgNum((x0+x1)/2), svgNum(c.height-8), esc(c.xLabel))
	fmt.Fprintf(b, `<text transform="translate(14 %s) rotate(-90)" class="yl">%s</text>`+"\n", svgNum((y0+y1)/2), esc(c.yLabel))
	if c.y2 != nil {
		fmt.Fprintf(b, `<text transform="translate(%s %s) rotate(90)" class="yl">%s</text>`+"\n", svgNum(c.width-12), svgNum((y0+y1)/2), esc(c.y2.label))
	}
	// Legend, right-aligned above the plot: shaded bands, then series.
	type item struct {
		name, color string
		band        bool
	}
	var items []item
	for _, bd := range c.bands {
		if bd.name != "" {
			items = append(items, item{bd.name + " window", bd.color, true})
		}
	}
	for _, s := range c.series {
		if s.name != "" && len(s.pts) > 0 {
			items = append(items, item{s.name, s.color, false})
		}
	}
	lx := x1
	for i := len(items) - 1; i >= 0; i-- {
		it := items[i]
		lx -= 6.6*float64(len([]rune(it.name))) + 28
		if it.band {
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="12" height="10" fill="%s" fill-opacity="0.3"/>`, svgNum(lx), svgNum(chartTop-23), it.color)
		} else {
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="12" height="4" fill="%s"/>`, svgNum(lx), svgNum(chartTop-20), it.color)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" class="lg">%s</text>`+"\n", svgNum(lx+16), svgNum(chartTop-14), esc(it.name))
	}
	b.WriteString("</svg>\n")
}

// rect draws a bar over [from, to] of the x axis between the pixel rows
// top and bottom: filled with color, or hatched in it (at least 4 pixels
// high, so that the stripes show), labels written above it line by line
// from its left edge.
func (c *chart) rect(b *strings.Builder, from, to, top, bottom float64, color, title string, hatched bool, labels []string) {
	esc := html.EscapeString
	l, r := c.px(from), c.px(to)
	fill, stroke := color, ""
	if hatched {
		fill, stroke = "url(#"+c.hatchID(color)+")", ` stroke="`+color+`"`
		if bottom-top < 4 {
			top, bottom = (top+bottom)/2-2, (top+bottom)/2+2
		}
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s><title>%s</title></rect>`+"\n",
		svgNum(l), svgNum(top), svgNum(math.Max(r-l-0.5, 0.5)), svgNum(bottom-top), fill, stroke, esc(title))
	for i, s := range labels {
		y := top - 4 - 13*float64(len(labels)-1-i)
		fmt.Fprintf(b, `<text x="%s" y="%s" class="hl">%s</text>`+"\n", svgNum(l), svgNum(y), esc(s))
	}
}

// hatchID is the id of the pattern that hatches in color, unique to the
// chart (several charts share a page).
func (c *chart) hatchID(color string) string {
	h := fnv.New32a()
	h.Write([]byte(c.title))
	return fmt.Sprintf("hatch-%08x-%s", h.Sum32(), strings.TrimPrefix(color, "#"))
}

// hatches defines a diagonal-stripe pattern for each colour a hatched
// float bar uses.
func (c *chart) hatches(b *strings.Builder) {
	var colors []string
	add := func(hatched bool, color string) {
		if hatched && !strings.Contains(strings.Join(colors, " "), color) {
			colors = append(colors, color)
		}
	}
	for _, fb := range c.floats {
		add(fb.hatched, fb.color)
	}
	if len(colors) == 0 {
		return
	}
	b.WriteString("<defs>")
	for _, col := range colors {
		fmt.Fprintf(b, `<pattern id="%s" patternUnits="userSpaceOnUse" width="7" height="7" patternTransform="rotate(45)"><rect width="7" height="7" fill="%s" fill-opacity="0.18"/><rect width="3" height="7" fill="%s"/></pattern>`,
			c.hatchID(col), col, col)
	}
	b.WriteString("</defs>\n")
}

// niceTicks returns about n round tick values covering [lo, hi], and the
// extended bounds they span.
func niceTicks(lo, hi float64, n int, label func(float64) string) (ticks []tick, from, to float64) {
	if !(hi > lo) {
		hi = lo + 1
	}
	step := niceNum((hi-lo)/float64(max(n-1, 1)), true)
	from = math.Floor(lo/step) * step
	to = math.Ceil(hi/step) * step
	for i := 0; from+float64(i)*step <= to+step/2; i++ {
		v := from + float64(i)*step
		ticks = append(ticks, tick{v, label(v)})
	}
	return ticks, from, to
}

// niceNum rounds x to 1, 2, 5 or 10 times a power of ten.
func niceNum(x float64, round bool) float64 {
	if x <= 0 {
		return 1
	}
	e := math.Floor(math.Log10(x))
	f := x / math.Pow(10, e)
	var nf float64
	switch {
	case round && f < 1.5, !round && f <= 1:
		nf = 1
	case round && f < 3, !round && f <= 2:
		nf = 2
	case round && f < 7, !round && f <= 5:
		nf = 5
	default:
		nf = 10
	}
	return nf * math.Pow(10, e)
}
