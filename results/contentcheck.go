package results

import (
	"slices"
	"strconv"
)

// This file is `sixpin run --content-check`: after the run, a short slice
// per content class of prompt at the run's pins, and how far apart their
// per-stream decode speeds are. A server whose speed depends on what the
// model is asked to write (a speculative drafter guessing code or
// repeated text better than prose) is content-sensitive: its figures
// hold for the content they were measured with only.

// DefaultContentSpreadPct is the spread of decode tok/s across content
// classes (fastest ÷ slowest − 1, in percent) past which a run is
// content-sensitive. Without speculative decoding a token costs a decode
// step whatever it says, and slices a few dozen requests long agree within
// a few percent; a drafter's acceptance moving from 0.55 on prose to 0.7 on
// code moves tokens per step by 30%.
const DefaultContentSpreadPct = 15

// ContentCheckMetric is the figure the slices are compared by: the median
// of per-request decode tok/s (per stream) in each slice's headline
// window.
const ContentCheckMetric = "decode_tok_s.p50"

// ContentCheck is the content check of a run: one slice per content class,
// each a run of its own at the run's pins with every prompt of that class,
// one after another against the same server.
type ContentCheck struct {
	// SliceS bounds each slice's load, in seconds (run time); SliceRequests
	// bounds its requests too when > 0 (the scenario's own count, when it
	// has one).
	SliceS        float64 `json:"slice_s"`
	SliceRequests int     `json:"slice_requests,omitempty"`
	// ThresholdPct is the spread past which the run is content-sensitive.
	ThresholdPct float64 `json:"threshold_pct"`
	// Metric is ContentCheckMetric.
	Metric string `json:"metric"`
	// Base is the class the ratios are to: the run's own content when it
	// is one class, else prose.
	Base    string         `json:"base"`
	Classes []ContentSlice `json:"classes"`
	// Fastest and Slowest name the classes at the ends of the spread;
	// SpreadPct is fastest ÷ slowest − 1, in percent. Both unset when
	// fewer than two slices measured decode.
	Fastest   string   `json:"fastest,omitempty"`
	Slowest   string   `json:"slowest,omitempty"`
	SpreadPct *float64 `json:"spread_pct,omitempty"`
	// SpreadLowPct and SpreadHighPct bound SpreadPct's 95% confidence
	// interval (the bootstrap of the two slices' medians; nil when either
	// has too few requests for one).
	SpreadLowPct  *float64 `json:"spread_low_pct,omitempty"`
	SpreadHighPct *float64 `json:"spread_high_pct,omitempty"`
	// Sensitive: the spread passed ThresholdPct beyond the slices' noise
	// (its interval's low end past it; without an interval, the spread
	// itself). WithinNoise: the spread passed it, its interval's low end
	// did not — longer slices would tell.
	Sensitive   bool `json:"sensitive"`
	WithinNoise bool `json:"within_noise,omitempty"`
	// Incomplete: an interrupt or a failure left classes unmeasured
	// (Missing).
	Incomplete bool     `json:"incomplete,omitempty"`
	Missing    []string `json:"missing,omitempty"`
}

// ContentSlice is one content class's slice: its figures in its headline
// window.
type ContentSlice struct {
	Class  string `json:"class"`
	Seed   int64  `json:"seed"`
	Window string `json:"window"`
	// Requests started in the window; Completed of them succeeded.
	Requests  int `json:"requests"`
	Completed int `json:"completed"`
	// DecodeTokS is per-request decode tok/s (per stream); nil when no
	// request's decode was measured.
	DecodeTokS *Dist `json:"decode_tok_s"`
	// Ratio is this class's DecodeTokS p50 ÷ the base class's (nil when
	// either is unmeasured).
	Ratio *float64 `json:"ratio_to_base,omitempty"`
	// AggregateOutputTokS is all streams together over the window.
	AggregateOutputTokS float64 `json:"aggregate_output_tok_s"`
	TTFTMsP50           float64 `json:"ttft_ms_p50"`
	// SpecDecode is the server's speculative decoding in the window (nil:
	// it said nothing).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
	// DegenerateShare is the sampled answers' degenerate share (nil: none
	// scored).
	DegenerateShare *float64 `json:"degenerate_share,omitempty"`
	// Valid and Invalid are the slice's own verdict: a slice whose pins
	// broke measured something else.
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
}

