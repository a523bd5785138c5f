package results

import (
	"math"
	"sort"
	"time"

	"github.com/sixpin/sixpin/record"
)

// KV regimes a window is labelled with (ServerWindow.KVRegime): what, if
// anything, held the server back — its KV cache, or only its admission.
const (
	// RegimeFits: the KV cache was never the limit, and requests waited
	// little or not at all.
	RegimeFits = "fits"
	// RegimeQueued: requests waited for most of their TTFT (at least
	// QueuedPct of it, and in at least QueuedPct of the scrapes, where
	// the server says both) with the KV cache not under pressure:
	// admission (max_num_seqs, the prefill budget) held them back, not
	// memory. A shorter wait, for the next step of a continuous batch or
	// behind another request's prefill, is the normal cost of batching
	// and leaves the window fits.
	RegimeQueued = "queued"
	// RegimeSaturated: the KV cache was the limit: it reached
	// SaturatedKVPct, or requests waited while it was above HighKVPct in
	// at least QueuedPct of the scrapes.
	RegimeSaturated = "saturated"
	// RegimePreempting: the server preempted requests (its preemption
	// counter rose).
	RegimePreempting = "preempting"
)

// Thresholds of the KV regimes, in percent.
const (
	// SaturatedKVPct is the KV usage at which a window is saturated.
	SaturatedKVPct = 95
	// HighKVPct is the KV usage above which requests waiting count as
	// waiting for the KV cache.
	HighKVPct = 80
	// QueuedPct is the share of TTFT spent in the server's queue, and of
	// scrapes with requests waiting, that makes waiting sustained.
	QueuedPct = 50
)

// Server is the server's side of a run: its metrics scraped during the
// run, per second and per window.
type Server struct {
	// Source names what was scraped ("vllm /metrics").
	Source string `json:"source"`
	// EveryS is the scrape interval in seconds (run time).
	EveryS float64 `json:"every_s"`
	// Scrapes counts the scrapes that answered, Failures those that did
	// not (a failure is never fatal); LastError says why the last one
	// failed.
	Scrapes   int    `json:"scrapes"`
	Failures  int    `json:"failures"`
	LastError string `json:"last_error,omitempty"`
	// Series is one point per scrape.
	Series []ServerPoint `json:"series"`
	// Windows are the run's windows (warmup, burst, steady, all) as the
	// server saw them.
	Windows map[string]*ServerWindow `json:"windows"`
}

// ServerPoint is one scrape. Counters count from the first scrape;
// rates are over the interval since the previous scrape. A nil field is
// one the server does not expose.
type ServerPoint struct {
	// TS is seconds from the run start.
	TS         float64  `json:"t"`
	KVUsagePct *float64 `json:"kv_usage_pct,omitempty"`
	Running    *float64 `json:"running,omitempty"`
	Waiting    *float64 `json:"waiting,omitempty"`
	// Preemptions since the first scrape.
	Preemptions *float64 `json:"preemptions,omitempty"`
	// PrefixCacheHitPct is the prefix cache's hit rate over the interval
	// (tokens hit / tokens queried, or the engine's own rate gauge).
	PrefixCacheHitPct *float64 `json:"prefix_cache_hit_pct,omitempty"`
	// PromptTokens and GenerationTokens since the first scrape; the
	// _tok_s fields are their rates over the interval.
	PromptTokens     *float64 `json:"prompt_tokens,omitempty"`
	GenerationTokens *float64 `json:"generation_tokens,omitempty"`
	PromptTokS       *float64 `json:"prompt_tok_s,omitempty"`
	GenerationTokS   *float64 `json:"generation_tok_s,omitempty"`
}

