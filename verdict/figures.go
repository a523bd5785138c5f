package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// Direction says which way a figure is better.
type Direction int

// Directions.
const (
	Neutral Direction = iota
	LowerIsBetter
	HigherIsBetter
)

// Figure is one quantity sixpin can compare across runs, as the registry
// below knows it: a distribution (read at a statistic: p50, p99, mean), a
// window scalar, or a whole-run figure. Its values are in Unit (a
// fraction 0–1 when Fraction).
type Figure struct {
	// Key is the name in rules and CSV columns (ttft_ms, aggregate_output_tok_s,
	// errors.rate).
	Key string
	// Label is how reports name it; Unit is its unit ("" for none, "%" for
	// fractions shown as percentages, "ms", "tok/s", "$").
	Label  string
	Unit   string
	Better Direction
	// Hist is the histogram behind a distribution (zero otherwise).
	Hist results.HistSpec
	dist func(*results.Window) *results.Dist
	// scalar reads a window figure with its sampling model.
	scalar func(run *results.Run, w *results.Window, window string) (stats.Estimate, bool)
	// run reads a whole-run figure with its sampling model.
	run func(run *results.Run) (stats.Estimate, bool)
	// Fraction is true for shares (error rate): values are 0–1, shown as %.
	Fraction bool
	// Integer is true for counts.
	Integer bool
}

// IsDist reports whether f is a distribution, read at a statistic.
func (f Figure) IsDist() bool { return f.dist != nil }

// Dist returns the distribution's summary in window w, in f's unit; nil
// when f is not a distribution or w has no value of it.
func (f Figure) Dist(w *results.Window) *results.Dist {
	if f.dist == nil {
		return nil
	}
	return f.dist(w)
}

// FigureOf looks a figure up by its key: a distribution (ttft_ms), a
// window scalar (aggregate_output_tok_s) or a whole-run figure
// (errors.rate).
func FigureOf(key string) (Figure, bool) {
	for _, fs := range [][]Figure{distFigures, windowFigures, runFigures} {
		for _, f := range fs {
			if f.Key == key {
				return f, true
			}
		}
	}
	return Figure{}, false
}

// distFigures are the per-request and per-stream distributions (DESIGN §2).
var distFigures = []Figure{
	{Key: "ttft_ms", Label: "TTFT", Unit: "ms", Better: LowerIsBetter, Hist: results.HistTTFT,
		dist: func(w *results.Window) *results.Dist { return w.TTFTMs }},
	{Key: "itl_ms", Label: "ITL", Unit: "ms", Better: LowerIsBetter, Hist: results.HistITL,
		dist: func(w *results.Window) *results.Dist { return w.ITLMs }},
	{Key: "tpot_ms", Label: "TPOT", Unit: "ms", Better: LowerIsBetter, Hist: results.HistTPOT,
		dist: func(w *results.Window) *results.Dist { return w.TPOTMs }},
	{Key: "e2e_ms", Label: "E2E", Unit: "ms", Better: LowerIsBetter, Hist: results.HistE2E,
		dist: func(w *results.Window) *results.Dist { return w.E2EMs }},
	{Key: "decode_tok_s", Label: "decode tok/s per stream", Unit: "tok/s", Better: HigherIsBetter, Hist: results.HistDecode,
		dist: func(w *results.Window) *results.Dist { return w.DecodeTokS }},
	{Key: "effective_tok_s", Label: "effective tok/s per stream", Unit: "tok/s", Better: HigherIsBetter, Hist: results.HistEffective,
		dist: func(w *results.Window) *results.Dist { return w.EffectiveTokS }},
	{Key: "ttft_answer_ms", Label: "TTFT answer", Unit: "ms", Better: LowerIsBetter, Hist: results.HistTTFTAnswer,
		dist: func(w *results.Window) *results.Dist { return w.TTFTAnswerMs }},
	{Key: "schedule_lag_ms", Label: "schedule lag", Unit: "ms", Better: LowerIsBetter, Hist: results.HistLag,
		dist: func(w *results.Window) *results.Dist { return w.ScheduleLagMs }},
}

