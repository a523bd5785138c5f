package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestBetaIncAgainstBinomialSums(t *testing.T) {
	// P(X ≥ k) for X ~ Bin(n, p), summed directly.
	direct := func(n, k int, p float64) float64 {
		var s float64
		for i := k; i <= n; i++ {
			lc, _ := math.Lgamma(float64(n + 1))
			li, _ := math.Lgamma(float64(i + 1))
			lr, _ := math.Lgamma(float64(n - i + 1))
			s += math.Exp(lc - li - lr + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
		}
		return s
	}
	for _, c := range []struct {
		n, k int
		p    float64
	}{{10, 5, 0.5}, {44, 44, 0.98}, {44, 40, 0.9}, {200, 100, 0.47}, {1000, 990, 0.99}, {5, 1, 0.01}, {300, 3, 0.02}} {
		got := BinomialAtLeast(int64(c.n), c.p, int64(c.k))
		want := direct(c.n, c.k, c.p)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("P(Bin(%d, %g) ≥ %d) = %.12f, want %.12f", c.n, c.p, c.k, got, want)
		}
	}
	if got := BetaInc(2, 3, 0.5); math.Abs(got-0.6875) > 1e-12 {
		t.Errorf("I_0.5(2, 3) = %v, want 0.6875", got)
	}
	// Large counts converge too (an ITL histogram of a million values).
	if got := BinomialAtLeast(1_000_000, 0.5, 500_000); math.Abs(got-0.5) > 0.01 {
		t.Errorf("P(Bin(1e6, .5) ≥ 5e5) = %v, want ≈ 0.5", got)
	}
}

// sampleHist records n lognormal latencies (µs) into a histogram.
func sampleHist(n int, seed uint64) *hdrhistogram.Histogram {
	r := rand.New(rand.NewPCG(seed, 1))
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for range n {
		_ = h.RecordValue(int64(math.Exp(12 + 0.5*r.NormFloat64())))
	}
	return h
}

// The closed-form bootstrap of a percentile must agree with resampling
// the histogram's counts the slow way.
func TestQuantileBootstrapMatchesMultinomialResampling(t *testing.T) {
	h := sampleHist(300, 3)
	bars := h.Distribution()
	var vals []int64
	var cum []int64
	var total int64
	for _, b := range bars {
		if b.Count > 0 {
			total += b.Count
			vals = append(vals, b.To)
			cum = append(cum, total)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, p := range []float64{50, 90} {
		const reps = 2000
		brute := make([]float64, reps)
		for i := range brute {
			rh := hdrhistogram.New(1, 3_600_000_000, 3)
			for range total {
				j, _ := slices.BinarySearch(cum, r.Int64N(total)+1)
				_ = rh.RecordValue(vals[j])
			}
			brute[i] = float64(rh.ValueAtPercentile(p))
		}
		e := HistQuantile(h, p, 1)
		closed := make([]float64, reps)
		for i := range closed {
			closed[i] = e.Draw(r)
		}
		slices.Sort(brute)
		slices.Sort(closed)
		// Compare the two distributions' quantiles at 2.5%, 50%, 97.5%:
		// the same bucket values, give or take a bucket or two of noise.
		for _, q := range []float64{0.025, 0.5, 0.975} {
			b, c := brute[int(q*reps)], closed[int(q*reps)]
			if pctOff(b, c) > 3 {
				t.Errorf("p%g: the resampled percentile's %g quantile: brute force %v, closed form %v", p, q, b, c)
			}
		}
	}
}

func TestMinCount(t *testing.T) {
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.99, 368}, {0.9, 36}, {0.5, 6}, {0.1, 36}, {0.999, 3688}} {
		if got := MinCount(c.q, 0.95); got != c.want {
			t.Errorf("MinCount(%g) = %d, want %d", c.q, got, c.want)
		}
	}
	st := Default()
	h := sampleHist(100, 1)
	if ok, why := st.Usable(HistQuantile(h, 99, 1)); ok || why == "" {
		t.Errorf("p99 of 100 values has an interval (%q)", why)
	}
	if ok, _ := st.Usable(HistQuantile(h, 90, 1)); !ok {
		t.Error("p90 of 100 values has no interval")
	}
}

