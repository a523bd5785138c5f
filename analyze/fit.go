package analyze

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/scenario"
)

// MaxEmpirical is the largest sample a fitted distribution keeps as is
// (an empirical distribution of its values); a larger one is fitted with
// a lognormal bounded by the observed minimum and maximum.
const MaxEmpirical = 50

// Fit methods: how a distribution was fitted from the logs.
const (
	FitFixed     = "fixed"     // every value the same
	FitEmpirical = "empirical" // the values themselves (≤ MaxEmpirical)
	FitLognormal = "lognormal" // median exp(mean ln x), σ sd(ln x), observed bounds
)

// Fitted is one workload quantity fitted from the logs.
type Fitted struct {
	Dist scenario.Dist
	// Method is how (Fit*); N the values fitted.
	Method string
	N      int
	// Min, P50 and Max are of the values, for the comment.
	Min, P50, Max float64
}

// ScenarioFit is the agentic workload the logs describe, fitted to
// sixpin's agentic pins (see the README's agentic workload keys). Token
// quantities are in tokens, think time in seconds.
type ScenarioFit struct {
	// Sessions and Generations are what it was fitted from.
	Sessions, Generations int
	// FirstPrompt is each session's first prompt (its whole context).
	FirstPrompt Fitted
	// Growth is, per turn after the first, what the context grew by
	// beyond the previous answer: prompt − previous prompt − previous
	// output (reasoning left out, as agents leave it out of the history).
	// Shrinks counts the turns whose context did not grow (compaction, a
	// new context): they are left out.
	Growth  Fitted
	Shrinks int
	// Output is each generation's output + reasoning tokens.
	Output Fitted
	// Turns is the generations per session.
	Turns Fitted
	// Think is the wait between a turn's end and the next turn's start,
	// s (the tools running, the user); none when no session had two turns.
	Think Fitted
	// PeakSessions and MedianSessions are the most sessions that ran at
	// once and the median number running, over the time at least one
	// did (sessions spanning their first request to their last answer).
	PeakSessions   int
	MedianSessions int
	// MedianLifetime is the median session's first request → last answer.
	MedianLifetime time.Duration
	// CacheShare is cache reads over prompt tokens, all generations.
	CacheShare float64
	// MaxContext is the largest prompt + output seen, tokens.
	MaxContext int64
	// Models are provider/model keys by generations, most first.
	Models []ModelCount
}

// ModelCount is one model's share of the generations.
type ModelCount struct {
	Provider, Model string
	Generations     int
}

// fitAcc gathers what the fit needs as sessions end: the values
// (float32 each) and each session's span (16 bytes).
type fitAcc struct {
	first, growth, output, turns, think sample
	shrinks                             int
	spans                               []span
	maxContext                          int64
}

type span struct{ start, end int64 }

// add takes one ended session's generations, sorted by creation.
func (f *fitAcc) add(gens []sessGen) {
	f.turns.add(float64(len(gens)))
	sp := span{start: gens[0].created, end: gens[0].completed}
	for k, g := range gens {
		f.output.add(float64(g.gen))
		f.maxContext = max(f.maxContext, g.prompt+g.gen)
		sp.end = max(sp.end, g.completed)
		if k == 0 {
			f.first.add(float64(g.prompt))
			continue
		}
		p := gens[k-1]
		if grow := g.prompt - p.prompt - (p.gen - p.reason); grow >= 1 {
			f.growth.add(float64(grow))
		} else {
			f.shrinks++
		}
		f.think.add(float64(max(g.created-p.completed, 0)) / 1000)
	}
	f.spans = append(f.spans, sp)
}