// windowFigures are one figure per window.
var windowFigures = []Figure{
	{Key: "aggregate_output_tok_s", Label: "aggregate output tok/s (all streams)", Unit: "tok/s", Better: HigherIsBetter,
		scalar: func(run *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			return seriesEstimate(run, w, w.AggregateOutputTokS, false), true
		}},
	{Key: "aggregate_per_stream_tok_s", Label: "aggregate ÷ in flight, tok/s per stream", Unit: "tok/s", Better: HigherIsBetter,
		scalar: func(run *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			if w.MeanInFlight == 0 {
				return stats.Estimate{}, false
			}
			return seriesEstimate(run, w, w.AggregatePerStreamTokS, true), true
		}},
	{Key: "mean_in_flight", Label: "concurrency (mean in flight)", Better: Neutral,
		scalar: func(_ *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			return stats.Estimate{Value: w.MeanInFlight, Exact: true}, w.DurationS > 0
		}},
	{Key: "goodput_rps", Label: "goodput req/s", Unit: "req/s", Better: HigherIsBetter,
		scalar: func(_ *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			if w.Goodput == nil || w.DurationS <= 0 {
				return stats.Estimate{}, false
			}
			e := stats.Proportion(w.Goodput.Requests, w.Requests, float64(w.Requests)/w.DurationS)
			e.Value = w.Goodput.RateRPS
			return e, true
		}},
	{Key: "goodput_fraction", Label: "goodput share of requests", Unit: "%", Fraction: true, Better: HigherIsBetter,
		scalar: func(_ *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			if w.Goodput == nil {
				return stats.Estimate{}, false
			}
			return stats.Proportion(w.Goodput.Requests, w.Requests, 1), true
		}},
	{Key: "error_rate", Label: "error rate", Unit: "%", Fraction: true, Better: LowerIsBetter,
		scalar: func(_ *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			if w.Requests == 0 {
				return stats.Estimate{}, false
			}
			return stats.Proportion(w.Failed, w.Requests, 1), true
		}},
	{Key: "requests", Label: "requests started", Better: Neutral, Integer: true,
		scalar: func(_ *results.Run, w *results.Window, _ string) (stats.Estimate, bool) {
			return stats.Estimate{Value: float64(w.Requests), Exact: true}, true
		}},
	{Key: "peak_aggregate_output_tok_s", Label: "peak aggregate tok/s (any burst-long span)", Unit: "tok/s", Better: HigherIsBetter,
		scalar: func(_ *results.Run, w *results.Window, window string) (stats.Estimate, bool) {
			return stats.Estimate{Value: w.PeakAggregateOutputTokS, NoInterval: "a maximum over spans has no interval"},
				window == results.WindowBurst && w.PeakAggregateOutputTokS > 0
		}},
}

// runFigures are whole-run figures, named "GROUP.KEY" in rules.
var runFigures = []Figure{
	{Key: "errors.rate", Label: "error rate (whole run, interrupts excluded)", Unit: "%", Fraction: true, Better: LowerIsBetter,
		run: func(run *results.Run) (stats.Estimate, bool) {
			e := run.Errors
			cut := e.ByClass[string(record.ErrInterrupted)]
			n := e.Requests - cut
			if n <= 0 {
				return stats.Estimate{}, false
			}
			return stats.Proportion(e.Failed-cut, n, 1), true
		}},
	{Key: "cost.per_m_output_tokens_usd", Label: "cost per million output tokens", Unit: "$", Better: LowerIsBetter,
		run: func(run *results.Run) (stats.Estimate, bool) {
			if run.Cost == nil || run.Cost.PerMOutputTokensUSD == 0 {
				return stats.Estimate{}, false
			}
			return stats.Estimate{Value: run.Cost.PerMOutputTokensUSD, Exact: true}, true
		}},
	{Key: "cost.per_hour_usd", Label: "cost per hour at this pace", Unit: "$", Better: LowerIsBetter,
		run: func(run *results.Run) (stats.Estimate, bool) {
			if run.Cost == nil || run.Cost.PerHourUSD == 0 {
				return stats.Estimate{}, false
			}
			return stats.Estimate{Value: run.Cost.PerHourUSD, Exact: true}, true
		}},
}

