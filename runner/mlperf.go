package runner

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/backoff"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/trace"
)

// preserveThinking is the request member that asks the server's chat
// template to keep earlier turns' reasoning, as MLPerf's agentic rules
// set it (mlcommons/endpoints ea33275,
// examples/10_Agentic_Inference/README.md: chat_template_kwargs.
// preserve_thinking: true; "the chat template must not omit reasoning
// tokens from any previous turn").
const preserveThinking = `,"chat_template_kwargs":{"preserve_thinking":true}`

// mlperfLoop replays MLPerf's agentic dataset as its reference client
// does (mlcommons/endpoints ea33275, agentic_inference_strategy.py):
// Streams conversations at once (target_concurrency), each worker taking
// the next trajectory when its last one ends; trajectory i is
// conversation i mod N, repeat i/N + 1, until the plan's trajectories
// (num_trajectories_to_issue) or the run's bounds run out.
func (r *Runner) mlperfLoop(issue, inflight context.Context, out chan<- *record.Record) {
	d := r.plan.MLPerf()
	n := r.plan.MLPerfTrajectories()
	var next, turns atomic.Int64
	var g errgroup.Group
	for w := range r.plan.Streams() {
		g.Go(func() error {
			p := r.newPacer(uint64(w))
			for issue.Err() == nil && r.more(int(turns.Load()), r.since()) {
				j := int(next.Add(1) - 1)
				if j >= n {
					return nil
				}
				i := r.plan.Unit(j)
				c := &d.Conversations[i%len(d.Conversations)]
				r.mlperfTrajectory(issue, inflight, c, i, i/len(d.Conversations)+1, p, &turns, out)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// mlperfTrajectory plays one trajectory: repeat (from 1) of conversation
// c, as trajectory i. Its system prompt is salted for the repeat and the
// conversation (trace.MLPerfSaltedSystem); each client row (user, tool)
// is one request, sent after the row's delay_seconds (times
// workload.time_scale) with the conversation so far — the recorded
// answers, not the live ones, so every request of a trajectory extends the
// last one's prefix — and its tools and sampling parameters; every
// request carries the trajectory's session id (trace.MLPerfSessionID) as
// X-Session-ID and in the other workload.session_affinity headers
// (Plan.Affinity), and sends back the echo headers. Earlier answers' reasoning is re-sent when the plan keeps
// it (preserve_reasoning), with chat_template_kwargs.preserve_thinking so
// the server's template keeps it too. A failed turn ends the trajectory,
// as in MLPerf's reference: later turns depend on it.
func (r *Runner) mlperfTrajectory(issue, inflight context.Context, c *trace.MLPerfConversation, i, repeat int, p *pacer, turns *atomic.Int64, out chan<- *record.Record) {
	keep := r.plan.KeepsReasoning()
	sw := r.sessionWire(trace.MLPerfSessionID(c.ID, repeat))
	var (
		msgs  []endpoint.Message
		words int  // of the messages' texts: the requested prompt length
		k     int  // client turns sent
		final = -1 // the last client row
	)
	for ri := range c.Rows {
		if c.Rows[ri].Client() {
			final = ri
		}
	}
	if c.System != "" {
		sys := trace.MLPerfSaltedSystem(c.System, repeat, c.ID)
		msgs = append(msgs, endpoint.Message{Role: endpoint.RoleSystem, Content: sys, Cache: len(sys)})
		words += wordCount(sys)
	}
	tools, maxTokens := mlperfDefaults(c)
	for ri := range c.Rows {
		row := &c.Rows[ri]
		if !row.Client() {
			m, n := mlperfAnswer(row, keep)
			msgs = append(msgs, m)
			words += n
			continue
		}
		ms, n := mlperfClientMessages(row)
		msgs = append(msgs, ms...)
		words += n
		if row.Delay > 0 && !backoff.Sleep(issue, r.wallTime(r.plan.TraceTime(row.Delay))) {
			return
		}
		if n := turns.Add(1) - 1; issue.Err() != nil || !r.more(int(n), r.since()) {
			return
		}
		out1 := row.MaxTokens
		if out1 == 0 {
			out1 = maxTokens
		}
		extra := mlperfExtra(row, tools, keep)
		req := record.Request{Index: i, PromptTokens: words + r.tmpl.Tokens(len(msgs)), OutputTokens: out1}
		rec := r.doCall(inflight, endpoint.Call{Req: req, Msgs: msgs, Scheduled: r.since(), Extra: extra}, sw)
		rec.Session, rec.Turn = i, k
		k++
		switch {
		case rec.Err == record.ErrInterrupted:
			emit(out, rec, record.SessionEndInterrupted)
			return
		case rec.Failed():
			if d := p.delay(rec); d > 0 {
				r.wait(issue, rec, d, r.more(int(turns.Load()), r.since()))
			}
			emit(out, rec, record.SessionEndError)
			return
		}
		if d := p.delay(rec); d > 0 && !r.wait(issue, rec, d, r.more(int(turns.Load()), r.since())) {
			emit(out, rec, record.SessionEndRunEnded)
			return
		}
		end := ""
		if ri == final {
			end = record.SessionEndTurns
		}
		emit(out, rec, end)
	}
}

// mlperfDefaults are what a conversation's first user row gives every
// client turn that does not say: its tools and its output cap (else
// trace.MLPerfDefaultMaxTokens), as MLPerf's reference propagates them
// (agentic_inference_dataset.py, _PROPAGATED_KEYS).
func mlperfDefaults(c *trace.MLPerfConversation) (tools []byte, maxTokens int) {
	maxTokens = trace.MLPerfDefaultMaxTokens
	for i := range c.Rows {
		if r := &c.Rows[i]; r.Role == "user" {
			if r.MaxTokens > 0 {
				maxTokens = r.MaxTokens
			}
			return r.Tools, maxTokens
		}
	}
	return nil, maxTokens
}

// mlperfExtra are a client turn's request members: its tools (else the
// conversation's), its sampling parameters, and preserve_thinking when
// reasoning is kept.
func mlperfExtra(row *trace.MLPerfRow, tools []byte, keep bool) []byte {
	if row.Tools != nil {
		tools = row.Tools
	}
	var b []byte
	if tools != nil {
		b = append(append(b, `,"tools":`...), tools...)
	}
	b = append(b, row.Params...)
	if keep {
		b = append(b, preserveThinking...)
	}
	return b
}

// mlperfClientMessages are a client row's messages: a user message, or
// one tool message per tool result; and their texts' words.
func mlperfClientMessages(row *trace.MLPerfRow) ([]endpoint.Message, int) {
	if row.Role == "user" {
		return []endpoint.Message{{Role: endpoint.RoleUser, Content: row.Content, Raw: nameMember(row.Name)}}, wordCount(row.Content)
	}
	ms := make([]endpoint.Message, len(row.ToolResults))
	n := 0
	for j, tr := range row.ToolResults {
		ms[j] = endpoint.Message{Role: "tool", Content: tr.Content,
			Raw: append([]byte(`,"tool_call_id":`), jsonString(tr.ToolCallID)...)}
		n += wordCount(tr.Content)
	}
	return ms, n
}

// mlperfAnswer is a recorded assistant row as the history re-sends it:
// its content (null when it only calls tools), its tool calls, and its
// reasoning when keep; and its texts' words.
func mlperfAnswer(row *trace.MLPerfRow, keep bool) (endpoint.Message, int) {
	m := endpoint.Message{Role: endpoint.RoleAssistant, Content: row.Content, NullContent: !row.HasContent, Raw: nameMember(row.Name)}
	n := wordCount(row.Content)
	if row.ToolCalls != nil {
		m.Raw = append(append(m.Raw, `,"tool_calls":`...), row.ToolCalls...)
		n += wordCount(string(row.ToolCalls))
	}
	if keep && row.Reasoning != "" {
		m.Raw = append(append(m.Raw, `,"reasoning_content":`...), jsonString(row.Reasoning)...)
		n += wordCount(row.Reasoning)
	}
	return m, n
}

// nameMember is a message's name member, if it has one.
func nameMember(name string) []byte {
	if name == "" {
		return nil
	}
	return append([]byte(`,"name":`), jsonString(name)...)
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// wordCount is sixpin's word-level count of s (one token per
// whitespace-separated word): the requested prompt length of a replayed
// conversation, whose texts are not built to a tokenizer.
func wordCount(s string) int { return len(strings.Fields(s)) }
