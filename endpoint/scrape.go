package endpoint

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sixpin/sixpin/record"
)

// DefaultScrapeEvery is how often the server metrics are scraped during a
// run (`sixpin run --server-metrics`), in run time.
const DefaultScrapeEvery = time.Second

// Bounds on scraping the server metrics, in wall-clock time.
const (
	// MaxScrapeTimeout bounds one scrape from connection to last byte (a
	// shorter interval bounds it by the interval, but never below
	// minScrapeTimeout).
	MaxScrapeTimeout = 2 * time.Second
	minScrapeTimeout = 500 * time.Millisecond
	// minScrapeWall is the shortest wall-clock interval between scrapes,
	// whatever the time scale.
	minScrapeWall = 20 * time.Millisecond
)

// metricFamily is one engine's Prometheus names for what the scraper
// reads. A list of names is tried in order (newer name first); a
// histogram is its base name (_bucket, _sum, _count).
type metricFamily struct {
	engine, prefix                           string
	kvUsage, running, waiting, preemptions   []string
	prompt, generation                       []string
	prefixQueries, prefixHits, prefixHitRate []string
	ttft, e2e, queue, prefill                string
}

// families are the engines whose /metrics the scraper reads: vLLM (V1
// names, then V0's; the simulator serves vLLM's), SGLang, llama.cpp
// (--metrics) and TGI.
var families = []metricFamily{
	{engine: SourceVLLM, prefix: "vllm:",
		kvUsage: []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
		running: []string{"vllm:num_requests_running"}, waiting: []string{"vllm:num_requests_waiting"},
		preemptions: []string{"vllm:num_preemptions_total", "vllm:num_preemptions"},
		prompt:      []string{"vllm:prompt_tokens_total"}, generation: []string{"vllm:generation_tokens_total"},
		prefixQueries: []string{"vllm:prefix_cache_queries_total", "vllm:gpu_prefix_cache_queries_total"},
		prefixHits:    []string{"vllm:prefix_cache_hits_total", "vllm:gpu_prefix_cache_hits_total"},
		prefixHitRate: []string{"vllm:gpu_prefix_cache_hit_rate"},
		ttft:          "vllm:time_to_first_token_seconds", e2e: "vllm:e2e_request_latency_seconds",
		queue: "vllm:request_queue_time_seconds", prefill: "vllm:request_prefill_time_seconds"},
	{engine: SourceSGLang, prefix: "sglang:",
		kvUsage: []string{"sglang:token_usage"},
		running: []string{"sglang:num_running_reqs"}, waiting: []string{"sglang:num_queue_reqs"},
		prompt: []string{"sglang:prompt_tokens_total"}, generation: []string{"sglang:generation_tokens_total"},
		// prompt_tokens_total counts whole prompts, cached part included:
		// it is what the prefix cache was queried with.
		prefixQueries: []string{"sglang:prompt_tokens_total"},
		prefixHits:    []string{"sglang:cached_tokens_total"},
		prefixHitRate: []string{"sglang:cache_hit_rate"},
		ttft:          "sglang:time_to_first_token_seconds", e2e: "sglang:e2e_request_latency_seconds",
		queue: "sglang:queue_time_seconds"},
	{engine: SourceLlamaCpp, prefix: "llamacpp:",
		kvUsage: []string{"llamacpp:kv_cache_usage_ratio"},
		running: []string{"llamacpp:requests_processing"}, waiting: []string{"llamacpp:requests_deferred"},
		prompt: []string{"llamacpp:prompt_tokens_total"}, generation: []string{"llamacpp:tokens_predicted_total"},
		prefixHits: []string{"llamacpp:prompt_tokens_cached_total"}},
	{engine: "tgi", prefix: "tgi_",
		running: []string{"tgi_batch_current_size"}, waiting: []string{"tgi_queue_size"},
		prompt: []string{"tgi_request_input_length_sum"}, generation: []string{"tgi_request_generated_tokens_sum"},
		e2e: "tgi_request_duration", queue: "tgi_request_queue_duration"},
}

// keepServerMetric keeps the samples of every family.
func keepServerMetric(name string) bool {
	for i := range families {
		if strings.HasPrefix(name, families[i].prefix) {
			return true
		}
	}
	return false
}

// promSums is one scrape's samples summed over their label sets, by
// name, with each histogram's buckets summed by bound.
type promSums struct {
	sum     map[string]float64
	n       map[string]int
	buckets map[string]map[float64]float64
}

func sumProm(samples []promSample) promSums {
	s := promSums{sum: map[string]float64{}, n: map[string]int{}, buckets: map[string]map[float64]float64{}}
	for _, x := range samples {
		if base, ok := strings.CutSuffix(x.name, "_bucket"); ok {
			le, err := strconv.ParseFloat(x.labels["le"], 64)
			if err != nil {
				continue
			}
			b := s.buckets[base]
			if b == nil {
				b = map[float64]float64{}
				s.buckets[base] = b
			}
			b[le] += x.value
			continue
		}
		s.sum[x.name] += x.value
		s.n[x.name]++
	}
	return s
}

