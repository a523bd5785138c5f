package numfmt

import "testing"

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Thousands(52310.4), "52,310"}, {Thousands(-1234567), "-1,234,567"}, {Thousands(999), "999"}, {Thousands(0), "0"},
		{Sig(0.015873), "0.0159"}, {Sig(4.591), "4.59"}, {Sig(63.64), "63.6"}, {Sig(254.2), "254"}, {Sig(1020.4), "1,020"}, {Sig(0), "0"},
		{Percent(0.153), "15.3%"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
