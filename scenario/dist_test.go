package scenario

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/sixpin/sixpin/internal/randx"
)

func TestDistString(t *testing.T) {
	tests := []struct {
		d    Dist
		want string
	}{
		{Fixed(8000), "8000"},
		{Dist{Kind: DistUniform, Min: 150, Max: 500}, "uniform [150, 500]"},
		{Dist{Kind: DistNormal, Mean: 1000, Stddev: 200, Min: 500, Max: 1500}, "normal(mean 1000, stddev 200) in [500, 1500]"},
		{Dist{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 11000, Max: 120000}, "lognormal(median 50000, σ 0.6) in [11000, 120000]"},
		{Dist{Kind: DistEmpirical, Values: []float64{100, 200}}, "empirical{100, 200}"},
		{Dist{Kind: DistEmpirical, Values: []float64{100, 200}, Weights: []float64{0.7, 0.3}}, "empirical{100: 0.7, 200: 0.3}"},
		{Dist{Kind: DistEmpirical, Values: []float64{9, 1, 2, 3, 4, 5, 6, 7, 8}}, "empirical(9 values) in [1, 9]"},
		{Dist{}, "unset"},
		{Dist{Kind: "gauss"}, "gauss(?)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDistBoundsAndIsZero(t *testing.T) {
	tests := []struct {
		name   string
		d      Dist
		lo, hi float64
		zero   bool
	}{
		{"fixed", Fixed(7), 7, 7, false},
		{"uniform", Dist{Kind: DistUniform, Min: 1, Max: 9}, 1, 9, false},
		{"lognormal", Dist{Kind: DistLognormal, Median: 5, Sigma: 1, Min: 2, Max: 30}, 2, 30, false},
		{"empirical skips zero weights", Dist{Kind: DistEmpirical, Values: []float64{1, 50, 9}, Weights: []float64{0, 1, 1}}, 9, 50, false},
		{"empirical unweighted", Dist{Kind: DistEmpirical, Values: []float64{4, 2, 8}}, 2, 8, false},
		{"unset", Dist{}, 0, 0, true},
		{"parameters without kind", Dist{Min: 3}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := tt.d.Bounds()
			if lo != tt.lo || hi != tt.hi {
				t.Errorf("Bounds() = %v, %v; want %v, %v", lo, hi, tt.lo, tt.hi)
			}
			if got := tt.d.IsZero(); got != tt.zero {
				t.Errorf("IsZero() = %v, want %v", got, tt.zero)
			}
		})
	}
}

// samples draws n values of d from a fixed stream.
func samples(d Dist, n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = d.Sample(r)
	}
	return xs
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func stddev(xs []float64) float64 {
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

func TestDistStatistics(t *testing.T) {
	const n = 200_000
	tests := []struct {
		name string
		d    Dist
		stat func([]float64) float64
		want float64
		tol  float64 // relative
	}{
		{"uniform mean", Dist{Kind: DistUniform, Min: 150, Max: 500}, mean, 325, 0.005},
		{"uniform stddev", Dist{Kind: DistUniform, Min: 150, Max: 500}, stddev, 350 / math.Sqrt(12), 0.01},
		{"normal mean", Dist{Kind: DistNormal, Mean: 1000, Stddev: 100, Min: 0, Max: 1e6}, mean, 1000, 0.005},
		{"normal stddev", Dist{Kind: DistNormal, Mean: 1000, Stddev: 100, Min: 0, Max: 1e6}, stddev, 100, 0.01},
		// Wide bounds: truncation leaves the median alone.
		{"lognormal median", Dist{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 1, Max: 1e9}, median, 50000, 0.01},
		{"lognormal mean", Dist{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 1, Max: 1e9}, mean, 50000 * math.Exp(0.18), 0.01},
		// Symmetric truncation of a lognormal in log space keeps the median.
		{"truncated lognormal median", Dist{Kind: DistLognormal, Median: 1000, Sigma: 1, Min: 1000 / math.E, Max: 1000 * math.E}, median, 1000, 0.02},
		{"empirical weighted mean", Dist{Kind: DistEmpirical, Values: []float64{100, 1000}, Weights: []float64{3, 1}}, mean, 325, 0.01},
		{"empirical unweighted mean", Dist{Kind: DistEmpirical, Values: []float64{100, 200, 600}}, mean, 300, 0.01},
		{"fixed", Fixed(42), mean, 42, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.stat(samples(tt.d, n))
			if math.Abs(got-tt.want) > tt.tol*tt.want {
				t.Errorf("got %v, want %v ± %v%%", got, tt.want, 100*tt.tol)
			}
		})
	}
}

func TestDistBoundsRespected(t *testing.T) {
	dists := []Dist{
		{Kind: DistUniform, Min: 150, Max: 500},
		{Kind: DistNormal, Mean: 1000, Stddev: 5000, Min: 900, Max: 1100},
		{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 11000, Max: 120000},
		// The mass is almost all outside: redraws run out and clamp.
		{Kind: DistLognormal, Median: 10, Sigma: 0.1, Min: 100, Max: 200},
		{Kind: DistNormal, Mean: 10.5, Stddev: 3, Min: 9.6, Max: 11.4},
		{Kind: DistEmpirical, Values: []float64{3, 7}, Weights: []float64{1, 0}},
	}
	for _, d := range dists {
		t.Run(d.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			lo, hi := d.Bounds()
			for range 50_000 {
				if x := d.Sample(r); x < lo || x > hi {
					t.Fatalf("Sample() = %v outside [%v, %v]", x, lo, hi)
				}
				if x := d.SampleInt(r); float64(x) < math.Ceil(lo) || float64(x) > math.Floor(hi) {
					t.Fatalf("SampleInt() = %v outside [%v, %v]", x, math.Ceil(lo), math.Floor(hi))
				}
			}
		})
	}
}

