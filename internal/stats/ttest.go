package stats

import "math"

// StudentT is the two-sided critical value of Student's t with df degrees
// of freedom at confidence conf (a fraction in (0, 1)): the t with
// P(|T| ≤ t) = conf. It is exact for any conf (TCritical reads a table of
// three levels); NaN for df < 1. P(|T| > t) = I_{df/(df+t²)}(df/2, ½), so
// t is found by bisection on that incomplete beta function.
func StudentT(df int, conf float64) float64 {
	if df < 1 || !(conf > 0 && conf < 1) {
		return math.NaN()
	}
	nu := float64(df)
	// I_x(ν/2, ½) rises from 0 at x = 0 to 1 at x = 1; x = ν/(ν+t²).
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if BetaInc(nu/2, 0.5, mid) < 1-conf {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-15 {
			break
		}
	}
	x := (lo + hi) / 2
	return math.Sqrt(nu * (1 - x) / x)
}

// MeanSD returns the mean of xs and their sample standard deviation (n−1
// in the denominator); NaN standard deviation for fewer than two values,
// NaN mean for none.
func MeanSD(xs []float64) (mean, sd float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(n-1))
}

// PooledSD is the standard deviation pooled over samples a and b, each
// about its own mean: s_p² = [(n_a−1)·s_a² + (n_b−1)·s_b²] / df with
// df = n_a + n_b − 2 degrees of freedom. NaN (and df 0) when the samples
// hold fewer than three values in all, or either none.
func PooledSD(a, b []float64) (sd float64, df int) {
	df = len(a) + len(b) - 2
	if len(a) == 0 || len(b) == 0 || df < 1 {
		return math.NaN(), 0
	}
	var ss float64
	for _, xs := range [][]float64{a, b} {
		if _, s := MeanSD(xs); len(xs) > 1 {
			ss += float64(len(xs)-1) * s * s
		}
	}
	return math.Sqrt(ss / float64(df)), df
}

// TwoSample is Student's two-sample t-test with pooled variance, as an
// interval: the difference of the means mean(b) − mean(a), and the
// half-width of its two-sided confidence interval at conf,
// t_{conf, df} · s_p · √(1/n_a + 1/n_b), with s_p and df from PooledSD
// (NIST/SEMATECH e-Handbook of Statistical Methods, §1.3.5.3, "Two-Sample
// t-Test for Equal Means"). With one value in b it is the prediction
// interval of one new observation from a's distribution, mean(a) ±
// t_{n_a−1} · s_a · √(1 + 1/n_a) (Geisser 1993, Predictive Inference,
// Example 2.2). df is 0 and half NaN when PooledSD has no spread.
func TwoSample(a, b []float64, conf float64) (diff, half float64, df int) {
	ma, _ := MeanSD(a)
	mb, _ := MeanSD(b)
	sp, df := PooledSD(a, b)
	if df == 0 {
		return mb - ma, math.NaN(), 0
	}
	return mb - ma, StudentT(df, conf) * sp * math.Sqrt(1/float64(len(a))+1/float64(len(b))), df
}
