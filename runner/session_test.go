package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

const sessionsYAML = `pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 300, max: 500}}
  output: {tokens: {dist: uniform, min: 10, max: 20}, exact: true}
  concurrency: {mode: closed, streams: 2}
workload:
  kind: agentic
  turns: 6
  growth_tokens: {dist: uniform, min: 50, max: 200}
  think_seconds: 0.01
  MAXCTX
  ON429
requests: 12
`

func sessionsPlan(t *testing.T, extra ...string) string {
	src := strings.Replace(sessionsYAML, "MAXCTX", "max_context_tokens: 100000", 1)
	src = strings.Replace(src, "ON429", "on_429: backoff", 1)
	for i := 0; i+1 < len(extra); i += 2 {
		src = strings.Replace(src, extra[i], extra[i+1], 1)
	}
	return src
}

// bodies records each chat request's messages, by arrival order.
type bodies struct {
	mu   sync.Mutex
	msgs [][]map[string]string
}

func (b *bodies) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			data, _ := io.ReadAll(r.Body)
			var body struct {
				Messages []map[string]string `json:"messages"`
			}
			_ = json.Unmarshal(data, &body)
			b.mu.Lock()
			b.msgs = append(b.msgs, body.Messages)
			b.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(data))
		}
		next.ServeHTTP(w, r)
	})
}

// Each turn re-sends the whole history byte for byte plus the new answer
// and tool result; the server counts exactly the prompt planned (the
// per-message template overhead probed); sessions end after their turns.
func TestSessionsSnowball(t *testing.T) {
	t.Parallel()
	var seen bodies
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, seen.wrap)
	r := newProbedRunner(t, mustPlan(t, strings.Replace(sessionsPlan(t), "requests: 12", "requests: 24", 1)), simTarget(ts))
	if r.tmpl != (endpoint.Template{Overhead: 8, PerMessage: 5}) {
		t.Fatalf("probe: %+v, want overhead 8, 5 per message", r.tmpl)
	}
	recs := runAll(t, r)
	bySession := map[int][]*record.Record{}
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("request failed: %s %s", rec.Err, rec.ErrMsg)
		}
		if rec.Usage.PromptTokens != rec.RequestedPromptTokens {
			t.Errorf("session %d turn %d: server counted %d prompt tokens, planned %d", rec.Session, rec.Turn, rec.Usage.PromptTokens, rec.RequestedPromptTokens)
		}
		bySession[rec.Session] = append(bySession[rec.Session], rec)
	}
	// 24 requests over sessions of 6 turns: which sessions complete
	// depends on how the two workers interleave, so the last ones may be
	// cut by the bound.
	if len(recs) != 24 || len(bySession) < 4 {
		t.Fatalf("%d records in %d sessions, want 24 in at least 4", len(recs), len(bySession))
	}
	for s, rs := range bySession {
		slices.SortFunc(rs, func(a, b *record.Record) int { return a.Turn - b.Turn })
		for k, rec := range rs {
			if rec.Turn != k || rec.Attempt != 0 {
				t.Fatalf("session %d: turn %d attempt %d at position %d", s, rec.Turn, rec.Attempt, k)
			}
			if k > 0 && rec.RequestedPromptTokens <= rs[k-1].RequestedPromptTokens+rs[k-1].Usage.CompletionTokens {
				t.Errorf("session %d turn %d: prompt %d did not grow past %d + %d", s, k, rec.RequestedPromptTokens, rs[k-1].RequestedPromptTokens, rs[k-1].Usage.CompletionTokens)
			}
		}
		switch end := rs[len(rs)-1].SessionEnd; {
		case len(rs) == 6 && end != record.SessionEndTurns,
			len(rs) < 6 && end != "": // the run ended it between turns: unmarked, read as run_ended
			t.Errorf("session %d ended %q after %d turns", s, end, len(rs))
		}
		for _, rec := range rs[:len(rs)-1] {
			if rec.SessionEnd != "" {
				t.Errorf("session %d turn %d marked %q before its end", s, rec.Turn, rec.SessionEnd)
			}
		}
	}
	// Byte-identical history: every conversation extends an earlier one
	// (its session's previous turn) by exactly an answer and a tool result.
	seen.mu.Lock()
	defer seen.mu.Unlock()
	extended := 0
	for _, m := range seen.msgs {
		if len(m) < 3 || len(m[0]["content"]) < 100 { // not the probes
			continue
		}
		for _, prev := range seen.msgs {
			if len(prev) == len(m)-2 && slices.EqualFunc(prev, m[:len(prev)], func(a, b map[string]string) bool {
				return a["role"] == b["role"] && a["content"] == b["content"]
			}) {
				if m[len(m)-2]["role"] != "assistant" || m[len(m)-1]["role"] != "user" {
					t.Errorf("history extended by %s and %s", m[len(m)-2]["role"], m[len(m)-1]["role"])
				}
				extended++
				break
			}
		}
	}
	if want := len(recs) - len(bySession); extended != want {
		t.Errorf("%d of %d later turns extend an earlier conversation byte for byte", extended, want)
	}
}

