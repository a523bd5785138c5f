package runner

import (
	"context"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
)

// do sends one request, reads its stream to the end and returns its record.
// It never fails: a failure is classified on the record. inflight
// cancellation cuts the request off as interrupted.
func (r *Runner) do(inflight context.Context, req record.Request, text string, scheduled time.Duration) *record.Record {
	msgs := endpoint.UserMessage(text)
	if g := req.PrefixGroup; g >= 0 && g < len(r.prefixes) {
		msgs[0].Cache = len(r.prefixes[g]) // the shared prefix: a prompt-caching breakpoint after it
	}
	return r.doMessages(inflight, req, msgs, scheduled)
}

// doMessages is do for a whole conversation.
// A history that keeps its reasoning (preserve_reasoning) asks the
// server's chat template to keep it too.
func (r *Runner) doMessages(inflight context.Context, req record.Request, msgs []endpoint.Message, scheduled time.Duration) *record.Record {
	k := endpoint.Call{Req: req, Msgs: msgs, Scheduled: scheduled}
	if r.plan.KeepsReasoning() {
		k.Extra = []byte(preserveThinking)
	}
	return r.doCall(inflight, k)
}

// doCall sends k (on the run's clock, cut off after the grace period
// when inflight ends) and counts it in the live stats.
func (r *Runner) doCall(inflight context.Context, k endpoint.Call) *record.Record {
	r.stats.Issued.Add(1)
	r.stats.InFlight.Add(1)
	k.Clock, k.Cut, k.Live = r.clock, endpoint.ErrCutAfterGrace, &r.stats.Streaming
	rec := r.client.Stream(inflight, k)
	r.stats.InFlight.Add(-1)
	r.stats.Done.Add(1)
	if rec.Failed() {
		r.stats.Failed.Add(1)
	}
	if rec.HasUsage {
		r.stats.OutputTokens.Add(int64(rec.Usage.CompletionTokens))
	} else {
		r.stats.OutputTokens.Add(int64(len(rec.Chunks)))
	}
	return rec
}
