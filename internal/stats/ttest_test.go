package stats

import (
	"math"
	"testing"
)

func TestStudentTAgreesWithTheTable(t *testing.T) {
	for _, df := range []int{1, 2, 4, 9, 19, 30} {
		for _, conf := range []float64{0.90, 0.95, 0.99} {
			if got, want := StudentT(df, conf), TCritical(df, conf); math.Abs(got-want) > 0.0015 {
				t.Errorf("StudentT(%d, %v) = %.4f, the table says %.3f", df, conf, got, want)
			}
		}
	}
	// Between the table's levels: t(4, 97.5%) = 3.495, t(10, 80%) = 1.372.
	for _, c := range []struct {
		df         int
		conf, want float64
	}{{4, 0.975, 3.495}, {10, 0.80, 1.372}} {
		if got := StudentT(c.df, c.conf); math.Abs(got-c.want) > 0.0015 {
			t.Errorf("StudentT(%d, %v) = %.4f, want %.3f", c.df, c.conf, got, c.want)
		}
	}
	if !math.IsNaN(StudentT(0, 0.95)) || !math.IsNaN(StudentT(3, 1)) {
		t.Error("no critical value without degrees of freedom or at 100%")
	}
}

func TestTwoSample(t *testing.T) {
	for _, c := range []struct {
		name     string
		a, b     []float64
		diff     float64
		half     float64 // NaN: none
		df       int
		tolerant float64
	}{
		// s_a = 2, one new value: the prediction interval ±t(2)·2·√(1+1/3).
		{"one new value: the prediction interval", []float64{10, 12, 14}, []float64{15}, 3, 4.303 * 2 * math.Sqrt(1+1.0/3), 2, 0.002},
		// s_p² = (2·4 + 1·2)/3 = 10/3; ±t(3)·s_p·√(1/3 + 1/2).
		{"pooled", []float64{10, 12, 14}, []float64{20, 22}, 9, 3.182 * math.Sqrt(10.0/3) * math.Sqrt(1.0/3+1.0/2), 3, 0.002},
		{"one value each: no spread known", []float64{10}, []float64{11}, 1, math.NaN(), 0, 0},
		{"an empty side", nil, []float64{1, 2, 3}, math.NaN(), math.NaN(), 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			diff, half, df := TwoSample(c.a, c.b, 0.95)
			if df != c.df || !same(diff, c.diff, 1e-12) || !same(half, c.half, c.tolerant) {
				t.Errorf("TwoSample = %v ± %v (df %d), want %v ± %v (df %d)", diff, half, df, c.diff, c.half, c.df)
			}
		})
	}
}

// same reports whether a and b agree within tol (both NaN agree).
func same(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= tol
}
