package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/sixpin/sixpin/scenario"
)

// probeSeed seeds the probe prompts: one token each by the runner's prompt
// builder, so by whatever tokenizer the builder counts with.
const probeSeed = 0x70726f6265 // "probe"

// Probe measures the chat template's overhead: it sends a one-token prompt
// for one token and takes usage.prompt_tokens minus one. On success the
// runner subtracts it from every synthesised prompt from then on (as
// WithTemplateOverhead does), so that the server counts the pinned length.
// For agentic sessions it also sends a three-message conversation to learn
// what each further message adds. ok is false when the probe failed or the
// server reports no usage; msg says why, and the overhead stays as it was.
// Call it before Run.
func (r *Runner) Probe(ctx context.Context) (overhead int, ok bool, msg string) {
	if r.start.IsZero() {
		r.start = time.Now()
	}
	one := r.prompts.Build(probeSeed, 1)
	base, err := r.probe(ctx, userMessage(one), 1)
	if err != nil {
		return 0, false, err.Error()
	}
	r.overhead, r.perMessage = base, base
	if w := r.plan.Scenario().Workload; w.Agentic() || w.Replay() {
		three := []message{{roleUser, one}, {roleAssistant, one}, {roleUser, one}}
		if all, err := r.probe(ctx, three, 3); err == nil {
			r.perMessage = max((all-base)/2, 0)
		} else {
			return r.overhead, true, "per-message overhead unknown (" + err.Error() + "); assuming each message adds as much as the first"
		}
	}
	return r.overhead, true, ""
}

// probe sends msgs (content tokens in all) for one token and returns what
// the template added.
func (r *Runner) probe(ctx context.Context, msgs []message, content int) (int, error) {
	req := scenario.Request{Index: -1, PromptTokens: content, OutputTokens: 1}
	rec := r.stream(ctx, errInterrupted, req, msgs, r.since())
	switch {
	case rec.Failed():
		return 0, fmt.Errorf("probe request failed (%s): %s", rec.Err, rec.ErrMsg)
	case !rec.HasUsage:
		return 0, fmt.Errorf("the server reports no usage, so the chat template's overhead is unknown")
	}
	return max(rec.Usage.PromptTokens-content, 0), nil
}

// templateTokens is what the chat template adds to n messages.
func (r *Runner) templateTokens(n int) int {
	return r.overhead + max(n-1, 0)*r.perMessage
}
