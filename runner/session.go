package runner

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// sessionLoop runs agentic sessions: each of Streams workers plays the
// next session of the plan, turn after turn, until the run's bounds (the
// duration, Requests counted in turns, or the workload's Sessions) end it.
func (r *Runner) sessionLoop(issue, inflight context.Context, out chan<- *results.Record) {
	var next, turns atomic.Int64
	var g errgroup.Group
	limit := r.plan.SessionLimit()
	for range r.plan.Streams() {
		g.Go(func() error {
			for issue.Err() == nil && r.more(int(turns.Load()), r.since()) {
				i := int(next.Add(1) - 1)
				if limit > 0 && i >= limit {
					return nil
				}
				r.session(issue, inflight, r.plan.Session(r.plan.Unit(i)), &turns, out)
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

// session plays one session and emits its records, the last one marked
// with why the session ended. A turn rate-limited under on_429: backoff,
// or one that could not connect, is sent again after a backoff.
func (r *Runner) session(issue, inflight context.Context, s scenario.Session, turns *atomic.Int64, out chan<- *results.Record) {
	w := r.plan.SessionPolicy()
	rng := rand.New(rand.NewPCG(s.Seed, 0x6a6974746572)) // "jitter"
	seed := func(k, part uint64) uint64 { return r.plan.Salt(s.Seed ^ (k<<8|part)*0x9e3779b97f4a7c15) }
	var (
		h    history
		last *results.Record
		cost float64
		end  string
	)
	emit := func(rec *results.Record) {
		if last != nil {
			out <- last
		}
		last = rec
	}
	first := max(s.FirstPromptTokens-r.tmpl.Tokens(1), 1)
	h.add(endpoint.RoleUser, r.prompts.Build(seed(0, 0), first), first)

turns:
	for k := 0; k < s.Turns; k++ {
		if k > 0 {
			h.add(endpoint.RoleUser, r.prompts.Build(seed(uint64(k), 1), s.Growth[k]), s.Growth[k])
			if !backoff.Sleep(issue, r.wallTime(s.Think[k])) {
				end = results.SessionEndRunEnded
				break
			}
		}
		prompt := h.content + r.tmpl.Tokens(len(h.msgs))
		if w.MaxContextTokens > 0 && prompt+s.Outputs[k] > w.MaxContextTokens {
			end = results.SessionEndContextWindow
			break
		}
		req := scenario.Request{Index: s.Index, PromptTokens: prompt, OutputTokens: s.Outputs[k], Seed: s.Seed}
		var rec *results.Record
		limited, unreachable := 0, 0 // 429 and connect retries of this turn
		for attempt := 0; ; attempt++ {
			// Take a request slot; the run's bounds count every attempt.
			if n := turns.Add(1) - 1; issue.Err() != nil || !r.more(int(n), r.since()) {
				end = results.SessionEndRunEnded
				break turns
			}
			rec = r.doMessages(inflight, req, h.msgs, r.since())
			rec.Session, rec.Turn, rec.Attempt = s.Index, k, attempt
			emit(rec)
			if !rec.Failed() {
				break
			}
			switch {
			case rec.Err == results.ErrInterrupted:
				end = results.SessionEndInterrupted
			case rec.Err == results.ErrHTTP429 && w.On429 == scenario.On429CountOnly:
				continue turns
			case rec.Err == results.ErrHTTP429 && w.On429 == scenario.On429Backoff && limited < w.MaxRetries:
				if backoff.Sleep(issue, r.wallTime(r.backoffDelay(rng, limited, rec.RetryAfter))) {
					limited++
					continue
				}
				end = results.SessionEndRunEnded
			case rec.Err == results.ErrConnect:
				// The endpoint is away: wait, and send the turn again
				// until it is back or the run ends.
				if backoff.Sleep(issue, r.connectDelay(rng, unreachable)) {
					unreachable++
					continue
				}
				end = results.SessionEndRunEnded
			case rec.Err == results.ErrHTTP429:
				end = results.SessionEndRateLimited
			case rec.Err == results.ErrHTTP4xx && strings.Contains(strings.ToLower(rec.ErrMsg), "context length"):
				end = results.SessionEndContextWindow
			default:
				end = results.SessionEndError
			}
			break turns
		}
		answer := rec.Usage.CompletionTokens - rec.Usage.ReasoningTokens
		if !rec.HasUsage {
			answer = len(rec.Chunks)
		}
		answer = max(answer, 1)
		h.add(endpoint.RoleAssistant, r.prompts.Build(seed(uint64(k), 2), answer), answer)
		if r.pricing != nil {
			cost += r.pricing.RequestUSD(rec.Usage)
			if w.CostCapUSD > 0 && cost > w.CostCapUSD {
				end = results.SessionEndCostCap
				break
			}
		}
	}
	if end == "" {
		end = results.SessionEndTurns
	}
	if last != nil {
		last.SessionEnd = end
		out <- last
	}
}

// backoffDelay is the wait before retry attempt+1 of a rate-limited turn:
// the server's Retry-After, or the jittered exponential backoff, whichever
// is longer.
func (r *Runner) backoffDelay(rng *rand.Rand, attempt int, retryAfter time.Duration) time.Duration {
	return max(backoff.Jittered(rng, r.backoff, maxBackoff, attempt), retryAfter)
}
