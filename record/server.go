package record

import "time"

// ServerSample is one scrape of the server's Prometheus metrics, as read:
// gauges at the scrape and cumulative counters and histograms since the
// server started. A nil field is one the server does not expose. It is
// what endpoint's scraper hands BuildServer.
type ServerSample struct {
	// T is the scrape's time, an offset from the run start in run time.
	T time.Duration
	// KVUsage is the KV cache's usage, 0–1 (vLLM kv_cache_usage_perc,
	// SGLang token_usage).
	KVUsage *float64
	// Running and Waiting are the requests the server is serving and
	// queueing.
	Running, Waiting *float64
	// Preemptions, PromptTokens and GenerationTokens are counters.
	// PromptTokens counts the prompt tokens the server computed (llama.cpp
	// excludes cached ones and counts those in PrefixHits).
	Preemptions, PromptTokens, GenerationTokens *float64
	// PrefixQueries and PrefixHits are prefix-cache counters in tokens;
	// PrefixHitRate (0–1) is a gauge for an engine that reports the rate
	// itself (SGLang cache_hit_rate).
	PrefixQueries, PrefixHits, PrefixHitRate *float64
	// TTFT, E2E, Queue and Prefill are the server's latency histograms,
	// in seconds.
	TTFT, E2E, Queue, Prefill *ServerHist
	// SpecDrafts, SpecDraftTokens and SpecAccepted are speculative
	// decoding's counters (vLLM's spec_decode_num_drafts,
	// _num_draft_tokens, _num_accepted_tokens): verification steps with
	// drafts, draft tokens proposed, draft tokens accepted.
	// SpecAcceptedPerPos are the accepted tokens by draft position (0 to
	// K−1; _num_accepted_tokens_per_pos). nil when the server has none.
	SpecDrafts, SpecDraftTokens, SpecAccepted *float64
	SpecAcceptedPerPos                        []float64
	// SpecEngine is whose counters those are: "vllm", or "llama.cpp"
	// (llama-server's, under the same names, added to as each request
	// ends); "" when none.
	SpecEngine string
	// SpecVerifySteps and FinishedRequests are SGLang's counters
	// spec_verify_calls_total (verification steps of the requests it
	// finished, each request's summed) and num_requests_total (requests
	// finished); SGLang counts both, and GenerationTokens, when a request
	// finishes. nil when the server has none.
	SpecVerifySteps, FinishedRequests *float64
	// SpecAcceptLength and SpecDraftWidth are SGLang's gauges
	// spec_accept_length (tokens per verification step over its last
	// decode-log interval, the target's own included; 0 when it does not
	// speculate) and spec_num_draft_tokens (tokens each step verifies,
	// the current one included), averaged over label sets. nil when the
	// server has none.
	SpecAcceptLength, SpecDraftWidth *float64
}

// ServerHist is a cumulative Prometheus histogram: Bounds are the bucket
// upper bounds in seconds, ascending and ending at +Inf; Counts the
// cumulative count at each bound.
type ServerHist struct {
	Bounds []float64
	Counts []float64
	Count  float64
	Sum    float64
}
