package analyze

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sixpin/sixpin/internal/atomicfile"
)

// Chart files WriteCharts makes, each as .svg and .png.
const (
	ChartBoxPlot = "effective-tok-s-by-model"
	ChartContext = "effective-tok-s-vs-context"
)

// maxScatter bounds the points drawn per model: more are thinned evenly.
const maxScatter = 2000

// WriteCharts draws the report's charts into dir (created if missing):
// a box plot of effective tok/s per model (box P25–P75, median, whiskers
// P10–P90) and effective tok/s against context length (samples, thinned
// to 2,000 per model, with each model's median per context bin). Each is
// written as SVG and PNG; the paths are returned.
func (r *Report) WriteCharts(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	var models []*ModelReport
	for _, m := range r.Models {
		if m.EffectiveTokS != nil {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("charts: no samples to draw")
	}
	box, err := boxChart(models)
	if err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	scatter, err := contextChart(models)
	if err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	var written []string
	for _, c := range []struct {
		name string
		p    *plot.Plot
		w, h vg.Length
	}{
		{ChartBoxPlot, box, 8 * vg.Inch, vg.Length(1.5+0.45*float64(len(models))) * vg.Inch},
		{ChartContext, scatter, 9 * vg.Inch, 6 * vg.Inch},
	} {
		for _, ext := range []string{"svg", "png"} {
			wt, err := c.p.WriterTo(c.w, c.h, ext)
			if err != nil {
				return written, fmt.Errorf("charts: %w", err)
			}
			path := filepath.Join(dir, c.name+"."+ext)
			if err := atomicfile.Write(path, func(w io.Writer) error { _, err := wt.WriteTo(w); return err }); err != nil {
				return written, fmt.Errorf("charts: %w", err)
			}
			written = append(written, path)
		}
	}
	return written, nil
}

// boxChart draws one horizontal box per model, the most sampled on top.
func boxChart(models []*ModelReport) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Effective throughput per model (box P25–P75, median, whiskers P10–P90)"
	p.X.Label.Text = "effective tok/s: (output + reasoning tokens) / generation time"
	p.X.Min = 0
	names := make([]string, len(models))
	top := 0.0
	for _, m := range models {
		top = max(top, m.EffectiveTokS.P90)
	}
	p.X.Max = top * 1.05
	for i, m := range models {
		d := m.EffectiveTokS
		loc := float64(len(models) - 1 - i)
		names[len(models)-1-i] = fmt.Sprintf("%s (n %d)", m.Key(), d.N)
		b, err := plotter.NewBoxPlot(vg.Points(14), loc, plotter.Values{d.P10, d.P25, d.P50, d.P75, d.P90})
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.Quartile1, b.Median, b.Quartile3 = d.P25, d.P50, d.P75
		b.AdjLow, b.AdjHigh, b.Min, b.Max = d.P10, d.P90, d.P10, d.P90
		b.Outside = nil
		b.FillColor = color.RGBA{R: 0x9e, G: 0xc5, B: 0xe8, A: 0xff}
		p.Add(b)
	}
	p.NominalY(names...)
	p.Add(plotter.NewGrid())
	return p, nil
}

// contextBins are the context lengths the median line is drawn over.
var contextBins = []float64{0, 5e3, 10e3, 20e3, 35e3, 50e3, 75e3, 100e3, 120e3, 150e3, 200e3, 300e3, 500e3, 1e6, 1e7}

// contextChart draws the samples' effective tok/s against their context,
// with each model's median per context bin (bins of at least 5 samples).
func contextChart(models []*ModelReport) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Effective throughput against context length"
	p.X.Label.Text = "context: input + cache read + cache write tokens"
	p.Y.Label.Text = "effective tok/s"
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top = true
	p.X.Tick.Marker = thousands{}
	top := 0.0
	for _, m := range models {
		top = max(top, m.EffectiveTokS.Max)
	}
	// Room above the points for the legend.
	p.Y.Max = top * (1.1 + 0.05*float64(len(models)))
	for i, m := range models {
		eff, ctx := m.acc.eff, m.acc.effCtx
		stride := max(1, (len(eff)+maxScatter-1)/maxScatter)
		pts := make(plotter.XYs, 0, len(eff)/stride+1)
		for j := 0; j < len(eff); j += stride {
			pts = append(pts, plotter.XY{X: float64(ctx[j]), Y: float64(eff[j])})
		}
		c := plotutil.Color(i)
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: fade(c), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		if med := binMedians(eff, ctx); len(med) > 0 {
			l, lp, err := plotter.NewLinePoints(med)
			if err != nil {
				return nil, err
			}
			l.Color, l.Width = c, vg.Points(1.5)
			lp.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(l, lp)
			p.Legend.Add(m.Key()+" (median per context bin)", l, lp)
		} else {
			p.Legend.Add(m.Key(), sc)
		}
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// binMedians is, per context bin with 5 samples or more, the median
// context and the median effective tok/s.
func binMedians(eff, ctx sample) plotter.XYs {
	var out plotter.XYs
	for b := 0; b+1 < len(contextBins); b++ {
		var e, c sample
		for j := range eff {
			if x := float64(ctx[j]); x >= contextBins[b] && x < contextBins[b+1] {
				e, c = append(e, eff[j]), append(c, ctx[j])
			}
		}
		if len(e) < 5 {
			continue
		}
		slices.Sort(e)
		slices.Sort(c)
		out = append(out, plotter.XY{X: c.percentile(50), Y: e.percentile(50)})
	}
	return out
}

func fade(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x50}
}

// thousands labels an axis of token counts in K: 100K, 1.5M.
type thousands struct{}

func (thousands) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i, t := range ticks {
		if t.Label == "" {
			continue
		}
		switch v := t.Value; {
		case v >= 1e6:
			ticks[i].Label = strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
		case v >= 1e3:
			ticks[i].Label = strconv.FormatFloat(v/1e3, 'g', 4, 64) + "K"
		}
	}
	return ticks
}