func TestSessionEnds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		cfg     sim.Config
		edits   []string
		opts    []Option
		want    string
		maxRecs int
	}{
		{name: "context window", edits: []string{"max_context_tokens: 100000", "max_context_tokens: 800"}, want: record.SessionEndContextWindow},
		{name: "cost cap", edits: []string{"max_context_tokens: 100000", "max_context_tokens: 100000\n  cost_cap_usd: 0.0005"},
			opts: []Option{WithPricing(&record.Pricing{InputPerMTok: 1, OutputPerMTok: 1})}, want: record.SessionEndCostCap},
		{name: "429, abort-session", cfg: sim.Config{Faults: map[string]float64{sim.FaultHTTP429: 1}},
			edits: []string{"on_429: backoff", "on_429: abort-session"}, want: record.SessionEndRateLimited, maxRecs: 1},
		{name: "429, backoff exhausted", cfg: sim.Config{Faults: map[string]float64{sim.FaultHTTP429: 1}},
			edits: []string{"on_429: backoff", "on_429: backoff\n  max_retries: 2", "requests: 12", "requests: 3"}, opts: []Option{WithBackoff(time.Millisecond)},
			want: record.SessionEndRateLimited, maxRecs: 3},
		{name: "429, count-only", cfg: sim.Config{Faults: map[string]float64{sim.FaultHTTP429: 1}},
			edits: []string{"on_429: backoff", "on_429: count-only"}, want: record.SessionEndTurns, maxRecs: 6},
		{name: "other failure", cfg: sim.Config{Faults: map[string]float64{sim.FaultHTTP500: 1}}, want: record.SessionEndError, maxRecs: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := c.cfg
			cfg.Timing = sim.TimingNone
			// The simulator's 429 says Retry-After: 1; a retry-after-ms,
			// which sixpin reads first as the SDKs do, keeps the test short.
			ts, _ := serveSim(t, cfg, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Retry-After-Ms", "20")
					h.ServeHTTP(w, r)
				})
			})
			// One session at a time, so that the request bound cuts no
			// session short.
			edits := append([]string{"streams: 2", "streams: 1"}, c.edits...)
			r := newRunner(t, mustPlan(t, sessionsPlan(t, edits...)), simTarget(ts), append([]Option{WithTemplate(endpoint.Template{Overhead: 8})}, c.opts...)...)
			recs := runAll(t, r)
			ends := map[int]string{}
			count := map[int]int{}
			for _, rec := range recs {
				count[rec.Session]++
				if rec.SessionEnd != "" {
					ends[rec.Session] = rec.SessionEnd
				}
			}
			if ends[0] != c.want {
				t.Errorf("session 0 ended %q, want %q (%d records)", ends[0], c.want, count[0])
			}
			if c.maxRecs > 0 && count[0] != c.maxRecs {
				t.Errorf("session 0 made %d requests, want %d", count[0], c.maxRecs)
			}
			// Each 429 is waited out as long as the server asked, but the
			// last: after it the run could send nothing more.
			waited := 0
			for _, rec := range recs {
				if rec.Err != record.ErrHTTP429 {
					continue
				}
				if rec.RetryAfter != 20*time.Millisecond || (rec.Backoff != 0 && rec.Backoff != rec.RetryAfter) {
					t.Errorf("retry after %v, waited %v; want the server's 20 ms", rec.RetryAfter, rec.Backoff)
					break
				}
				if rec.Backoff > 0 {
					waited++
				}
			}
			if c.cfg.Faults[sim.FaultHTTP429] > 0 && waited == 0 {
				t.Errorf("no 429 was waited out")
			}
		})
	}
}

