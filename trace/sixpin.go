package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// sixpinLine is one line of sixpin's trace format (see Write).
type sixpinLine struct {
	Session         string  `json:"session"`
	Turn            int     `json:"turn"`
	SessionStartS   float64 `json:"session_start_s"`
	OffsetS         float64 `json:"offset_s"`
	InputTokens     int     `json:"input_tokens"`
	CachedTokens    int     `json:"cached_tokens"`
	OutputTokens    int     `json:"output_tokens"`
	ReasoningTokens int     `json:"reasoning_tokens"`
	ThinkS          float64 `json:"think_s"`
	HashIDs         []int   `json:"hash_ids,omitempty"`
}

// sixpinIn is sixpinLine as read: pointers tell required keys that are
// missing from zeros.
type sixpinIn struct {
	Session         *string  `json:"session"`
	Turn            *int     `json:"turn"`
	SessionStartS   float64  `json:"session_start_s"`
	OffsetS         *float64 `json:"offset_s"`
	InputTokens     *int     `json:"input_tokens"`
	CachedTokens    int      `json:"cached_tokens"`
	OutputTokens    *int     `json:"output_tokens"`
	ReasoningTokens int      `json:"reasoning_tokens"`
	ThinkS          float64  `json:"think_s"`
	HashIDs         []int    `json:"hash_ids"`
}

// Write writes t in sixpin's trace format: JSON Lines, one line per
// generation, sessions in t's order and turns in theirs (the turn index
// is the position in the session):
//
//	{"session":"ses_a","turn":1,"session_start_s":12.5,"offset_s":4.5,"input_tokens":13500,"cached_tokens":11000,"output_tokens":250,"reasoning_tokens":0,"think_s":1.25}
//
// session_start_s is the session's first request from the trace's start,
// offset_s this request from the session's first, think_s the wait from
// the previous response's end to this request (seconds). input_tokens is
// the whole prompt, cached_tokens the part of it read from a prefix
// cache; output_tokens is everything generated, reasoning_tokens the
// part of it that was reasoning. hash_ids, when a turn has them, lists
// its prompt's 512-token block ids (Mooncake's convention).
//
// Read takes lines in any order; session, turn, offset_s, input_tokens
// and output_tokens are required, the rest default to 0.
func Write(w io.Writer, t *Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, s := range t.Sessions {
		for k, u := range s.Turns {
			l := sixpinLine{
				Session:         s.ID,
				Turn:            k,
				SessionStartS:   s.Start.Seconds(),
				OffsetS:         u.Offset.Seconds(),
				InputTokens:     u.InputTokens,
				CachedTokens:    u.CachedTokens,
				OutputTokens:    u.OutputTokens,
				ReasoningTokens: u.ReasoningTokens,
				ThinkS:          u.Think.Seconds(),
				HashIDs:         u.HashIDs,
			}
			if err := enc.Encode(&l); err != nil {
				return fmt.Errorf("write trace: %w", err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}

// sixpinRows reads sixpin JSONL strictly, each line on its own: unknown
// keys, missing required keys (session, turn, offset_s, input_tokens,
// output_tokens) and negative or inconsistent values are errors naming
// the line; a session's turns, in any order, are the tracker's.
func sixpinRows(name string, br *bufio.Reader, fn func(*row) error) error {
	var r row
	return lines(br, func(n int, b []byte) error {
		l := jsonLine{name, n, b}
		var in sixpinIn
		if err := l.decode(&in, true); err != nil {
			return err
		}
		if err := l.missing([]string{"session", "turn", "offset_s", "input_tokens", "output_tokens"},
			[]bool{in.Session != nil, in.Turn != nil, in.OffsetS != nil, in.InputTokens != nil, in.OutputTokens != nil}); err != nil {
			return err
		}
		switch {
		case *in.Session == "":
			return l.err("session", "must not be empty")
		case *in.Turn < 0:
			return l.err("turn", "must be ≥ 0 (got %d)", *in.Turn)
		}
		for _, c := range []struct {
			key string
			s   float64
		}{{"session_start_s", in.SessionStartS}, {"offset_s", *in.OffsetS}, {"think_s", in.ThinkS}} {
			if err := l.seconds(c.key, c.s); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			key string
			n   int
		}{{"input_tokens", *in.InputTokens}, {"cached_tokens", in.CachedTokens}, {"output_tokens", *in.OutputTokens}, {"reasoning_tokens", in.ReasoningTokens}} {
			if err := l.tokens(c.key, c.n); err != nil {
				return err
			}
		}
		switch {
		case in.CachedTokens > *in.InputTokens:
			return l.err("cached_tokens", "must be ≤ input_tokens (got %d > %d)", in.CachedTokens, *in.InputTokens)
		case in.ReasoningTokens > *in.OutputTokens:
			return l.err("reasoning_tokens", "must be ≤ output_tokens (got %d > %d)", in.ReasoningTokens, *in.OutputTokens)
		}
		if err := l.hashIDs(in.HashIDs); err != nil {
			return err
		}
		r = row{line: n, id: *in.Session, keyed: true, turn: *in.Turn, start: seconds(in.SessionStartS), l: l,
			t: Turn{
				Offset:          seconds(*in.OffsetS),
				Think:           seconds(in.ThinkS),
				InputTokens:     *in.InputTokens,
				CachedTokens:    in.CachedTokens,
				OutputTokens:    *in.OutputTokens,
				ReasoningTokens: in.ReasoningTokens,
				HashIDs:         in.HashIDs,
			}}
		r.at = r.start + r.t.Offset
		return fn(&r)
	})
}

// sortSessions orders sessions by start, keeping the file's order among
// sessions that start together.
func sortSessions(ss []Session) {
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].Start < ss[j].Start })
}