// distStats are the statistics a distribution is read at, with
// their percentile (0–100); mean is -1, min and max are not gate-able.
var distStats = []struct {
	Key        string
	Percentile float64
}{
	{"p10", 10}, {"p50", 50}, {"p90", 90}, {"p95", 95}, {"p99", 99}, {"p99_9", 99.9}, {"mean", -1}, {"min", -2}, {"max", -3},
}

func statPercentile(stat string) (float64, bool) {
	for _, s := range distStats {
		if s.Key == stat {
			return s.Percentile, true
		}
	}
	return 0, false
}

// StatOf reads statistic stat of d, in d's unit: p10, p50, p90, p95,
// p99, p99_9, mean, min or max (NaN for another).
func StatOf(d *results.Dist, stat string) float64 {
	switch stat {
	case "p10":
		return d.P10
	case "p50":
		return d.P50
	case "p90":
		return d.P90
	case "p95":
		return d.P95
	case "p99":
		return d.P99
	case "p99_9":
		return d.P999
	case "mean":
		return d.Mean
	case "min":
		return d.Min
	case "max":
		return d.Max
	}
	return math.NaN()
}

// windowSlots returns the per-second output tokens and in-flight means of
// the whole seconds inside w.
func windowSlots(run *results.Run, w *results.Window) (tokens, inFlight []float64) {
	step := float64(max(run.Series.StepS, 1))
	lo := int(math.Ceil(w.StartS/step - 1e-9))
	hi := int(math.Floor(w.EndS/step + 1e-9))
	for i := lo; i < hi && i < len(run.Series.OutputTokens); i++ {
		tokens = append(tokens, float64(run.Series.OutputTokens[i])/step)
		f := 0.0
		if i < len(run.Series.InFlight) {
			f = run.Series.InFlight[i]
		}
		inFlight = append(inFlight, f)
	}
	return tokens, inFlight
}

// FigureRef names one figure of a run: WINDOW.METRIC[.STAT]
// (steady.ttft_ms.p99), or a whole-run GROUP.KEY (errors.rate).
type FigureRef struct {
	Window string // "" for whole-run figures
	Figure Figure
	Stat   string // for distributions: p50, p99, p99_9, mean …
}

// Key returns the reference as written in rules.
func (f FigureRef) Key() string {
	if f.Window == "" {
		return f.Figure.Key
	}
	s := f.Window + "." + f.Figure.Key
	if f.Stat != "" {
		s += "." + f.Stat
	}
	return s
}

// shortLabel names the figure within its window: "TTFT p99".
func (f FigureRef) shortLabel() string {
	if f.Stat != "" {
		return f.Figure.Label + " " + f.Stat
	}
	return f.Figure.Label
}

// Label names the figure for people: "steady TTFT p99".
func (f FigureRef) Label() string {
	s := f.Figure.Label
	if f.Stat != "" {
		s += " " + f.Stat
	}
	if f.Window != "" {
		s = f.Window + " " + s
	}
	return s
}

// ParseFigure parses a figure reference as rules write it
// (steady.ttft_ms.p99, errors.rate); the error names what is wrong with
// it, in the words a rules file's errors use.
func ParseFigure(key string) (FigureRef, error) {
	for _, f := range runFigures {
		if key == f.Key {
			return FigureRef{Figure: f}, nil
		}
	}
	parts := strings.Split(key, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return FigureRef{}, fmt.Errorf("want WINDOW.METRIC or WINDOW.METRIC.STAT (steady.ttft_ms.p99) or %s", runKeys())
	}
	if !slices.Contains(results.WindowNames, parts[0]) {
		return FigureRef{}, fmt.Errorf("unknown window %q (want one of %s)", parts[0], strings.Join(results.WindowNames, ", "))
	}
	f := FigureRef{Window: parts[0]}
	for _, m := range distFigures {
		if m.Key == parts[1] {
			f.Figure = m
			if len(parts) != 3 {
				return f, fmt.Errorf("%s is a distribution: name a statistic, e.g. %s.%s.p99 (one of %s)", m.Key, parts[0], m.Key, statKeys())
			}
			if _, ok := statPercentile(parts[2]); !ok {
				return f, fmt.Errorf("unknown statistic %q (want one of %s)", parts[2], statKeys())
			}
			f.Stat = parts[2]
			return f, nil
		}
	}
	for _, m := range windowFigures {
		if m.Key == parts[1] {
			f.Figure = m
			if len(parts) == 3 {
				return f, fmt.Errorf("%s is one figure per window: no statistic after it", m.Key)
			}
			return f, nil
		}
	}
	return f, fmt.Errorf("unknown metric %q (want one of %s)", parts[1], windowKeys())
}

