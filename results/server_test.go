package results

import (
	"math"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

func fp(v float64) *float64 { return &v }

// TestBuildServer: counters become rates and per-window deltas, gauges
// mean and peak, histograms per-window percentiles, and each window its
// KV regime.
func TestBuildServer(t *testing.T) {
	t.Parallel()
	hist := func(c1, c2, c3 float64, sum float64) *record.ServerHist {
		return &record.ServerHist{Bounds: []float64{0.1, 1, math.Inf(1)}, Counts: []float64{c1, c2, c3}, Count: c3, Sum: sum}
	}
	// Seconds 0..4; load saturates from t=3 (waiting), preempts at t=4.
	samples := []record.ServerSample{
		{T: 0, KVUsage: fp(0.1), Running: fp(0), Waiting: fp(0), Preemptions: fp(5), PromptTokens: fp(1000), GenerationTokens: fp(100),
			PrefixQueries: fp(0), PrefixHits: fp(0), TTFT: hist(0, 0, 0, 0)},
		{T: 1 * time.Second, KVUsage: fp(0.5), Running: fp(4), Waiting: fp(0), Preemptions: fp(5), PromptTokens: fp(3000), GenerationTokens: fp(300),
			PrefixQueries: fp(2000), PrefixHits: fp(500), TTFT: hist(4, 4, 4, 0.2)},
		{T: 2 * time.Second, KVUsage: fp(0.6), Running: fp(4), Waiting: fp(0), Preemptions: fp(5), PromptTokens: fp(5000), GenerationTokens: fp(500),
			PrefixQueries: fp(4000), PrefixHits: fp(1000), TTFT: hist(8, 8, 8, 0.4)},
		{T: 3 * time.Second, KVUsage: fp(0.97), Running: fp(8), Waiting: fp(2), Preemptions: fp(5), PromptTokens: fp(7000), GenerationTokens: fp(700),
			PrefixQueries: fp(6000), PrefixHits: fp(1000), TTFT: hist(8, 12, 12, 2.4)},
		{T: 4 * time.Second, KVUsage: fp(1), Running: fp(8), Waiting: fp(3), Preemptions: fp(7), PromptTokens: fp(9000), GenerationTokens: fp(900),
			PrefixQueries: fp(8000), PrefixHits: fp(1000), TTFT: hist(8, 16, 16, 4.4)},
	}
	windows := map[string]*Window{
		WindowBurst:  {StartS: 0, EndS: 2, AggregateOutputTokS: 190, InputOutputRatio: 9.5},
		WindowSteady: {StartS: 2, EndS: 4, AggregateOutputTokS: 195},
	}
	s := BuildServer("vllm GET /metrics", time.Second, samples, 1, "HTTP 500", windows)
	if s.Scrapes != 5 || s.Failures != 1 || len(s.Series) != 5 || s.EveryS != 1 {
		t.Fatalf("scrapes %d failures %d series %d every %v", s.Scrapes, s.Failures, len(s.Series), s.EveryS)
	}
	p := s.Series[1]
	if *p.KVUsagePct != 50 || *p.PromptTokens != 2000 || *p.PromptTokS != 2000 || *p.GenerationTokS != 200 || *p.PrefixCacheHitPct != 25 || *p.Preemptions != 0 {
		t.Errorf("point 1: %+v", p)
	}
	if s.Series[0].PromptTokS != nil {
		t.Error("the first point has a rate")
	}

	b := s.Windows[WindowBurst]
	if b.Scrapes != 3 || b.KVUsagePct.Peak != 60 || math.Abs(b.KVUsagePct.Mean-40) > 1e-9 || *b.PromptTokS != 2000 || *b.GenerationTokS != 200 {
		t.Errorf("burst: %+v kv %+v", b, b.KVUsagePct)
	}
	if *b.PromptGenerationRatio != 10 || b.ClientOutputTokS != 190 || b.ClientInputOutputRatio != 9.5 || *b.PrefixCacheHitPct != 25 {
		t.Errorf("burst ratio %v client %v/%v hit %v", *b.PromptGenerationRatio, b.ClientOutputTokS, b.ClientInputOutputRatio, *b.PrefixCacheHitPct)
	}
	if b.KVRegime != RegimeFits || *b.Preemptions != 0 {
		t.Errorf("burst regime %q preemptions %v", b.KVRegime, *b.Preemptions)
	}
	// 8 TTFTs, all under 100 ms (the first bucket): the mean is 50 ms,
	// the percentiles cannot be placed.
	if h := b.TTFTMs; h == nil || h.Count != 8 || math.Abs(h.Mean-50) > 1e-9 || h.P50 != nil {
		t.Errorf("burst TTFT %+v", h)
	}
	st := s.Windows[WindowSteady]
	if st.KVRegime != RegimePreempting || *st.Preemptions != 2 || st.Waiting.Peak != 3 || st.KVUsagePct.Peak != 100 {
		t.Errorf("steady: regime %q preemptions %v waiting %+v kv %+v", st.KVRegime, *st.Preemptions, st.Waiting, st.KVUsagePct)
	}
	// 8 TTFTs in (0.1, 1] s: p50 = 0.1 + 0.9 × 4/8 s.
	if h := st.TTFTMs; h == nil || h.Count != 8 || math.Abs(val(h.P50)-550) > 1e-6 || math.Abs(h.Mean-500) > 1e-6 {
		t.Errorf("steady TTFT %+v", h)
	}

	// Saturated without preemption; a counter reset counts from zero.
	samples[4].Preemptions = fp(5)
	samples[4].GenerationTokens = fp(50)
	st = BuildServer("x", time.Second, samples, 0, "", windows).Windows[WindowSteady]
	if st.KVRegime != RegimeSaturated || *st.GenerationTokS != 25 {
		t.Errorf("regime %q generation %v tok/s", st.KVRegime, *st.GenerationTokS)
	}
	if BuildServer("x", time.Second, nil, 0, "", windows) != nil {
		t.Error("no scrape at all gave a server section")
	}
}

// TestHistQuantile is Prometheus' histogram_quantile, but for ranks the
// buckets cannot place.
func TestHistQuantile(t *testing.T) {
	t.Parallel()
	bounds := []float64{1, 2, 4, math.Inf(1)}
	cum := []float64{10, 20, 20, 30}
	nan := math.NaN()
	for _, c := range []struct{ q, want float64 }{{0.1, nan}, {0.5, 1.5}, {0.6, 1.8}, {0.9, nan}, {0.34, 1.02}} {
		got, ok := histQuantile(c.q, bounds, cum)
		if math.IsNaN(c.want) != !ok || ok && math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q %v: %v %v, want %v", c.q, got, ok, c.want)
		}
	}
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestFitKV is the preflight's arithmetic: the example, a shared
// prefix held once, llama.cpp's slots, no budget.
func TestFitKV(t *testing.T) {
	t.Parallel()
	on, off := true, false
	cases := []struct {
		name           string
		streams        int
		per            float64
		prefix, groups int
		kv             record.KVFacts
		need           float64
		budget, fit    int
		fits           bool
	}{
		{"issue's example", 64, 101_000, 0, 0, record.KVFacts{BudgetTokens: 524_288}, 6_464_000, 524_288, 5, false},
		{"fits", 8, 1200, 0, 0, record.KVFacts{BudgetTokens: 524_288, MaxNumSeqs: 16}, 9600, 524_288, 16, true},
		{"max_num_seqs caps", 32, 1200, 0, 0, record.KVFacts{BudgetTokens: 524_288, MaxNumSeqs: 16}, 38_400, 524_288, 16, false},
		{"shared prefix once", 4, 1000, 10_000, 1, record.KVFacts{BudgetTokens: 14_000, PrefixCaching: &on}, 14_000, 14_000, 4, true},
		{"no prefix cache", 4, 1000, 10_000, 1, record.KVFacts{BudgetTokens: 14_000, PrefixCaching: &off}, 44_000, 14_000, 1, false},
		// llama.cpp says a slot's context and its slots, not whether they
		// share one cache: the smaller reading decides.
		{"llama.cpp slots", 4, 3000, 0, 0, record.KVFacts{MaxModelLen: 2048, MaxNumSeqs: 2}, 12_000, 2048, 0, false},
		{"llama-server --kv-unified", 8, 10_000, 0, 0, record.KVFacts{MaxModelLen: 32_768, MaxNumSeqs: 4}, 80_000, 32_768, 3, false},
		{"one slot", 1, 1000, 0, 0, record.KVFacts{MaxModelLen: 4096, MaxNumSeqs: 1}, 1000, 4096, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := FitKV(c.streams, c.per, c.prefix, c.groups, c.kv, nil)
			if f == nil || f.NeedTokens != c.need || f.BudgetTokens != c.budget || f.MaxFit != c.fit || f.Fits != c.fits {
				t.Errorf("%+v", f)
			}
		})
	}
	if FitKV(8, 1000, 0, 0, record.KVFacts{MaxModelLen: 4096}, nil) != nil {
		t.Error("a fit without a budget")
	}
	// The larger reading is beside the smaller, never taken as fact.
	f := FitKV(8, 10_000, 0, 0, record.KVFacts{MaxModelLen: 32_768, MaxNumSeqs: 4}, nil)
	if !f.Uncertain || f.AltBudgetTokens != 131_072 || f.AltMaxFit != 4 {
		t.Errorf("unified or not: %+v", f)
	}
	if f := FitKV(1, 1000, 0, 0, record.KVFacts{MaxModelLen: 4096, MaxNumSeqs: 1}, nil); f.Uncertain {
		t.Errorf("one slot is one cache either way: %+v", f)
	}
}

