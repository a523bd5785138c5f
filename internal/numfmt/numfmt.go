// Package numfmt formats figures for people: thousands separators, three
// significant digits, money and counted nouns, the same way in every
// report. Nothing it returns is in e-notation.
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
	if neg && s != "0" {
		return "-" + b.String()
	}
	return b.String()
}

// Sig formats a figure with at least three significant digits, and with
// thousands separators from 1,000 up: 0.0159, 4.59, 63.6, 254, 1,020.
// Below 1 it writes the digits out (0.0000845), never in e-notation; a
// value too small for nine decimals shows as 0.
func Sig(v float64) string {
	switch a := math.Abs(v); {
	case v == 0 || math.IsNaN(v) || math.IsInf(v, 0):
		if v != 0 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return "0"
	case a >= 999.5:
		return Thousands(v)
	case a >= 99.95:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.9995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return small(v, 3)
	}
}

// Short is Sig without trailing zeros after the point: 27, 7.62, 0.5,
// 1,020 (for a size such as 27B parameters, where "27.0" reads as
// precision that was never measured).
func Short(v float64) string {
	s := Sig(v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// small writes |v| < 1 with sig significant digits in plain decimals (at
// most nine), trailing zeros dropped as %g drops them: 0.001, 0.0159.
func small(v float64, sig int) string {
	prec := sig - 1 - int(math.Floor(math.Log10(math.Abs(v))))
	prec = min(max(prec, 0), 9)
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		return "0"
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Plain formats a number as written, in the fewest digits that give it
// back and never in e-notation: 27, 0.9, 1000000. For values a person
// declared (a weight, a rate), where rounding would misquote them.
func Plain(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Int formats a count: 3, 1,024.
func Int[T ~int | ~int32 | ~int64](n T) string { return Thousands(float64(n)) }

// Count formats n of a noun with the noun in the right number: "1
// stream", "2 streams", "1,024 requests". plural is the noun's plural
// ("" adds an s).
func Count[T ~int | ~int32 | ~int64](n T, singular, plural string) string {
	if n == 1 || n == -1 {
		return Int(n) + " " + singular
	}
	if plural == "" {
		plural = singular + "s"
	}
	return Int(n) + " " + plural
}

// MinMoney is the smallest amount Money writes out; less shows as
// "<$0.000001".
const MinMoney = 1e-6

// Money formats US dollars, the one rule every report uses: from a dollar
// up to the cent with thousands separators ($26.57, $1,234.50); below it
// three significant digits written out ($0.092, $0.13, $0.0000845); below
// MinMoney "<$0.000001"; zero "$0".
func Money(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	switch {
	case v == 0:
		return "$0"
	case v < MinMoney:
		return sign + "<$0.000001"
	case v < 0.9995:
		return sign + "$" + small(v, 3)
	}
	cents := math.Round(v * 100)
	whole := math.Floor(cents / 100)
	return fmt.Sprintf("%s$%s.%02d", sign, Thousands(whole), int64(cents-whole*100))
}

// Percent formats a fraction as a percentage with one decimal: 0.153 → 15.3%.
func Percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// Printer writes formatted text to W and keeps the first error in Err;
// once a write fails, later ones are skipped. Not safe for concurrent use.
type Printer struct {
	W   io.Writer
	Err error
}

// Write writes b unless an earlier write failed, so a Printer is an
// io.Writer too (under a text/tabwriter, say).
func (p *Printer) Write(b []byte) (int, error) {
	if p.Err != nil {
		return 0, p.Err
	}
	n, err := p.W.Write(b)
	p.Err = err
	return n, err
}

// F writes like fmt.Fprintf unless an earlier write failed.
func (p *Printer) F(format string, args ...any) {
	if p.Err == nil {
		_, p.Err = fmt.Fprintf(p.W, format, args...)
	}
}
