package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/sixpin/sixpin/results"
)

// Colours of the latency percentiles.
const (
	colP50 = "#1565c0"
	colP90 = "#ef6c00"
	colP99 = "#c62828"
)

// latencyQuantiles are the percentiles the latency charts draw.
var latencyQuantiles = []struct {
	name  string
	q     float64
	color string
}{{"p50", 0.5, colP50}, {"p90", 0.9, colP90}, {"p99", 0.99, colP99}}

// latencyOverTimeChart draws a latency's p50, p90 and p99 step by step
// (the run's OverTime), windows shaded: where a run's tail moved, and
// when (nil: the file keeps none).
func latencyOverTimeChart(run *results.Run, o *results.OverTime, what string) *chart {
	if o == nil || len(o.Steps) == 0 {
		return nil
	}
	c := &chart{title: fmt.Sprintf("%s percentiles over time (ms, each %d-s step)", what, o.StepS), width: 1060, height: 300,
		xLabel: "seconds from start of load", yLabel: "ms", x: timeAxis(run), bands: windowBands(run)}
	var ymax float64
	for _, lq := range latencyQuantiles {
		s := series{name: what + " " + lq.name, color: lq.color, marks: len(o.Steps) < 60}
		for i := range o.Steps {
			if v, ok := o.QuantileMs(i, lq.q); ok {
				s.pts = append(s.pts, [2]float64{(float64(i) + 0.5) * float64(o.StepS), v})
				ymax = math.Max(ymax, v)
			}
		}
		c.series = append(c.series, s)
	}
	c.x.max = math.Max(c.x.max, float64(len(o.Steps)*o.StepS))
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, ymax*1.1, 6, tickLabel)
	return c
}

// latencyInFlightChart draws TTFT p50 and p99 of each step against the
// requests in flight in it, ordered by in flight: where queueing shows
// first (latency climbing with concurrency before throughput stops).
func latencyInFlightChart(run *results.Run) *chart {
	o, fl := run.Series.TTFT, run.Series.InFlight
	if o == nil || len(o.Steps) < 3 || len(fl) == 0 {
		return nil
	}
	type row struct{ x, p50, p99 float64 }
	var rows []row
	for i := range o.Steps {
		p50, ok := o.QuantileMs(i, 0.5)
		if !ok {
			continue
		}
		p99, _ := o.QuantileMs(i, 0.99)
		// The step's mean in flight, from the per-second series.
		lo, hi := i*o.StepS, min((i+1)*o.StepS, len(fl))
		if lo >= hi {
			continue
		}
		var sum float64
		for _, v := range fl[lo:hi] {
			sum += v
		}
		rows = append(rows, row{sum / float64(hi-lo), p50, p99})
	}
	if len(rows) < 3 {
		return nil
	}
	slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.x, b.x) })
	c := &chart{title: fmt.Sprintf("TTFT against requests in flight (each %d-s step)", o.StepS), width: 520, height: 300,
		xLabel: "requests in flight (mean over the step)", yLabel: "TTFT ms"}
	p50 := series{name: "TTFT p50", color: colP50, dots: true, noLine: true}
	p99 := series{name: "TTFT p99", color: colP99, dots: true, noLine: true}
	var xmax, ymax float64
	for _, r := range rows {
		p50.pts = append(p50.pts, [2]float64{r.x, r.p50})
		p99.pts = append(p99.pts, [2]float64{r.x, r.p99})
		xmax, ymax = math.Max(xmax, r.x), math.Max(ymax, r.p99)
	}
	c.series = []series{p50, p99}
	c.x.ticks, c.x.min, c.x.max = niceTicks(0, math.Max(xmax*1.05, 1), 6, tickLabel)
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, ymax*1.1, 6, tickLabel)
	return c
}
