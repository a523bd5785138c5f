package trace

import (
	"cmp"
	"container/heap"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/bounds"
)

// Summary describes a trace: what a replay of it declares and what
// `sixpin validate` shows. It is gathered as the rows go by, in memory
// that does not grow with them.
type Summary struct {
	// Source is where the trace came from; Format its file format.
	Source, Format     string
	Sessions, Requests int
	// Span is from the trace's start to its last request.
	Span time.Duration
	// PeakSessions is the most sessions under way at once (each from its
	// first request to its last).
	PeakSessions int
	// Prompt and Output are the requests' input and output lengths.
	Prompt, Output Lengths
	// BlockTokens is how many prompt tokens a hash id stands for (0 when
	// no request has hash ids).
	BlockTokens int
	// Largest is the request with the most tokens in and out together
	// (the first such in the file).
	Largest Largest
}

// Lengths summarise token counts, in tokens: the smallest, the largest,
// the median (the upper one of an even count; exact below 32,768 tokens,
// else to one part in 16,384) and the total.
type Lengths struct {
	Min, Max, P50 int
	Sum           float64
}

// Largest names a request and its lengths: Session's turn Turn (from 0).
type Largest struct {
	Session       string
	Turn          int
	Input, Output int
}

// summer gathers a Summary's lengths.
type summer struct {
	n              int
	prompt, output lengthAcc
	blocks         bool
	block          int // tokens per hash id, the first row's that says (0: Mooncake's)
	largest        Largest
	maxAt          time.Duration
}

// lengthAcc gathers one Lengths: a histogram of 4 significant digits
// (some 1.3 MB) for the median.
type lengthAcc struct {
	h   *hdrhistogram.Histogram
	l   Lengths
	any bool
}

func newSummer() summer {
	return summer{prompt: lengthAcc{h: hdrhistogram.New(1, bounds.Tokens, 4)}, output: lengthAcc{h: hdrhistogram.New(1, bounds.Tokens, 4)}}
}

func (a *lengthAcc) add(n int) {
	if !a.any || n < a.l.Min {
		a.l.Min = n
	}
	a.l.Max, a.any = max(a.l.Max, n), true
	a.l.Sum += float64(n)
	_ = a.h.RecordValue(int64(n))
}

// lengths returns what a gathered; n is the count of values.
func (a *lengthAcc) lengths(n int) Lengths {
	l := a.l
	// The upper median: the value of rank n/2+1, as the lowest value of
	// its bucket.
	rank := int64(n/2 + 1)
	for _, b := range a.h.Distribution() {
		if rank -= b.Count; rank <= 0 {
			l.P50 = min(max(int(b.From), l.Min), l.Max)
			break
		}
	}
	return l
}

// add counts request r, turn turn of session id.
func (s *summer) add(r *row, id string, turn int) {
	s.n++
	s.prompt.add(r.t.InputTokens)
	s.output.add(r.t.OutputTokens)
	s.blocks = s.blocks || len(r.t.HashIDs) > 0
	if s.block == 0 {
		s.block = r.block
	}
	if tot := r.t.InputTokens + r.t.OutputTokens; s.n == 1 || tot > s.largest.Input+s.largest.Output {
		s.largest = Largest{Session: id, Turn: turn, Input: r.t.InputTokens, Output: r.t.OutputTokens}
	}
	s.maxAt = max(s.maxAt, r.at)
}

// summary is what s gathered, for a trace of sessions sessions whose
// times count from origin.
func (s *summer) summary(sessions int, origin time.Duration) Summary {
	sm := Summary{Sessions: sessions, Requests: s.n, Span: max(s.maxAt-origin, 0),
		Prompt: s.prompt.lengths(s.n), Output: s.output.lengths(s.n), Largest: s.largest}
	if s.blocks {
		sm.BlockTokens = cmp.Or(s.block, MooncakeBlockTokens)
	}
	return sm
}

// span is a session's life, from its first request to its last.
type span struct{ start, end time.Duration }

// peaker finds the most sessions under way at once, given the sessions
// in order of start: a session is under way from its start to its end,
// both included. It keeps the ends of those under way.
type peaker struct {
	ends endHeap
	peak int
}

func (p *peaker) add(s span) {
	for len(p.ends) > 0 && p.ends[0] < s.start {
		heap.Pop(&p.ends)
	}
	heap.Push(&p.ends, s.end)
	p.peak = max(p.peak, len(p.ends))
}

type endHeap []time.Duration

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// peakOf is the peak of spans in any order.
func peakOf(spans []span) int {
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var p peaker
	for _, s := range spans {
		p.add(s)
	}
	return p.peak
}

// Summarize summarises a trace held in memory.
func (t *Trace) Summarize() Summary {
	s := newSummer()
	spans := make([]span, 0, len(t.Sessions))
	var r row
	for _, ss := range t.Sessions {
		for k, u := range ss.Turns {
			r.t, r.at = u, ss.Start+u.Offset
			s.add(&r, ss.ID, k)
		}
		if n := len(ss.Turns); n > 0 {
			spans = append(spans, span{ss.Start, ss.Start + ss.Turns[n-1].Offset})
		}
	}
	s.block = t.Block
	sm := s.summary(len(t.Sessions), 0)
	sm.Source, sm.Format, sm.PeakSessions = t.Source, t.Format, peakOf(spans)
	return sm
}
