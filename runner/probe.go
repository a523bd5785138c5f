package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// probeSeed seeds the probe prompts: one token each by the runner's prompt
// builder, so by whatever tokenizer the builder counts with.
const probeSeed = 0x70726f6265 // "probe"

// probeAttempts is how many times a failing probe request is sent before
// the probe gives up: one transient fault must not cost the run its
// prompt lengths.
const probeAttempts = 3

// Probe measures the chat template's overhead: it sends a one-token prompt
// for one token and takes usage.prompt_tokens minus one. On success the
// runner subtracts it from every synthesised prompt from then on (as
// WithTemplateOverhead does), so that the server counts the pinned length.
// It then learns whether the server hangs up on kept-alive connections
// after a streamed answer (checkKeepAlive).
// For agentic sessions it also sends a three-message conversation to learn
// what each further message adds. A probe request that fails is sent
// again, up to probeAttempts times, after a backoff (four times the
// connect backoff, doubling). ok is false when the probe still failed, was
// interrupted (cut at once: there is no grace period before the run), or
// the server reports no usage; msg says why, and the overhead stays as it
// was. Call it before Run.
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
	r.checkKeepAlive(ctx, func(ctx context.Context) bool {
		return !r.stream(ctx, errInterruptedAtOnce, scenario.Request{Index: -1, PromptTokens: 1, OutputTokens: 1}, userMessage(one), r.since()).Failed()
	})
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

// probe sends msgs (content tokens in all) for one token, again after a
// failure, and returns what the template added.
func (r *Runner) probe(ctx context.Context, msgs []message, content int) (int, error) {
	req := scenario.Request{Index: -1, PromptTokens: content, OutputTokens: 1}
	rng := rand.New(rand.NewPCG(probeSeed, uint64(content)))
	var rec *results.Record
	for attempt := 1; ; attempt++ {
		rec = r.stream(ctx, errInterruptedAtOnce, req, msgs, r.since())
		switch {
		case rec.Err == results.ErrInterrupted:
			return 0, fmt.Errorf("probe request %s", rec.ErrMsg)
		case !rec.Failed():
		case attempt == probeAttempts:
			return 0, fmt.Errorf("probe request failed %d times (last: %s): %s", attempt, rec.Err, rec.ErrMsg)
		case !sleep(ctx, jittered(rng, 4*r.connectBackoff, r.connectBackoffMax, attempt-1)):
			return 0, fmt.Errorf("probe interrupted before its attempt %d (the last failed: %s: %s)", attempt+1, rec.Err, rec.ErrMsg)
		default:
			continue
		}
		break
	}
	if !rec.HasUsage {
		return 0, fmt.Errorf("the server reports no usage, so the chat template's overhead is unknown")
	}
	return max(rec.Usage.PromptTokens-content, 0), nil
}

// templateTokens is what the chat template adds to n messages.
func (r *Runner) templateTokens(n int) int {
	return r.overhead + max(n-1, 0)*r.perMessage
}
