package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/randx"
)

// Statistics defaults: 1,000 resamples, 95% two-sided intervals, seed 1.
const (
	DefaultResamples  = 1000
	DefaultConfidence = 0.95
	DefaultSeed       = 1
)

// Stats says how confidence intervals are computed: the number of
// resamples, the two-sided confidence level (a fraction, 0.95 = 95%) and
// the seed of the resampling. The same Stats on the same files give the
// same intervals.
type Stats struct {
	Resamples  int
	Confidence float64
	Seed       uint64
}

// DefaultStats returns the default Stats.
func DefaultStats() Stats {
	return Stats{Resamples: DefaultResamples, Confidence: DefaultConfidence, Seed: DefaultSeed}
}

// Validate checks the settings.
func (s Stats) Validate() error {
	if s.Resamples < 100 {
		return fmt.Errorf("resamples: must be at least 100 (got %d)", s.Resamples)
	}
	if !(s.Confidence > 0.5 && s.Confidence < 1) {
		return fmt.Errorf("confidence: must be a fraction in (0.5, 1), e.g. 0.95 (got %g)", s.Confidence)
	}
	return nil
}

// rng returns the generator for one figure: seeded by the Stats seed and
// the figure's key, so an interval does not depend on what else was
// computed before it.
func (s Stats) rng(key string) *rand.Rand {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(s.Seed, h))
}

// Interval is a two-sided confidence interval [Lo, Hi] at Level (a
// fraction). Known is false when the figure has no sampling model to
// build one from (then Lo and Hi are zero).
type Interval struct {
	Lo, Hi float64
	Level  float64
	Known  bool
}

// Contains reports whether x lies in the interval (an unknown interval
// contains everything).
func (i Interval) Contains(x float64) bool { return !i.Known || (x >= i.Lo && x <= i.Hi) }

// sampler draws one bootstrap replicate of a figure.
type sampler func(r *rand.Rand) float64

// estimate is one figure of one run: its value and its sampling
// distribution. Draw is nil when the figure has none; then Exact says
// whether the value is exact (a price, a count) or merely without an
// interval (a window too short to resample).
type estimate struct {
	Value float64
	Draw  sampler
	Exact bool
	// Method names how the interval is made; NoInterval says why there is
	// none.
	Method     string
	NoInterval string
	// quantile (0–1) and count are set for a percentile of count values:
	// too few values leave an extreme percentile without an interval.
	quantile float64
	count    int64
}

// usable reports whether e has an interval at s's confidence, and if not
// why. A percentile q of n values has one only when the distribution-free
// (order-statistic) interval lies inside the sample: qⁿ ≤ α/2 and
// (1−q)ⁿ ≤ α/2, so p99 needs 368 values at 95%, p90 36 and p50 6. Below
// that the bootstrap of the percentile collapses onto the sample's extreme
// and would claim a certainty the data do not hold.
func (s Stats) usable(e estimate) (bool, string) {
	if e.Draw == nil {
		return e.Exact, e.NoInterval
	}
	if e.quantile > 0 {
		if need := minCount(e.quantile, s.Confidence); e.count < need {
			return false, fmt.Sprintf("p%s of %d values has no %s interval (it needs %d: run longer or gate on a lower percentile)",
				strconv.FormatFloat(100*e.quantile, 'f', -1, 64), e.count, numfmt.Percent(s.Confidence), need)
		}
	}
	return true, ""
}

// minCount is the fewest values whose q-quantile has a two-sided
// order-statistic interval at confidence conf.
func minCount(q, conf float64) int64 {
	a := (1 - conf) / 2
	return int64(math.Ceil(math.Log(a) / math.Log(math.Max(q, 1-q))))
}

