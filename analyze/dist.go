package analyze

import (
	"slices"
	"strconv"

	"github.com/sixpin/sixpin/internal/stats"
)

// Dist summarises a sample: its size, extremes and percentiles, which
// interpolate linearly between order statistics (stats.Percentile:
// Hyndman & Fan type 7, numpy's default).
type Dist struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P10 float64 `json:"p10"`
	P25 float64 `json:"p25"`
	P50 float64 `json:"p50"`
	P75 float64 `json:"p75"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

// sample is what a percentile needs of one figure: its values, 4 bytes
// each.
type sample []float32

func (s *sample) add(v float64) { *s = append(*s, float32(v)) }

// dist sorts s in place and summarises it; nil when s is empty.
func (s sample) dist() *Dist {
	if len(s) == 0 {
		return nil
	}
	slices.Sort(s)
	return &Dist{
		N:   len(s),
		Min: sig7(float64(s[0])),
		P10: sig7(s.percentile(10)),
		P25: sig7(s.percentile(25)),
		P50: sig7(s.percentile(50)),
		P75: sig7(s.percentile(75)),
		P90: sig7(s.percentile(90)),
		Max: sig7(float64(s[len(s)-1])),
	}
}

// sig7 rounds to 7 significant digits, the precision of the float32
// values kept: 517.8571 rather than 517.8571472167969.
func sig7(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 7, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// percentile reads the p-th percentile (0–100) of sorted s.
func (s sample) percentile(p float64) float64 {
	return stats.Percentile(len(s), func(i int) float64 { return float64(s[i]) }, p)
}
