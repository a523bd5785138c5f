package sim

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
)

// handleSGLangMetrics serves /metrics in SGLang's names (Config.Metrics
// MetricsSGLang), as python/sglang/srt/observability/metrics_collector.py
// defines them and prometheus_client prints them. The scheduler's gauges,
// labelled model_name, engine_type, tp_rank and pp_rank:
//
//	sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage (0–1)
//	sglang:spec_accept_length      tokens per sequence step over the last sglangDecodeLogInterval decode steps (0 before the first ends, and without speculative decoding)
//	sglang:spec_accept_rate        accepted ÷ proposed draft tokens (K per sequence step) over the same steps
//	sglang:spec_num_steps          K (0 without speculative decoding)
//	sglang:spec_num_draft_tokens   K + 1: the tokens a step verifies, the current one included
//
// The tokenizer's counters and histograms, labelled model_name, counted
// when a request finishes, as SGLang counts them:
//
//	sglang:num_requests_total, sglang:prompt_tokens_total (cached tokens included), sglang:generation_tokens_total
//	sglang:cached_tokens_total     (once a prompt token was found in the prefix cache)
//	sglang:spec_verify_calls_total (once a request verified): each request's decode steps
//	sglang:time_to_first_token_seconds, sglang:e2e_request_latency_seconds, sglang:inter_token_latency_seconds
//
// and sglang:queue_time_seconds, the scheduler's. The histograms keep
// the simulator's (vLLM's) buckets. Like SGLang it logs its speculative
// gauges whether or not it speculates, and has spec_verify_calls_total
// only once a request verified. The simulator's own
// sixpin_sim:scheduler_config_info closes the page.
func (s *Server) handleSGLangMetrics(w http.ResponseWriter, r *http.Request) {
	running, waiting, _, _, _, usage := s.gauges()
	m := s.m
	model := promQuote(s.cfg.Model)
	sched := `model_name=` + model + `,engine_type="unified",tp_rank="0",pp_rank="0"`
	tok := `model_name=` + model
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	gauge := func(name, help string, v float64) {
		fmt.Fprintf(bw, "# HELP %[1]s %[2]s\n# TYPE %[1]s gauge\n%[1]s{%[3]s} %[4]s\n", name, help, sched, promFloat(v))
	}
	counter := func(name, help string, v int64) {
		fmt.Fprintf(bw, "# HELP %[1]s %[2]s\n# TYPE %[1]s counter\n", name, help)
		if v > 0 {
			fmt.Fprintf(bw, "%s{%s} %s\n", name, tok, promFloat(float64(v)))
		}
	}
	gauge("sglang:num_running_reqs", "The number of running requests.", float64(running))
	gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.", float64(waiting))
	gauge("sglang:token_usage", "The token usage.", usage)
	var length, rate float64
	var k int
	if s.eng != nil && s.cfg.SpecDecode != nil {
		length = math.Float64frombits(s.eng.stats.sglangLength.Load())
		rate = math.Float64frombits(s.eng.stats.sglangRate.Load())
		k = s.cfg.SpecDecode.DraftTokens
	}
	gauge("sglang:spec_accept_length", "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).", length)
	gauge("sglang:spec_accept_rate", "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).", rate)
	gauge("sglang:spec_num_steps", "Currently active speculative_num_steps.", float64(k))
	width := 0
	if k > 0 {
		width = k + 1
	}
	gauge("sglang:spec_num_draft_tokens", "Currently active speculative_num_draft_tokens (decouples from steps under topk>1).", float64(width))
	counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", m.sgPrompt.Load())
	counter("sglang:generation_tokens_total", "Number of generation tokens processed.", m.sgGeneration.Load())
	counter("sglang:spec_verify_calls_total", "Number of speculative decoding verification calls.", m.sgVerify.Load())
	counter("sglang:cached_tokens_total", "Number of cached prompt tokens.", m.sgCached.Load())
	counter("sglang:num_requests_total", "Number of requests processed.", m.sgRequests.Load())
	m.ttft.write(bw, "sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", tok)
	m.itl.write(bw, "sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tok)
	m.e2e.write(bw, "sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", tok)
	m.queue.write(bw, "sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sched)
	fmt.Fprintf(bw, "# HELP %s The simulator's scheduler (not an SGLang metric).\n# TYPE %[1]s gauge\n", SchedulerConfigInfo)
	fmt.Fprintf(bw, "%s{batching=\"%s\",max_num_seqs=\"%d\"} 1.0\n", SchedulerConfigInfo, s.cfg.Batching, s.cfg.MaxNumSeqs)
}