// interval is the percentile-bootstrap interval of e.
func (s Stats) interval(key string, e estimate) Interval {
	if ok, _ := s.usable(e); !ok {
		return Interval{Level: s.Confidence}
	}
	if e.Draw == nil {
		return Interval{e.Value, e.Value, s.Confidence, true}
	}
	r := s.rng(key)
	xs := make([]float64, s.Resamples)
	for i := range xs {
		xs[i] = e.Draw(r)
	}
	return s.percentiles(xs)
}

// ratioInterval is the interval of cur/base, from independent replicates
// of the two runs (the runs share nothing, so their resamples are drawn
// apart). Without a sampling model for either side the interval is exact
// if both values are, else unknown.
func (s Stats) ratioInterval(key string, base, cur estimate) Interval {
	okb, _ := s.usable(base)
	okc, _ := s.usable(cur)
	switch {
	case !okb || !okc:
		return Interval{Level: s.Confidence}
	case base.Draw == nil && cur.Draw == nil && base.Value != 0:
		r := cur.Value / base.Value
		return Interval{r, r, s.Confidence, true}
	}
	draw := func(e estimate, r *rand.Rand) float64 {
		if e.Draw == nil {
			return e.Value
		}
		return e.Draw(r)
	}
	rb, rc := s.rng("base/"+key), s.rng("current/"+key)
	xs := make([]float64, 0, s.Resamples)
	for range s.Resamples {
		b, c := draw(base, rb), draw(cur, rc)
		switch {
		case b > 0:
			xs = append(xs, c/b)
		case c > 0:
			xs = append(xs, math.Inf(1))
		default:
			xs = append(xs, 1) // 0 → 0: no change
		}
	}
	return s.percentiles(xs)
}

// percentiles returns the central Confidence interval of xs (sorted in
// place).
func (s Stats) percentiles(xs []float64) Interval {
	slices.Sort(xs)
	a := (1 - s.Confidence) / 2
	at := func(p float64) float64 {
		i := int(math.Floor(p * float64(len(xs)-1)))
		f := p*float64(len(xs)-1) - float64(i)
		if i+1 >= len(xs) {
			return xs[len(xs)-1]
		}
		if math.IsInf(xs[i], 1) || math.IsInf(xs[i+1], 1) {
			return xs[i+1]
		}
		return xs[i] + f*(xs[i+1]-xs[i])
	}
	return Interval{Lo: at(a), Hi: at(1 - a), Level: s.Confidence, Known: true}
}

// quantileEstimate is the percentile p (0–100) of h in the reporting unit
// (recorded / scale), with the bootstrap distribution of that percentile
// under multinomial resampling of the histogram's counts.
//
// The resampled percentile has a closed form, so no resample is ever
// materialised: the percentile of a resample of N values is the value of
// the first bucket j whose resampled cumulative count reaches the rank k
// that HDR uses (k = ⌊pN/100 + ½⌋), and that cumulative count is
// Binomial(N, C_j/N) where C_j is the bucket's cumulative count in the run.
// So P(percentile* ≤ v_j) = P(Bin(N, C_j/N) ≥ k) = I_{C_j/N}(k, N−k+1),
// the regularised incomplete beta function, and one replicate costs one
// uniform draw and a binary search over the buckets. This is exactly the
// bootstrap of the percentile (the order-statistic distribution), for
// histograms of 50 values or 50 million.
func quantileEstimate(h *hdrhistogram.Histogram, p, scale float64) estimate {
	n := h.TotalCount()
	e := estimate{Value: float64(h.ValueAtPercentile(p)) / scale, Method: "bootstrap of the HDR counts",
		quantile: p / 100, count: n}
	if n < 2 {
		e.NoInterval = "fewer than 2 values"
		return e
	}
	k := hdrRank(p, n)
	var vals, cdf []float64
	var cum int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		cum += b.Count
		vals = append(vals, float64(b.To)/scale)
		cdf = append(cdf, binomialAtLeast(n, float64(cum)/float64(n), k))
	}
	cdf[len(cdf)-1] = 1
	e.Draw = func(r *rand.Rand) float64 {
		return vals[sort.SearchFloat64s(cdf, r.Float64())]
	}
	return e
}

