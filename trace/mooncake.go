package trace

import (
	"bufio"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/internal/jsonerr"
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

// readMooncake reads Mooncake JSONL. A request without a session_id is a
// session of its own (named by its line number); requests sharing one
// are that session's turns in file order, offsets from the first.
// Think times are not in the format and stay 0.
func readMooncake(name string, br *bufio.Reader) (*Trace, error) {
	t := &Trace{}
	index := map[string]int{}
	err := lines(br, func(n int, b []byte) error {
		var in mooncakeLine
		if err := json.Unmarshal(b, &in); err != nil {
			return lineErr(name, n, "%s", jsonerr.Message(err))
		}
		switch {
		case in.Timestamp == nil:
			return lineErr(name, n, "missing timestamp")
		case in.InputLength == nil:
			return lineErr(name, n, "missing input_length")
		case in.OutputLength == nil:
			return lineErr(name, n, "missing output_length")
		case *in.Timestamp < 0 || math.IsNaN(*in.Timestamp) || math.IsInf(*in.Timestamp, 0):
			return lineErr(name, n, "timestamp: must be ≥ 0 ms (got %v)", *in.Timestamp)
		case *in.InputLength < 0 || *in.OutputLength < 0:
			return lineErr(name, n, "input_length and output_length must be ≥ 0")
		}
		for _, id := range in.HashIDs {
			if id < 0 {
				return lineErr(name, n, "hash_ids: must be ≥ 0 (got %d)", id)
			}
		}
		at := time.Duration(*in.Timestamp*float64(time.Millisecond) + 0.5)
		turn := Turn{InputTokens: *in.InputLength, OutputTokens: *in.OutputLength, HashIDs: in.HashIDs}
		id := strconv.Itoa(n)
		if in.SessionID != nil {
			id = rawString(*in.SessionID)
			if k, ok := index[id]; ok {
				s := &t.Sessions[k]
				turn.Offset = at - s.Start
				if prev := s.Turns[len(s.Turns)-1].Offset; turn.Offset < prev {
					return lineErr(name, n, "session %s: timestamp %v ms is before the session's previous request", id, *in.Timestamp)
				}
				s.Turns = append(s.Turns, turn)
				return nil
			}
			index[id] = len(t.Sessions)
		}
		t.Sessions = append(t.Sessions, Session{ID: id, Start: at, Turns: []Turn{turn}})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortSessions(t.Sessions)
	return t, nil
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
