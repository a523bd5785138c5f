package sim

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// serverMetrics are the Server's counters and histograms for /metrics,
// in vLLM V1's names. Every field is atomic: safe for concurrent use, and
// no lock is taken on the per-token path.
type serverMetrics struct {
	inflight         atomic.Int64 // generation requests being served
	promptTokens     atomic.Int64 // prompt tokens of requests past their prefill
	generationTokens atomic.Int64 // output tokens produced
	success          [len(finishedReasons)]atomic.Int64

	// SGLang's tokenizer counters, counted when a request finishes:
	// requests, their prompt tokens (cached ones included), cached
	// prompt tokens, output tokens and verification steps.
	sgRequests, sgPrompt, sgCached, sgGeneration, sgVerify atomic.Int64

	ttft, e2e, queue, prefill, decode, itl *histogram
}

// finishedReasons label vllm:request_success_total, as vLLM's
// FinishReason names them.
var finishedReasons = [...]string{"stop", "length", "abort"}

// Bucket bounds in seconds, vLLM V1's.
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	requestBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
)

func newServerMetrics() *serverMetrics {
	return &serverMetrics{
		ttft:    newHistogram(ttftBuckets),
		e2e:     newHistogram(requestBuckets),
		queue:   newHistogram(requestBuckets),
		prefill: newHistogram(requestBuckets),
		decode:  newHistogram(requestBuckets),
		itl:     newHistogram(itlBuckets),
	}
}

// firstToken counts a response's first token: its TTFT and its prompt.
func (m *serverMetrics) firstToken(rp *reply) {
	first := rp.first
	if rp.q != nil {
		first = rp.q.first.Load()
	}
	m.ttft.observe(time.Duration(max(0, first-rp.arrival)))
	m.promptTokens.Add(int64(rp.j.prompt))
}

// finished counts a response that completed, by its finish reason
// ("stop" or "length").
func (m *serverMetrics) finished(reason string, t *timings) {
	if t.out == 0 {
		m.promptTokens.Add(int64(t.prompt + t.cached))
	}
	i := 0
	if reason == "length" {
		i = 1
	}
	m.success[i].Add(1)
	m.sgRequests.Add(1)
	m.sgPrompt.Add(int64(t.prompt + t.cached))
	m.sgCached.Add(int64(t.cached))
	m.sgGeneration.Add(int64(t.out))
	m.sgVerify.Add(int64(t.verifies))
	m.e2e.observe(t.e2e)
	m.queue.observe(t.queue)
	m.prefill.observe(t.prefill)
	m.decode.observe(t.decode)
}

// aborted counts a response that ended early: the client left, the
// Server closed, or a fault struck.
func (m *serverMetrics) aborted() { m.success[2].Add(1) }

// histogram is a Prometheus histogram of durations with fixed bounds,
// updated atomically: safe for concurrent use.
type histogram struct {
	bounds []float64      // upper bounds in seconds, ascending
	counts []atomic.Int64 // per bucket, not cumulative; the last is +Inf
	sumNs  atomic.Int64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Int64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	s := d.Seconds()
	i := 0
	for i < len(h.bounds) && s > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sumNs.Add(int64(d))
}

// write writes the histogram in Prometheus' text format: cumulative
// buckets, then _count (their total, so the two always agree) and _sum in
// seconds.
func (h *histogram) write(w io.Writer, name, help, labels string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
		le := "+Inf"
		if i < len(h.bounds) {
			le = promFloat(h.bounds[i])
		}
		fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", name, labels, le, n)
	}
	fmt.Fprintf(w, "%s_count{%s} %d\n", name, labels, n)
	fmt.Fprintf(w, "%s_sum{%s} %s\n", name, labels, promFloat(float64(h.sumNs.Load())/1e9))
}

// promFloat formats v as Python's prometheus_client does: shortest form,
// with ".0" on whole numbers.
func promFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}