// ServerWindow is one window as the server saw it: gauges over the
// scrapes inside it, counters and histograms as the difference between
// the last scrape at or before its start and the last at or before its
// end.
type ServerWindow struct {
	// Scrapes inside the window.
	Scrapes    int       `json:"scrapes"`
	KVUsagePct *MeanPeak `json:"kv_usage_pct,omitempty"`
	Running    *MeanPeak `json:"running,omitempty"`
	Waiting    *MeanPeak `json:"waiting,omitempty"`
	// Preemptions in the window.
	Preemptions       *float64 `json:"preemptions,omitempty"`
	PrefixCacheHitPct *float64 `json:"prefix_cache_hit_pct,omitempty"`
	// PromptTokS and GenerationTokS are the server's own token
	// throughput (all streams); ClientOutputTokS is the client's
	// aggregate output rate of the same window, beside it.
	PromptTokS       *float64 `json:"prompt_tok_s,omitempty"`
	GenerationTokS   *float64 `json:"generation_tok_s,omitempty"`
	ClientOutputTokS float64  `json:"client_output_tok_s"`
	// PromptGenerationRatio is the server's prompt:generation token
	// ratio; ClientInputOutputRatio the client's (usage) of the window.
	PromptGenerationRatio  *float64 `json:"prompt_generation_ratio,omitempty"`
	ClientInputOutputRatio float64  `json:"client_input_output_ratio,omitempty"`
	// TTFTMs, E2EMs, QueueMs and PrefillMs are the server's histograms'
	// deltas over the window, in ms.
	TTFTMs    *HistDelta `json:"ttft_ms,omitempty"`
	E2EMs     *HistDelta `json:"e2e_ms,omitempty"`
	QueueMs   *HistDelta `json:"queue_ms,omitempty"`
	PrefillMs *HistDelta `json:"prefill_ms,omitempty"`
	// WaitingScrapesShare is the share (0–1) of the window's scrapes in
	// which requests were waiting; QueuedTTFTShare the share of the
	// requests' TTFT spent in the server's queue, by its timing of each
	// request or its queue-time histogram (nil: unknown).
	WaitingScrapesShare *float64 `json:"waiting_scrapes_share,omitempty"`
	QueuedTTFTShare     *float64 `json:"queued_ttft_share,omitempty"`
	// KVRegime is RegimeFits, RegimeQueued, RegimeSaturated or
	// RegimePreempting ("": no scrape in the window exposed the gauges it
	// is judged by).
	KVRegime string `json:"kv_regime,omitempty"`
	// SpecDecode is the rise of the server's speculative-decoding
	// counters (vLLM's spec_decode series, else SGLang's) over the
	// scrapes that cover the window: from the last at or before its start
	// to the first at or after its end, as vLLM's own benchmark brackets
	// a run; for an SGLang with only its acceptance-length gauge, the
	// gauge's mean over the scrapes after the window's start up to that
	// first at or after its end (a reading is over the decode steps just
	// before it). nil when the server has none.
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
}

// MeanPeak is a gauge's mean and peak over a window's scrapes.
type MeanPeak struct {
	Mean float64 `json:"mean"`
	Peak float64 `json:"peak"`
}

// HistDelta is a server histogram over one window: how many requests it
// counted, their mean, and percentiles interpolated within buckets as
// Prometheus' histogram_quantile does (ms). A percentile is nil when the
// buckets cannot place it: it falls in the first bucket (anywhere from 0
// to its bound) or the last (+Inf).
type HistDelta struct {
	Count float64  `json:"count"`
	Mean  float64  `json:"mean"`
	P50   *float64 `json:"p50,omitempty"`
	P90   *float64 `json:"p90,omitempty"`
	P99   *float64 `json:"p99,omitempty"`
}

// BuildServer turns the scrapes of a run (in time order) into its server
// series and per-window figures, for the windows of run (whose client
// aggregate and ratio it sets beside the server's). nil when there is no
// scrape.
func BuildServer(source string, every time.Duration, samples []record.ServerSample, failures int, lastErr string, windows map[string]*Window) *Server {
	if len(samples) == 0 && failures == 0 {
		return nil
	}
	s := &Server{Source: source, EveryS: every.Seconds(), Scrapes: len(samples), Failures: failures, LastError: lastErr,
		Series: []ServerPoint{}, Windows: map[string]*ServerWindow{}}
	if len(samples) == 0 {
		return s
	}
	base := samples[0]
	for i, x := range samples {
		p := ServerPoint{TS: x.T.Seconds(), KVUsagePct: pctOf(x.KVUsage), Running: x.Running, Waiting: x.Waiting,
			Preemptions: since(x.Preemptions, base.Preemptions), PromptTokens: since(x.PromptTokens, base.PromptTokens),
			GenerationTokens: since(x.GenerationTokens, base.GenerationTokens)}
		if i > 0 {
			prev := samples[i-1]
			dt := (x.T - prev.T).Seconds()
			p.PromptTokS = rate(x.PromptTokens, prev.PromptTokens, dt)
			p.GenerationTokS = rate(x.GenerationTokens, prev.GenerationTokens, dt)
			p.PrefixCacheHitPct = hitPct(prev, x)
		} else if x.PrefixHitRate != nil {
			p.PrefixCacheHitPct = pctOf(x.PrefixHitRate)
		}
		s.Series = append(s.Series, p)
	}
	for name, w := range windows {
		s.Windows[name] = serverWindow(samples, w)
	}
	return s
}

