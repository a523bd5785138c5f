package results

import "testing"

// Judge: ratios to the base class, the spread from the slowest to the
// fastest median, and the verdict — sensitive only when the spread's
// interval clears the threshold, within the noise when the spread alone
// does, and the spread itself without an interval; an unmeasured slice
// takes no part.
func TestContentCheckJudge(t *testing.T) {
	slice := func(class string, p50 float64) ContentSlice {
		if p50 == 0 {
			return ContentSlice{Class: class}
		}
		return ContentSlice{Class: class, DecodeTokS: &Dist{P50: p50}}
	}
	check := func() *ContentCheck {
		return &ContentCheck{ThresholdPct: 15, Base: "code", Classes: []ContentSlice{
			slice("prose", 100), slice("code", 125), slice("json", 0), slice("repetitive", 130)}}
	}
	interval := func(lo, hi float64) func(string, string) (float64, float64, bool) {
		return func(fast, slow string) (float64, float64, bool) {
			if fast != "repetitive" || slow != "prose" {
				t.Errorf("interval asked of %s over %s", fast, slow)
			}
			return lo, hi, true
		}
	}
	for _, c := range []struct {
		name               string
		interval           func(string, string) (float64, float64, bool)
		sensitive, withinN bool
	}{
		{"clear of the threshold", interval(1.2, 1.4), true, false},
		{"within the noise", interval(1.1, 1.5), false, true},
		{"no interval", nil, true, false},
		{"no interval known", func(string, string) (float64, float64, bool) { return 0, 0, false }, true, false},
	} {
		cc := check()
		cc.Judge(c.interval)
		if cc.SpreadPct == nil || *cc.SpreadPct < 29.99 || *cc.SpreadPct > 30.01 || cc.Fastest != "repetitive" || cc.Slowest != "prose" {
			t.Fatalf("%s: spread %v, fastest %q, slowest %q; want 30%%, repetitive over prose", c.name, cc.SpreadPct, cc.Fastest, cc.Slowest)
		}
		if cc.Sensitive != c.sensitive || cc.WithinNoise != c.withinN {
			t.Errorf("%s: sensitive %v, within noise %v; want %v, %v", c.name, cc.Sensitive, cc.WithinNoise, c.sensitive, c.withinN)
		}
		if r := cc.Classes[0].Ratio; r == nil || *r != 0.8 {
			t.Errorf("%s: prose's ratio to code %v, want 0.8", c.name, r)
		}
		if cc.Classes[2].Ratio != nil {
			t.Errorf("%s: the unmeasured slice has a ratio", c.name)
		}
	}
	low := check()
	low.ThresholdPct = 40
	low.Judge(interval(1.2, 1.4))
	if low.Sensitive || low.WithinNoise {
		t.Errorf("a spread under the threshold: sensitive %v, within noise %v", low.Sensitive, low.WithinNoise)
	}
	one := &ContentCheck{ThresholdPct: 15, Base: "prose", Classes: []ContentSlice{slice("prose", 100), slice("code", 0)}}
	one.Judge(nil)
	if one.SpreadPct != nil || one.Sensitive {
		t.Errorf("one measured slice: spread %v, sensitive %v", one.SpreadPct, one.Sensitive)
	}
	// Two slices that measured the same median (a server without a
	// drafter, whose medians fall in one histogram bucket) spread 0%:
	// measured, and insensitive.
	same := &ContentCheck{ThresholdPct: 15, Base: "prose", Classes: []ContentSlice{slice("prose", 100), slice("code", 100), slice("json", 0)}}
	same.Judge(nil)
	if same.SpreadPct == nil || *same.SpreadPct != 0 || same.Fastest == "" || same.Slowest == "" || same.Sensitive || same.WithinNoise {
		t.Errorf("two equal slices: spread %v, fastest %q, slowest %q, sensitive %v", same.SpreadPct, same.Fastest, same.Slowest, same.Sensitive)
	}
}
