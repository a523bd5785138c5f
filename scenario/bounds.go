package scenario

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// limits checks that every count, length, rate and time of the scenario
// keeps within its sane bound (internal/bounds; the README's scenario
// section lists them), so that no scenario can overflow an int or a
// time.Duration, allocate absurdly, or plan a run nobody could wait for.
// Lower bounds and consistency are checked by the other rules.
func (v *validator) limits() {
	s := v.s
	tokens := func(path string, d Dist) { v.distMax(path, d, bounds.Tokens, "tokens") }
	tokens("pins.prompt.tokens", s.Pins.Prompt.Tokens)
	tokens("pins.output.tokens", s.Pins.Output.Tokens)
	for i, c := range s.Pins.Mix.Classes {
		if c.Prompt != nil {
			tokens(fmt.Sprintf("pins.mix.classes[%d].prompt.tokens", i), c.Prompt.Tokens)
		}
		if c.Output != nil {
			tokens(fmt.Sprintf("pins.mix.classes[%d].output.tokens", i), c.Output.Tokens)
		}
	}
	v.atMost("pins.prompt.shared_prefix_tokens", float64(s.Pins.Prompt.SharedPrefixTokens), bounds.Tokens, " tokens")
	v.atMost("pins.prompt.prefix_groups", float64(s.Pins.Prompt.PrefixGroups), bounds.Requests, "")
	v.atMost("pins.kv_cache.max_model_len", float64(s.Pins.KVCache.MaxModelLen), bounds.Tokens, " tokens")
	v.atMost("pins.kv_cache.max_num_seqs", float64(s.Pins.KVCache.MaxNumSeqs), bounds.Streams, "")

	c := s.Pins.Concurrency
	v.atMost("pins.concurrency.streams", float64(c.Streams), bounds.Streams, "")
	v.atMost("pins.concurrency.max_in_flight", float64(c.MaxInFlight), bounds.Streams, "")
	if c.Burstiness != 0 && (c.Burstiness < bounds.MinBurstiness || c.Burstiness > bounds.MaxBurstiness) {
		v.errorf("pins.concurrency.burstiness", "must be in [%s, %s] (got %s)", num(bounds.MinBurstiness), num(bounds.MaxBurstiness), num(c.Burstiness))
	}
	switch {
	case c.Rate > bounds.RateRPS:
		v.errorf("pins.concurrency.rate", "must be ≤ %s requests/s (got %s)", numfmt.Thousands(bounds.RateRPS), got(c.Rate))
	case c.Rate > 0 && c.Rate < bounds.MinRateRPS:
		v.errorf("pins.concurrency.rate", "must be at least one request a century (got %s requests/s)", num(c.Rate))
	case c.Mode == ModeOpen && c.Rate > 0 && s.Duration > 0 && (s.Requests == 0 || s.Requests > bounds.Requests):
		if n := c.Rate * s.Duration.D().Seconds(); n > bounds.Requests {
			v.errorf("pins.concurrency.rate", "plans about %s arrivals in %s, more than %s: lower the rate, shorten the duration or set requests",
				numfmt.Thousands(n), s.Duration, numfmt.Thousands(bounds.Requests))
		}
	}

	v.atMost("requests", float64(s.Requests), bounds.Requests, "")
	for _, d := range []struct {
		path string
		d    time.Duration
	}{{"duration", s.Duration.D()}, {"request_timeout", s.RequestTimeout.D()}, {"windows.warmup", s.Windows.Warmup.D()},
		{"windows.burst", s.Windows.Burst.D()}, {"windows.steady.start", s.Windows.Steady.Start}, {"windows.steady.end", s.Windows.Steady.End}} {
		if d.d > bounds.Century {
			v.errorf(d.path, "must be ≤ %s, a century (got %s)", shortDur(bounds.Century), shortDur(d.d))
		}
	}
	for _, f := range []struct {
		key string
		ms  float64
	}{{"ttft_ms", s.SLO.TTFTMs}, {"tpot_ms", s.SLO.TPOTMs}, {"e2e_ms", s.SLO.E2EMs}} {
		v.atMost("slo."+f.key, f.ms, bounds.CenturySeconds*1000, " ms, a century")
	}

	w, p := s.Workload, "workload"
	v.atMost(p+".sessions", float64(w.Sessions), bounds.Sessions, "")
	v.distMax(p+".turns", w.Turns, bounds.Turns, "turns")
	v.distMax(p+".growth_tokens", w.GrowthTokens, bounds.Tokens, "tokens")
	v.distMax(p+".think_seconds", w.ThinkSeconds, bounds.CenturySeconds, "s, a century")
	v.atMost(p+".max_context_tokens", float64(w.MaxContextTokens), bounds.Tokens, " tokens")
	v.atMost(p+".max_retries", float64(w.MaxRetries), bounds.Retries, "")
	v.atMost(p+".time_scale", w.TimeScale, bounds.TimeScale, "")
	if t := w.Trace; t != nil && w.TimeScale > 0 && w.TimeScale <= bounds.TimeScale {
		if span := t.Summary().Span; span.Seconds()*w.TimeScale > bounds.CenturySeconds {
			v.errorf(p+".time_scale", "stretches the trace's %s to more than a century", shortDur(span))
		}
	}

	if sw := s.Sweep; sw != nil {
		if len(sw.Values) > bounds.SweepPoints {
			v.errorf("sweep.values", "must be at most %s values (got %s)", numfmt.Thousands(bounds.SweepPoints), numfmt.Thousands(float64(len(sw.Values))))
		}
		limit, unit := 0.0, ""
		switch sw.Pin {
		case SweepStreams:
			limit = bounds.Streams
		case SweepRate:
			limit, unit = bounds.RateRPS, " requests/s"
		case SweepPromptTokens, SweepOutputTokens:
			limit, unit = bounds.Tokens, " tokens"
		}
		for i, x := range sw.Values {
			if limit > 0 && x > limit {
				v.errorf(fmt.Sprintf("sweep.values[%d]", i), "must be ≤ %s%s for %s (got %s)", numfmt.Thousands(limit), unit, sw.Pin, got(x))
				break
			}
		}
	}
}

