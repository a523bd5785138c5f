package report

import (
	"math"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// bakeoffContextChart draws each vendor's effective tok/s p50 (per
// stream) in every context-depth band any vendor reached, one line per
// vendor on one chart: how each one's speed falls as the context grows.
// With repeats a point is the mean of the runs' p50s. nil when no vendor
// has two bands with requests (one point per vendor is a table's job).
func bakeoffContextChart(bv bakeoffView) *chart {
	depths := results.ContextDepths
	used := make([]bool, len(depths))
	type point struct {
		band int
		eff  float64
	}
	lines := make([][]point, len(bv.vendors))
	most := 0
	for i, v := range bv.vendors {
		for d := range depths {
			var xs []float64
			for _, r := range v.Runs {
				for _, b := range r.ByContext {
					if b.Name == depths[d].Name && b.Requests > 0 && b.EffectiveTokS != nil {
						xs = append(xs, b.EffectiveTokS.P50)
					}
				}
			}
			if len(xs) == 0 {
				continue
			}
			used[d] = true
			mean, _ := stats.MeanSD(xs)
			lines[i] = append(lines[i], point{d, mean})
		}
		most = max(most, len(lines[i]))
	}
	if most < 2 {
		return nil
	}
	// The bands on the x axis: from the first any vendor reached to the
	// last, one unit each.
	first, last := -1, -1
	for d, u := range used {
		if u {
			last = d
			if first < 0 {
				first = d
			}
		}
	}
	c := &chart{title: "Effective throughput by context depth, one line per vendor", width: 720, height: 340,
		xLabel: "context depth (prompt tokens, usage; K = 1,000)", yLabel: "effective tok/s per stream (p50)"}
	c.x.min, c.x.max = float64(first)-0.5, float64(last)+0.5
	for d := first; d <= last; d++ {
		c.x.ticks = append(c.x.ticks, tick{float64(d), depths[d].Name})
	}
	top := 0.0
	for i, v := range bv.vendors {
		colour := modelColours[i%len(modelColours)]
		s := series{name: v.Profile, color: colour}
		for _, p := range lines[i] {
			x := float64(p.band)
			s.pts = append(s.pts, [2]float64{x, p.eff})
			top = math.Max(top, p.eff)
			c.marks = append(c.marks, mark{x: x, y: p.eff, glyphs: []glyph{{shape: glyphDot, color: colour}},
				title: v.Profile + ", " + depths[p.band].Name + ": " + num(p.eff) + " tok/s", label: num(p.eff), labelColor: colour})
		}
		c.series = append(c.series, s)
	}
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, top*1.15, 5, tickLabel)
	return c
}

// bakeoffPareto is one point per vendor, labelled "profile NAME": its
// per-stream throughput (aggregate / mean in flight) against its
// aggregate output tok/s, each the mean over its runs.
func bakeoffPareto(bv bakeoffView) series {
	s := series{color: colStream, marks: true}
	for _, v := range bv.vendors {
		per := figOf(v.hs, func(h headline) float64 { return h.perStream }, true)
		agg := figOf(v.hs, func(h headline) float64 { return h.aggregate }, true)
		if finite(per.mean) && finite(agg.mean) {
			s.pts = append(s.pts, [2]float64{per.mean, agg.mean})
			s.labels = append(s.labels, "profile "+v.Profile)
		}
	}
	return s
}