func TestSessionInterrupted(t *testing.T) {
	t.Parallel()
	g := newGate(nil)
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, func(h http.Handler) http.Handler { g.next = h; return g })
	r := newRunner(t, mustPlan(t, sessionsPlan(t)), simTarget(ts), WithTemplate(endpoint.Template{Overhead: 8}))
	issue, stop := context.WithCancel(context.Background())
	inflight, cut := context.WithCancel(context.Background())
	t.Cleanup(g.release) // after the records are in: a release before the cut has taken effect would let them finish
	ch := r.Run(issue, inflight)
	g.wait(t, 2)
	stop()
	cut()
	recs := collect(t, ch)
	for _, rec := range recs {
		if rec.SessionEnd != record.SessionEndInterrupted {
			t.Errorf("session %d turn %d ended %q, want interrupted", rec.Session, rec.Turn, rec.SessionEnd)
		}
	}
	if len(recs) != 2 {
		t.Errorf("%d records, want the 2 in flight", len(recs))
	}
}

// Agentic sessions over Anthropic's Messages API with prompt caching:
// the first turn writes its prompt to the cache, every later turn reads
// what the one before wrote (the breakpoints go after the first prompt
// and at the end of the history), and the cost counts reads and writes at
// their prices.
func TestSessionsMessagesPromptCaching(t *testing.T) {
	t.Parallel()
	yes := true
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, PrefixCaching: &yes}, nil)
	tg := simTarget(ts)
	tg.Protocol = endpoint.ProtocolMessages
	recs := runAll(t, newProbedRunner(t, mustPlan(t, sessionsPlan(t, "streams: 2", "streams: 1")), tg))
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("session %d turn %d: %s %s", rec.Session, rec.Turn, rec.Err, rec.ErrMsg)
		}
		u := rec.Usage
		switch {
		case rec.Turn == 0 && (u.CacheWriteTokens == 0 || u.CachedTokens != 0):
			t.Errorf("session %d turn 0: usage %+v, want a cache write and no read", rec.Session, u)
		case rec.Turn > 0 && u.CachedTokens == 0:
			t.Errorf("session %d turn %d: usage %+v, want the history read from the cache", rec.Session, rec.Turn, u)
		case u.CachedTokens+u.CacheWriteTokens > u.PromptTokens:
			t.Errorf("session %d turn %d: usage %+v: cached parts exceed the prompt", rec.Session, rec.Turn, u)
		}
	}
}

