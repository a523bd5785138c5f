package importer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sixpin/sixpin/scenario"
)

// draws samples n values of a peer's algorithm, written here as the peer
// writes it, and returns their frequencies.
func draws(n int, draw func(r *rand.Rand) int) map[int]float64 {
	r := rand.New(rand.NewPCG(1, 2))
	f := map[int]float64{}
	for range n {
		f[draw(r)]++
	}
	for k := range f {
		f[k] /= float64(n)
	}
	return f
}

// pinned samples n values of the distribution a translation pins, as
// sixpin's plan draws them.
func pinned(n int, l length) map[int]float64 {
	r := rand.New(rand.NewPCG(3, 4))
	f := map[int]float64{}
	for range n {
		f[l.dist.SampleInt(r)]++
	}
	for k := range f {
		f[k] /= float64(n)
	}
	return f
}

// binned folds a distribution over [lo, hi] into 20 bins of equal width,
// keeping the bounds' own masses apart (where a clamp puts the tails): a
// total variation over hundreds of single values would measure sampling
// noise.
func binned(f map[int]float64, lo, hi int) map[int]float64 {
	b := map[int]float64{}
	for k, v := range f {
		switch {
		case k <= lo:
			b[-1] += v
		case k >= hi:
			b[-2] += v
		default:
			b[(k-lo)*20/(hi-lo+1)] += v
		}
	}
	return b
}

// tv is the total variation distance between two distributions.
func tv(a, b map[int]float64) float64 {
	var d float64
	for k, v := range a {
		d += math.Abs(v - b[k])
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d += v
		}
	}
	return d / 2
}

// What sixpin draws for a pinned length is what the peer draws, within
// sampling noise: each peer's sampler is written out here from its source
// and compared, by total variation, with draws from the pinned
// distribution (closed form or written out).
func TestPinnedLengthsAreThePeersDistributions(t *testing.T) {
	t.Parallel()
	const n = 100_000
	clamp := func(v, lo, hi float64) float64 { return min(max(v, lo), hi) }
	for _, c := range []struct {
		name string
		peer func(r *rand.Rand) int
		l    length
	}{
		// GuideLLM's IntegerRangeSampler, inference-perf's
		// generate_distribution: round(clamp(gauss, min, max)).
		{"clamped normal, wide", func(r *rand.Rand) int { return int(math.Round(clamp(500+100*r.NormFloat64(), 1, 1000))) }, clampedNormal(500, 100, 1, 1000)},
		{"clamped normal, tight", func(r *rand.Rand) int { return int(math.Round(clamp(200+50*r.NormFloat64(), 180, 260))) }, clampedNormal(200, 50, 180, 260)},
		// inference-perf's uniform: round(clip(uniform(min, max))).
		{"rounded uniform", func(r *rand.Rand) int { return int(math.Round(clamp(10+r.Float64()*40, 10, 50))) }, clampedUniform(10, 50, 10, 50)},
		// AIPerf's sample_positive_normal_integer: ⌈X⌉, X ~ N drawn
		// again until X ≥ 0.
		{"AIPerf ⌈normal⌉, far from 0", func(r *rand.Rand) int {
			for {
				if x := 300 + 10*r.NormFloat64(); x >= 0 {
					return int(math.Ceil(x))
				}
			}
		}, ceilTruncatedNormal(300, 10)},
		{"AIPerf ⌈normal⌉, near 0", func(r *rand.Rand) int {
			for {
				if x := 3 + 4*r.NormFloat64(); x >= 0 {
					return int(math.Ceil(x))
				}
			}
		}, ceilTruncatedNormal(3, 4)},
		// inference-perf's lognormal: min + LN moment-matched, clipped.
		{"shifted lognormal", func(r *rand.Rand) int {
			m, s := 200.0-50, 80.0
			s2 := math.Log(1 + (s/m)*(s/m))
			return int(math.Round(clamp(50+math.Exp(math.Log(m)-s2/2+math.Sqrt(s2)*r.NormFloat64()), 50, 800)))
		}, shiftedLognormal(200, 80, 50, 800)},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			peer, ours := draws(n, c.peer), pinned(n, c.l)
			lo, hi := c.l.dist.Bounds()
			if d := tv(binned(peer, int(lo), int(hi)), binned(ours, int(lo), int(hi))); d > 0.01 {
				t.Errorf("total variation %.4f between the peer's draws and the pinned %s", d, c.l.dist)
			}
			mean, sd := moments(peer)
			ourMean, _ := moments(ours)
			// Four standard errors of a difference of two means: a
			// half-token shift (AIPerf's ⌈X⌉ pinned without its + ½) is
			// caught.
			se := 4 * sd * math.Sqrt(2.0/n)
			if math.Abs(mean-c.l.mean) > se || math.Abs(mean-ourMean) > se {
				t.Errorf("means: %.3f computed, %.3f drawn by sixpin, %.3f by the peer (± %.3f)", c.l.mean, ourMean, mean, se)
			}
		})
	}
}

// moments are the mean and standard deviation of a distribution.
func moments(f map[int]float64) (mean, sd float64) {
	for k, v := range f {
		mean += float64(k) * v
	}
	for k, v := range f {
		sd += (float64(k) - mean) * (float64(k) - mean) * v
	}
	return mean, math.Sqrt(sd)
}

// Shifting a length by a prefix or special tokens moves every value.
func TestLengthPlus(t *testing.T) {
	t.Parallel()
	for _, l := range []length{fixed(10), uniformInt(5, 9), clampedNormal(50, 3, 40, 60), clampedUniform(1, 5, 1, 5)} {
		p := l.plus(7)
		lo, hi := l.dist.Bounds()
		plo, phi := p.dist.Bounds()
		if plo != lo+7 || phi != hi+7 || p.mean != l.mean+7 {
			t.Errorf("%s + 7 = %s (mean %v → %v)", l.dist, p.dist, l.mean, p.mean)
		}
		if p.dist.Kind == scenario.DistEmpirical && len(p.dist.Values) != len(l.dist.Values) {
			t.Errorf("values lost")
		}
	}
}