// serverWindow is the window [w.StartS, w.EndS] of samples.
func serverWindow(samples []record.ServerSample, w *Window) *ServerWindow {
	start, end := secs(w.StartS), secs(w.EndS)
	sw := &ServerWindow{ClientOutputTokS: w.AggregateOutputTokS, ClientInputOutputRatio: w.InputOutputRatio}
	var kv, run, wait gauge
	var waited, waitedHighKV int
	for _, x := range samples {
		if x.T < start || x.T > end {
			continue
		}
		sw.Scrapes++
		if x.KVUsage != nil {
			kv.add(*x.KVUsage * 100)
		}
		if x.Running != nil {
			run.add(*x.Running)
		}
		if x.Waiting != nil {
			wait.add(*x.Waiting)
			if *x.Waiting > 0 {
				waited++
				if x.KVUsage != nil && *x.KVUsage*100 >= HighKVPct {
					waitedHighKV++
				}
			}
		}
	}
	sw.KVUsagePct, sw.Running, sw.Waiting = kv.result(), run.result(), wait.result()
	a, b := sampleAt(samples, start), sampleAt(samples, end)
	if a != nil && b != nil && b.T > a.T {
		dt := (b.T - a.T).Seconds()
		sw.Preemptions = since(b.Preemptions, a.Preemptions)
		sw.PromptTokS = rate(b.PromptTokens, a.PromptTokens, dt)
		sw.GenerationTokS = rate(b.GenerationTokens, a.GenerationTokens, dt)
		if sw.PromptTokS != nil && sw.GenerationTokS != nil && *sw.GenerationTokS > 0 {
			r := *sw.PromptTokS / *sw.GenerationTokS
			sw.PromptGenerationRatio = &r
		}
		sw.PrefixCacheHitPct = hitPct(*a, *b)
		sw.TTFTMs = histDelta(a.TTFT, b.TTFT)
		sw.E2EMs = histDelta(a.E2E, b.E2E)
		sw.QueueMs = histDelta(a.Queue, b.Queue)
		sw.PrefillMs = histDelta(a.Prefill, b.Prefill)
	}
	if a != nil {
		c := sampleAfter(samples, end)
		if c.T > a.T {
			sw.SpecDecode = serverSpec(samples, a, c)
		}
		if sw.SpecDecode == nil {
			sw.SpecDecode = sglangGaugeSpec(samples, start, c.T)
		}
	}
	if sw.PrefixCacheHitPct == nil {
		var g gauge
		for _, x := range samples {
			if x.T >= start && x.T <= end && x.PrefixHitRate != nil {
				g.add(*x.PrefixHitRate * 100)
			}
		}
		if r := g.result(); r != nil {
			sw.PrefixCacheHitPct = &r.Mean
		}
	}
	if wait.n > 0 {
		share := float64(waited) / float64(wait.n)
		sw.WaitingScrapesShare = &share
	}
	sw.QueuedTTFTShare = queuedTTFT(w, sw)
	sw.KVRegime = regime(sw, float64(waitedHighKV)/float64(max(wait.n, 1)))
	return sw
}

// queuedTTFT is the share of the window's TTFT its requests spent in the
// server's queue: by the server's timing of each request (w), else its
// queue-time and TTFT histograms; nil when the server says neither.
func queuedTTFT(w *Window, sw *ServerWindow) *float64 {
	var share float64
	switch {
	case w.ServerQueueMs != nil && w.ServerQueueMs.Count > 0 && w.TTFTMs != nil && w.TTFTMs.Mean > 0:
		share = w.ServerQueueMs.Mean / w.TTFTMs.Mean
	case sw.QueueMs != nil && sw.TTFTMs != nil && sw.TTFTMs.Mean > 0:
		share = sw.QueueMs.Mean / sw.TTFTMs.Mean
	default:
		return nil
	}
	share = min(share, 1)
	return &share
}

