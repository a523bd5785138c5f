package runner

import (
	"context"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

// sessionLoop runs agentic sessions: each of Streams workers plays the
// next session of the plan, turn after turn, until the run's bounds (the
// duration, Requests counted in turns, or the workload's Sessions) end it.
// Under a stationary start each worker's first session — the i-th of the
// plan's first Streams — joins its life at the plan's Joining, stratum i;
// the sessions after it start fresh.
func (r *Runner) sessionLoop(issue, inflight context.Context, out chan<- *record.Record) {
	var next, turns atomic.Int64
	var g errgroup.Group
	limit := r.plan.SessionLimit()
	stationary := r.plan.SessionPolicy().Stationary
	for w := range r.plan.Streams() {
		g.Go(func() error {
			p := r.newPacer(uint64(w))
			for first := true; issue.Err() == nil && r.more(int(turns.Load()), r.since()); first = false {
				i := int(next.Add(1) - 1)
				if limit > 0 && i >= limit {
					return nil
				}
				s := r.plan.Session(r.plan.Unit(i))
				var join scenario.Joining
				if first && stationary {
					join = r.plan.Joining(s, i, r.plan.Streams())
				}
				r.session(issue, inflight, s, join, p, &turns, out)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// history is a session's conversation: the first prompt, then for each
// turn the answer and the next tool result. Every text is built once, so
// each turn re-sends the history byte for byte and a prefix cache can hit.
type history struct {
	msgs    []endpoint.Message
	content int // tokens of all message contents
}

func (h *history) add(role, text string, tokens int) {
	m := endpoint.Message{Role: role, Content: text}
	if len(h.msgs) == 0 {
		// Every later turn repeats the first prompt: a prompt-caching
		// breakpoint after it (Anthropic's cache_control) lets turn 2
		// read it; the protocol marks the end of the history itself.
		m.Cache = len(text)
	}
	h.msgs = append(h.msgs, m)
	h.content += tokens
}

// reason adds reasoning of tokens tokens to the last message (an answer),
// sent as its reasoning_content: a history that keeps its reasoning
// (preserve_reasoning).
func (h *history) reason(text string, tokens int) {
	m := &h.msgs[len(h.msgs)-1]
	m.Raw = append(append(m.Raw, `,"reasoning_content":`...), jsonString(text)...)
	h.content += tokens
}

// emit sends a session's record as soon as it is done — the judge, the
// live page and a crash's spill see a turn when it ends, not a turn
// later — marked with end when it is the session's last. "" when the
// session goes on, or when what ends it comes after (the run's end
// during a think time), which the results read as run_ended.
func emit(out chan<- *record.Record, rec *record.Record, end string) {
	rec.SessionEnd = end
	out <- rec
}

// session plays one session on a worker whose backoff is p, from the turn
// join names (its history before that built from the plan's outputs and
// sent cold with that turn), and emits each record as it is done, the
// last one marked with why the session ended (unmarked when the run
// ended it between turns: the results read that as run_ended). After a
// connect failure or an answer that asked to slow down the worker waits
// (p), whatever comes next: the turn again, the next turn, or the next
// session. A turn that could not connect, or was answered 503 or 529 (a
// server away, still loading, or overloaded), is sent again until it is
// answered or the run ends; a 429 is on_429's: sent again up to
// max_retries (backoff), the session ended (abort-session), or the next
// turn (count-only).
func (r *Runner) session(issue, inflight context.Context, s scenario.Session, join scenario.Joining, p *pacer, turns *atomic.Int64, out chan<- *record.Record) {
	w := r.plan.SessionPolicy()
	seed := func(k, part uint64) uint64 { return r.plan.Salt(s.Seed ^ (k<<8|part)*0x9e3779b97f4a7c15) }
	var (
		h    history
		cost float64
	)
	// endsBefore says why the session ends before turn k, as far as it is
	// known once turn k−1 is done: it had all its turns, or turn k's
	// prompt would not fit ("" when it goes on).
	endsBefore := func(k int) string {
		switch {
		case k >= s.Turns:
			return record.SessionEndTurns
		case w.MaxContextTokens > 0 && h.content+s.Growth[k]+r.tmpl.Tokens(len(h.msgs)+1)+s.Outputs[k] > w.MaxContextTokens:
			return record.SessionEndContextWindow
		}
		return ""
	}
	sw := r.sessionWire(s.ID)
	first := max(s.FirstPromptTokens-r.tmpl.Tokens(1), 1)
	h.add(endpoint.RoleUser, r.prompts.Build(seed(0, 0), first), first)

	for k := 0; k < join.Turn; k++ {
		if k > 0 {
			h.add(endpoint.RoleUser, r.prompts.Build(seed(uint64(k), 1), s.Growth[k]), s.Growth[k])
		}
		h.add(endpoint.RoleAssistant, r.prompts.Build(seed(uint64(k), 2), s.Outputs[k]), s.Outputs[k])
	}

	// Every record is sent as soon as it is done (emit), so what ends
	// the session is worked out before its last record goes.
turns:
	for k := join.Turn; k < s.Turns; k++ {
		if k > 0 {
			h.add(endpoint.RoleUser, r.prompts.Build(seed(uint64(k), 1), s.Growth[k]), s.Growth[k])
			think := s.Think[k]
			if k == join.Turn {
				think = join.Wait
			}
			if !backoff.Sleep(issue, r.wallTime(think)) {
				return // the run ended
			}
		}
		prompt := h.content + r.tmpl.Tokens(len(h.msgs))
		if k == join.Turn && w.MaxContextTokens > 0 && prompt+s.Outputs[k] > w.MaxContextTokens {
			return // its first prompt does not fit: no record (a later turn's: endsBefore)
		}
		req := record.Request{Index: s.Index, PromptTokens: prompt, OutputTokens: s.Outputs[k], Seed: s.Seed}
		var rec *record.Record
		limited := 0 // 429 retries of this turn
		for attempt := 0; ; attempt++ {
			// Take a request slot; the run's bounds count every attempt.
			if n := turns.Add(1) - 1; issue.Err() != nil || !r.more(int(n), r.since()) {
				return // the run ended
			}
			rec = r.doMessages(inflight, req, h.msgs, r.since(), sw)
			rec.Session, rec.Turn, rec.Attempt = s.Index, k, attempt
			d := p.delay(rec)
			if !rec.Failed() {
				break
			}
			if rec.Err == record.ErrInterrupted {
				emit(out, rec, record.SessionEndInterrupted)
				return
			}
			if d > 0 && !r.wait(issue, rec, d, r.more(int(turns.Load()), r.since())) {
				emit(out, rec, record.SessionEndRunEnded)
				return
			}
			switch {
			case rec.Err == record.ErrConnect, slowDown(rec) && rec.Err != record.ErrHTTP429:
				emit(out, rec, "")
				continue
			case rec.Err == record.ErrHTTP429 && w.On429 == scenario.On429CountOnly:
				end := endsBefore(k + 1)
				emit(out, rec, end)
				if end != "" {
					return
				}
				continue turns
			case rec.Err == record.ErrHTTP429 && w.On429 == scenario.On429Backoff && limited < w.MaxRetries:
				limited++
				emit(out, rec, "")
				continue
			case rec.Err == record.ErrHTTP429:
				emit(out, rec, record.SessionEndRateLimited)
			case rec.Err == record.ErrHTTP4xx && strings.Contains(strings.ToLower(rec.ErrMsg), "context length"):
				emit(out, rec, record.SessionEndContextWindow)
			default:
				emit(out, rec, record.SessionEndError)
			}
			return
		}
		answer := rec.Usage.CompletionTokens - rec.Usage.ReasoningTokens
		if !rec.HasUsage {
			answer = len(rec.Chunks)
		}
		answer = max(answer, 1)
		h.add(endpoint.RoleAssistant, r.prompts.Build(seed(uint64(k), 2), answer), answer)
		if n := rec.Usage.ReasoningTokens; n > 0 && r.plan.KeepsReasoning() {
			h.reason(r.prompts.Build(seed(uint64(k), 4), n), n)
		}
		if r.pricing != nil {
			cost += r.pricing.RequestUSD(rec.Usage)
			if w.CostCapUSD > 0 && cost > w.CostCapUSD {
				emit(out, rec, record.SessionEndCostCap)
				return
			}
		}
		end := endsBefore(k + 1)
		emit(out, rec, end)
		if end != "" {
			return
		}
	}
}