// preserve_reasoning in agentic sessions: kept, every answer's reasoning
// joins the history (reasoning_content, under preserve_thinking), and the
// served prompts grow by it — exactly the prompt planned; dropped (the
// default), they do not.
func TestSessionsPreserveReasoning(t *testing.T) {
	t.Parallel()
	served := map[bool][]*record.Record{}
	for _, keep := range []bool{true, false} {
		ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, ReasoningShare: 0.5}, nil)
		src := sessionsPlan(t, "streams: 2", "streams: 1", "requests: 12", "requests: 6",
			"on_429: backoff", "on_429: backoff\n  preserve_reasoning: "+map[bool]string{true: "true", false: "false"}[keep])
		r := newProbedRunner(t, mustPlan(t, src), simTarget(ts))
		recs := runAll(t, r)
		slices.SortFunc(recs, func(a, b *record.Record) int { return a.Turn - b.Turn })
		if len(recs) != 6 {
			t.Fatalf("%d records", len(recs))
		}
		for _, rec := range recs {
			if rec.Failed() || rec.Usage.ReasoningTokens == 0 {
				t.Fatalf("turn %d: %s %s, %d reasoning tokens", rec.Turn, rec.Err, rec.ErrMsg, rec.Usage.ReasoningTokens)
			}
			if rec.Usage.PromptTokens != rec.RequestedPromptTokens {
				t.Errorf("keep %t turn %d: served %d prompt tokens, planned %d", keep, rec.Turn, rec.Usage.PromptTokens, rec.RequestedPromptTokens)
			}
		}
		served[keep] = recs
	}
	reasoning := 0
	for k, kept := range served[true] {
		if diff := kept.Usage.PromptTokens - served[false][k].Usage.PromptTokens; diff != reasoning {
			t.Errorf("turn %d: kept − dropped = %d prompt tokens, want the %d reasoning tokens of the answers before it", k, diff, reasoning)
		}
		reasoning += kept.Usage.ReasoningTokens
	}
}

// Under a stationary start each worker's first session joins its life at
// the plan's turn, its history built from the planned outputs and sent
// cold: the server counts exactly that history; the sessions after it
// start at their first turn.
func TestSessionsStationaryStart(t *testing.T) {
	t.Parallel()
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
	p := mustPlan(t, strings.Replace(sessionsPlan(t, "on_429: backoff", "on_429: backoff\n  start: stationary"), "requests: 12", "requests: 30", 1))
	joined := 0
	for i := range 2 {
		s := p.Session(i)
		j := p.Joining(s, i, 2)
		if j.Turn < 0 || j.Turn >= s.Turns || (j.Turn == 0 && j.Wait != 0) || j.Wait < 0 || j.Wait > s.Think[j.Turn] {
			t.Fatalf("session %d joins at %+v of %d turns (think %v)", i, j, s.Turns, s.Think)
		}
		if j.Turn > 0 {
			joined++
		}
	}
	if joined == 0 {
		t.Fatal("neither first session joins mid-life at this seed: the test would not test it")
	}
	r := newProbedRunner(t, p, simTarget(ts))
	first := map[int]*record.Record{}
	for _, rec := range runAll(t, r) {
		if rec.Failed() {
			t.Fatalf("request failed: %s %s", rec.Err, rec.ErrMsg)
		}
		if f := first[rec.Session]; f == nil || rec.Turn < f.Turn {
			first[rec.Session] = rec
		}
	}
	if len(first) < 3 {
		t.Fatalf("%d sessions, want the two first and at least one after", len(first))
	}
	for i, rec := range first {
		s := p.Session(i)
		want := 0
		if i < 2 {
			want = p.Joining(s, i, 2).Turn
		}
		if rec.Turn != want {
			t.Errorf("session %d began at turn %d, want %d", i, rec.Turn, want)
		}
		// The first prompt's planned length holds its one message's
		// template; each later message adds its own.
		if plan := s.PromptTokens(rec.Turn) - r.tmpl.Tokens(1) + r.tmpl.Tokens(2*rec.Turn+1); rec.RequestedPromptTokens != plan || rec.Usage.PromptTokens != plan {
			t.Errorf("session %d turn %d: requested %d, server counted %d, planned history %d", i, rec.Turn, rec.RequestedPromptTokens, rec.Usage.PromptTokens, plan)
		}
	}
}

