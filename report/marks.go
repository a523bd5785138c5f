package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
)

// Glyph shapes: what a mark says of a point at a glance.
const (
	glyphDot    = "dot"    // a filled disc
	glyphCross  = "cross"  // an ✕
	glyphCircle = "circle" // a hollow disc
	glyphSquare = "square" // a hollow square
)

// glyph is one shape of a mark in a colour; faint draws it at 40%
// opacity (shown, not counted).
type glyph struct {
	shape, color string
	faint        bool
}

// Sizes of marks and their labels, in pixels.
const (
	glyphR     = 4.0  // a glyph's half width
	glyphStep  = 10.0 // between the centres of glyphs side by side
	labelSize  = 11.0 // the font size of a label (svg.chart text)
	labelPad   = 1.0  // around a label's estimated box
	leaderFrom = 7.0  // a label this far from its mark gets a leader line
)

// mark is a point of a chart: glyphs side by side centred on it, or a
// ring of radius ring pixels around it, in a group of its own (class,
// data-* attributes, a title), with a label that layout places beside it
// where it overprints no other label or mark, inside the plot; a label
// pushed away from its mark is joined to it by a leader line.
type mark struct {
	x, y      float64
	glyphs    []glyph
	ring      float64
	ringColor string
	class     string
	data      [][2]string
	title     string
	label     string
	// labelColor colours the label (default: the text's); bold sets it
	// in bold; first labels it before the marks without (the labels that
	// matter most get the nearest room).
	labelColor  string
	bold, first bool
}

// rect is a box in pixels: x0 ≤ x1, y0 ≤ y1.
type rect struct{ x0, y0, x1, y1 float64 }

// overlaps reports whether r and o share any area.
func (r rect) overlaps(o rect) bool {
	return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1
}

// inside reports whether r lies within o.
func (r rect) inside(o rect) bool {
	return r.x0 >= o.x0 && r.x1 <= o.x1 && r.y0 >= o.y0 && r.y1 <= o.y1
}

// placedLabel is a mark's label where layout put it: its box, and the
// leader line's ends when it has one.
type placedLabel struct {
	m      *mark
	box    rect
	leader [4]float64
	led    bool
}

// textWidth estimates the width in pixels of s set at size px, on the
// wide side of common sans-serif faces (DejaVu Sans, the widest of them,
// among them), so that a box built from it holds the text as drawn.
func textWidth(s string, size float64, bold bool) float64 {
	em := 0.0
	for _, r := range s {
		switch {
		case strings.ContainsRune(" .,:;!|'()[]iljtfr", r):
			em += 0.42
		case strings.ContainsRune("mwMW=<>+*%@", r) || r > 0x7f:
			em += 0.92
		case r >= 'A' && r <= 'Z':
			em += 0.8
		default:
			em += 0.66
		}
	}
	if bold {
		em *= 1.1
	}
	return em * size
}

// centre is m's position in pixels.
func (c *chart) centre(m *mark) (float64, float64) {
	return c.px(m.x), c.py(m.y)
}

// markBox is the box m's glyphs or ring cover.
func (c *chart) markBox(m *mark) rect {
	x, y := c.centre(m)
	if m.ring > 0 {
		r := m.ring + 1
		return rect{x - r, y - r, x + r, y + r}
	}
	half := glyphStep*float64(max(len(m.glyphs)-1, 0))/2 + glyphR + 1
	return rect{x - half, y - glyphR - 1, x + half, y + glyphR + 1}
}

// plotRect is the plot area, less a pixel each side.
func (c *chart) plotRect() rect {
	return rect{c.leftM() + 1, chartTop + 1, c.leftM() + c.plotW() - 1, chartTop + c.plotH() - 1}
}

// labelDistances are how far from its mark layout tries a label, nearest
// first, in pixels.
var labelDistances = []float64{2, 8, 16, 26, 38, 52, 68, 86, 106, 128}

