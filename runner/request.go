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
	if p, g := r.prefixesOf(req), req.PrefixGroup; g >= 0 && g < len(p) {
		msgs[0].Cache = len(p[g]) // the shared prefix: a prompt-caching breakpoint after it
	}
	return r.doMessages(inflight, req, msgs, scheduled, nil)
}

// doMessages is do for a whole conversation; sw is its session's wire
// (nil: the client's own header). A history that keeps its reasoning
// (preserve_reasoning) asks the server's chat template to keep it too.
func (r *Runner) doMessages(inflight context.Context, req record.Request, msgs []endpoint.Message, scheduled time.Duration, sw *sessionWire) *record.Record {
	k := endpoint.Call{Req: req, Msgs: msgs, Scheduled: scheduled}
	if r.plan.KeepsReasoning() {
		k.Extra = []byte(preserveThinking)
	}
	return r.doCall(inflight, k, sw)
}

// doCall sends k (on the run's clock, cut off after the grace period
// when inflight ends) with its session's wire sw (nil: the client's own
// header) and counts it in the live stats.
func (r *Runner) doCall(inflight context.Context, k endpoint.Call, sw *sessionWire) *record.Record {
	if sw != nil {
		k.Header, k.Echo = sw.header(), sw.echo
	}
	k.KeepText = record.KeepsText(r.stats.Issued.Add(1) - 1)
	r.stats.InFlight.Add(1)
	k.Clock, k.Cut, k.Live = r.clock, endpoint.ErrCutAfterGrace, &r.stats.Streaming
	if r.pending != nil {
		f := &InFlight{Index: k.Req.Index, Scheduled: k.Scheduled}
		k.First = &f.first
		r.pending.add(f)
		defer r.pending.remove(f)
	}
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

// sessionWire is what a session's requests carry on the wire besides
// their body: the session-affinity headers, and the answers' headers the
// session sends back. One session's, used by its goroutine alone.
type sessionWire struct {
	c     *endpoint.Client
	names []string
	id    string
	echo  *endpoint.Echo // nil: nothing sent back
	hdr   http.Header
}

// sessionWire returns the wire of the session named id, or nil when the
// plan sends no session header.
func (r *Runner) sessionWire(id string) *sessionWire {
	names, echo := r.plan.Affinity(), r.plan.AffinityEcho()
	if len(names) == 0 && len(echo) == 0 {
		return nil
	}
	sw := &sessionWire{c: r.client, names: names, id: id}
	if len(echo) > 0 {
		sw.echo = &endpoint.Echo{Names: echo}
	}
	return sw
}

// header is the session's header for its next request: made once, and
// again when an answer gave a new value to send back.
func (sw *sessionWire) header() http.Header {
	if sw.hdr == nil || sw.echo != nil && sw.echo.Changed {
		sw.hdr = sw.c.SessionHeader(sw.names, sw.id, sw.echo)
		if sw.echo != nil {
			sw.echo.Changed = false
		}
	}
	return sw.hdr
}
