package scenario

import (
	"fmt"
	"sync"
	"time"

	"github.com/sixpin/sixpin/trace"
)

// Mode returns how the plan issues load, and so what its units are: the
// concurrency pin's mode, ModeSessions for agentic sessions (declared
// closed) and ModeTrace for a trace replay.
func (p *Plan) Mode() Mode {
	switch w := p.s.Workload; {
	case w.Agentic():
		return ModeSessions
	case w.Replay():
		return ModeTrace
	case p.s.Pins.Concurrency.Mode == ModeOpen:
		return ModeOpen
	}
	return ModeClosed
}

// Seed returns the plan's seed.
func (p *Plan) Seed() uint64 { return p.seed }

// Streams returns how many closed-loop workers or concurrent agentic
// sessions the plan runs (a shard's share of the scenario's streams).
func (p *Plan) Streams() int {
	if p.s.Workload.MLPerfReplay() && p.s.Pins.Concurrency.Streams == 0 {
		return p.MLPerfTrajectories() // MLPerf's default: every trajectory at once
	}
	return p.sh.share(p.s.Pins.Concurrency.Streams)
}

// MLPerf returns the MLPerf agentic dataset the plan replays (nil: none).
func (p *Plan) MLPerf() *trace.MLPerfAgentic {
	if !p.s.Workload.MLPerfReplay() {
		return nil
	}
	return p.s.Workload.MLPerf
}

// MLPerfTrajectories returns how many trajectories an MLPerf replay
// plays (a shard's share): workload.sessions, MLPerf's
// num_trajectories_to_issue, else one pass over the dataset. Trajectory
// i plays conversation i mod N, repeat i/N + 1.
func (p *Plan) MLPerfTrajectories() int {
	d := p.MLPerf()
	if d == nil {
		return 0
	}
	n := p.s.Workload.Sessions
	if n == 0 {
		n = len(d.Conversations)
	}
	return p.sh.share(n)
}

// KeepsReasoning reports whether later turns re-send earlier answers'
// reasoning (workload.preserve_reasoning).
func (p *Plan) KeepsReasoning() bool { return p.s.Workload.KeepsReasoning() }

// Rate returns the open-loop arrival rate in requests per second (a
// shard's share: the scenario's rate / N); 0 in closed loop.
func (p *Plan) Rate() float64 {
	c := p.s.Pins.Concurrency
	if c.Mode != ModeOpen {
		return 0
	}
	return c.Rate / float64(p.sh.n())
}

// MaxInFlight returns the cap on open-loop requests in flight (a shard's
// share); 0 means no cap.
func (p *Plan) MaxInFlight() int { return p.sh.share(p.s.Pins.Concurrency.MaxInFlight) }

// Bounds returns when the plan stops issuing: after duration (0: no
// bound in time), or after requests requests (agentic sessions and trace
// replays count turns; a shard's share; 0: no bound in count).
func (p *Plan) Bounds() (duration time.Duration, requests int) {
	return p.s.Duration.D(), p.sh.share(p.s.Requests)
}

// SessionLimit returns how many agentic sessions the plan plays at most
// (a shard's share of workload.sessions; 0: unbounded).
func (p *Plan) SessionLimit() int { return p.sh.share(p.s.Workload.Sessions) }

// RequestTimeout returns the scenario's bound on one request (0: the
// runner's default).
func (p *Plan) RequestTimeout() time.Duration { return p.s.RequestTimeout.D() }

// ExactOutput reports whether every request must get exactly its planned
// output length: an exact output pin, or a replay (which keeps the
// recorded lengths; MLPerf's agentic dataset is replayed as its rules
// say: the model answers freely, up to each turn's max_new_tokens).
func (p *Plan) ExactOutput() bool {
	w := p.s.Workload
	return p.s.Pins.Output.Exact || w.Replay() && !w.MLPerfReplay()
}

// PrefixGroups returns how many shared prompt prefixes there are (0: the
// prompts share none); SharedPrefix(g) gives each.
func (p *Plan) PrefixGroups() int {
	if pp := p.s.Pins.Prompt; pp.SharedPrefixTokens > 0 {
		return max(pp.PrefixGroups, 1)
	}
	return 0
}

// SessionPolicy is how an agentic session meets a limit.
type SessionPolicy struct {
	// MaxContextTokens ends a session before a turn whose prompt and
	// output would exceed it (0: no limit).
	MaxContextTokens int
	// CostCapUSD ends a session once it has cost more (0: no cap).
	CostCapUSD float64
	// On429 is the On429* policy; MaxRetries bounds a turn's backoffs.
	On429      string
	MaxRetries int
	// Stationary starts the sessions running when load starts at random
	// phases of their lives (Plan.Joining).
	Stationary bool
}

// SessionPolicy returns the plan's agentic session policy.
func (p *Plan) SessionPolicy() SessionPolicy {
	w := p.s.Workload
	return SessionPolicy{MaxContextTokens: w.MaxContextTokens, CostCapUSD: w.CostCapUSD, On429: w.On429, MaxRetries: w.MaxRetries,
		Stationary: w.Stationary()}
}