func TestIntervals(t *testing.T) {
	st := Default()
	t.Run("Jeffreys for 0 of 100", func(t *testing.T) {
		iv := st.Interval("x", Proportion(0, 100, 1))
		if !iv.Known || iv.Lo < 0 || iv.Lo > 0.001 || iv.Hi < 0.018 || iv.Hi > 0.032 {
			t.Errorf("interval %+v, want ≈ [0, 0.025]", iv)
		}
	})
	t.Run("Jeffreys for 50 of 100", func(t *testing.T) {
		iv := st.Interval("x", Proportion(50, 100, 1))
		if iv.Lo < 0.38 || iv.Lo > 0.42 || iv.Hi < 0.58 || iv.Hi > 0.62 {
			t.Errorf("interval %+v, want ≈ [0.40, 0.60]", iv)
		}
	})
	t.Run("constant series", func(t *testing.T) {
		e := SeriesRatio(100, []float64{100, 100, 100, 100, 100}, nil)
		iv := st.Interval("x", e)
		if !iv.Known || math.Abs(iv.Lo-100) > 1e-9 || math.Abs(iv.Hi-100) > 1e-9 {
			t.Errorf("interval %+v, want [100, 100]", iv)
		}
	})
	t.Run("series too short", func(t *testing.T) {
		e := SeriesRatio(100, []float64{90, 110}, nil)
		if ok, why := st.Usable(e); ok || why == "" {
			t.Errorf("2 seconds have an interval")
		}
	})
	t.Run("noisy series centres on the reported value", func(t *testing.T) {
		xs := []float64{297, 456, 312, 471, 317, 451, 341, 428, 300, 460, 320, 440}
		e := SeriesRatio(395, xs, nil)
		iv := st.Interval("x", e)
		if !(iv.Lo < 395 && iv.Hi > 395) || iv.Hi-iv.Lo > 120 {
			t.Errorf("interval %+v, want around 395", iv)
		}
	})
	t.Run("same seed, same interval", func(t *testing.T) {
		h := sampleHist(500, 2)
		a := st.RatioInterval("k", HistQuantile(h, 50, 1), HistQuantile(sampleHist(500, 3), 50, 1))
		b := st.RatioInterval("k", HistQuantile(h, 50, 1), HistQuantile(sampleHist(500, 3), 50, 1))
		if a != b {
			t.Errorf("intervals differ: %+v, %+v", a, b)
		}
		if !a.Contains(1) {
			t.Errorf("two samples of one distribution: ratio interval %+v excludes 1", a)
		}
	})
	t.Run("shifted distribution is significant", func(t *testing.T) {
		base := sampleHist(500, 2)
		shifted := hdrhistogram.New(1, 3_600_000_000, 3)
		for _, b := range sampleHist(500, 3).Distribution() {
			if b.Count > 0 {
				_ = shifted.RecordValues(b.To*12/10, b.Count)
			}
		}
		iv := st.RatioInterval("k", HistQuantile(base, 50, 1), HistQuantile(shifted, 50, 1))
		if iv.Lo <= 1.05 || iv.Hi >= 1.4 {
			t.Errorf("20%% slower: ratio interval %+v, want within (1.05, 1.4)", iv)
		}
	})
}

// pctOff is |a − b| as a percentage of the larger.
func pctOff(a, b float64) float64 {
	m := math.Max(math.Abs(a), math.Abs(b))
	if m == 0 {
		return 0
	}
	return math.Abs(a-b) / m * 100
}

// Percentile interpolates between order statistics (type 7): five values
// 50..250 read at P10 = 70, P25 = 100, P90 = 230.
func TestPercentile(t *testing.T) {
	xs := []float64{50, 100, 150, 200, 250}
	at := func(i int) float64 { return xs[i] }
	for p, want := range map[float64]float64{0: 50, 10: 70, 25: 100, 50: 150, 90: 230, 100: 250} {
		if got := Percentile(len(xs), at, p); math.Abs(got-want) > 1e-9 {
			t.Errorf("P%g = %v, want %v", p, got, want)
		}
	}
	if !math.IsNaN(Percentile(0, at, 50)) {
		t.Error("percentile of nothing is not NaN")
	}
	inf := []float64{1, math.Inf(1)}
	if got := Percentile(2, func(i int) float64 { return inf[i] }, 50); !math.IsInf(got, 1) {
		t.Errorf("between 1 and +Inf: %v, want +Inf", got)
	}
}

func TestMeanCI(t *testing.T) {
	mean, half := MeanCI([]float64{10, 12, 14}, 0.95)
	// sd 2, t(2, 95%) 4.303: half-width 4.303·2/√3.
	if mean != 12 || math.Abs(half-4.303*2/math.Sqrt(3)) > 1e-9 {
		t.Errorf("MeanCI = %v ± %v", mean, half)
	}
	if _, half := MeanCI([]float64{3}, 0.95); !math.IsNaN(half) {
		t.Errorf("one value has a half-width %v", half)
	}
}
