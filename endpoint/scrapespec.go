package endpoint

import (
	"strconv"

	"github.com/sixpin/sixpin/record"
)

// vLLM's speculative-decoding counters (V1, vllm/v1/spec_decode/metrics.py;
// V0 has the draft and accepted tokens but not the drafts), each summed
// over its label sets (engine, model_name); the per-position series also
// by its position label. llama.cpp's llama-server (--metrics) exposes the
// same four under its own prefix (tools/server/server-task.cpp: drafts
// are its verification steps), added to when a request's slot is
// released, not at each step.
const (
	specDrafts      = "spec_decode_num_drafts_total"
	specDraftTokens = "spec_decode_num_draft_tokens_total"
	specAccepted    = "spec_decode_num_accepted_tokens_total"
	specPerPos      = "spec_decode_num_accepted_tokens_per_pos_total"
)

// SGLang's speculative-decoding series (python/sglang/srt/observability/
// metrics_collector.py; earlier srt/metrics/collector.py). The gauges
// are the scheduler's, set at every decode-log interval
// (--decode-log-interval, 40 decode batches by default); the counters
// the tokenizer manager's, counted when a request finishes:
//
//	sglang:spec_accept_length      gauge    tokens per verification step over the last interval's decode batches, the bonus token included; 0 when it does not speculate
//	sglang:spec_num_draft_tokens   gauge    tokens each step verifies, the current one included (from sgl-project/sglang#25940, May 2026)
//	sglang:spec_verify_calls_total counter  verification steps of the finished requests (from sgl-project/sglang#25689, May 2026)
//	sglang:num_requests_total      counter  requests finished
//
// sglang:spec_accept_rate is not read: it counted the bonus token until
// sgl-project/sglang#23530 (April 2026) and does not since, and a scrape
// does not say which SGLang it is.
const (
	sglangAcceptLength = "sglang:spec_accept_length"
	sglangDraftWidth   = "sglang:spec_num_draft_tokens"
	sglangVerifySteps  = "sglang:spec_verify_calls_total"
	sglangRequests     = "sglang:num_requests_total"
)

// readSGLangSpec sets x's SGLang speculative-decoding series from one
// scrape's sums: counters summed over label sets, gauges averaged (one
// per scheduler); nil where the server has none.
func readSGLangSpec(x *record.ServerSample, s promSums) {
	x.SpecVerifySteps = s.total([]string{sglangVerifySteps})
	x.FinishedRequests = s.total([]string{sglangRequests})
	x.SpecAcceptLength = s.mean([]string{sglangAcceptLength})
	x.SpecDraftWidth = s.mean([]string{sglangDraftWidth})
}

// maxSpecPositions bounds the per-position vector (vLLM's K is a few
// tokens; a label beyond this is ignored).
const maxSpecPositions = 64

// readSpec sets x's speculative-decoding counters from one scrape's
// samples and their sums, the series named prefix (vLLM's "vllm:",
// llama.cpp's "llamacpp:") + the vLLM names; it leaves them nil when the
// server has none.
func readSpec(x *record.ServerSample, s promSums, samples []promSample, prefix string) {
	x.SpecDrafts = s.total([]string{prefix + specDrafts})
	x.SpecDraftTokens = s.total([]string{prefix + specDraftTokens})
	x.SpecAccepted = s.total([]string{prefix + specAccepted})
	perPos := prefix + specPerPos
	if s.n[perPos] == 0 {
		return
	}
	for _, v := range samples {
		if v.name != perPos {
			continue
		}
		i, err := strconv.Atoi(v.labels["position"])
		if err != nil || i < 0 || i >= maxSpecPositions {
			continue
		}
		for len(x.SpecAcceptedPerPos) <= i {
			x.SpecAcceptedPerPos = append(x.SpecAcceptedPerPos, 0)
		}
		x.SpecAcceptedPerPos[i] += v.value
	}
}
