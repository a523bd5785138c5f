package endpoint

import (
	"strconv"

	"github.com/sixpin/sixpin/record"
)

// vLLM's speculative-decoding counters (V1, vllm/v1/spec_decode/metrics.py;
// V0 has the draft and accepted tokens but not the drafts), each summed
// over its label sets (engine, model_name); the per-position series also
// by its position label.
const (
	specDrafts      = "vllm:spec_decode_num_drafts_total"
	specDraftTokens = "vllm:spec_decode_num_draft_tokens_total"
	specAccepted    = "vllm:spec_decode_num_accepted_tokens_total"
	specPerPos      = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
)

// maxSpecPositions bounds the per-position vector (vLLM's K is a few
// tokens; a label beyond this is ignored).
const maxSpecPositions = 64

// readSpec sets x's speculative-decoding counters from one scrape's
// samples and their sums; it leaves them nil when the server has none.
func readSpec(x *record.ServerSample, s promSums, samples []promSample) {
	x.SpecDrafts = s.total([]string{specDrafts})
	x.SpecDraftTokens = s.total([]string{specDraftTokens})
	x.SpecAccepted = s.total([]string{specAccepted})
	if s.n[specPerPos] == 0 {
		return
	}
	for _, v := range samples {
		if v.name != specPerPos {
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
