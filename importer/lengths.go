package importer

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/scenario"
)

// maxEmpirical is the most values an exact distribution is written out
// with; a wider one is pinned by its closed form, with a note of how far
// that is from the peer's.
const maxEmpirical = 4096

// length is a peer's distribution of a token length, as sixpin pins it,
// with its exact mean in tokens.
type length struct {
	dist scenario.Dist
	mean float64
	// approx says how the pinned distribution differs from the peer's
	// ("" when it is the peer's exactly).
	approx string
}

// fixed is the length that is always v.
func fixed(v int) length { return length{dist: scenario.Fixed(float64(v)), mean: float64(v)} }

// uniformInt is every integer in [lo, hi] equally likely (numpy's
// integers(lo, hi+1), Python's randint(lo, hi)).
func uniformInt(lo, hi int) length {
	if lo == hi {
		return fixed(lo)
	}
	return length{dist: scenario.Dist{Kind: scenario.DistUniform, Min: float64(lo), Max: float64(hi)}, mean: float64(lo+hi) / 2}
}

// pmf is a distribution over the integers lo, lo+1, …: weights[i] is the
// probability of lo+i.
type pmf struct {
	lo      int
	weights []float64
}

func (p pmf) mean() float64 {
	var m, total float64
	for i, w := range p.weights {
		m += w * float64(p.lo+i)
		total += w
	}
	return m / total
}

// roundedClamped is the distribution of round(clamp(X, lo, hi)) for X
// with CDF cdf: the integer k takes X's mass in [k−½, k+½), the bounds
// the tails too.
func roundedClamped(cdf func(float64) float64, lo, hi int) pmf {
	p := pmf{lo: lo, weights: make([]float64, hi-lo+1)}
	for k := lo; k <= hi; k++ {
		a, b := cdf(float64(k)-0.5), cdf(float64(k)+0.5)
		if k == lo {
			a = 0
		}
		if k == hi {
			b = 1
		}
		p.weights[k-lo] = max(b-a, 0)
	}
	return p
}

// fromPMF pins p exactly (an empirical distribution) when it has at most
// maxEmpirical values, else as closed, which differs from p by tv in
// total variation; p's mean either way.
func fromPMF(p pmf, closed scenario.Dist, tv float64) length {
	l := length{mean: p.mean()}
	n := len(p.weights)
	if n == 1 {
		return fixed(p.lo)
	}
	if n > maxEmpirical || tv < 1e-6 {
		l.dist = closed
		if tv >= 1e-6 {
			l.approx = fmt.Sprintf("pinned as %s, which puts %.2g of the mass elsewhere than the peer's draw (%d values are too many to list)", closed, tv, n)
		}
		return l
	}
	d := scenario.Dist{Kind: scenario.DistEmpirical}
	for i, w := range p.weights {
		if w <= 0 {
			continue
		}
		d.Values = append(d.Values, float64(p.lo+i))
		d.Weights = append(d.Weights, round6(w))
	}
	l.dist = d
	return l
}

// normalCDF is the CDF of N(mu, sigma²).
func normalCDF(mu, sigma float64) func(float64) float64 {
	return func(x float64) float64 { return 0.5 * math.Erfc(-(x-mu)/(sigma*math.Sqrt2)) }
}

// clampedNormal is round(clamp(N(mu, sigma²), lo, hi)): GuideLLM's and
// inference-perf's normal lengths. sixpin's normal is truncated (a draw
// outside is drawn again), so it is exact only when the tails are
// negligible; otherwise the distribution is written out.
func clampedNormal(mu, sigma float64, lo, hi int) length {
	if sigma <= 0 {
		return fixed(min(max(int(math.Round(mu)), lo), hi))
	}
	cdf := normalCDF(mu, sigma)
	tails := cdf(float64(lo)-0.5) + 1 - cdf(float64(hi)+0.5)
	closed := scenario.Dist{Kind: scenario.DistNormal, Mean: mu, Stddev: sigma, Min: float64(lo), Max: float64(hi)}
	return fromPMF(roundedClamped(cdf, lo, hi), closed, tails)
}

// clampedUniform is round(clamp(U[a, b), lo, hi)): inference-perf's
// uniform lengths, whose bounds get half the weight of the integers
// between them.
func clampedUniform(a, b float64, lo, hi int) length {
	cdf := func(x float64) float64 { return min(max((x-a)/(b-a), 0), 1) }
	p := roundedClamped(cdf, lo, hi)
	closed := scenario.Dist{Kind: scenario.DistUniform, Min: float64(lo), Max: float64(hi)}
	return fromPMF(p, closed, 1/float64(hi-lo+1))
}