func TestSampleInt(t *testing.T) {
	const n = 30_000
	tests := []struct {
		name string
		d    Dist
		want map[int]float64 // probability of each outcome
	}{
		{"uniform is uniform over the integers", Dist{Kind: DistUniform, Min: 1, Max: 3}, map[int]float64{1: 1. / 3, 2: 1. / 3, 3: 1. / 3}},
		{"uniform with fractional bounds", Dist{Kind: DistUniform, Min: 0.5, Max: 2.5}, map[int]float64{1: 0.5, 2: 0.5}},
		{"normal rounds", Dist{Kind: DistNormal, Mean: 2, Stddev: 0.01, Min: 1, Max: 3}, map[int]float64{2: 1}},
		{"empirical", Dist{Kind: DistEmpirical, Values: []float64{10, 20}, Weights: []float64{1, 3}}, map[int]float64{10: 0.25, 20: 0.75}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 6))
			counts := map[int]int{}
			for range n {
				counts[tt.d.SampleInt(r)]++
			}
			for v, c := range counts {
				if _, ok := tt.want[v]; !ok {
					t.Fatalf("drew %d, want only %v", v, tt.want)
				}
				if p := float64(c) / n; math.Abs(p-tt.want[v]) > 0.015 {
					t.Errorf("P(%d) = %.3f, want %.3f", v, p, tt.want[v])
				}
			}
		})
	}
}

func TestGamma(t *testing.T) {
	for _, shape := range []float64{0.25, 0.5, 1, 2.5, 10} {
		t.Run(fmt.Sprint(shape), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			xs := make([]float64, 200_000)
			for i := range xs {
				xs[i] = randx.Gamma(r, shape)
				if xs[i] < 0 || math.IsNaN(xs[i]) {
					t.Fatalf("gamma(%v) = %v", shape, xs[i])
				}
			}
			// Gamma(k, 1) has mean k and variance k.
			if m := mean(xs); math.Abs(m-shape) > 0.02*shape {
				t.Errorf("mean = %v, want %v", m, shape)
			}
			if sd := stddev(xs); math.Abs(sd-math.Sqrt(shape)) > 0.03*math.Sqrt(shape) {
				t.Errorf("stddev = %v, want %v", sd, math.Sqrt(shape))
			}
		})
	}
}

// linearEmpirical is the weighted draw as it was written before Plan
// prepared its distributions: a walk of every weight per draw.
func linearEmpirical(d Dist, r *rand.Rand) float64 {
	var total float64
	for _, w := range d.Weights {
		total += max(w, 0)
	}
	u := r.Float64() * total
	last := 0
	for i, w := range d.Weights {
		if w <= 0 {
			continue
		}
		last = i
		if u < w {
			return d.Values[i]
		}
		u -= w
	}
	return d.Values[last]
}

// A prepared weighted empirical Dist draws what the per-draw walk drew.
func TestPreparedEmpiricalDrawsTheSame(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := Dist{Kind: DistEmpirical}
	for i := range 1000 {
		d.Values = append(d.Values, float64(i+1))
		w := float64(r.IntN(5))
		if i == 999 {
			w = 0
		}
		d.Weights = append(d.Weights, w)
	}
	s := d.prepare()
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for i := range 100_000 {
		if got, want := s.sample(a), linearEmpirical(d, b); got != want {
			t.Fatalf("draw %d: %v, want %v", i, got, want)
		}
	}
}

// BenchmarkEmpiricalDraw compares a draw from a Plan's prepared empirical
// Dist of 100,000 weighted values with Dist.SampleInt, which walks every
// value per draw (what Plan did before).
func BenchmarkEmpiricalDraw(b *testing.B) {
	d := Dist{Kind: DistEmpirical}
	for i := range 100_000 {
		d.Values = append(d.Values, float64(i+1))
		d.Weights = append(d.Weights, float64(i%7))
	}
	r := rand.New(rand.NewPCG(1, 1))
	b.Run("prepared", func(b *testing.B) {
		s := d.prepare()
		for b.Loop() {
			s.sampleInt(r)
		}
	})
	b.Run("per-draw", func(b *testing.B) {
		for b.Loop() {
			d.SampleInt(r)
		}
	})
}
