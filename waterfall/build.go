package waterfall

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// Conf is the confidence level of every interval (95%).
const Conf = 0.95

// measured are the windows a Measure holds.
var measured = []string{results.WindowBurst, results.WindowSteady, results.WindowAll}

// MeasureRun reads every metric of every window the waterfall uses from
// run. A window without a successful request lacks its per-request
// metrics; one of no length lacks its aggregate.
func MeasureRun(run *results.Run) Measure {
	m := Measure{}
	for _, name := range measured {
		w := run.Windows[name]
		if w == nil {
			continue
		}
		vs := map[string]float64{}
		if w.EffectiveTokS != nil && w.EffectiveTokS.Count > 0 {
			vs[MetricEffective] = w.EffectiveTokS.P50
		}
		if w.DecodeTokS != nil && w.DecodeTokS.Count > 0 {
			vs[MetricDecode] = w.DecodeTokS.P50
		}
		if w.TTFTMs != nil && w.TTFTMs.Count > 0 {
			vs[MetricTTFT] = w.TTFTMs.P50
		}
		if w.DurationS > 0 && w.Completed > 0 {
			vs[MetricAggregate] = w.AggregateOutputTokS
		}
		if w.PrefillShare > 0 {
			vs[MeasurePrefillShare] = w.PrefillShare
		}
		m[name] = vs
	}
	return m
}

// File is the plan's waterfall file before it runs: its steps and
// configurations, no figures yet (Fill adds them).
func (p *Plan) File(from, to string) *File {
	f := &File{
		Schema: Schema, From: from, To: to, Metric: p.Metric,
		Order: slices.Clone(p.Order), Skipped: slices.Clone(p.Skipped), Repeat: p.Repeat,
		Start:   Point{Pins: map[string]string{}},
		End:     Point{Pins: map[string]string{}},
		Configs: slices.Clone(p.Configs),
	}
	for _, pin := range DefaultOrder {
		f.Start.Pins[pin] = p.PinValue(pin, false)
		f.End.Pins[pin] = p.PinValue(pin, true)
	}
	a := &f.Attribution
	a.Method = MethodOrder
	switch {
	case p.Exact:
		a.Method = MethodExact
	case p.Options.Orders == 2:
		a.Method = MethodTwoOrder
	}
	a.Auto, a.ExactRuns, a.MaxRuns = p.Auto, p.ExactRuns(), p.MaxRuns
	a.Orders = p.Orders()
	return f
}

// errMissing marks a configuration not (yet) measured.
var errMissing = errors.New("not measured")

// Fill computes f's figures from its configurations' measures: the
// start, every step, the end, each one's validity (from f.Runs), the
// claim's measured side, the prefill at the production pins and the
// attribution. A configuration without measures (an interrupted
// waterfall) ends the steps there and marks f incomplete; the
// attribution then covers nothing. A configuration whose every run lacks
// the metric is an error.
func Fill(f *File) error {
	f.Fallbacks, f.Prefill = nil, nil
	g := game{f: f, seen: map[string]bool{}}
	start, err := g.value(nil)
	if err != nil {
		return g.partial(err, nil)
	}
	f.Start.Value, f.Start.CI, f.Start.Config = start.mean, start.ci(), ""
	f.Start.Window, f.Start.Metric = g.view(nil)
	f.Start.Validity = g.validity("")
	f.Steps = f.Steps[:0]
	prev := start
	for i, pin := range f.Order {
		set := f.Order[:i+1]
		cur, err := g.value(set)
		if err != nil {
			return g.partial(err, set)
		}
		st := Step{Pin: pin, From: f.Start.Pins[pin], To: f.End.Pins[pin], Config: Key(set),
			Value: cur.mean, Delta: cur.mean - prev.mean, Ratio: cur.mean / prev.mean,
			ValueCI: cur.ci(), Runs: !view(pin), Validity: g.validity(Key(set))}
		st.Window, st.Metric = g.view(set)
		if d := paired(prev.each, cur.each); d != nil {
			st.CI = d
			st.Noise = d.Contains(0)
		}
		f.Steps = append(f.Steps, st)
		prev = cur
	}
	f.End.Value, f.End.CI, f.End.Config = prev.mean, prev.ci(), Key(f.Order)
	f.End.Window, f.End.Metric = g.view(f.Order)
	f.End.Validity = g.validity(f.End.Config)
	if slices.Contains(f.Order, PinMetric) {
		f.Prefill = g.prefill(f.End.Config, f.End.Window)
	}
	total := math.Log(f.End.Value / f.Start.Value)
	for i := range f.Steps {
		f.Steps[i].Share = share(f.Steps[i].Ratio, total)
	}
	if f.Claim != nil {
		f.Claim.Measured = f.Start.Value
		f.Claim.DeltaPct = (f.Start.Value - f.Claim.Value) / f.Claim.Value * 100
	}
	f.Incomplete, f.IncompleteReason = false, ""
	return g.attribute(total)
}

