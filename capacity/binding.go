package capacity

import (
	"maps"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// Causes of a binding constraint: what, from the evidence, made a tier
// fail at N*+1.
const (
	// CauseQueue: requests waited in the server's queue (its waiting
	// gauge, its own queue time, or a queued KV regime) with the KV cache
	// not full: admission (max_num_seqs, slots) held them back.
	CauseQueue = "queue"
	// CauseKV: the KV cache saturated (the saturated KV regime).
	CauseKV = "kv_cache"
	// CausePreemption: the server preempted requests.
	CausePreemption = "preemption"
	// CausePrefill: prompt processing took most of the TTFT.
	CausePrefill = "prefill"
	// CauseDecode: decode slowed as the batch grew (TPOT, ITL, decode
	// tok/s) with the KV cache not full.
	CauseDecode = "decode"
	// CauseRateLimit: the endpoint refused requests with 429.
	CauseRateLimit = "rate_limit"
	// CauseErrors: requests failed otherwise.
	CauseErrors = "errors"
	// CauseClient: sixpin itself saturated (its floor flagged, an open
	// loop behind schedule): the point measured the client.
	CauseClient = "client"
	// CauseInvalid: a pin was broken, so the point could not count.
	CauseInvalid = "invalid"
	// CauseUndecided: the point gave the tier too little to judge (too
	// few values in its time): not a pass, and nothing binds yet.
	CauseUndecided = "undecided"
	// CauseRest: TTFT outside the server's queue and prefill (network,
	// tokenisation, the client), or a server that says nothing of itself.
	CauseRest = "rest"
)

// Binding is what broke a tier at N*+1, from the evidence of the run
// that failed there.
type Binding struct {
	// At is the value it failed at (N*+1), Seed the failing run's.
	At   float64 `json:"at"`
	Seed int64   `json:"seed"`
	// Condition is the one that failed first (nil when the point was
	// invalid before any failed); Value its statistic at At (HasValue),
	// AtS when it was decided (s of run time), Decided whether at 95%.
	Condition *verdict.Condition `json:"condition,omitempty"`
	Value     float64            `json:"value,omitempty"`
	HasValue  bool               `json:"has_value"`
	AtS       float64            `json:"at_s,omitempty"`
	Decided   bool               `json:"decided"`
	Cause     string             `json:"cause"`
	Evidence  Evidence           `json:"evidence"`
}

// Evidence is what the failing run says about why: the TTFT split, the
// server's KV regime, rate limits and errors, and the point's validity.
// A nil pointer is a figure the run did not measure.
type Evidence struct {
	// TTFTMeanMs is the steady window's mean TTFT; QueueMeanMs,
	// PrefillMeanMs and RestMeanMs its parts by the server's timing of
	// each request (ms).
	TTFTMeanMs    *float64 `json:"ttft_mean_ms,omitempty"`
	QueueMeanMs   *float64 `json:"queue_mean_ms,omitempty"`
	PrefillMeanMs *float64 `json:"prefill_mean_ms,omitempty"`
	RestMeanMs    *float64 `json:"rest_mean_ms,omitempty"`
	// KVRegime and the gauges are the server's own, over the steady
	// window: KV usage peak (%), requests waiting and running (peaks),
	// preemptions.
	KVRegime    string   `json:"kv_regime,omitempty"`
	KVPeakPct   *float64 `json:"kv_peak_pct,omitempty"`
	WaitingPeak *float64 `json:"waiting_peak,omitempty"`
	RunningPeak *float64 `json:"running_peak,omitempty"`
	Preemptions *float64 `json:"preemptions,omitempty"`
	// Requests, Rejected429 and Failed count the steady window's requests
	// (interrupts excluded); Bucket is the rate limit the 429s belong to
	// most; ErrorClass the commonest other failure.
	Requests    int    `json:"requests"`
	Rejected429 int    `json:"rejected_429,omitempty"`
	Bucket      string `json:"bucket,omitempty"`
	Failed      int    `json:"failed,omitempty"`
	ErrorClass  string `json:"error_class,omitempty"`
	// Invalid is why the point could not count (nil: valid).
	Invalid []string `json:"invalid,omitempty"`
	// Scale is the run's compressed time (--time-scale; 0: real time),
	// whose unscaled client time the cause discounts.
	Scale float64 `json:"scale,omitempty"`
}

// Bind reads what broke tier at point p (a failed or invalid run).
func Bind(tier string, p *Point) *Binding {
	b := &Binding{At: p.Value, Seed: p.Seed, Evidence: evidence(p)}
	v := p.Verdict(tier)
	if v != nil && v.Outcome != verdict.Passed && v.First >= 0 {
		cv := v.Conditions[v.First]
		c := cv.Condition
		b.Condition, b.Value, b.HasValue, b.AtS, b.Decided = &c, cv.Value, cv.HasValue, cv.AtS, cv.Decided
	}
	b.Cause = cause(b, p)
	if v != nil && v.Outcome == verdict.Undecided && b.Cause != CauseClient && p.Valid {
		b.Cause = CauseUndecided
	}
	return b
}

// cause names the binding constraint from the evidence.
func cause(b *Binding, p *Point) string {
	e := &b.Evidence
	limited := e.Rejected429 > 0 && 2*e.Rejected429 >= e.Failed
	if !p.Valid {
		for _, why := range p.Invalid {
			if strings.HasPrefix(why, "sixpin saturated") {
				return CauseClient
			}
		}
		if b.Condition == nil {
			switch {
			case limited:
				return CauseRateLimit
			case e.Failed > 0:
				return CauseErrors
			}
			return CauseInvalid
		}
	}
	if b.Condition == nil {
		return CauseInvalid
	}
	switch b.Condition.Metric {
	case "error_rate":
		if limited {
			return CauseRateLimit
		}
		return CauseErrors
	case "http_429_rate":
		return CauseRateLimit
	}
	switch e.KVRegime {
	case results.RegimePreempting:
		return CausePreemption
	case results.RegimeSaturated:
		return CauseKV
	}
	switch b.Condition.Metric {
	case "tpot_ms", "itl_ms", "decode_tok_s":
		return CauseDecode
	case "lifetime_min":
		if limited {
			return CauseRateLimit
		}
		return CauseDecode
	}
	queue, prefill := e.TTFTShare(e.QueueMeanMs), e.TTFTShare(e.PrefillMeanMs)
	switch {
	case e.KVRegime == results.RegimeQueued, queue >= 0.5:
		return CauseQueue
	case queue < 0 && e.WaitingPeak != nil && *e.WaitingPeak >= 1:
		// A server that does not time its queue but says requests waited.
		return CauseQueue
	case prefill >= 0.5:
		return CausePrefill
	case b.Condition.Metric == "e2e_ms" || b.Condition.Metric == "effective_tok_s":
		if queue+prefill < 0.5 && (queue >= 0 || prefill >= 0) {
			return CauseDecode
		}
	}
	return CauseRest
}

// evidence gathers what p's run says about why it failed.
func evidence(p *Point) Evidence {
	e := Evidence{Invalid: p.Invalid}
	run := p.Run
	if run == nil {
		return e
	}
	if run.Compressed != nil {
		e.Scale = run.Compressed.Scale
	}
	if w := run.Windows[results.WindowSteady]; w != nil {
		mean := func(d *results.Dist) *float64 {
			if d == nil {
				return nil
			}
			v := d.Mean
			return &v
		}
		e.TTFTMeanMs = mean(w.TTFTMs)
		e.QueueMeanMs, e.PrefillMeanMs, e.RestMeanMs = mean(w.ServerQueueMs), mean(w.ServerPrefillMs), mean(w.TTFTRestMs)
		cut := w.ErrorsByClass[string(record.ErrInterrupted)]
		e.Requests, e.Failed = w.Requests-cut, w.Failed-cut
		e.Rejected429 = w.ErrorsByClass[string(record.ErrHTTP429)]
		best := 0
		for _, cl := range slices.Sorted(maps.Keys(w.ErrorsByClass)) {
			if n := w.ErrorsByClass[cl]; cl != string(record.ErrInterrupted) && cl != string(record.ErrHTTP429) && n > best {
				e.ErrorClass, best = cl, n
			}
		}
	}
	if rl := run.RateLimits; rl != nil {
		most := 0
		for _, b := range rl.Buckets {
			if b.Rejections > most {
				e.Bucket, most = b.Bucket, b.Rejections
			}
		}
	}
	if s := run.Server; s != nil {
		if sw := s.Windows[results.WindowSteady]; sw != nil {
			e.KVRegime, e.Preemptions = sw.KVRegime, sw.Preemptions
			peak := func(g *results.MeanPeak) *float64 {
				if g == nil {
					return nil
				}
				v := g.Peak
				return &v
			}
			e.KVPeakPct, e.WaitingPeak, e.RunningPeak = peak(sw.KVUsagePct), peak(sw.Waiting), peak(sw.Running)
		}
	}
	return e
}

// Normalised is N* per unit of the deployment, where the profile
// declares it, and what an agent costs an hour.
type Normalised struct {
	// PerGPU is N* / GPUs; PerKW N* per kilowatt of declared power;
	// PerUSDHour N* per dollar-hour of the deployment's hourly price
	// (or, without one, of the cost per hour the run measured at N*).
	PerGPU     float64 `json:"per_gpu,omitempty"`
	PerKW      float64 `json:"per_kw,omitempty"`
	PerUSDHour float64 `json:"per_usd_hour,omitempty"`
	// CostPerAgentHourUSD is that hourly cost over N*; CostBasis says
	// whose: "deployment" (the profile's usd_per_hour), "energy" or
	// "tokens" (the run's cost at N*).
	CostPerAgentHourUSD float64 `json:"cost_per_agent_hour_usd,omitempty"`
	CostBasis           string  `json:"cost_basis,omitempty"`
}

// Normalise is n (N*, in its axis's unit) per unit of d, with the cost
// of an agent-hour from the deployment's price, else from run's cost at
// N* (nil run: none); nil when nothing is declared or measured.
func Normalise(n float64, d Deployment, run *results.Run) *Normalised {
	if n <= 0 {
		return nil
	}
	var out Normalised
	if d.GPUs > 0 {
		out.PerGPU = n / float64(d.GPUs)
	}
	if d.PowerWatts > 0 {
		out.PerKW = n / (d.PowerWatts / 1000)
	}
	perHour := d.USDPerHour
	out.CostBasis = "deployment"
	if perHour <= 0 && run != nil && run.Cost != nil && run.Cost.PerHourUSD > 0 {
		perHour, out.CostBasis = run.Cost.PerHourUSD, run.Cost.Basis
	}
	if perHour > 0 {
		out.PerUSDHour = n / perHour
		out.CostPerAgentHourUSD = perHour / n
	} else {
		out.CostBasis = ""
	}
	if out == (Normalised{}) {
		return nil
	}
	return &out
}

// TTFTShare is part's share of the mean TTFT (a server's queue or
// prefill, ms), as real time would have it: in compressed time the
// client's time outside the server's model weighs 1/Scale what it would
// in real time (results.Compressed), so that much is taken off the
// whole. -1 when either is unknown.
func (e Evidence) TTFTShare(part *float64) float64 {
	if part == nil || e.TTFTMeanMs == nil {
		return -1
	}
	whole := *e.TTFTMeanMs
	if e.Scale > 0 && e.Scale < 1 && e.RestMeanMs != nil {
		whole -= *e.RestMeanMs * (1 - e.Scale)
	}
	if whole <= 0 {
		return -1
	}
	return *part / whole
}