// statKeys lists the statistics, for errors.
func statKeys() string {
	var ks []string
	for _, s := range distStats {
		ks = append(ks, s.Key)
	}
	return strings.Join(ks, ", ")
}

// windowKeys lists the figures of a window, for errors.
func windowKeys() string {
	var ks []string
	for _, m := range distFigures {
		ks = append(ks, m.Key)
	}
	for _, m := range windowFigures {
		ks = append(ks, m.Key)
	}
	return strings.Join(ks, ", ")
}

// runKeys lists the whole-run figures, for errors.
func runKeys() string {
	var ks []string
	for _, m := range runFigures {
		ks = append(ks, m.Key)
	}
	return strings.Join(ks, ", ")
}

// Why an estimate has no interval when its results file lacks the data.
const (
	noHistogram = "no histogram in the results file"
	noSeries    = "no per-second series in the results file"
)

// seriesEstimate is seriesRatioEstimate over w's seconds, or the value
// without an interval when the file holds no series.
func seriesEstimate(run *results.Run, w *results.Window, value float64, perStream bool) stats.Estimate {
	if len(run.Series.OutputTokens) == 0 && w.Requests > 0 {
		return stats.Estimate{Value: value, NoInterval: noSeries}
	}
	num, den := windowSlots(run, w)
	if !perStream {
		den = nil
	}
	return stats.SeriesRatio(value, num, den)
}

// histCache decodes each histogram of a run once.
type histCache map[string]*hdrhistogram.Histogram

// Estimate reads f from run: its value in the figure's unit (a fraction
// 0–1 for Fraction figures) with the sampling model its interval is
// drawn from (stats.Settings.Interval). ok is false when the run has no
// such figure (no window, no successful request, no SLO); why then says
// so. Each call decodes the histogram it reads.
func (f FigureRef) Estimate(run *results.Run) (e stats.Estimate, ok bool, why string) {
	return f.estimate(run, histCache{})
}

// estimate is Estimate with the run's histograms decoded once in hc.
func (f FigureRef) estimate(run *results.Run, hc histCache) (e stats.Estimate, ok bool, why string) {
	if f.Figure.run != nil {
		e, ok = f.Figure.run(run)
		if !ok {
			return e, false, "not in this run"
		}
		return e, true, ""
	}
	w := run.Windows[f.Window]
	if w == nil {
		return e, false, "no " + f.Window + " window"
	}
	if !f.Figure.IsDist() {
		e, ok = f.Figure.scalar(run, w, f.Window)
		if !ok {
			return e, false, "not measured in the " + f.Window + " window"
		}
		return e, true, ""
	}
	d := f.Figure.dist(w)
	if d == nil {
		return e, false, "no successful request in the " + f.Window + " window"
	}
	p, _ := statPercentile(f.Stat)
	h, err := hc.get(run, f.Window, f.Figure.Hist.Name)
	if err != nil || h == nil || p < -1 {
		// No histogram (or min/max): the summary's value, without interval.
		e = stats.Estimate{Value: StatOf(d, f.Stat), NoInterval: noHistogram}
		if p < -1 {
			e.NoInterval = "an extreme has no interval"
		}
		return e, true, ""
	}
	if p == -1 {
		return stats.HistMean(h, f.Figure.Hist.Scale), true, ""
	}
	return stats.HistQuantile(h, p, f.Figure.Hist.Scale), true, ""
}

// get returns run's histogram name in window, decoded once; nil when the
// file holds none.
func (hc histCache) get(run *results.Run, window, name string) (*hdrhistogram.Histogram, error) {
	key := window + "/" + name
	if h, ok := hc[key]; ok {
		return h, nil
	}
	enc, ok := run.Histograms[window][name]
	if !ok {
		hc[key] = nil
		return nil, nil
	}
	h, err := enc.Decode()
	if err != nil {
		return nil, fmt.Errorf("decode %s %s histogram: %w", window, name, err)
	}
	hc[key] = h
	return h, nil
}