// NewContentSlice is the slice of class measured by run, in its headline
// window.
func NewContentSlice(class string, run *Run) ContentSlice {
	s := ContentSlice{Class: class, Seed: run.Scenario.Seed, Window: run.Headline, Valid: run.Valid, Invalid: run.Invalid}
	w := run.Windows[run.Headline]
	if w == nil {
		return s
	}
	s.Requests, s.Completed = w.Requests, w.Completed
	s.DecodeTokS = w.DecodeTokS
	s.AggregateOutputTokS = w.AggregateOutputTokS
	if w.TTFTMs != nil {
		s.TTFTMsP50 = w.TTFTMs.P50
	}
	s.SpecDecode = run.SpecDecodeIn(run.Headline)
	if o := w.Output; o != nil && o.Scored > 0 {
		d := o.DegenerateShare
		s.DegenerateShare = &d
	}
	return s
}

// Judge fills the ratios to Base, the spread and whether it passes
// ThresholdPct, from the slices' decode medians; interval, when not nil,
// gives the 95% confidence interval of the fastest class's median over
// the slowest's (ok false: none).
func (c *ContentCheck) Judge(interval func(fastest, slowest string) (lo, hi float64, ok bool)) {
	c.Fastest, c.Slowest, c.SpreadPct, c.SpreadLowPct, c.SpreadHighPct = "", "", nil, nil, nil
	c.Sensitive, c.WithinNoise = false, false
	base := slices.IndexFunc(c.Classes, func(s ContentSlice) bool { return s.Class == c.Base })
	var fast, slow *ContentSlice
	for i := range c.Classes {
		s := &c.Classes[i]
		s.Ratio = nil
		if s.DecodeTokS == nil || s.DecodeTokS.P50 <= 0 {
			continue
		}
		if base >= 0 && c.Classes[base].DecodeTokS != nil && c.Classes[base].DecodeTokS.P50 > 0 {
			r := s.DecodeTokS.P50 / c.Classes[base].DecodeTokS.P50
			s.Ratio = &r
		}
		if fast == nil || s.DecodeTokS.P50 > fast.DecodeTokS.P50 {
			fast = s
		}
		// Ties go to the later slice, so two slices with one median (a
		// server without a drafter, its medians in one histogram bucket)
		// spread 0%, measured, rather than not at all.
		if slow == nil || s.DecodeTokS.P50 <= slow.DecodeTokS.P50 {
			slow = s
		}
	}
	if fast == nil || fast == slow {
		return
	}
	spread := 100 * (fast.DecodeTokS.P50/slow.DecodeTokS.P50 - 1)
	c.Fastest, c.Slowest, c.SpreadPct = fast.Class, slow.Class, &spread
	low := spread
	if interval != nil {
		if lo, hi, ok := interval(fast.Class, slow.Class); ok {
			l, h := 100*(lo-1), 100*(hi-1)
			c.SpreadLowPct, c.SpreadHighPct, low = &l, &h, l
		}
	}
	c.Sensitive = low > c.ThresholdPct
	c.WithinNoise = spread > c.ThresholdPct && !c.Sensitive
}

// contentCheck checks a content check read from a file: a threshold and
// a spread that are not negative, and every slice named.
func (c *fileCheck) contentCheck(run *Run) {
	cc := run.ContentCheck
	if cc == nil {
		return
	}
	at := func(field ...string) []string { return append([]string{"content_check"}, field...) }
	if cc.ThresholdPct < 0 {
		c.at(at("threshold_pct"), "must be ≥ 0 (got %g)", cc.ThresholdPct)
	}
	if cc.SpreadPct != nil && *cc.SpreadPct < 0 {
		c.at(at("spread_pct"), "must be ≥ 0 (got %g)", *cc.SpreadPct)
	}
	for i, s := range cc.Classes {
		if s.Class == "" {
			c.at(at("classes", strconv.Itoa(i), "class"), "must name a content class")
		}
	}
}