// TestTTFTSplit: the server's timings go through the spill and split
// each window's TTFT into the server's queue, its prefill and the rest;
// a server that does not say its queue leaves it in the rest.
func TestTTFTSplit(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	a := stream(0, 0, 500*ms, 20*ms, 10, 1)
	a.Server = record.ServerTimings{Has: true, QueueKnown: true, Queue: 100 * ms, Prefill: 350 * ms, Decode: 180 * ms, PromptTokens: 100, PredictedTokens: 10}
	b := stream(1, 0, 500*ms, 20*ms, 10, 1)
	b.Server = record.ServerTimings{Has: true, Prefill: 300 * ms} // llama.cpp: no queue
	c := stream(2, 0, 500*ms, 20*ms, 10, 1)                       // no timings at all
	m := finish(t, WindowSpec{}, SLO{}, a, b, c)
	w := m.Windows[WindowAll]
	if w.ServerQueueMs == nil || w.ServerQueueMs.Count != 1 || w.ServerPrefillMs.Count != 2 || w.TTFTRestMs.Count != 2 {
		t.Fatalf("queue %+v prefill %+v rest %+v", w.ServerQueueMs, w.ServerPrefillMs, w.TTFTRestMs)
	}
	near(t, "queue", w.ServerQueueMs.P50, 100, 0.5)
	near(t, "rest min (500 − 100 − 350)", w.TTFTRestMs.Min, 50, 0.5)
	near(t, "rest max (500 − 300)", w.TTFTRestMs.Max, 200, 0.5)
	if m.Histograms[WindowAll][HistTTFTRest.Name].Unit == "" {
		t.Error("no ttft_rest_ms histogram")
	}
}

