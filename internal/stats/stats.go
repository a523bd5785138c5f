// Package stats is sixpin's one home for statistics.
//
// It holds percentiles of a sample, ranks, means with Student's t intervals, and the bootstrap
// machinery behind every confidence interval compare and gate print
// (percentiles of HDR histograms, means, proportions, per-second series).
// It is pure arithmetic on values it is given: it reads no file and keeps
// no state, so results, analyze and report can all use it without an
// arrow between them.
package stats

import (
	"math"
	"slices"
)

// Percentile reads the p-th percentile (0–100) of n sorted values at(0),
// …, at(n−1), interpolating linearly between order statistics: the value
// at rank h = (n−1)·p/100 is x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])
// (Hyndman & Fan type 7, numpy's default). An infinite neighbour is
// returned as it is (no ∞ − ∞). NaN for no values.
func Percentile(n int, at func(int) float64, p float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return at(n - 1)
	}
	a, b := at(lo), at(lo+1)
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return b
	}
	return a + (h-float64(lo))*(b-a)
}

// NearestRank is the nearest rank, from 1, of percentile q (0–100) among
// n values: ⌈q·n/100⌉, at least 1.
func NearestRank(q float64, n int64) int64 { return max(int64(math.Ceil(q/100*float64(n))), 1) }

// HDRRank is the 1-based rank HdrHistogram reads percentile p (0–100) of
// n values at (hdrhistogram-go's percentileRank): ⌊p·n/100 + ½⌋, within
// [1, n].
func HDRRank(p float64, n int64) int64 {
	rank := (min(p, 100)/100)*float64(n) + 0.5
	switch {
	case !(rank >= 1):
		return 1
	case rank >= float64(n):
		return n
	}
	return int64(rank)
}

// MinMax returns the smallest and largest of xs; NaN for none.
func MinMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// Spread returns the smallest, the median (Percentile's) and the largest
// of xs — a repeated measurement's min / median / max; NaN for none.
func Spread(xs []float64) (lo, med, hi float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	lo, hi = MinMax(s)
	return lo, Percentile(len(s), func(i int) float64 { return s[i] }, 50), hi
}

// MeanCI returns the mean of xs and the half-width of its confidence
// interval at level conf (0.90, 0.95 or 0.99) by Student's t with n−1
// degrees of freedom; NaN half-width for fewer than two values.
func MeanCI(xs []float64, conf float64) (mean, half float64) {
	mean, sd := MeanSD(xs)
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	return mean, TCritical(len(xs)-1, conf) * sd / math.Sqrt(float64(len(xs)))
}

// TCritical is Student's t two-sided critical value for df degrees of
// freedom at level conf (0.90, 0.95 or 0.99; others round to the nearest
// of them).
func TCritical(df int, conf float64) float64 {
	// Rows: df 1…30, then 40, 60, 120, ∞; columns: 90%, 95%, 99%.
	table := [][3]float64{
		{6.314, 12.706, 63.657}, {2.920, 4.303, 9.925}, {2.353, 3.182, 5.841}, {2.132, 2.776, 4.604}, {2.015, 2.571, 4.032},
		{1.943, 2.447, 3.707}, {1.895, 2.365, 3.499}, {1.860, 2.306, 3.355}, {1.833, 2.262, 3.250}, {1.812, 2.228, 3.169},
		{1.796, 2.201, 3.106}, {1.782, 2.179, 3.055}, {1.771, 2.160, 3.012}, {1.761, 2.145, 2.977}, {1.753, 2.131, 2.947},
		{1.746, 2.120, 2.921}, {1.740, 2.110, 2.898}, {1.734, 2.101, 2.878}, {1.729, 2.093, 2.861}, {1.725, 2.086, 2.845},
		{1.721, 2.080, 2.831}, {1.717, 2.074, 2.819}, {1.714, 2.069, 2.807}, {1.711, 2.064, 2.797}, {1.708, 2.060, 2.787},
		{1.706, 2.056, 2.779}, {1.703, 2.052, 2.771}, {1.701, 2.048, 2.763}, {1.699, 2.045, 2.756}, {1.697, 2.042, 2.750},
	}
	col := 1
	switch {
	case conf <= 0.9:
		col = 0
	case conf >= 0.99:
		col = 2
	}
	switch {
	case df <= 30:
		return table[max(df, 1)-1][col]
	case df <= 40:
		return [3]float64{1.684, 2.021, 2.704}[col]
	case df <= 60:
		return [3]float64{1.671, 2.000, 2.660}[col]
	case df <= 120:
		return [3]float64{1.658, 1.980, 2.617}[col]
	}
	return [3]float64{1.645, 1.960, 2.576}[col]
}

// BinomialAtLeast is P(X ≥ k) for X ~ Binomial(n, p).
func BinomialAtLeast(n int64, p float64, k int64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	}
	return BetaInc(float64(k), float64(n-k+1), p)
}

// BetaInc is the regularised incomplete beta function I_x(a, b), by the
// continued fraction (Numerical Recipes §6.4) evaluated with Lentz's
// method.
func BetaInc(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	lbt := lab - la - lb + a*math.Log(x) + b*math.Log1p(-x)
	if x < (a+1)/(a+b+2) {
		if lbt < -745 {
			return 0
		}
		return math.Exp(lbt) * betaCF(a, b, x) / a
	}
	if lbt < -745 {
		return 1
	}
	return 1 - math.Exp(lbt)*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the incomplete beta function's continued fraction by
// the modified Lentz method (Numerical Recipes §6.4).
func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 100000
		eps     = 1e-14
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1/nonTiny(1-qab*x/qap)
	h := d
	// step takes the fraction's next coefficient and returns the factor
	// it brings to h.
	step := func(aa float64) float64 {
		d = 1 / nonTiny(1+aa*d)
		c = nonTiny(1 + aa/c)
		return d * c
	}
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// nonTiny keeps v away from zero, for Lentz's method.
func nonTiny(v float64) float64 {
	const tiny = 1e-300
	if math.Abs(v) < tiny {
		return tiny
	}
	return v
}