// ceilTruncatedNormal is ⌈X⌉ for X ~ N(mu, sigma²) drawn again until X ≥
// 0: AIPerf's sample_positive_normal_integer. sixpin's normal rounds, so
// its mean is shifted by ½; it is exact but for the lowest value, which
// sixpin truncates at 1 where AIPerf's X starts at 0.
func ceilTruncatedNormal(mu, sigma float64) length {
	if sigma <= 0 {
		return fixed(max(int(math.Ceil(mu)), 1))
	}
	cdf := normalCDF(mu, sigma)
	z := 1 - cdf(0)
	hi := int(math.Ceil(mu + 10*sigma))
	p := pmf{lo: 1, weights: make([]float64, hi)}
	for k := 1; k <= hi; k++ {
		p.weights[k-1] = (cdf(float64(k)) - cdf(float64(k-1))) / z
	}
	closed := scenario.Dist{Kind: scenario.DistNormal, Mean: mu + 0.5, Stddev: sigma, Min: 1, Max: float64(hi)}
	// sixpin truncates X+½ to [1, hi]: X in [0, ½) is drawn again rather
	// than rounded up to 1.
	tv := (cdf(0.5) - cdf(0)) / z
	return fromPMF(p, closed, tv)
}

// shiftedLognormal is round(clamp(lo + LN(mu, sigma²), lo, hi)):
// inference-perf's lognormal lengths, moment-matched to mean and std.
func shiftedLognormal(mean, std float64, lo, hi int) length {
	shifted := mean - float64(lo)
	if shifted <= 0 {
		shifted = 1
	}
	s2 := math.Log(1 + (std/shifted)*(std/shifted))
	mu, sigma := math.Log(shifted)-s2/2, math.Sqrt(s2)
	if sigma == 0 {
		return fixed(min(max(int(math.Round(float64(lo)+shifted)), lo), hi))
	}
	cdf := func(x float64) float64 {
		if x <= float64(lo) {
			return 0
		}
		return normalCDF(mu, sigma)(math.Log(x - float64(lo)))
	}
	closed := scenario.Dist{Kind: scenario.DistLognormal, Median: float64(lo) + math.Exp(mu), Sigma: sigma, Min: float64(lo), Max: float64(hi)}
	// A lognormal that starts at lo is not sixpin's, which starts at 0.
	return fromPMF(roundedClamped(cdf, lo, hi), closed, 1)
}

// plus is l with k tokens added to every value (a shared prefix, special
// tokens, a chat template).
func (l length) plus(k int) length {
	if k == 0 {
		return l
	}
	f := float64(k)
	d := l.dist
	switch d.Kind {
	case scenario.DistFixed:
		d.Value += f
	case scenario.DistUniform:
		d.Min, d.Max = d.Min+f, d.Max+f
	case scenario.DistNormal:
		d.Mean, d.Min, d.Max = d.Mean+f, d.Min+f, d.Max+f
	case scenario.DistLognormal:
		// not shiftable in sixpin's form: written out by the callers
		// that shift it (shiftedLognormal's pmf is always listed when
		// it fits).
		d.Median, d.Min, d.Max = d.Median+f, d.Min+f, d.Max+f
	case scenario.DistEmpirical:
		vs := make([]float64, len(d.Values))
		for i, v := range d.Values {
			vs[i] = v + f
		}
		d.Values = vs
	}
	l.dist, l.mean = d, l.mean+f
	return l
}

// isFixed reports whether l is a single value.
func (l length) isFixed() bool { return l.dist.Kind == scenario.DistFixed }

// yaml is l's pin in YAML flow form.
func (l length) yaml() string {
	d := l.dist
	switch d.Kind {
	case scenario.DistFixed:
		return num(d.Value)
	case scenario.DistUniform:
		return fmt.Sprintf("{dist: uniform, min: %s, max: %s}", num(d.Min), num(d.Max))
	case scenario.DistNormal:
		return fmt.Sprintf("{dist: normal, mean: %s, stddev: %s, min: %s, max: %s}", num(d.Mean), num(d.Stddev), num(d.Min), num(d.Max))
	case scenario.DistLognormal:
		return fmt.Sprintf("{dist: lognormal, median: %s, sigma: %s, min: %s, max: %s}", num(round6(d.Median)), num(round6(d.Sigma)), num(d.Min), num(d.Max))
	}
	return fmt.Sprintf("{dist: empirical, values: [%s], weights: [%s]}", nums(d.Values), nums(d.Weights))
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func nums(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = num(v)
	}
	return strings.Join(s, ", ")
}
