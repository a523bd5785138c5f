// Package numfmt formats figures for people: thousands separators and
// three significant digits, the same way in every report.
package numfmt

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Thousands formats v rounded to an integer with comma separators: 52,310.
func Thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Sig formats a figure with at least three significant digits, and with
// thousands separators from 1,000 up: 0.0159, 4.59, 63.6, 254, 1,020.
func Sig(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case a >= 1000:
		return Thousands(v)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// Percent formats a fraction as a percentage with one decimal: 0.153 → 15.3%.
func Percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// Printer writes formatted text to W and keeps the first error in Err;
// once a write fails, later ones are skipped. Not safe for concurrent use.
type Printer struct {
	W   io.Writer
	Err error
}

// F writes like fmt.Fprintf unless an earlier write failed.
func (p *Printer) F(format string, args ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format, args...)
	}
}