// hdrRank is the 1-based rank HDR reads percentile p (0–100) of n values
// at (hdrhistogram-go's percentileRank).
func hdrRank(p float64, n int64) int64 {
	rank := (min(p, 100)/100)*float64(n) + 0.5
	switch {
	case !(rank >= 1):
		return 1
	case rank >= float64(n):
		return n
	}
	return int64(rank)
}

// meanEstimate is h's mean with its normal (central limit) sampling
// distribution, standard error σ/√N.
func meanEstimate(h *hdrhistogram.Histogram, scale float64) estimate {
	n := h.TotalCount()
	e := estimate{Value: h.Mean() / scale, Method: "normal approximation (σ/√N)"}
	if n < 2 {
		e.NoInterval = "fewer than 2 values"
		return e
	}
	mean, se := e.Value, h.StdDev()/scale/math.Sqrt(float64(n))
	e.Draw = func(r *rand.Rand) float64 { return mean + se*r.NormFloat64() }
	return e
}

// proportionEstimate is k of n with Jeffreys' Beta(k+½, n−k+½)
// distribution (well behaved at k = 0), scaled by scale.
func proportionEstimate(k, n int, scale float64) estimate {
	e := estimate{Method: "Jeffreys interval (Beta)"}
	if n <= 0 {
		e.NoInterval = "no requests"
		return e
	}
	e.Value = float64(k) / float64(n) * scale
	a, b := float64(k)+0.5, float64(n-k)+0.5
	e.Draw = func(r *rand.Rand) float64 {
		x := randx.Gamma(r, a)
		return x / (x + randx.Gamma(r, b)) * scale
	}
	return e
}

// minBlockSlots is the fewest whole seconds a window needs for a
// block-bootstrap interval of a per-second series.
const minBlockSlots = 3

// seriesRatioEstimate estimates value = Σnum/Σden over a window's seconds
// (den nil: the mean of num), with a circular block bootstrap over the
// window's whole seconds: blocks of ⌈n^⅓⌉ consecutive seconds keep the
// series' short-range correlation (batches finishing together). The
// replicates are scaled so that they centre on value, the figure the
// results file reports (computed from exact chunk times, not whole
// seconds).
func seriesRatioEstimate(value float64, num, den []float64) estimate {
	e := estimate{Value: value, Method: "block bootstrap of the per-second series"}
	n := len(num)
	if n < minBlockSlots {
		e.NoInterval = fmt.Sprintf("the window has %d whole seconds; an interval needs %d", n, minBlockSlots)
		return e
	}
	ratio := func(idx func(i int) int) float64 {
		var a, b float64
		for i := range n {
			j := idx(i)
			a += num[j]
			if den != nil {
				b += den[j]
			} else {
				b++
			}
		}
		if b == 0 {
			return 0
		}
		return a / b
	}
	whole := ratio(func(i int) int { return i })
	if whole == 0 {
		e.NoInterval = "nothing in the window's whole seconds"
		return e
	}
	k := value / whole
	block := max(1, int(math.Ceil(math.Cbrt(float64(n)))))
	idx := make([]int, n)
	e.Draw = func(r *rand.Rand) float64 {
		for i := 0; i < n; i += block {
			start := r.IntN(n)
			for j := 0; j < block && i+j < n; j++ {
				idx[i+j] = (start + j) % n
			}
		}
		return k * ratio(func(i int) int { return idx[i] })
	}
	return e
}

// binomialAtLeast is P(X ≥ k) for X ~ Binomial(n, p).
func binomialAtLeast(n int64, p float64, k int64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	}
	return betaInc(float64(k), float64(n-k+1), p)
}

// betaInc is the regularised incomplete beta function I_x(a, b), by the
// continued fraction (Numerical Recipes §6.4) evaluated with Lentz's
// method.
func betaInc(a, b, x float64) float64 {
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