// share is ln ratio / total (0 when nothing changed end to end).
func share(ratio, total float64) float64 {
	if total == 0 || ratio == 1 {
		return 0
	}
	return math.Log(ratio) / total
}

// game is the waterfall as a cooperative game: a set of moved pins has
// the value its configuration measured in its view.
type game struct {
	f    *File
	seen map[string]bool
}

// worth is a set's value: the mean over the repeats and each repeat's.
type worth struct {
	mean float64
	each []float64
}

// ci is the 95% interval of the mean (nil for one run).
func (w worth) ci() *Interval {
	_, half := stats.MeanCI(w.each, Conf)
	if math.IsNaN(half) {
		return nil
	}
	return &Interval{w.mean - half, w.mean + half}
}

// paired is the 95% interval of the mean change from a to b, paired by
// repeat (nil for one run, or unpaired counts).
func paired(a, b []float64) *Interval {
	if len(a) != len(b) || len(a) < 2 {
		return nil
	}
	d := make([]float64, len(a))
	for i := range a {
		d[i] = b[i] - a[i]
	}
	mean, half := stats.MeanCI(d, Conf)
	return &Interval{mean - half, mean + half}
}

// view is the window and metric a set of moved pins reads.
func (g *game) view(set []string) (window, metric string) {
	window, metric = WindowFrom, SwitchFrom
	if slices.Contains(set, PinWindow) {
		window = WindowTo
	}
	switch {
	case g.f.Metric != "":
		metric = g.f.Metric
	case slices.Contains(set, PinMetric):
		metric = SwitchTo
	}
	return window, metric
}

// config is the configuration named key (nil: none).
func (g *game) config(key string) *Config {
	i := slices.IndexFunc(g.f.Configs, func(c Config) bool { return c.Key == key })
	if i < 0 {
		return nil
	}
	return &g.f.Configs[i]
}

// validity is configuration key's validity (none known: no such
// configuration).
func (g *game) validity(key string) Validity {
	if c := g.config(key); c != nil {
		return g.f.Validity(*c)
	}
	return Validity{}
}

// Validity is how many of c's runs (in f.Runs) were invalid, and their
// distinct reasons in the order met.
func (f *File) Validity(c Config) Validity {
	var v Validity
	for _, r := range c.Runs {
		if r < 0 || r >= len(f.Runs) || f.Runs[r] == nil || f.Runs[r].Valid {
			continue
		}
		v.InvalidRuns++
		v.add(f.Runs[r].Invalid)
	}
	return v
}

// add adds the reasons v lacks.
func (v *Validity) add(reasons []string) {
	for _, why := range reasons {
		if !slices.Contains(v.Invalid, why) {
			v.Invalid = append(v.Invalid, why)
		}
	}
}

// Merge is v with o's invalid runs and reasons added.
func (v Validity) Merge(o Validity) Validity {
	v.InvalidRuns += o.InvalidRuns
	v.Invalid = slices.Clone(v.Invalid)
	v.add(o.Invalid)
	return v
}

// prefill is the prefill share and TTFT of configuration key in window,
// the means over the runs that measured them (nil: none did).
func (g *game) prefill(key, window string) *Prefill {
	c := g.config(key)
	if c == nil {
		return nil
	}
	var share, ttft float64
	var ns, nt int
	for _, m := range c.Meas {
		if v, ok := m[window][MeasurePrefillShare]; ok {
			share += v
			ns++
		}
		if v, ok := m[window][MetricTTFT]; ok {
			ttft += v
			nt++
		}
	}
	if ns == 0 || nt == 0 {
		return nil
	}
	return &Prefill{Window: window, Share: share / float64(ns), TTFTMs: ttft / float64(nt)}
}

// value is set's worth.
func (g *game) value(set []string) (worth, error) {
	key := Key(set)
	c := g.config(key)
	if c == nil || len(c.Meas) == 0 {
		return worth{}, fmt.Errorf("configuration %q: %w", key, errMissing)
	}
	window, metric := g.view(set)
	var w worth
	for r, m := range c.Meas {
		v, ok := m[window][metric]
		if !ok {
			if v, ok = m[results.WindowAll][metric]; ok {
				g.note(fmt.Sprintf("%s run %d: no %s in the %s window: the whole run's is used", orStart(key), r+1, metric, window))
			}
		}
		if !ok || !(v > 0) {
			return worth{}, fmt.Errorf("configuration with %s moved, run %d: no successful request measured %s: nothing to attribute", orStart(key), r+1, metric)
		}
		w.each = append(w.each, v)
		w.mean += v
	}
	w.mean /= float64(len(w.each))
	return w, nil
}

