package randx

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Gamma(k, 1) has mean k and variance k, for k above and below 1.
func TestGammaMoments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []float64{0.3, 1, 2.5, 9} {
		const n = 200_000
		var s, ss float64
		for range n {
			x := Gamma(r, k)
			if x <= 0 {
				t.Fatalf("Gamma(%g) drew %g", k, x)
			}
			s += x
			ss += x * x
		}
		mean := s / n
		variance := ss/n - mean*mean
		if math.Abs(mean-k) > 0.02*k+0.01 || math.Abs(variance-k) > 0.05*k+0.01 {
			t.Errorf("Gamma(%g): mean %.4f, variance %.4f", k, mean, variance)
		}
	}
}
