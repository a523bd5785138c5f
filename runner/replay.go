package runner

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

// traceLoop replays the scenario's trace: every session starts at its
// recorded offset and plays its turns in order, each after its recorded
// think time (both times the workload's time scale), with prompts and
// outputs synthesised to the recorded lengths. A session's history is
// re-sent byte for byte, and Mooncake hash ids become shared prompt
// blocks, so prefix caches behave as they did. The run's duration and
// request count still bound it.
//
// Each session is a stream with its own backoff: after a connect failure
// or an answer that asked to slow down it waits (and records the wait)
// before its next turn. A recorded turn is sent once, never again: the
// replay sends the recording's requests.
func (r *Runner) traceLoop(issue, inflight context.Context, out chan<- *record.Record) {
	if r.plan.MLPerf() != nil {
		r.mlperfLoop(issue, inflight, out)
		return
	}
	var turns atomic.Int64
	var g errgroup.Group
	for j := range r.plan.TraceSessions() {
		s := r.plan.TraceSession(r.plan.Unit(j))
		if !r.more(int(turns.Load()), s.Start) {
			break
		}
		if !backoff.Sleep(issue, r.wallTime(s.Start-r.since())) {
			break
		}
		g.Go(func() error {
			r.replaySession(issue, inflight, s, &turns, out)
			return nil
		})
	}
	_ = g.Wait()
}

// replaySession plays one recorded session.
func (r *Runner) replaySession(issue, inflight context.Context, s scenario.TraceSession, turns *atomic.Int64, out chan<- *record.Record) {
	var (
		h  history
		p  = r.newPacer(uint64(s.Index))
		sw = r.sessionWire(s.ID)
	)
	for k, u := range s.Turns {
		if k > 0 && !backoff.Sleep(issue, r.wallTime(u.Think)) {
			return
		}
		if n := turns.Add(1) - 1; issue.Err() != nil || !r.more(int(n), r.since()) {
			return
		}
		msgs := r.replayMessages(&h, u, k, s.BlockTokens, s.TextSeed)
		req := record.Request{Index: s.Index, PromptTokens: u.InputTokens, OutputTokens: max(u.OutputTokens, 1), Seed: s.TextSeed(uint64(k), 3)}
		rec := r.doMessages(inflight, req, msgs, r.since(), sw)
		rec.Session, rec.Turn = s.Index, k
		if rec.Err == record.ErrInterrupted {
			emit(out, rec, record.SessionEndInterrupted)
			return
		}
		if d := p.delay(rec); d > 0 && !r.wait(issue, rec, d, r.more(int(turns.Load()), r.since())) {
			emit(out, rec, record.SessionEndRunEnded)
			return
		}
		end := ""
		if k == len(s.Turns)-1 {
			end = record.SessionEndTurns
		}
		emit(out, rec, end)
		// The answer joins the history at the length the server gave.
		answer := rec.Usage.CompletionTokens - rec.Usage.ReasoningTokens
		if !rec.HasUsage || rec.Failed() {
			answer = u.OutputTokens - u.ReasoningTokens
		}
		answer = max(answer, 1)
		h.add(endpoint.RoleAssistant, r.prompts.Build(s.TextSeed(uint64(k), 2), answer), answer)
		reasoning := rec.Usage.ReasoningTokens
		if !rec.HasUsage || rec.Failed() {
			reasoning = u.ReasoningTokens
		}
		if reasoning > 0 && r.plan.KeepsReasoning() {
			h.reason(r.prompts.Build(s.TextSeed(uint64(k), 4), reasoning), reasoning)
		}
	}
}

// replayMessages builds turn k's conversation at the recorded prompt
// length: the history so far plus a tool result that makes up the rest, or,
// when the recorded prompt is shorter than the history (the agent
// compacted its context) or the trace gives prompt blocks, a fresh prompt.
func (r *Runner) replayMessages(h *history, u scenario.TraceTurn, k, block int, seed func(k, part uint64) uint64) []endpoint.Message {
	if len(u.HashIDs) > 0 && block > 0 {
		h.msgs, h.content = nil, 0
		content := max(u.InputTokens-r.tmpl.Tokens(1), 1)
		h.add(endpoint.RoleUser, r.blocks(u.HashIDs, block, content), content)
		return h.msgs
	}
	if len(h.msgs) > 0 {
		growth := u.InputTokens - r.tmpl.Tokens(len(h.msgs)+1) - h.content
		if growth >= 1 {
			h.add(endpoint.RoleUser, r.prompts.Build(seed(uint64(k), 1), growth), growth)
			return h.msgs
		}
	}
	h.msgs, h.content = nil, 0
	content := max(u.InputTokens-r.tmpl.Tokens(1), 1)
	h.add(endpoint.RoleUser, r.prompts.Build(seed(uint64(k), 0), content), content)
	return h.msgs
}

// blocks builds a prompt of n tokens from Mooncake-style block ids: block
// id b is always the same text, so requests that share leading ids share a
// byte-identical prefix; the last block is cut to make n.
func (r *Runner) blocks(ids []int, block, n int) string {
	var text []byte
	left := n
	for _, id := range ids {
		if left <= 0 {
			break
		}
		size := min(block, left)
		seed := uint64(id)*0x9e3779b97f4a7c15 + 0x626c6f636b // "block"
		if size < block {
			seed ^= uint64(size) << 40 // a cut block is its own text
		}
		text = append(text, r.prompts.Build(r.plan.Salt(seed), size)...)
		left -= size
	}
	if left > 0 {
		text = append(text, r.prompts.Build(r.plan.Salt(uint64(len(ids))<<32|uint64(n)), left)...)
	}
	return string(text)
}