// TestKVRegimes: a window is saturated only when the KV cache was the
// limit; a queue without KV pressure is queued, with its share of
// scrapes and of TTFT; a passing wait is still fits.
func TestKVRegimes(t *testing.T) {
	t.Parallel()
	scrape := func(sec int, kv, running, waiting float64) record.ServerSample {
		return record.ServerSample{T: time.Duration(sec) * time.Second, KVUsage: fp(kv), Running: fp(running), Waiting: fp(waiting), Preemptions: fp(0)}
	}
	ttft := &Dist{Count: 10, Mean: 1000}
	cases := []struct {
		name    string
		kv      []float64 // per scrape, 0–1
		waiting []float64
		w       *Window
		want    string
	}{
		// The default first run's shape: KV at 10%, one scrape of ten
		// with a request waiting for the prefill budget.
		{"a passing wait", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, []float64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}, &Window{}, RegimeFits},
		{"a passing wait, timed", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, []float64{0, 0, 0, 1, 0, 0, 0, 0, 0, 0},
			&Window{TTFTMs: ttft, ServerQueueMs: &Dist{Count: 10, Mean: 20}}, RegimeFits},
		{"admission holds them back", []float64{.6, .6, .6, .6, .6, .6, .6, .6, .6, .6}, []float64{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, &Window{}, RegimeQueued},
		// smoke.yaml's shape: a request arriving during another's prefill
		// step waits for it to end.
		{"a wait behind a prefill", []float64{.1, .1, .1, .1, .1, .1, .1}, []float64{0, 3, 0, 0, 1, 0, 0},
			&Window{TTFTMs: ttft, ServerQueueMs: &Dist{Count: 10, Mean: 220}}, RegimeFits},
		{"queued, by the server's timing", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, []float64{0, 2, 2, 2, 2, 2, 2, 0, 0, 0},
			&Window{TTFTMs: ttft, ServerQueueMs: &Dist{Count: 10, Mean: 600}}, RegimeQueued},
		{"most scrapes waiting, but a short part of TTFT", []float64{.1, .1, .1, .1, .1, .1, .1, .1, .1, .1}, []float64{0, 2, 2, 2, 2, 2, 2, 0, 0, 0},
			&Window{TTFTMs: ttft, ServerQueueMs: &Dist{Count: 10, Mean: 200}}, RegimeFits},
		{"KV full", []float64{.5, .7, .96, .9, .9, .9, .9, .9, .9, .9}, []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, &Window{}, RegimeSaturated},
		{"waiting while KV is high", []float64{.85, .85, .85, .85, .85, .85, .85, .85, .85, .85}, []float64{0, 2, 2, 2, 2, 2, 0, 0, 0, 0}, &Window{}, RegimeSaturated},
		{"waiting a while, KV high", []float64{.85, .85, .85, .85, .85, .85, .85, .85, .85, .85}, []float64{0, 2, 2, 0, 0, 0, 0, 0, 0, 0}, &Window{}, RegimeFits},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.w.StartS, c.w.EndS = 0, float64(len(c.kv)-1)
			var xs []record.ServerSample
			for i := range c.kv {
				xs = append(xs, scrape(i, c.kv[i], 4, c.waiting[i]))
			}
			sw := BuildServer("x", time.Second, xs, 0, "", map[string]*Window{WindowSteady: c.w}).Windows[WindowSteady]
			if sw.KVRegime != c.want {
				t.Errorf("regime %q, want %q (waiting in %v of scrapes, %v of TTFT queued)", sw.KVRegime, c.want, val(sw.WaitingScrapesShare), val(sw.QueuedTTFTShare))
			}
		})
	}
}

