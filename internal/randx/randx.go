// Package randx holds random variates the standard library lacks.
package randx

import (
	"math"
	"math/rand/v2"
)

// Gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method (2000);
// shape < 1 uses the boost Gamma(shape+1)·U^(1/shape). shape must be > 0.
func Gamma(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := 1 - r.Float64() // (0, 1]
		return Gamma(r, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - r.Float64() // (0, 1]
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