// handleMetrics serves vLLM V1's metrics in Prometheus' text format, live
// from the engine (or, without it, from the requests being served): the
// request gauges, KV cache usage (and its older name), preemptions,
// token counters, prefix cache queries and hits (in tokens), requests
// finished by reason, the latency histograms, the speculative-decoding
// counters when the simulator speculates (specmetrics.go), and
// vllm:cache_config_info,
// whose labels carry the KV cache's settings (block size, blocks, the KV
// budget in tokens, gpu_memory_utilization, prefix caching) for sixpin's
// discovery.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == MetricsSGLang {
		s.handleSGLangMetrics(w, r)
		return
	}
	running, waiting, preemptions, queries, hits, usage := s.gauges()
	m := s.m
	labels := `engine="0",model_name=` + promQuote(s.cfg.Model)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	metric := func(name, typ, help string, v any) {
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %v\n", name, help, name, typ, name, labels, v)
	}
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", running)
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting)
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", usage)
	metric("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage (the older name of vllm:kv_cache_usage_perc).", usage)
	metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", preemptions)
	metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", m.promptTokens.Load())
	metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", m.generationTokens.Load())
	metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", queries)
	metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", hits)
	fmt.Fprintf(bw, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for i, reason := range finishedReasons {
		fmt.Fprintf(bw, "vllm:request_success_total{%s,finished_reason=\"%s\"} %d\n", labels, reason, m.success[i].Load())
	}
	m.ttft.write(bw, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", labels)
	m.e2e.write(bw, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", labels)
	m.queue.write(bw, "vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", labels)
	m.prefill.write(bw, "vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", labels)
	m.decode.write(bw, "vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", labels)
	m.itl.write(bw, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", labels)
	if s.eng != nil && s.cfg.SpecDecode != nil {
		writeSpecMetrics(bw, &s.eng.stats, labels)
	}
	fmt.Fprintf(bw, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
	fmt.Fprintf(bw, "# TYPE vllm:cache_config_info gauge\n")
	fmt.Fprintf(bw, "vllm:cache_config_info{%s} 1.0\n", s.metricsLabels())
	fmt.Fprintf(bw, "# HELP %s The simulator's scheduler (not a vLLM metric).\n# TYPE %[1]s gauge\n", SchedulerConfigInfo)
	fmt.Fprintf(bw, "%s{batching=\"%s\",max_num_seqs=\"%d\"} 1.0\n", SchedulerConfigInfo, s.cfg.Batching, s.cfg.MaxNumSeqs)
}

// gauges are the server's state now for /metrics, live from the engine
// (or, without it, from the requests being served): requests running and
// waiting, preemptions, prefix-cache queries and hits (tokens) and the
// KV cache's usage (0–1).
func (s *Server) gauges() (running, waiting, preemptions, queries, hits int64, usage float64) {
	var used int64
	switch {
	case s.eng != nil:
		st := &s.eng.stats
		running, waiting = st.running.Load(), int64(s.eng.queued())
		preemptions, queries, hits = st.preemptions.Load(), st.queries.Load(), st.hits.Load()
		used = st.blocksUsed.Load()
	case s.kv != nil:
		running = s.m.inflight.Load()
		s.kvMu.Lock()
		queries, hits, used = s.kv.queries, s.kv.hits, int64(s.kv.used)
		s.kvMu.Unlock()
	default:
		running = s.m.inflight.Load()
	}
	blocks := int64(max(1, s.cfg.KVBudgetTokens/s.cfg.BlockSize))
	return running, waiting, preemptions, queries, hits, min(1, float64(used)/float64(blocks))
}

// SchedulerConfigInfo is the simulator's own info metric in /metrics: its
// batching (continuous or static) and max_num_seqs as labels, which
// vLLM's metrics do not state (vLLM always batches continuously).
const SchedulerConfigInfo = "sixpin_sim:scheduler_config_info"