// A server histogram or counter that first appears mid-run (vLLM creates
// a labelled series at its first observation) counts from zero, not
// dropped: 12 requests queued for 32.3 s in all.
func TestSeriesAbsentAtBaseline(t *testing.T) {
	t.Parallel()
	bounds := []float64{1, 5, 10, math.Inf(1)}
	xs := []record.ServerSample{
		{T: 0, Waiting: fp(0)},
		{T: 10 * time.Second, Waiting: fp(3), Preemptions: fp(2), Queue: &record.ServerHist{Bounds: bounds, Counts: []float64{4, 10, 12, 12}, Count: 12, Sum: 32.3}},
	}
	s := BuildServer("x", time.Second, xs, 0, "", map[string]*Window{WindowAll: {StartS: 0, EndS: 10}})
	w := s.Windows[WindowAll]
	if w.QueueMs == nil || w.QueueMs.Count != 12 || math.Abs(w.QueueMs.Mean-32300.0/12) > 1e-6 {
		t.Errorf("queue %+v", w.QueueMs)
	}
	if w.Preemptions == nil || *w.Preemptions != 2 || s.Series[1].Preemptions == nil || *s.Series[1].Preemptions != 2 {
		t.Errorf("preemptions: window %v, series %v", w.Preemptions, s.Series[1].Preemptions)
	}
}
