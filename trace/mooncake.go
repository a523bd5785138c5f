package trace

import (
	"bufio"
	"encoding/json"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// mooncakeLine is one request of a Mooncake trace (kvcache-ai/Mooncake,
// FAST'25 traces, mooncake_trace.jsonl):
//
//	{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59]}
//
// timestamp is the arrival in milliseconds from the trace's start,
// hash_ids the prompt's 512-token blocks (equal leading ids: a shared
// prefix). Some tools (NVIDIA's aiperf) add a "session_id" to group
// multi-turn requests; it is honoured when present. Other keys are
// ignored.
type mooncakeLine struct {
	Timestamp    *float64         `json:"timestamp"`
	InputLength  *int             `json:"input_length"`
	OutputLength *int             `json:"output_length"`
	HashIDs      []int            `json:"hash_ids"`
	SessionID    *json.RawMessage `json:"session_id"`
}

// mooncakeRows reads Mooncake JSONL, each line on its own. A request
// without a session_id is a session of its own (named by its line
// number); requests sharing one are that session's turns in file order,
// offsets from the first (the tracker's). Think times are not in the
// format and stay 0.
func mooncakeRows(name string, br *bufio.Reader, fn func(*row) error) error {
	var r row
	return lines(br, func(n int, b []byte) error {
		l := jsonLine{name, n, b}
		var in mooncakeLine
		if err := l.decode(&in, false); err != nil {
			return err
		}
		if err := l.missing([]string{"timestamp", "input_length", "output_length"},
			[]bool{in.Timestamp != nil, in.InputLength != nil, in.OutputLength != nil}); err != nil {
			return err
		}
		switch ts := *in.Timestamp; {
		case ts < 0:
			return l.err("timestamp", "must be ≥ 0 ms (got %s)", num(ts))
		case !bounds.Seconds(ts / 1000):
			return l.err("timestamp", "must be ≤ %s ms, a century (got %s)", numfmt.Thousands(bounds.CenturySeconds*1000), num(ts))
		}
		if err := l.tokens("input_length", *in.InputLength); err != nil {
			return err
		}
		if err := l.tokens("output_length", *in.OutputLength); err != nil {
			return err
		}
		if err := l.hashIDs(in.HashIDs); err != nil {
			return err
		}
		r = row{line: n, turn: -1, at: time.Duration(*in.Timestamp*float64(time.Millisecond) + 0.5), l: l,
			t: Turn{InputTokens: *in.InputLength, OutputTokens: *in.OutputLength, HashIDs: in.HashIDs}}
		if in.SessionID != nil {
			r.id, r.keyed = rawString(*in.SessionID), true
		} else {
			r.id = strconv.Itoa(n)
		}
		r.start = r.at
		return fn(&r)
	})
}

// rawString is a JSON string's value, or the raw text of any other value
// (numeric session ids).
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
