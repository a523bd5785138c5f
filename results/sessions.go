package results

import (
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/record"
)

// Tokens totals the server's usage over the whole run.
type Tokens struct {
	// Requests counts the requests that reported usage.
	Requests    int   `json:"requests"`
	Input       int64 `json:"input"`
	CachedInput int64 `json:"cached_input"`
	// CacheWriteInput of Input was written to a prompt cache (Anthropic's
	// cache_creation_input_tokens; 0 where the protocol reports none).
	CacheWriteInput int64 `json:"cache_write_input,omitempty"`
	Output          int64 `json:"output"`
	Reasoning       int64 `json:"reasoning"`
	// CacheHitRatio is CachedInput / Input: the share of prompt tokens a
	// prefix cache served.
	CacheHitRatio float64 `json:"cache_hit_ratio"`
}

func (t *Tokens) add(r *record.Record) {
	if !r.HasUsage {
		return
	}
	t.Requests++
	t.Input += int64(r.Usage.PromptTokens)
	t.CachedInput += int64(r.Usage.CachedTokens)
	t.CacheWriteInput += int64(r.Usage.CacheWriteTokens)
	t.Output += int64(r.Usage.CompletionTokens)
	t.Reasoning += int64(r.Usage.ReasoningTokens)
}

// Session is one agentic session's life.
type Session struct {
	Index int `json:"index"`
	// Turns is the turns that succeeded; Attempts every request made.
	Turns    int `json:"turns"`
	Attempts int `json:"attempts"`
	// StartS and EndS bound the session in run time (seconds).
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// EndReason says why it ended (SessionEnd* constants).
	EndReason string `json:"end_reason"`
	// FirstTurn is the first turn it sent: 0, or where it joined its life
	// under a stationary start (workload.start), its earlier turns never
	// run — its turns and lifetime are then not a whole session's.
	FirstTurn int `json:"first_turn,omitempty"`
	// FirstContextTokens and LastContextTokens are the prompt tokens of
	// its first and last successful turns (usage).
	FirstContextTokens int `json:"first_context_tokens"`
	LastContextTokens  int `json:"last_context_tokens"`
	// First429S is when it was first rate limited, from its start (nil:
	// never).
	First429S *float64 `json:"first_429_s,omitempty"`
	// Rejections counts its 429s, Retries its backed-off retries.
	Rejections int `json:"rejections"`
	Retries    int `json:"retries"`
	// Input, CachedInput, Output and Reasoning total its usage.
	Tokens Tokens `json:"tokens"`
}

// Whole counts the sessions that began at their first turn: those the
// Turns and LifetimeMin distributions are over.
func (ss Sessions) Whole() int {
	n := 0
	for _, s := range ss.All {
		if s.FirstTurn == 0 {
			n++
		}
	}
	return n
}

// LifetimeMin is the session's length in minutes.
func (s *Session) LifetimeMin() float64 { return (s.EndS - s.StartS) / 60 }

// GrowthPerMin is how fast its context grew, in tokens per minute.
func (s *Session) GrowthPerMin() float64 {
	if m := s.LifetimeMin(); m > 0 {
		return float64(s.LastContextTokens-s.FirstContextTokens) / m
	}
	return 0
}

// Sessions summarises the agentic sessions of a run.
type Sessions struct {
	All []*Session `json:"sessions"`
	// Turns, LifetimeMin and GrowthPerMin are distributions over sessions
	// (Turns and LifetimeMin over those that began at their first turn:
	// one that joined mid-life has no whole life to measure); First429S
	// over the sessions that were rate limited.
	Turns        *Dist          `json:"turns"`
	LifetimeMin  *Dist          `json:"lifetime_min"`
	GrowthPerMin *Dist          `json:"context_growth_tokens_per_min"`
	First429S    *Dist          `json:"first_429_s"`
	EndReasons   map[string]int `json:"end_reasons"`
}

// sessionAcc follows the sessions as their records arrive (a session's
// records arrive in order: its turns run one after another).
type sessionAcc struct {
	by map[int]*Session
}

func (a *sessionAcc) add(r *record.Record) {
	if r.Session < 0 {
		return
	}
	if a.by == nil {
		a.by = map[int]*Session{}
	}
	s := a.by[r.Session]
	if s == nil {
		s = &Session{Index: r.Session, StartS: r.Scheduled.Seconds(), FirstTurn: r.Turn}
		a.by[r.Session] = s
	}
	s.Attempts++
	if r.Attempt > 0 {
		s.Retries++
	}
	s.StartS = min(s.StartS, r.Scheduled.Seconds())
	s.EndS = max(s.EndS, r.End.Seconds())
	s.Tokens.add(r)
	if r.Err == record.ErrHTTP429 {
		s.Rejections++
		if s.First429S == nil {
			at := r.End.Seconds() - s.StartS
			s.First429S = &at
		}
	}
	if !r.Failed() {
		s.Turns++
		if r.HasUsage {
			if s.FirstContextTokens == 0 {
				s.FirstContextTokens = r.Usage.PromptTokens
			}
			s.LastContextTokens = r.Usage.PromptTokens
		}
	}
	if r.SessionEnd != "" {
		s.EndReason = r.SessionEnd
	}
}

func (a *sessionAcc) result() Sessions {
	all := make([]*Session, 0, len(a.by))
	for _, s := range a.by {
		s.Tokens.finish()
		all = append(all, s)
	}
	return summarizeSessions(all)
}