// TraceSession is one trace session as the plan replays it: its recorded
// lengths, and its times stretched by the workload's time scale.
type TraceSession struct {
	// Index is the session's position in the trace file, from 0: the
	// records' session index and the seed of its texts.
	Index int
	// ID names the session on the wire, in the session-affinity headers
	// (Plan.Affinity): the trace's own id for it, with the plan's prompt
	// salt appended when it has one.
	ID string
	// Start is when it starts, from the start of load.
	Start time.Duration
	Turns []TraceTurn
	// BlockTokens is how many prompt tokens a hash id stands for (0: the
	// trace has none).
	BlockTokens int
	salt        uint64
}

// TraceTurn is one recorded request of a trace session.
type TraceTurn struct {
	// Think is the wait before it (0 for the first turn).
	Think time.Duration
	// InputTokens is the whole prompt, OutputTokens everything generated,
	// ReasoningTokens the reasoning part of it, in tokens.
	InputTokens, OutputTokens, ReasoningTokens int
	// HashIDs are the prompt's block ids (shared leading ids: a shared
	// prefix).
	HashIDs []int
}

// TextSeed seeds the text of part (0 a fresh prompt, 1 a tool result, 2
// an answer, 3 the request) of turn k, salted by the plan's prompt salt.
func (s TraceSession) TextSeed(k, part uint64) uint64 {
	x := uint64(s.Index)*0x9e3779b97f4a7c15 ^ (k<<8|part)*0xbf58476d1ce4e5b9
	if s.salt == 0 {
		return x
	}
	return splitmix64(x ^ s.salt)
}

// TraceSessions returns how many trace sessions the plan replays (a
// shard's share; 0 when the plan is no replay).
func (p *Plan) TraceSessions() int {
	if p.trace == nil {
		return 0
	}
	return p.sh.share(p.trace.f.Summary().Sessions)
}

// TraceSession returns trace session i (from 0) in order of start, a pure
// function of the trace, the time scale and the prompt salt. The trace
// file is read as the sessions are asked for: asked in increasing order,
// as a replay does, each session is read once, and only the sessions
// under way are held. A session that cannot be read (the file changed
// since Load) has no turns, and TraceErr says why.
func (p *Plan) TraceSession(i int) TraceSession {
	w := p.s.Workload
	idx, src := p.trace.session(i)
	s := TraceSession{Index: idx, ID: p.traceSessionID(src.ID), Start: scaleDur(src.Start, w.TimeScale), BlockTokens: w.Trace.Summary().BlockTokens, salt: p.salt,
		Turns: make([]TraceTurn, len(src.Turns))}
	for k, u := range src.Turns {
		s.Turns[k] = TraceTurn{Think: scaleDur(u.Think, w.TimeScale), InputTokens: u.InputTokens,
			OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens, HashIDs: u.HashIDs}
	}
	return s
}

// TraceErr is why a trace session could not be read, if one could not.
func (p *Plan) TraceErr() error {
	if p.trace == nil {
		return nil
	}
	p.trace.mu.Lock()
	defer p.trace.mu.Unlock()
	return p.trace.err
}

// Close releases the trace file a replay's plan reads (a no-op for any
// other plan). The plan reopens it if asked for a session again.
func (p *Plan) Close() {
	if p.trace != nil {
		p.trace.mu.Lock()
		p.trace.close()
		p.trace.mu.Unlock()
	}
}

// scaleDur is d stretched by k.
func scaleDur(d time.Duration, k float64) time.Duration { return time.Duration(float64(d) * k) }

// traceReader reads a trace's sessions for a plan, through one cursor
// that moves forward; a session before the cursor reopens it.
type traceReader struct {
	f   *trace.File
	mu  sync.Mutex
	cur *trace.Cursor
	pos int // the position of the session cur returns next
	err error
}

// session returns the session at position i in order of start and its
// index.
func (r *traceReader) session(i int) (int, trace.Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || i < r.pos {
		r.close()
		r.cur = r.f.Sessions()
	}
	for {
		idx, s, ok := r.cur.Next()
		if !ok {
			if r.err == nil {
				r.err = r.cur.Err()
			}
			if r.err == nil {
				r.err = fmt.Errorf("trace session %d: the trace has %d", i, r.pos)
			}
			r.close()
			return i, trace.Session{}
		}
		r.pos++
		if r.pos-1 == i {
			if r.pos == r.f.Summary().Sessions {
				r.close() // the last: nothing more to read
			}
			return idx, s
		}
	}
}

func (r *traceReader) close() {
	if r.cur != nil {
		r.cur.Close()
		r.cur, r.pos = nil, 0
	}
}

// TraceTime is d, a time the trace records (a delay, a think time), as
// the replay plays it: times workload.time_scale.
func (p *Plan) TraceTime(d time.Duration) time.Duration {
	return scaleDur(d, p.s.Workload.TimeScale)
}
