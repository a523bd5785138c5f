package numfmt

import (
	"strings"
	"testing"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Thousands(52310.4), "52,310"}, {Thousands(-1234567), "-1,234,567"}, {Thousands(999), "999"}, {Thousands(0), "0"},
		{Thousands(-0.2), "0"},
		{Sig(0.015873), "0.0159"}, {Sig(4.591), "4.59"}, {Sig(63.64), "63.6"}, {Sig(254.2), "254"}, {Sig(1020.4), "1,020"}, {Sig(0), "0"},
		{Sig(8.45e-05), "0.0000845"}, {Sig(68100), "68,100"}, {Sig(9.996), "10.0"}, {Sig(99.96), "100"}, {Sig(999.6), "1,000"},
		{Sig(1e-12), "0"}, {Sig(-0.5), "-0.5"}, {Sig(0.001), "0.001"},
		{Short(27), "27"}, {Short(7.6156), "7.62"}, {Short(0.5), "0.5"}, {Short(1020), "1,020"}, {Plain(27), "27"}, {Plain(1e6), "1000000"}, {Plain(0.9), "0.9"},
		{Int(1024), "1,024"}, {Count(1, "stream", ""), "1 stream"}, {Count(2, "stream", ""), "2 streams"},
		{Count(0, "session", ""), "0 sessions"}, {Count(1, "entry", "entries"), "1 entry"}, {Count(3, "entry", "entries"), "3 entries"},
		{Money(8.45e-05), "$0.0000845"}, {Money(0.092), "$0.092"}, {Money(0.13), "$0.13"}, {Money(26.574), "$26.57"}, {Money(1234.999), "$1,235.00"},
		{Money(0), "$0"}, {Money(1e-9), "<$0.000001"}, {Money(-2.5), "-$2.50"}, {Money(0.9996), "$1.00"},
		{Percent(0.153), "15.3%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Nothing a person reads is in e-notation, however large or small.
func TestNoENotation(t *testing.T) {
	for v := 1e-15; v < 1e15; v *= 3.7 {
		for _, s := range []string{Sig(v), Sig(-v), Money(v), Thousands(v)} {
			if strings.ContainsAny(s, "eE") {
				t.Errorf("%g formats as %q", v, s)
			}
		}
	}
}