// total is the first of names present, summed over label sets.
func (s promSums) total(names []string) *float64 {
	for _, n := range names {
		if v, ok := s.sum[n]; ok {
			return &v
		}
	}
	return nil
}

// mean is the first of names present, averaged over label sets (a ratio
// per engine).
func (s promSums) mean(names []string) *float64 {
	for _, n := range names {
		if v, ok := s.sum[n]; ok {
			m := v / float64(s.n[n])
			return &m
		}
	}
	return nil
}

// hist is the histogram base, or nil.
func (s promSums) hist(base string) *record.ServerHist {
	b, ok := s.buckets[base]
	if base == "" || !ok {
		return nil
	}
	h := &record.ServerHist{Count: s.sum[base+"_count"], Sum: s.sum[base+"_sum"]}
	for le := range b {
		h.Bounds = append(h.Bounds, le)
	}
	slices.Sort(h.Bounds)
	for _, le := range h.Bounds {
		h.Counts = append(h.Counts, b[le])
	}
	if len(h.Bounds) == 0 || !math.IsInf(h.Bounds[len(h.Bounds)-1], 1) {
		h.Bounds = append(h.Bounds, math.Inf(1))
		h.Counts = append(h.Counts, h.Count)
	}
	return h
}

// parseServerMetrics reads one /metrics answer into a sample (its T
// unset) and names the engine whose family it found: the family with the
// most known names present (a proxy may serve several). ok is false when
// no family is there.
func parseServerMetrics(raw []byte) (x record.ServerSample, engine string, ok bool) {
	samples, _ := parseProm(raw, keepServerMetric)
	s := sumProm(samples)
	best, bestN := -1, 0
	for i := range families {
		n := 0
		for name := range s.sum {
			if strings.HasPrefix(name, families[i].prefix) {
				n++
			}
		}
		for name := range s.buckets {
			if strings.HasPrefix(name, families[i].prefix) {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return x, "", false
	}
	f := &families[best]
	x.KVUsage = s.mean(f.kvUsage)
	x.Running, x.Waiting = s.total(f.running), s.total(f.waiting)
	x.Preemptions = s.total(f.preemptions)
	x.PromptTokens, x.GenerationTokens = s.total(f.prompt), s.total(f.generation)
	x.PrefixQueries, x.PrefixHits = s.total(f.prefixQueries), s.total(f.prefixHits)
	x.PrefixHitRate = s.mean(f.prefixHitRate)
	x.TTFT, x.E2E, x.Queue, x.Prefill = s.hist(f.ttft), s.hist(f.e2e), s.hist(f.queue), s.hist(f.prefill)
	switch f.engine {
	case SourceVLLM, SourceLlamaCpp:
		readSpec(&x, s, samples, f.prefix)
		x.SpecEngine = f.engine
	case SourceSGLang:
		readSGLangSpec(&x, s)
	}
	return x, f.engine, true
}

// Scraper reads the server metrics: the inference server's own
// Prometheus /metrics (KV cache, queue, token counters, latency
// histograms), not sixpin's own figures that harness serves with
// --metrics-addr. It scrapes on its own goroutine and its own
// connection, so it neither waits for nor takes one of the load's
// connections. Every scrape is bounded by its interval (at most
// MaxScrapeTimeout); a failed one is counted and the next goes on: a
// scrape never fails the run. Make it with Client.NewScraper.
type Scraper struct {
	c       *Client
	hc      *http.Client
	url, ep string
	clk     Clock
	every   time.Duration // run time
	timeout time.Duration
	stop    chan struct{}
	done    chan struct{}
	// gone: the server has no /metrics; started: Start was called.
	gone, started bool

	// Written by the scraping goroutine only; read after done (but
	// Samples, which mu guards for Recent).
	mu  sync.Mutex
	res Scrapes
}

// Scrapes are the server metrics a Scraper gathered: one sample per
// scrape that answered.
type Scrapes struct {
	// Source names the engine family and endpoint ("vllm GET /metrics";
	// "GET /metrics" when no scrape answered).
	Source string
	// Every is the interval in run time.
	Every time.Duration
	// Samples are the scrapes that answered, in time order.
	Samples []record.ServerSample
	// Failures counts the scrapes that did not; LastError says why the
	// last one failed.
	Failures  int
	LastError string
}

// NewScraper prepares to scrape the server metrics, {host}/metrics, every
// `every` of run time (DefaultScrapeEvery when ≤ 0). Take the Baseline before load,
// then Start it on the run's clock, and Stop it at the end.
func (c *Client) NewScraper(every time.Duration) *Scraper {
	if every <= 0 {
		every = DefaultScrapeEvery
	}
	u := c.ep.root("/metrics")
	ep := u
	if pu, err := url.Parse(u); err == nil {
		ep = pu.EscapedPath() // the query may hold a secret
	}
	s := &Scraper{c: c, hc: &http.Client{Transport: newTransport(1, &c.dials, c.target.HTTP, c.target.RootCAs)}, url: u, ep: "GET " + ep, every: every,
		timeout: MaxScrapeTimeout, stop: make(chan struct{}), done: make(chan struct{})}
	s.res.Every, s.res.Source = every, s.ep
	return s
}

// Baseline takes the first scrape, before load (at run time 0): the one
// the run's counters count from. It returns within MaxScrapeTimeout.
func (s *Scraper) Baseline(ctx context.Context) {
	s.gone = !s.once(ctx, func() time.Duration { return 0 })
}

// Start scrapes on every tick of the interval, on clk (wall time every
// × clk.Scale, at least 20 ms; each scrape bounded by that, at least
// 500 ms and at most MaxScrapeTimeout), until Stop. It does nothing when
// the Baseline found no /metrics (a 404 or 405).
func (s *Scraper) Start(ctx context.Context, clk Clock) {
	s.clk = clk
	wall := s.every
	if clk.Scale > 0 && clk.Scale < 1 {
		wall = time.Duration(float64(s.every) * clk.Scale)
	}
	wall = max(wall, minScrapeWall)
	s.timeout = min(max(wall, minScrapeTimeout), MaxScrapeTimeout)
	s.started = true
	go s.loop(context.WithoutCancel(ctx), wall) // an interrupt ends the run, and Stop the scraping
}

// Recent returns a copy of the last n scrapes that answered, oldest
// first. It is safe to call from any goroutine while the scraper runs;
// nil on a nil Scraper.
func (s *Scraper) Recent(n int) []record.ServerSample {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]record.ServerSample(nil), s.res.Samples[max(len(s.res.Samples)-n, 0):]...)
}

