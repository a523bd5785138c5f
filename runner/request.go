package runner

import (
	"context"
	"net/http"
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
	return r.doMessages(inflight, req, msgs, scheduled, nil)
}

// doMessages is do for a whole conversation; hdr is its session's
// header (sessionHeader; nil: the client's own).
func (r *Runner) doMessages(inflight context.Context, req record.Request, msgs []endpoint.Message, scheduled time.Duration, hdr http.Header) *record.Record {
	r.stats.Issued.Add(1)
	r.stats.InFlight.Add(1)
	rec := r.client.Stream(inflight, endpoint.Call{Req: req, Msgs: msgs, Scheduled: scheduled, Clock: r.clock,
		Cut: endpoint.ErrCutAfterGrace, Live: &r.stats.Streaming, Header: hdr})
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

// sessionHeader is the header of every request of the session named id:
// the client's own with the plan's session-affinity headers set to id,
// made once per session; nil when the plan sends none.
func (r *Runner) sessionHeader(id string) http.Header {
	names := r.plan.Affinity()
	if len(names) == 0 {
		return nil
	}
	return r.client.SessionHeader(names, id)
}
