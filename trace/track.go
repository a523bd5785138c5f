package trace

import (
	"bufio"
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// A row is one request of a trace file as its format's reader yields it,
// checked on its own (lengths, times and hash ids within their bounds).
// What spans rows — a session's start, its turns' order and times — is
// the tracker's.
type row struct {
	// line is the row's line in the file.
	line int
	// id names the session: the file's session id when keyed, else the
	// request is a session of its own, named id (its line or row number).
	id    string
	keyed bool
	// turn is the request's index in its session as the file gives it
	// (sixpin), -1 where the file order gives it (Mooncake).
	turn int
	// start is when its session starts and at when it arrives, from the
	// trace's start (Azure: from the first row's; the tracker makes them
	// from the earliest row's).
	start, at time.Duration
	// t is the request; its Offset is set by formats that give it
	// (sixpin), else by the tracker.
	t Turn
	// l is the JSON line, for errors at a field (zero for CSV).
	l jsonLine
	// block is how many prompt tokens one of t.HashIDs stands for (0:
	// MooncakeBlockTokens).
	block int
}

// A rowReader reads a format's rows from br in file order, calling fn
// with each (the row is reused: fn keeps none of it but t.HashIDs); it
// stops at fn's first error and returns it.
type rowReader func(name string, br *bufio.Reader, fn func(*row) error) error

// tracker follows a trace's sessions as its rows go by, in file order: it
// checks what spans rows, numbers the sessions by first appearance, and
// summarises the requests. It keeps per session only what the checks
// need: nothing for a request that is a session of its own; a few numbers
// for a keyed session (and its turns that came out of order, until the
// end). Memory: a few MB, and some hundred bytes per keyed session.
type tracker struct {
	name   string
	format string
	byID   map[string]*sess
	late   []*sess // sessions whose turns came out of order
	sum    summer
	// sessions counts the sessions so far; sorted is whether they appear
	// in order of start (lastStart the latest start so far).
	sessions  int
	sorted    bool
	lastStart time.Duration
	// earliest is the earliest session's start (Azure's origin).
	earliest time.Duration
	// run counts the sessions of their own at one time in a row, for
	// the peak when no session is keyed.
	runAt      time.Duration
	run, ownPk int
	own        int // sessions of their own
}

// sess is a keyed session as far as the tracker has seen it.
type sess struct {
	id    string
	index int // by first appearance, from 0
	start time.Duration
	line  int // of its first row
	turns int
	end   time.Duration // its latest request, from the trace's start
	// ordered counts the turns that came in order, 0 to ordered-1, and
	// last is the offset of the latest; once one does not (a sixpin
	// file's lines may come in any order), the rest wait in late.
	ordered int
	last    time.Duration
	late    []turnAt
}

// turnAt is a turn index seen out of order, where and when.
type turnAt struct {
	turn, line int
	offset     time.Duration
}

func newTracker(name string) *tracker {
	return &tracker{name: name, byID: map[string]*sess{}, sorted: true, sum: newSummer()}
}

// Refusals of a trace longer than one run replays.
var (
	errTooManyRequests = fmt.Errorf("more than %s requests: more than one run replays (cut the trace)", numfmt.Thousands(bounds.Requests))
	errTooManySessions = fmt.Errorf("more than %s sessions: more than one run replays, keeping a summary of each (cut the trace)", numfmt.Thousands(bounds.Sessions))
)

// add checks r against the rows before it and places it: its session's
// index and start, its turn's index in the session and its Offset (set
// in r.t). A session's turns out of order are checked at finish.
func (tk *tracker) add(r *row) (index int, start time.Duration, turn int, err error) {
	if tk.sum.n >= bounds.Requests {
		return 0, 0, 0, lineErr(tk.name, r.line, "%v", errTooManyRequests)
	}
	if tk.sessions >= bounds.Sessions && (!r.keyed || tk.byID[r.id] == nil) {
		return 0, 0, 0, lineErr(tk.name, r.line, "%v", errTooManySessions)
	}
	if !r.keyed {
		index, start, turn = tk.newSession(r.start), r.start, 0
		r.t.Offset = 0
		tk.own++
		if tk.run > 0 && r.at == tk.runAt {
			tk.run++
		} else {
			tk.run, tk.runAt = 1, r.at
		}
		tk.ownPk = max(tk.ownPk, tk.run)
		tk.sum.add(r, r.id, 0)
		return index, start, turn, nil
	}
	s := tk.byID[r.id]
	if s == nil {
		s = &sess{id: r.id, index: tk.newSession(r.start), start: r.start, line: r.line}
		tk.byID[r.id] = s
	}
	switch {
	case r.turn < 0: // Mooncake: the next in file order, its offset from the first
		r.t.Offset = r.at - s.start
		if s.turns > 0 && r.t.Offset < s.last {
			return 0, 0, 0, r.l.err("timestamp", "%s ms is before session %q's previous request", num(float64(r.at)/float64(time.Millisecond)), r.id)
		}
		turn, s.last = s.turns, r.t.Offset
	case r.start != s.start:
		return 0, 0, 0, r.l.err("session_start_s", "%v differs from %v on line %d for session %q", r.start.Seconds(), s.start.Seconds(), s.line, r.id)
	case s.late == nil && r.turn == s.ordered:
		if s.ordered > 0 && r.t.Offset < s.last {
			return 0, 0, 0, lineErr(tk.name, r.line, "session %q: turn %d's offset_s %v is before turn %d's %v", r.id, r.turn, r.t.Offset.Seconds(), s.ordered-1, s.last.Seconds())
		}
		s.ordered, s.last, turn = s.ordered+1, r.t.Offset, r.turn
	default: // out of order: checked at the end
		if s.late == nil {
			tk.late = append(tk.late, s)
		}
		s.late = append(s.late, turnAt{turn: r.turn, line: r.line, offset: r.t.Offset})
		turn = r.turn
	}
	s.turns++
	s.end = max(s.end, s.start+r.t.Offset)
	tk.sum.add(r, r.id, turn)
	return s.index, s.start, turn, nil
}

// newSession numbers a session that starts at start.
func (tk *tracker) newSession(start time.Duration) int {
	if tk.sessions > 0 && start < tk.lastStart {
		tk.sorted = false
	}
	if tk.sessions == 0 || start < tk.earliest {
		tk.earliest = start
	}
	tk.lastStart = max(tk.lastStart, start)
	tk.sessions++
	return tk.sessions - 1
}

// finish checks the sessions whose turns came out of order: their turns
// must count from 0 without gaps or repeats, their offsets never go
// back. It reports the first problem in order of first appearance.
func (tk *tracker) finish() error {
	for _, s := range tk.late {
		// Turns 0 to ordered-1 came in order; the rest must follow them.
		k, prev := s.ordered, s.last
		slices.SortStableFunc(s.late, func(a, b turnAt) int { return cmp.Compare(a.turn, b.turn) })
		for _, ta := range s.late {
			switch {
			case ta.turn < k:
				return lineErr(tk.name, ta.line, "session %q: turn %d appears twice", s.id, ta.turn)
			case ta.turn > k:
				return lineErr(tk.name, ta.line, "session %q: turn %d follows turn %d (turns must count from 0 without gaps)", s.id, ta.turn, k-1)
			case k > 0 && ta.offset < prev:
				return lineErr(tk.name, ta.line, "session %q: turn %d's offset_s %v is before turn %d's %v", s.id, k, ta.offset.Seconds(), k-1, prev.Seconds())
			}
			k, prev = k+1, ta.offset
		}
		s.late = nil
	}
	return nil
}
