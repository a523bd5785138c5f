package results

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Window names, in report order.
const (
	WindowWarmup = "warmup"
	WindowBurst  = "burst"
	WindowSteady = "steady"
	WindowAll    = "all"
)

// WindowNames lists the windows in report order.
var WindowNames = []string{WindowWarmup, WindowBurst, WindowSteady, WindowAll}

// WindowSpec is the declared cut of the timeline (DESIGN §3); all offsets
// are from the start of load.
type WindowSpec struct {
	Warmup time.Duration
	Burst  time.Duration
	// SteadyAuto trims the steady window's start by MSER-5.
	SteadyAuto bool
	// SteadyStart and SteadyEnd are explicit bounds when not auto; a zero
	// SteadyEnd means the last scheduled arrival.
	SteadyStart time.Duration
	SteadyEnd   time.Duration
	// WarmSessions, under a stationary start (scenario workload.start),
	// is how many sessions joined mid-life (the run's streams): the steady
	// window starts no earlier than each has had a turn answered
	// (Warmth). 0: none did.
	WarmSessions int `json:",omitempty"`
}

// DefaultBurst is the burst window's length when the spec gives none.
const DefaultBurst = 10 * time.Second

// BurstLen is the burst window's length: the first BurstLen of load.
func (spec WindowSpec) BurstLen() time.Duration {
	if spec.Burst <= 0 {
		return DefaultBurst
	}
	return spec.Burst
}

// Span is a half-open interval [Start, End) of run time.
type Span struct {
	Start, End time.Duration
}

// Len returns the span's length.
func (s Span) Len() time.Duration { return s.End - s.Start }

// Contains reports whether t lies in [Start, End).
func (s Span) Contains(t time.Duration) bool { return t >= s.Start && t < s.End }

// cut is the outcome of cutting a timeline into windows.
type cut struct {
	spans map[string]Span
	// msersTrim is how much MSER-5 trimmed off the steady start (auto).
	mserTrim time.Duration
	// note explains a degenerate window (empty steady, too short to trim).
	notes map[string]string
}

// cutWindows computes the windows from the spec, the per-second aggregate
// output token series, the last scheduled arrival, the end of the last
// response and when the sessions that joined mid-life had all been
// answered (warm; 0: none joined) — or, with starved of them still
// waiting, when Warmth deemed those starved. It is pure arithmetic on
// given times.
func cutWindows(spec WindowSpec, tokensPerSecond []float64, lastScheduled, lastEnd, warm time.Duration, starved int) cut {
	c := cut{spans: map[string]Span{}, notes: map[string]string{}}
	end := lastEnd
	if end <= 0 {
		end = lastScheduled
	}
	clamp := func(t time.Duration) time.Duration { return min(max(t, 0), end) }
	c.spans[WindowAll] = Span{0, end}
	c.spans[WindowWarmup] = Span{0, clamp(spec.Warmup)}
	c.spans[WindowBurst] = Span{0, clamp(spec.BurstLen())}

	steadyEnd := lastScheduled
	if spec.SteadyEnd > 0 {
		steadyEnd = min(spec.SteadyEnd, end)
	}
	steadyStart := max(spec.Warmup, spec.SteadyStart)
	if warm > steadyStart {
		steadyStart = warm
		at := strconv.FormatFloat(warm.Seconds(), 'f', 1, 64)
		c.notes[WindowSteady] = fmt.Sprintf("steady: starts at %s s, once the %d sessions that joined mid-life (start: stationary) had each had its cold turn answered", at, spec.WarmSessions)
		if starved > 0 {
			c.notes[WindowSteady] = fmt.Sprintf("steady: starts at %s s, once half of the %d sessions that joined mid-life (start: stationary) had had %d more turns answered while %d still waited for their cold turn: the server starves those, and that is its steady state", at, spec.WarmSessions, StarvedAfter, starved)
		}
	}
	if spec.SteadyAuto {
		from := int(steadyStart / time.Second)
		to := int(steadyEnd / time.Second)
		if to > len(tokensPerSecond) {
			to = len(tokensPerSecond)
		}
		if from < to {
			trim, ok := mser5(tokensPerSecond[from:to])
			if ok {
				c.mserTrim = time.Duration(trim) * time.Second
				steadyStart += c.mserTrim
			} else {
				c.notes[WindowSteady] = "steady: auto found too few seconds to trim (needs 20); the window starts at the warmup end"
			}
		}
	}
	if steadyStart >= steadyEnd {
		c.notes[WindowSteady] = "steady window is empty: the run ended before the warmup (or the trimmed start) did"
		steadyStart = steadyEnd
	}
	c.spans[WindowSteady] = Span{clamp(steadyStart), clamp(steadyEnd)}
	return c
}

// mserBatch is MSER-5's batch size in samples (seconds here).
const mserBatch = 5

// mser5 returns how many leading samples of x to discard as initial
// transient by MSER-5 (White 1997; Franklin & White 2008): batch x into
// means of 5, and choose the truncation d (in batches, d ≤ n/2) that
// minimises the standard error of the remaining batches,
// Σ(y_j − ȳ_d)² / (n − d)². ok is false when there are fewer than 4
// batches to judge from.
func mser5(x []float64) (trim int, ok bool) {
	n := len(x) / mserBatch
	if n < 4 {
		return 0, false
	}
	y := make([]float64, n)
	for j := range y {
		var s float64
		for _, v := range x[j*mserBatch : (j+1)*mserBatch] {
			s += v
		}
		y[j] = s / mserBatch
	}
	best, bestD := math.Inf(1), 0
	for d := 0; d <= n/2; d++ {
		rest := y[d:]
		var mean float64
		for _, v := range rest {
			mean += v
		}
		mean /= float64(len(rest))
		var ss float64
		for _, v := range rest {
			ss += (v - mean) * (v - mean)
		}
		m := float64(len(rest))
		if stat := ss / (m * m); stat < best {
			best, bestD = stat, d
		}
	}
	return bestD * mserBatch, true
}