// summarizeSessions is the Sessions of all (ordered by index).
func summarizeSessions(all []*Session) Sessions {
	var out Sessions
	if len(all) == 0 {
		return out
	}
	out.EndReasons = map[string]int{}
	hTurns, hLife, hGrowth, h429 := HistSessionTurns.new(), HistSessionMin.new(), HistGrowth.new(), HistFirst429.new()
	for _, s := range all {
		if s.EndReason == "" {
			// The runner marks a session's last record with its end as it
			// sends it; the run's end between two turns comes after.
			s.EndReason = record.SessionEndRunEnded
		}
		out.All = append(out.All, s)
		out.EndReasons[s.EndReason]++
		if s.FirstTurn == 0 {
			observeValue(hTurns, float64(s.Turns), 1)
			observeValue(hLife, s.LifetimeMin()*1e3, 1)
		}
		observeValue(hGrowth, s.GrowthPerMin(), 1)
		if s.First429S != nil {
			observeValue(h429, *s.First429S*1e3, 1)
		}
	}
	slices.SortFunc(out.All, func(x, y *Session) int { return x.Index - y.Index })
	out.Turns = Summarize(HistSessionTurns, hTurns)
	out.LifetimeMin = Summarize(HistSessionMin, hLife)
	out.GrowthPerMin = Summarize(HistGrowth, hGrowth)
	out.First429S = Summarize(HistFirst429, h429)
	return out
}

func (t *Tokens) finish() {
	if t.Input > 0 {
		t.CacheHitRatio = float64(t.CachedInput) / float64(t.Input)
	}
}

// The session histograms, recorded over sessions.
var (
	HistSessionTurns = HistSpec{"turns", "turns", 1, 1, 1e7}
	HistSessionMin   = HistSpec{"lifetime_min", "milli-min", 1e3, 1, 1e9}
	HistGrowth       = HistSpec{"context_growth_tokens_per_min", "tokens/min", 1, 1, 1e10}
	HistFirst429     = HistSpec{"first_429_s", "ms", 1e3, 1, maxLatencyUS}
)

// ContextDepth is a band of prompt lengths, [MinTokens, MaxTokens) in
// tokens (MaxTokens 0: no upper bound).
type ContextDepth struct {
	Name      string `json:"name"`
	MinTokens int    `json:"min_tokens"`
	MaxTokens int    `json:"max_tokens,omitempty"`
}

// ContextDepths are the context-depth bands every by-context table uses
// (runs' and analyze's): how speed falls as the context grows
// (CONTEXT.md §1; K = 1,000 tokens).
var ContextDepths = []ContextDepth{
	{Name: "<20K", MaxTokens: 20_000},
	{Name: "20–50K", MinTokens: 20_000, MaxTokens: 50_000},
	{Name: "50–120K", MinTokens: 50_000, MaxTokens: 120_000},
	{Name: ">120K", MinTokens: 120_000},
}

// DepthOf is the index in ContextDepths of the band holding a context of
// tokens.
func DepthOf(tokens int64) int {
	for i, b := range ContextDepths {
		if b.MaxTokens == 0 || tokens < int64(b.MaxTokens) {
			return i
		}
	}
	return len(ContextDepths) - 1
}

// ContextBucket holds per-request figures of the successful requests whose
// prompt (usage) fell in one context depth, over the whole run.
type ContextBucket struct {
	ContextDepth
	Requests      int   `json:"requests"`
	EffectiveTokS *Dist `json:"effective_tok_s"`
	DecodeTokS    *Dist `json:"decode_tok_s"`
	TTFTMs        *Dist `json:"ttft_ms"`
	// Histograms hold the three, by name, so that shards merge
	// (nil in files written before them).
	Histograms map[string]EncodedHistogram `json:"histograms,omitempty"`
}

// contextAcc fills the context buckets.
type contextAcc struct {
	eff, dec, ttft []*hdrhistogram.Histogram
	n              []int
}

func newContextAcc() *contextAcc {
	a := &contextAcc{n: make([]int, len(ContextDepths))}
	for range ContextDepths {
		a.eff = append(a.eff, HistEffective.new())
		a.dec = append(a.dec, HistDecode.new())
		a.ttft = append(a.ttft, HistTTFT.new())
	}
	return a
}

func (a *contextAcc) add(r *record.Record) {
	if r.Failed() || !r.HasUsage || len(r.Chunks) == 0 {
		return
	}
	i := DepthOf(int64(r.Usage.PromptTokens))
	a.n[i]++
	e2e := r.End - r.Scheduled
	ttft := r.Chunks[0].At - r.Scheduled
	out := r.Usage.CompletionTokens
	if e2e > 0 {
		observeValue(a.eff[i], float64(out)/e2e.Seconds()*1e3, 1)
	}
	if d := e2e - ttft; out > 1 && d > 0 && r.DecodeMeasured() {
		observeValue(a.dec[i], float64(out-1)/d.Seconds()*1e3, 1)
	}
	observeValue(a.ttft[i], float64(ttft/time.Microsecond), 1)
}

func (a *contextAcc) result() []ContextBucket {
	var out []ContextBucket
	for i, d := range ContextDepths {
		b := ContextBucket{ContextDepth: d, Requests: a.n[i]}
		b.EffectiveTokS = Summarize(HistEffective, a.eff[i])
		b.DecodeTokS = Summarize(HistDecode, a.dec[i])
		b.TTFTMs = Summarize(HistTTFT, a.ttft[i])
		b.Histograms = encodeAll(map[HistSpec]*hdrhistogram.Histogram{HistEffective: a.eff[i], HistDecode: a.dec[i], HistTTFT: a.ttft[i]})
		out = append(out, b)
	}
	return out
}
