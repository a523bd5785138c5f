package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sixpin/sixpin/scenario"
)

// probeSeed seeds the probe prompt: one token by the runner's prompt
// builder, so by whatever tokenizer the builder counts with.
const probeSeed = 0x70726f6265 // "probe"

// Probe measures the chat template's overhead: it sends a one-token prompt
// for one token and takes usage.prompt_tokens minus one. On success the
// runner subtracts it from every synthesised prompt from then on (as
// WithTemplateOverhead does), so that the server counts the pinned length.
// ok is false when the probe failed or the server reports no usage; msg
// says why, and the overhead stays as it was. Call it before Run.
func (r *Runner) Probe(ctx context.Context) (overhead int, ok bool, msg string) {
	if r.start.IsZero() {
		r.start = time.Now()
	}
	req := scenario.Request{Index: -1, PromptTokens: 1, OutputTokens: 1}
	rec := r.stream(ctx, req, r.prompts.Build(probeSeed, 1), r.since())
	switch {
	case rec.Failed():
		return 0, false, fmt.Sprintf("probe request failed (%s): %s", rec.Err, rec.ErrMsg)
	case !rec.HasUsage:
		return 0, false, "the server reports no usage, so the chat template's overhead is unknown"
	}
	r.overhead = max(rec.Usage.PromptTokens-req.PromptTokens, 0)
	return r.overhead, true, ""
}
