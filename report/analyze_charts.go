package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/internal/stats"
)

// Chart files WriteAnalyzeCharts makes, each NAME.svg.
const (
	ChartBoxPlot = "effective-tok-s-by-model"
	ChartContext = "effective-tok-s-vs-context"
)

// maxScatter bounds the points drawn per model: more are thinned evenly.
const maxScatter = 2000

// modelColours tell the models apart in the analyze charts.
var modelColours = []string{"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#546e7a", "#ad1457"}

// WriteAnalyzeCharts draws an analyze report's charts into dir (created
// if missing), each an SVG file of its own, drawn by the same engine as
// the HTML report's: a box plot of effective tok/s per model (box
// P25–P75, median, whiskers P10–P90) and effective tok/s against context
// length (the samples, thinned to 2,000 per model, and each model's
// median per context bin). The paths are returned.
func WriteAnalyzeCharts(dir string, r *analyze.Report) ([]string, error) {
	var models []*analyze.ModelReport
	for _, m := range r.Models {
		if m.EffectiveTokS != nil {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("charts: no samples to draw")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	var written []string
	for _, c := range []struct {
		name string
		ch   *chart
	}{{ChartBoxPlot, boxChart(models)}, {ChartContext, contextChart(models)}} {
		c.ch.standalone = true
		path := filepath.Join(dir, c.name+".svg")
		err := atomicfile.Write(path, func(w io.Writer) error {
			var b strings.Builder
			c.ch.render(&b)
			_, err := io.WriteString(w, b.String())
			return err
		})
		if err != nil {
			return written, fmt.Errorf("charts: %w", err)
		}
		written = append(written, path)
	}
	return written, nil
}

// boxChart draws one horizontal box per model, the most sampled on top.
func boxChart(models []*analyze.ModelReport) *chart {
	c := &chart{title: "Effective throughput per model (box P25–P75, median, whiskers P10–P90)",
		width: 900, height: 110 + 40*float64(len(models)),
		xLabel: "effective tok/s: (output + reasoning tokens) / generation time"}
	top, longest := 0.0, 0
	for i, m := range models {
		d := m.EffectiveTokS
		top = max(top, d.P90)
		y := float64(len(models) - 1 - i)
		name := fmt.Sprintf("%s (n %s)", m.Key(), group(float64(d.N)))
		longest = max(longest, len([]rune(name)))
		c.y.ticks = append(c.y.ticks, tick{y, name})
		c.boxes = append(c.boxes, box{y: y, lo: d.P10, q1: d.P25, med: d.P50, q3: d.P75, hi: d.P90, color: "#1565c0",
			title: fmt.Sprintf("%s: P10 %s, P25 %s, P50 %s, P75 %s, P90 %s tok/s", m.Key(), num(d.P10), num(d.P25), num(d.P50), num(d.P75), num(d.P90))})
	}
	c.left = max(chartLeft, 6.6*float64(longest)+16)
	c.y.min, c.y.max = -0.7, float64(len(models))-0.3
	c.x.ticks, c.x.min, c.x.max = niceTicks(0, top*1.05, 6, tickLabel)
	return c
}

// contextBins are the context lengths the median line is drawn over.
var contextBins = []float64{0, 5e3, 10e3, 20e3, 35e3, 50e3, 75e3, 100e3, 120e3, 150e3, 200e3, 300e3, 500e3, 1e6, 1e7}

// contextChart draws the samples' effective tok/s against their context,
// with each model's median per context bin (bins of at least 5 samples).
func contextChart(models []*analyze.ModelReport) *chart {
	c := &chart{title: "Effective throughput against context length", width: 900, height: 560,
		xLabel: "context: input + cache read + cache write tokens", yLabel: "effective tok/s"}
	var xmax, ymax float64
	for i, m := range models {
		colour := modelColours[i%len(modelColours)]
		eff, ctx := m.Samples()
		stride := max(1, (len(eff)+maxScatter-1)/maxScatter)
		dots := series{color: colour, dots: true}
		for j := 0; j < len(eff); j += stride {
			dots.pts = append(dots.pts, [2]float64{float64(ctx[j]), float64(eff[j])})
			xmax, ymax = max(xmax, float64(ctx[j])), max(ymax, float64(eff[j]))
		}
		c.series = append(c.series, dots)
		if med := binMedians(eff, ctx); len(med) > 0 {
			c.series = append(c.series, series{name: m.Key() + " (median per context bin)", color: colour, marks: true, pts: med})
		} else {
			c.series[len(c.series)-1].name = m.Key()
		}
	}
	c.x.ticks, c.x.min, c.x.max = niceTicks(0, max(xmax, 1), 7, tokensTick)
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, max(ymax, 1)*1.1, 6, tickLabel)
	return c
}

// binMedians is, per context bin with 5 samples or more, the median
// context and the median effective tok/s.
func binMedians(eff, ctx []float32) [][2]float64 {
	var out [][2]float64
	for b := 0; b+1 < len(contextBins); b++ {
		var e, c []float64
		for j := range eff {
			if x := float64(ctx[j]); x >= contextBins[b] && x < contextBins[b+1] {
				e, c = append(e, float64(eff[j])), append(c, x)
			}
		}
		if len(e) < 5 {
			continue
		}
		slices.Sort(e)
		slices.Sort(c)
		out = append(out, [2]float64{
			stats.Percentile(len(c), func(i int) float64 { return c[i] }, 50),
			stats.Percentile(len(e), func(i int) float64 { return e[i] }, 50)})
	}
	return out
}

// tokensTick labels an axis of token counts in K and M: 100K, 1.5M.
func tokensTick(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "K"
	}
	return tickLabel(v)
}