// atMost checks a value against its upper bound; unit follows the bound
// in the message (" tokens").
func (v *validator) atMost(path string, x, limit float64, unit string) {
	if x > limit {
		v.errorf(path, "must be ≤ %s%s (got %s)", numfmt.Thousands(limit), unit, got(x))
	}
}

// distMax checks that every value d can draw is at most limit (in unit),
// that an empirical d lists at most bounds.Values values, and that its
// weights sum to a finite total. The error sits at the parameter that
// breaks the bound (the value, max, or the first value beyond it).
func (v *validator) distMax(path string, d Dist, limit float64, unit string) {
	over := func(key string, x float64) bool {
		if x <= limit {
			return false
		}
		v.errorf(v.paramPath(path, key), "must be ≤ %s %s (got %s)", numfmt.Thousands(limit), unit, got(x))
		return true
	}
	switch d.Kind {
	case DistFixed:
		over("value", d.Value)
	case DistUniform, DistNormal, DistLognormal:
		over("max", d.Max)
	case DistEmpirical:
		if len(d.Values) > bounds.Values {
			v.errorf(path+".values", "must hold at most %s values (got %s): replay a trace instead",
				numfmt.Thousands(bounds.Values), numfmt.Thousands(float64(len(d.Values))))
			return
		}
		for i, x := range d.Values {
			if over(fmt.Sprintf("values[%d]", i), x) {
				break
			}
		}
		var sum float64
		for _, w := range d.Weights {
			sum += max(w, 0)
		}
		if math.IsInf(sum, 0) {
			v.errorf(path+".weights", "must sum to a finite total (they overflow)")
		}
	}
}

// got formats a value beyond its bound: a whole number in full (1e12 as
// 1000000000000), any other in the shortest form that reads back.
func got(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e21 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return num(x)
}