// preserve_reasoning under a stationary start: a session that joins
// mid-life has no reasoning for the planned answers of its history (no
// model gave them), so its cold turn re-sends none and is exactly the
// planned history; from then on each answer's reasoning joins it as in a
// fresh session, and every turn is served exactly the prompt planned.
func TestSessionsStationaryPreserveReasoning(t *testing.T) {
	t.Parallel()
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, ReasoningShare: 0.5}, nil)
	p := mustPlan(t, strings.Replace(sessionsPlan(t, "on_429: backoff", "on_429: backoff\n  start: stationary\n  preserve_reasoning: true"), "requests: 12", "requests: 30", 1))
	if !p.KeepsReasoning() || !p.SessionPolicy().Stationary {
		t.Fatalf("keeps reasoning %t, stationary %t", p.KeepsReasoning(), p.SessionPolicy().Stationary)
	}
	r := newProbedRunner(t, p, simTarget(ts))
	first := map[int]*record.Record{}
	later := 0 // turns after a joined session's cold one, which re-send reasoning
	recs := runAll(t, r)
	for _, rec := range recs {
		if rec.Failed() || rec.Usage.ReasoningTokens == 0 {
			t.Fatalf("session %d turn %d: %s %s, %d reasoning tokens", rec.Session, rec.Turn, rec.Err, rec.ErrMsg, rec.Usage.ReasoningTokens)
		}
		if rec.Usage.PromptTokens != rec.RequestedPromptTokens {
			t.Errorf("session %d turn %d: served %d prompt tokens, planned %d", rec.Session, rec.Turn, rec.Usage.PromptTokens, rec.RequestedPromptTokens)
		}
		if f := first[rec.Session]; f == nil || rec.Turn < f.Turn {
			first[rec.Session] = rec
		}
	}
	joined := 0
	for i := range 2 {
		s := p.Session(i)
		j := p.Joining(s, i, 2)
		rec := first[i]
		if rec == nil || rec.Turn != j.Turn {
			t.Fatalf("session %d: first record %+v, want turn %d", i, rec, j.Turn)
		}
		if j.Turn == 0 {
			continue
		}
		joined++
		if plan := s.PromptTokens(rec.Turn) - r.tmpl.Tokens(1) + r.tmpl.Tokens(2*rec.Turn+1); rec.Usage.PromptTokens != plan {
			t.Errorf("session %d joined at turn %d: server counted %d, planned history %d", i, rec.Turn, rec.Usage.PromptTokens, plan)
		}
		for _, rec := range recs {
			if rec.Session == i && rec.Turn > j.Turn {
				later++
			}
		}
	}
	if joined == 0 || later == 0 {
		t.Fatalf("%d sessions joined mid-life, %d later turns: the test would not test it", joined, later)
	}
}

// A turn's record is sent as soon as the turn is done, not held until the
// session's next turn: the judge of a capacity point, the live page and a
// crash's spill see it while the session thinks. A session the run ends
// between turns leaves its last record unmarked (the results read it as
// run_ended).
func TestSessionRecordsSentAtOnce(t *testing.T) {
	t.Parallel()
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
	r := newRunner(t, mustPlan(t, sessionsPlan(t, "streams: 2", "streams: 1", "think_seconds: 0.01", "think_seconds: 60")),
		simTarget(ts), WithTemplate(endpoint.Template{Overhead: 8}))
	issue, stop := context.WithCancel(context.Background())
	ch := r.Run(issue, context.Background())
	select {
	case rec := <-ch:
		if rec.Turn != 0 || rec.SessionEnd != "" || rec.Failed() {
			t.Errorf("first record: turn %d, end %q, err %q", rec.Turn, rec.SessionEnd, rec.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first turn's record was held back while its session thought")
	}
	stop()
	if rest := collect(t, ch); len(rest) != 0 {
		t.Errorf("%d more records after the run ended in a think time", len(rest))
	}
}