// Snapshot returns what the scraper has gathered so far, in run time,
// without stopping it (for a checkpoint). It is safe to call from any
// goroutine while the scraper runs; empty on a nil Scraper.
func (s *Scraper) Snapshot() Scrapes {
	if s == nil {
		return Scrapes{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := s.res
	res.Samples = append([]record.ServerSample(nil), s.res.Samples...)
	if k := s.clk.Scale; k > 0 && k < 1 {
		for i := range res.Samples {
			x := &res.Samples[i]
			for _, h := range []**record.ServerHist{&x.TTFT, &x.E2E, &x.Queue, &x.Prefill} {
				if *h != nil {
					c := **h
					c.Bounds = slices.Clone(c.Bounds) // the scraper's own stay as they are
					scaleHist(&c, 1/k)
					*h = &c
				}
			}
		}
	}
	return res
}

// Stop takes the last scrape, stops the scraper and returns what it
// gathered. Call it once, after Start or the Baseline alone.
func (s *Scraper) Stop() Scrapes {
	if s.started {
		close(s.stop)
		<-s.done
	}
	s.hc.CloseIdleConnections()
	s.mu.Lock() // a Snapshot may still be reading
	defer s.mu.Unlock()
	if k := s.clk.Scale; k > 0 && k < 1 {
		// A compressed run's server (the simulator) times in wall
		// time: its histograms go to run time like every other figure.
		for i := range s.res.Samples {
			x := &s.res.Samples[i]
			for _, h := range []*record.ServerHist{x.TTFT, x.E2E, x.Queue, x.Prefill} {
				if h != nil {
					scaleHist(h, 1/k)
				}
			}
		}
	}
	return s.res
}

// scaleHist multiplies a histogram's bounds and sum by f.
func scaleHist(h *record.ServerHist, f float64) {
	h.Sum *= f
	for i := range h.Bounds {
		h.Bounds[i] *= f
	}
}

func (s *Scraper) loop(ctx context.Context, wall time.Duration) {
	defer close(s.done)
	if s.gone {
		<-s.stop
		return
	}
	t := time.NewTicker(wall)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.once(ctx, s.clk.Since)
		case <-s.stop:
			s.once(ctx, s.clk.Since)
			return
		}
	}
}

// once takes one scrape; false when the server has no /metrics at all
// (its first answer is a 404 or 405), so that scraping ends.
func (s *Scraper) once(ctx context.Context, now func() time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	t0 := now()
	status, raw, err := s.c.fetchWith(ctx, s.hc, http.MethodGet, s.url, nil)
	t1 := now()
	var why string
	switch {
	case err != nil:
		why = s.c.redact(err.Error())
	case status != http.StatusOK:
		why = fmt.Sprintf("HTTP %d", status)
	}
	if why == "" {
		x, engine, ok := parseServerMetrics(raw)
		if ok {
			x.T = t0 + (t1-t0)/2
			s.mu.Lock() // Recent and Snapshot read res from other goroutines
			s.res.Samples = append(s.res.Samples, x)
			s.res.Source = engine + " " + s.ep
			s.mu.Unlock()
			return true
		}
		why = "no vllm:, sglang:, llamacpp: or tgi_ metrics in the answer"
	}
	s.mu.Lock()
	s.res.Failures++
	s.res.LastError = s.ep + ": " + why
	first := len(s.res.Samples) == 0 && s.res.Failures == 1
	s.mu.Unlock()
	return !(first && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed))
}
