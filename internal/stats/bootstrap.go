package stats

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

// Defaults: 1,000 resamples, 95% two-sided intervals, seed 1.
const (
	DefaultResamples  = 1000
	DefaultConfidence = 0.95
	DefaultSeed       = 1
)

// Settings say how confidence intervals are computed: the number of
// resamples, the two-sided confidence level (a fraction, 0.95 = 95%) and
// the seed of the resampling. The same Settings on the same data give the
// same intervals. A Settings value is safe for concurrent use.
type Settings struct {
	Resamples  int
	Confidence float64
	Seed       uint64
}

// Default returns the default Settings.
func Default() Settings {
	return Settings{Resamples: DefaultResamples, Confidence: DefaultConfidence, Seed: DefaultSeed}
}

// Validate checks the settings.
func (s Settings) Validate() error {
	if s.Resamples < 100 {
		return fmt.Errorf("resamples: must be at least 100 (got %d)", s.Resamples)
	}
	if !(s.Confidence > 0.5 && s.Confidence < 1) {
		return fmt.Errorf("confidence: must be a fraction in (0.5, 1), e.g. 0.95 (got %g)", s.Confidence)
	}
	return nil
}

// rng returns the generator for one figure: seeded by the seed and the
// figure's key, so an interval does not depend on what else was computed
// before it.
func (s Settings) rng(key string) *rand.Rand {
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

// Sampler draws one bootstrap replicate of a figure. A Sampler may keep
// scratch space: it is not safe for concurrent use.
type Sampler func(r *rand.Rand) float64

// Estimate is one figure: its value and its sampling distribution. Draw
// is nil when the figure has none; then Exact says whether the value is
// exact (a price, a count) or merely without an interval (a window too
// short to resample), and NoInterval why.
type Estimate struct {
	Value float64
	Draw  Sampler
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

// Usable reports whether e has an interval at s's confidence, and if not
// why. A percentile q of n values has one only when the distribution-free
// (order-statistic) interval lies inside the sample: qⁿ ≤ α/2 and
// (1−q)ⁿ ≤ α/2, so p99 needs 368 values at 95%, p90 36 and p50 6. Below
// that the bootstrap of the percentile collapses onto the sample's extreme
// and would claim a certainty the data do not hold.
func (s Settings) Usable(e Estimate) (bool, string) {
	if e.Draw == nil {
		return e.Exact, e.NoInterval
	}
	if e.quantile > 0 {
		if need := MinCount(e.quantile, s.Confidence); e.count < need {
			return false, fmt.Sprintf("p%s of %d values has no %s interval (it needs %d: run longer or gate on a lower percentile)",
				strconv.FormatFloat(100*e.quantile, 'f', -1, 64), e.count, numfmt.Percent(s.Confidence), need)
		}
	}
	return true, ""
}

// MinCount is the fewest values whose q-quantile (0–1) has a two-sided
// order-statistic interval at confidence conf.
func MinCount(q, conf float64) int64 {
	a := (1 - conf) / 2
	return int64(math.Ceil(math.Log(a) / math.Log(math.Max(q, 1-q))))
}

// Interval is the percentile-bootstrap interval of e; key names the
// figure (it seeds the resampling).
func (s Settings) Interval(key string, e Estimate) Interval {
	if ok, _ := s.Usable(e); !ok {
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
	return s.central(xs)
}

// RatioInterval is the interval of cur/base, from independent replicates
// of the two (they share nothing, so their resamples are drawn apart).
// Without a sampling model for either side the interval is exact if both
// values are, else unknown.
func (s Settings) RatioInterval(key string, base, cur Estimate) Interval {
	okb, _ := s.Usable(base)
	okc, _ := s.Usable(cur)
	switch {
	case !okb || !okc:
		return Interval{Level: s.Confidence}
	case base.Draw == nil && cur.Draw == nil && base.Value != 0:
		r := cur.Value / base.Value
		return Interval{r, r, s.Confidence, true}
	}
	draw := func(e Estimate, r *rand.Rand) float64 {
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
	return s.central(xs)
}

// central returns the central Confidence interval of the replicates xs
// (sorted in place).
func (s Settings) central(xs []float64) Interval {
	slices.Sort(xs)
	a := (1 - s.Confidence) / 2
	at := func(i int) float64 { return xs[i] }
	return Interval{Lo: Percentile(len(xs), at, 100*a), Hi: Percentile(len(xs), at, 100*(1-a)), Level: s.Confidence, Known: true}
}

// HistQuantile is the percentile p (0–100) of h in the reporting unit
// (recorded / scale), with the bootstrap distribution of that percentile
// under multinomial resampling of the histogram's counts.
//
// The resampled percentile has a closed form, so no resample is ever
// materialised: the percentile of a resample of N values is the value of
// the first bucket j whose resampled cumulative count reaches the rank k
// that HDR uses (HDRRank), and that cumulative count is Binomial(N, C_j/N)
// where C_j is the bucket's cumulative count in the run. So
// P(percentile* ≤ v_j) = P(Bin(N, C_j/N) ≥ k) = I_{C_j/N}(k, N−k+1), the
// regularised incomplete beta function, and one replicate costs one
// uniform draw and a binary search over the buckets. This is exactly the
// bootstrap of the percentile (the order-statistic distribution), for
// histograms of 50 values or 50 million.
func HistQuantile(h *hdrhistogram.Histogram, p, scale float64) Estimate {
	n := h.TotalCount()
	e := Estimate{Value: float64(h.ValueAtPercentile(p)) / scale, Method: "bootstrap of the HDR counts",
		quantile: p / 100, count: n}
	if n < 2 {
		e.NoInterval = "fewer than 2 values"
		return e
	}
	k := HDRRank(p, n)
	var vals, cdf []float64
	var cum int64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		cum += b.Count
		vals = append(vals, float64(b.To)/scale)
		cdf = append(cdf, BinomialAtLeast(n, float64(cum)/float64(n), k))
	}
	cdf[len(cdf)-1] = 1
	e.Draw = func(r *rand.Rand) float64 {
		return vals[sort.SearchFloat64s(cdf, r.Float64())]
	}
	return e
}

// HistMean is h's mean in the reporting unit with its normal (central
// limit) sampling distribution, standard error σ/√N.
func HistMean(h *hdrhistogram.Histogram, scale float64) Estimate {
	n := h.TotalCount()
	e := Estimate{Value: h.Mean() / scale, Method: "normal approximation (σ/√N)"}
	if n < 2 {
		e.NoInterval = "fewer than 2 values"
		return e
	}
	mean, se := e.Value, h.StdDev()/scale/math.Sqrt(float64(n))
	e.Draw = func(r *rand.Rand) float64 { return mean + se*r.NormFloat64() }
	return e
}

// Proportion is k of n with Jeffreys' Beta(k+½, n−k+½) distribution (well
// behaved at k = 0), scaled by scale.
func Proportion(k, n int, scale float64) Estimate {
	e := Estimate{Method: "Jeffreys interval (Beta)"}
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

// MinBlockSlots is the fewest whole seconds a window needs for a
// block-bootstrap interval of a per-second series.
const MinBlockSlots = 3

// SeriesRatio estimates value = Σnum/Σden over a window's seconds (den
// nil: the mean of num), with a circular block bootstrap over the
// window's whole seconds: blocks of ⌈n^⅓⌉ consecutive seconds keep the
// series' short-range correlation (batches finishing together). The
// replicates are scaled so that they centre on value, the figure the
// results file reports (computed from exact chunk times, not whole
// seconds).
func SeriesRatio(value float64, num, den []float64) Estimate {
	e := Estimate{Value: value, Method: "block bootstrap of the per-second series"}
	n := len(num)
	if n < MinBlockSlots {
		e.NoInterval = fmt.Sprintf("the window has %d whole seconds; an interval needs %d", n, MinBlockSlots)
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