// layout places every mark's label: for each, the nearest position (east,
// west, north, south, then the diagonals, at growing distances) inside
// the plot whose box overlaps no mark and no label placed before it.
// Labels it finds no room for are left off and listed in unplaced.
func (c *chart) layout() {
	if c.laid {
		return
	}
	c.laid = true
	var taken []rect
	for i := range c.marks {
		taken = append(taken, c.markBox(&c.marks[i]))
	}
	order := make([]*mark, 0, len(c.marks))
	for i := range c.marks {
		order = append(order, &c.marks[i])
	}
	slices.SortStableFunc(order, func(a, b *mark) int {
		switch {
		case a.first == b.first:
			return 0
		case a.first:
			return -1
		}
		return 1
	})
	area := c.plotRect()
	for _, m := range order {
		if m.label == "" {
			continue
		}
		w := textWidth(m.label, labelSize, m.bold) + 2*labelPad
		h := 1.3*labelSize + 2*labelPad
		mb := c.markBox(m)
		cx, cy := (mb.x0+mb.x1)/2, (mb.y0+mb.y1)/2
		placed := false
		for _, d := range labelDistances {
			dd := d * 0.7
			for _, r := range []rect{
				{mb.x1 + d, cy - h/2, mb.x1 + d + w, cy + h/2},           // east
				{mb.x0 - d - w, cy - h/2, mb.x0 - d, cy + h/2},           // west
				{cx - w/2, mb.y0 - d - h, cx + w/2, mb.y0 - d},           // north
				{cx - w/2, mb.y1 + d, cx + w/2, mb.y1 + d + h},           // south
				{mb.x1 + dd, mb.y0 - dd - h, mb.x1 + dd + w, mb.y0 - dd}, // north-east
				{mb.x0 - dd - w, mb.y0 - dd - h, mb.x0 - dd, mb.y0 - dd}, // north-west
				{mb.x1 + dd, mb.y1 + dd, mb.x1 + dd + w, mb.y1 + dd + h}, // south-east
				{mb.x0 - dd - w, mb.y1 + dd, mb.x0 - dd, mb.y1 + dd + h}, // south-west
			} {
				if !r.inside(area) || slices.ContainsFunc(taken, r.overlaps) {
					continue
				}
				pl := placedLabel{m: m, box: r}
				if d >= leaderFrom {
					// From the mark's edge toward the label's nearest point.
					lx, ly := math.Min(math.Max(cx, r.x0), r.x1), math.Min(math.Max(cy, r.y0), r.y1)
					dx, dy := lx-cx, ly-cy
					k := math.Min(safeDiv((mb.x1-mb.x0)/2, math.Abs(dx)), safeDiv((mb.y1-mb.y0)/2, math.Abs(dy)))
					pl.leader, pl.led = [4]float64{cx + dx*k, cy + dy*k, lx, ly}, true
				}
				c.labels = append(c.labels, pl)
				taken = append(taken, r)
				placed = true
				break
			}
			if placed {
				break
			}
		}
		if !placed {
			c.unplaced = append(c.unplaced, m.label)
		}
	}
}

// safeDiv is a / b, or +Inf when b is 0.
func safeDiv(a, b float64) float64 {
	if b == 0 {
		return math.Inf(1)
	}
	return a / b
}

// renderMarks draws the marks, then their labels with any leader lines.
func (c *chart) renderMarks(b *strings.Builder) {
	if len(c.marks) == 0 {
		return
	}
	c.layout()
	esc := html.EscapeString
	for i := range c.marks {
		m := &c.marks[i]
		x, y := c.centre(m)
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			continue
		}
		b.WriteString("<g")
		if m.class != "" {
			fmt.Fprintf(b, ` class="%s"`, esc(m.class))
		}
		for _, kv := range m.data {
			fmt.Fprintf(b, ` data-%s="%s"`, kv[0], esc(kv[1]))
		}
		fmt.Fprintf(b, "><title>%s</title>", esc(m.title))
		if m.ring > 0 {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="none" stroke="%s" stroke-width="1.8"/>`, svgNum(x), svgNum(y), svgNum(m.ring), m.ringColor)
		}
		x0 := x - glyphStep*float64(len(m.glyphs)-1)/2
		for k, g := range m.glyphs {
			drawGlyph(b, g, x0+glyphStep*float64(k), y)
		}
		b.WriteString("</g>\n")
	}
	for _, pl := range c.labels {
		if pl.led {
			col := pl.m.labelColor
			if col == "" {
				col = "#90a4ae"
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="0.8"/>`,
				svgNum(pl.leader[0]), svgNum(pl.leader[1]), svgNum(pl.leader[2]), svgNum(pl.leader[3]), col)
		}
		attrs := ""
		if pl.m.labelColor != "" {
			attrs += ` fill="` + pl.m.labelColor + `"`
		}
		if pl.m.bold {
			attrs += ` font-weight="600"`
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" class="pl"%s>%s</text>`+"\n", svgNum(pl.box.x0+labelPad), svgNum(pl.box.y0+labelPad+labelSize), attrs, esc(pl.m.label))
	}
}

// drawGlyph draws g centred at (x, y).
func drawGlyph(b *strings.Builder, g glyph, x, y float64) {
	op := ""
	if g.faint {
		op = ` opacity="0.4"`
	}
	r := glyphR
	switch g.shape {
	case glyphCross:
		fmt.Fprintf(b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2"%s/>`,
			svgNum(x-r), svgNum(y-r), svgNum(x+r), svgNum(y+r), svgNum(x-r), svgNum(y+r), svgNum(x+r), svgNum(y-r), g.color, op)
	case glyphCircle:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="#fff" stroke="%s" stroke-width="1.5"%s/>`, svgNum(x), svgNum(y), svgNum(r-0.5), g.color, op)
	case glyphSquare:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#fff" stroke="%s" stroke-width="1.5"%s/>`,
			svgNum(x-r+0.5), svgNum(y-r+0.5), svgNum(2*r-1), svgNum(2*r-1), g.color, op)
	default:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s"%s/>`, svgNum(x), svgNum(y), svgNum(r), g.color, op)
	}
}