// regime labels a window by what held the server back (the Regime*
// constants); waitedHighKV is the share of its scrapes with requests
// waiting while the KV cache was above HighKVPct.
func regime(sw *ServerWindow, waitedHighKV float64) string {
	sustained := func(share *float64) bool { return share == nil || *share*100 >= QueuedPct }
	switch {
	case sw.Preemptions != nil && *sw.Preemptions > 0:
		return RegimePreempting
	case sw.KVUsagePct != nil && sw.KVUsagePct.Peak >= SaturatedKVPct, waitedHighKV*100 >= QueuedPct:
		return RegimeSaturated
	case (sw.QueuedTTFTShare != nil || sw.WaitingScrapesShare != nil) && sustained(sw.QueuedTTFTShare) && sustained(sw.WaitingScrapesShare):
		return RegimeQueued
	case sw.Waiting != nil || sw.KVUsagePct != nil:
		return RegimeFits
	}
	return ""
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// sampleAt is the last sample at or before t, else the first one.
func sampleAt(samples []record.ServerSample, t time.Duration) *record.ServerSample {
	i := sort.Search(len(samples), func(i int) bool { return samples[i].T > t })
	if i == 0 {
		return &samples[0]
	}
	return &samples[i-1]
}

// sampleAfter is the first sample at or after t, else the last one.
func sampleAfter(samples []record.ServerSample, t time.Duration) *record.ServerSample {
	i := sort.Search(len(samples), func(i int) bool { return samples[i].T >= t })
	return &samples[min(i, len(samples)-1)]
}

// gauge accumulates a gauge's mean and peak.
type gauge struct {
	n         int
	sum, peak float64
}

func (g *gauge) add(v float64) {
	if g.n == 0 || v > g.peak {
		g.peak = v
	}
	g.n++
	g.sum += v
}

func (g *gauge) result() *MeanPeak {
	if g.n == 0 {
		return nil
	}
	return &MeanPeak{Mean: g.sum / float64(g.n), Peak: g.peak}
}

func pctOf(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := *v * 100
	return &p
}

// since is the counter's rise from base to v; a counter that fell (the
// server restarted) counts from zero, and so does one absent at base (a
// Prometheus client creates a labelled series at its first event).
func since(v, base *float64) *float64 {
	if v == nil {
		return nil
	}
	if base == nil {
		d := *v
		return &d
	}
	d := *v - *base
	if d < 0 {
		d = *v
	}
	return &d
}

func rate(v, prev *float64, dt float64) *float64 {
	d := since(v, prev)
	if d == nil || dt <= 0 {
		return nil
	}
	r := *d / dt
	return &r
}

// hitPct is the prefix cache's hit rate between two scrapes, in percent:
// tokens hit over tokens queried, or (llama.cpp, which counts cached and
// computed prompt tokens apart) hits over hits plus computed prompt
// tokens; else the engine's own rate gauge at b.
func hitPct(a, b record.ServerSample) *float64 {
	hits := since(b.PrefixHits, a.PrefixHits)
	if q := since(b.PrefixQueries, a.PrefixQueries); hits != nil && q != nil {
		if *q <= 0 {
			return nil
		}
		p := 100 * *hits / *q
		return &p
	}
	if p := since(b.PromptTokens, a.PromptTokens); hits != nil && p != nil && b.PrefixQueries == nil {
		if *hits+*p <= 0 {
			return nil
		}
		r := 100 * *hits / (*hits + *p)
		return &r
	}
	return pctOf(b.PrefixHitRate)
}

// histDelta is histogram b less a (same buckets), in ms; nil when b is
// missing, the buckets differ, or nothing was counted between them. A
// histogram absent at a counts from zero: vLLM's histograms, like every
// Prometheus client's labelled series, first appear with their first
// observation, which may be mid-run.
func histDelta(a, b *record.ServerHist) *HistDelta {
	if b == nil {
		return nil
	}
	if a == nil {
		a = &record.ServerHist{Bounds: b.Bounds, Counts: make([]float64, len(b.Counts))}
	}
	if len(a.Bounds) != len(b.Bounds) {
		return nil
	}
	n := b.Count - a.Count
	if n <= 0 {
		return nil
	}
	counts := make([]float64, len(b.Counts))
	for i := range counts {
		if a.Bounds[i] != b.Bounds[i] {
			return nil
		}
		counts[i] = b.Counts[i] - a.Counts[i]
	}
	q := func(p float64) *float64 {
		v, ok := histQuantile(p, b.Bounds, counts)
		if !ok {
			return nil
		}
		v *= 1000
		return &v
	}
	return &HistDelta{Count: n, Mean: 1000 * (b.Sum - a.Sum) / n, P50: q(0.5), P90: q(0.9), P99: q(0.99)}
}

// histQuantile is Prometheus' histogram_quantile (q 0–1) over cumulative
// counts at bounds: linear within the bucket the rank falls in. ok is
// false when that bucket is the first (its lower edge is unknown) or
// +Inf.
func histQuantile(q float64, bounds, cum []float64) (v float64, ok bool) {
	if len(cum) == 0 || cum[len(cum)-1] <= 0 {
		return 0, false
	}
	rank := q * cum[len(cum)-1]
	i := sort.Search(len(cum), func(i int) bool { return cum[i] >= rank })
	if i == 0 || i >= len(bounds) || math.IsInf(bounds[i], 1) {
		return 0, false
	}
	lo, below := bounds[i-1], cum[i-1]
	in := cum[i] - below
	if in <= 0 {
		return bounds[i], true
	}
	return lo + (bounds[i]-lo)*(rank-below)/in, true
}