// fit fits s: integer quantities (tokens, turns) round their values and
// parameters, lo is the smallest value a quantity may take.
func fit(s sample, integer bool, lo float64) Fitted {
	if len(s) == 0 {
		return Fitted{}
	}
	vals := make([]float64, len(s))
	for i, v := range s {
		x := max(float64(v), lo)
		if integer {
			x = math.Round(x)
		}
		vals[i] = x
	}
	slices.Sort(vals)
	f := Fitted{N: len(vals), Min: vals[0], Max: vals[len(vals)-1],
		P50: stats.Percentile(len(vals), func(i int) float64 { return vals[i] }, 50)}
	round := func(x float64) float64 {
		if integer {
			return math.Round(x)
		}
		return math.Round(x*1000) / 1000
	}
	switch {
	case f.Min == f.Max:
		f.Method, f.Dist = FitFixed, scenario.Fixed(f.Min)
	case len(vals) <= MaxEmpirical:
		f.Method = FitEmpirical
		d := scenario.Dist{Kind: scenario.DistEmpirical}
		repeated := false
		for _, v := range vals {
			if n := len(d.Values); n > 0 && d.Values[n-1] == v {
				d.Weights[n-1]++
				repeated = true
				continue
			}
			d.Values = append(d.Values, v)
			d.Weights = append(d.Weights, 1)
		}
		if !repeated {
			d.Weights = nil
		}
		f.Dist = d
	default:
		f.Method = FitLognormal
		// ln of values clamped away from 0 (think times may be 0).
		floor := math.Max(lo, 0.001)
		var sum, sq float64
		for _, v := range vals {
			l := math.Log(math.Max(v, floor))
			sum += l
			sq += l * l
		}
		n := float64(len(vals))
		mean := sum / n
		sd := math.Sqrt(math.Max(sq/n-mean*mean, 0) * n / (n - 1))
		median := min(max(round(math.Exp(mean)), f.Min), f.Max)
		sigma := math.Max(math.Round(sd*1000)/1000, 0.001)
		f.Dist = scenario.Dist{Kind: scenario.DistLognormal, Median: median, Sigma: sigma, Min: f.Min, Max: f.Max}
	}
	return f
}

// concurrency is the most sessions that overlap and the median number
// running over the time at least one is.
func concurrency(spans []span) (peak, median int) {
	type ev struct {
		at int64
		d  int
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		evs = append(evs, ev{s.start, +1}, ev{s.end, -1})
	}
	// Ends before starts at the same moment: back-to-back is not overlap.
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].d < evs[j].d
	})
	level := 0
	timeAt := map[int]int64{}
	var total int64
	for i, e := range evs {
		level += e.d
		peak = max(peak, level)
		if i+1 < len(evs) && level > 0 {
			d := evs[i+1].at - e.at
			timeAt[level] += d
			total += d
		}
	}
	if total == 0 {
		return max(peak, 1), max(peak, 1)
	}
	levels := make([]int, 0, len(timeAt))
	for l := range timeAt {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	var acc int64
	for _, l := range levels {
		acc += timeAt[l]
		if 2*acc >= total {
			return peak, l
		}
	}
	return peak, peak
}

// scenarioFit fits the workload; nil when no session had a generation.
func (a *acc) scenarioFit(r *Report) *ScenarioFit {
	f := a.fit
	if f == nil || len(f.spans) == 0 {
		return nil
	}
	sf := &ScenarioFit{
		Sessions: len(f.spans), Generations: a.counts.Generations,
		FirstPrompt: fit(f.first, true, 1),
		Growth:      fit(f.growth, true, 1),
		Shrinks:     f.shrinks,
		Output:      fit(f.output, true, 1),
		Turns:       fit(f.turns, true, 1),
		Think:       fit(f.think, false, 0),
		MaxContext:  f.maxContext,
	}
	sf.PeakSessions, sf.MedianSessions = concurrency(f.spans)
	lifetimes := make([]float64, len(f.spans))
	for i, s := range f.spans {
		lifetimes[i] = float64(s.end - s.start)
	}
	slices.Sort(lifetimes)
	sf.MedianLifetime = time.Duration(stats.Percentile(len(lifetimes), func(i int) float64 { return lifetimes[i] }, 50)) * time.Millisecond
	if a.usage.InputTokens > 0 {
		sf.CacheShare = float64(a.usage.CacheReadTokens) / float64(a.usage.InputTokens)
	}
	for _, m := range r.Models {
		sf.Models = append(sf.Models, ModelCount{Provider: m.Provider, Model: m.Model, Generations: m.Generations})
	}
	sort.SliceStable(sf.Models, func(i, j int) bool { return sf.Models[i].Generations > sf.Models[j].Generations })
	return sf
}