func (g *game) note(n string) {
	if !g.seen[n] {
		g.seen[n] = true
		g.f.Fallbacks = append(g.f.Fallbacks, n)
	}
}

// partial ends Fill at an unmeasured configuration: the steps so far
// stay, the waterfall is incomplete. Any other error is returned.
func (g *game) partial(err error, set []string) error {
	if !errors.Is(err, errMissing) {
		return err
	}
	g.f.Incomplete = true
	g.f.IncompleteReason = fmt.Sprintf("interrupted: %d of %d steps measured; the configuration with %s moved was not", len(g.f.Steps), len(g.f.Order), orStart(Key(set)))
	g.f.Attribution.Pins = nil
	return nil
}

// attribute fills the attribution: each pin's ratio in every order, and
// its Shapley factor.
func (g *game) attribute(total float64) error {
	a := &g.f.Attribution
	a.Pins = make([]PinCost, len(g.f.Order))
	for i, pin := range g.f.Order {
		a.Pins[i] = PinCost{Pin: pin}
	}
	for _, o := range a.Orders {
		prev, err := g.value(nil)
		if err != nil {
			return err
		}
		for i, pin := range o.Pins {
			cur, err := g.value(o.Pins[:i+1])
			if err != nil {
				return err
			}
			j := slices.Index(g.f.Order, pin)
			a.Pins[j].Ratios = append(a.Pins[j].Ratios, cur.mean/prev.mean)
			prev = cur
		}
	}
	for i, pc := range a.Pins {
		a.Pins[i].Lo, a.Pins[i].Hi = slices.Min(pc.Ratios), slices.Max(pc.Ratios)
	}
	if a.Method == MethodExact {
		phi, err := g.shapley()
		if err != nil {
			return err
		}
		for i := range a.Pins {
			a.Pins[i].Shapley = math.Exp(phi[i].value)
			a.Pins[i].Lo, a.Pins[i].Hi = math.Exp(phi[i].lo), math.Exp(phi[i].hi)
		}
	} else {
		for i, pc := range a.Pins {
			var l float64
			for _, r := range pc.Ratios {
				l += math.Log(r)
			}
			a.Pins[i].Shapley = math.Exp(l / float64(len(pc.Ratios)))
		}
	}
	a.Spread, a.SpreadPin = 0, ""
	for i, pc := range a.Pins {
		a.Pins[i].Share = share(pc.Shapley, total)
		if a.Method == MethodOrder && len(a.Orders) < 2 {
			continue // one order: nobody knows what another gives
		}
		if s := pc.Hi / pc.Lo; s > a.Spread {
			a.Spread, a.SpreadPin = s, pc.Pin
		}
	}
	return nil
}

// marginal is a pin's exact Shapley value of ln value, and the least
// and greatest change the pin makes joining any subset of the others
// (what it costs in the orders that favour it least and most).
type marginal struct{ value, lo, hi float64 }

// shapley is every moved pin's exact Shapley value of ln value: over
// every subset S of the others, weighted |S|!(n−|S|−1)!/n!, the change
// adding the pin makes. The values sum to ln(end / start).
func (g *game) shapley() ([]marginal, error) {
	players := g.f.Order
	n := len(players)
	lnv := make([]float64, 1<<n)
	for mask := range lnv {
		w, err := g.value(subset(players, mask))
		if err != nil {
			return nil, err
		}
		lnv[mask] = math.Log(w.mean)
	}
	fact := make([]float64, n+1)
	fact[0] = 1
	for i := 1; i <= n; i++ {
		fact[i] = fact[i-1] * float64(i)
	}
	phi := make([]marginal, n)
	for i := range n {
		phi[i].lo, phi[i].hi = math.Inf(1), math.Inf(-1)
		for mask := range lnv {
			if mask&(1<<i) != 0 {
				continue
			}
			s := popcount(mask)
			d := lnv[mask|1<<i] - lnv[mask]
			phi[i].value += fact[s] * fact[n-s-1] / fact[n] * d
			phi[i].lo, phi[i].hi = math.Min(phi[i].lo, d), math.Max(phi[i].hi, d)
		}
	}
	return phi, nil
}

func subset(players []string, mask int) []string {
	var s []string
	for i, p := range players {
		if mask&(1<<i) != 0 {
			s = append(s, p)
		}
	}
	return s
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
