package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// The Weka agentic-coding trace format: the traces Weka's KV-Cache-Tester
// recorded from Claude Code (callanjfox/kv-cache-tester,
// docs/trace_replay_tester.md, "Trace Format", at
// 19c263bd21cfab667b2e87406ac6701e8d452f18), which SemiAnalysis publishes
// on Hugging Face (semianalysisai/cc-traces-weka-*) and AgentX replays
// through NVIDIA AIPerf. The field list, and what is required, follow
// AIPerf's loader (ai-dynamo/aiperf src/aiperf/dataset/loader/
// weka_trace_models.py at 90f31d18c57a572640729b1070a01b1bf2c7c7e4, whose
// models forbid unknown fields as sixpin does):
//
//	{"id": "f64a8d4c-12d", "models": ["claude-sonnet-4"], "block_size": 64,
//	 "hash_id_scope": "local", "tool_tokens": 11899, "system_tokens": 2926,
//	 "requests": [
//	   {"t": 0.0, "type": "s", "model": "claude-sonnet-4", "in": 25259, "out": 86,
//	    "hash_ids": [1, 2, 3], "input_types": ["text"], "output_types": ["text"],
//	    "stop": "tool_use", "api_time": 3.2, "think_time": 0.0, "ttft": 1.1},
//	   {"t": 9.5, "type": "subagent", "agent_id": "agent_001", "subagent_type": "Explore",
//	    "status": "completed", "duration_ms": 41000, "models": ["claude-haiku-4-5"],
//	    "requests": [{"t": 9.6, "type": "n", "in": 14000, "out": 300, "hash_ids": [1, 2, 90]}]},
//	   ...]}
//
// One JSON object is one conversation (pretty-printed or on one line); a
// file may hold several one after another (`cat traces/*.json`). What is
// new against Mooncake's lines: a conversation's id and its requests in
// order, each with its own block size (block_size tokens per hash id,
// usually 64, not 512), the client's think time and the server's API time,
// and subagents, nested conversations of their own.
//
// sixpin replays it so:
//   - the conversation's requests ("n" and "s") are one session, named
//     by id; each subagent is a session of its own, named
//     ID::sa:AGENT_ID (AIPerf's naming), starting at its first request;
//   - times: t is seconds from the conversation's start; a subagent's
//     request t before its spawn t counts from the spawn (AIPerf's rule
//     for older captures). A turn waits its think_time; without one, or
//     after a subagent (whose run the parent waited for), the recorded
//     gap from the previous request's end (t − previous t − previous
//     api_time, at least 0; KV-Cache-Tester's "original" timing when
//     api_time is absent). The parent does not wait for its subagents
//     otherwise: they run beside it, as KV-Cache-Tester replays them;
//   - hash_ids: with hash_id_scope "local" (the default, the only scope
//     AIPerf reads) ids are one conversation's and its subagents' own: two
//     conversations' equal ids are different blocks; with "global" they
//     are shared across the file's conversations;
//   - tool_tokens, system_tokens, models, model, input_types,
//     output_types, stop, ttft, duration_ms, total_tokens, tool_use_count,
//     status and totals are read and checked but not replayed: the prompt
//     is built to in tokens from the hash ids, and the target's model
//     serves every request.

// wekaTrace is one conversation. Pointers tell required keys that are
// missing from zeros.
type wekaTrace struct {
	ID           *string           `json:"id"`
	Models       []string          `json:"models"`
	BlockSize    *int              `json:"block_size"`
	HashIDScope  *string           `json:"hash_id_scope"`
	ToolTokens   int               `json:"tool_tokens"`
	SystemTokens int               `json:"system_tokens"`
	Requests     []json.RawMessage `json:"requests"`
	Totals       json.RawMessage   `json:"totals"`
}

// wekaRequest is one API call: type "n" (normal) or "s" (streaming; only
// it may carry ttft).
type wekaRequest struct {
	T           *float64 `json:"t"`
	Type        string   `json:"type"`
	Model       string   `json:"model"`
	In          *int     `json:"in"`
	Out         *int     `json:"out"`
	HashIDs     []int    `json:"hash_ids"`
	InputTypes  []string `json:"input_types"`
	OutputTypes []string `json:"output_types"`
	Stop        string   `json:"stop"`
	APITime     *float64 `json:"api_time"`
	ThinkTime   *float64 `json:"think_time"`
}

type wekaStreaming struct {
	wekaRequest
	TTFT *float64 `json:"ttft"`
}

// wekaSubagent is a subagent marker with its own requests ("n" or "s").
type wekaSubagent struct {
	T            *float64          `json:"t"`
	Type         string            `json:"type"`
	AgentID      *string           `json:"agent_id"`
	SubagentType string            `json:"subagent_type"`
	DurationMS   *int64            `json:"duration_ms"`
	TotalTokens  *int64            `json:"total_tokens"`
	ToolUseCount *int64            `json:"tool_use_count"`
	Status       string            `json:"status"`
	Requests     []json.RawMessage `json:"requests"`
	Models       []string          `json:"models"`
	ToolTokens   int               `json:"tool_tokens"`
	SystemTokens int               `json:"system_tokens"`
}

// Bounds of a Weka file.
const (
	// maxWekaObject bounds one conversation's JSON, in bytes.
	maxWekaObject = 512 << 20
	// maxBlockSize bounds block_size, in tokens.
	maxBlockSize = 1 << 20
)

// wekaObj is one conversation's JSON and where it starts in the file, for
// errors at its fields.
type wekaObj struct {
	file      string
	line, col int // of its first byte
	b         []byte
	nl        []int // the offsets of b's newlines, once asked for
}

// at is the file's line and column of offset off in o.
func (o *wekaObj) at(off int) (line, col int) {
	if o.nl == nil { // once: every request asks, and an object may be long
		o.nl = []int{}
		for i, c := range o.b {
			if c == '\n' {
				o.nl = append(o.nl, i)
			}
		}
	}
	off = min(max(off, 0), len(o.b))
	k := sort.SearchInts(o.nl, off) // newlines before off
	if k == 0 {
		return o.line, o.col + off
	}
	return o.line + k, off - o.nl[k-1]
}

// elements returns the offsets in o of the n items of the array under
// key of the object at offset at (one pass over it); nil when they cannot
// be told.
func (o *wekaObj) elements(at int, key string, n int) []int {
	arr, ok := jsonerr.Find(o.b[at:], key)
	if !ok {
		return nil
	}
	arr += at
	dec := json.NewDecoder(bytes.NewReader(o.b[arr:]))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil
	}
	offs := make([]int, 0, n)
	for dec.More() {
		start := arr + int(dec.InputOffset())
		for start < len(o.b) && strings.IndexByte(" \t\r\n,", o.b[start]) >= 0 {
			start++
		}
		offs = append(offs, start)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	if len(offs) != n {
		return nil
	}
	return offs
}

// offset is the offset in o of item i of the array at path, whose items'
// offsets are offs (elements; Find when nil).
func (o *wekaObj) offset(offs []int, path []string, i int) int {
	if offs != nil {
		return offs[i]
	}
	off, _ := jsonerr.Find(o.b, append(slices.Clip(path), strconv.Itoa(i))...)
	return off
}

// err is an error at the value of path (keys and array indices from the
// object's root) worded as field.
func (o *wekaObj) err(path []string, format string, args ...any) error {
	off, _ := jsonerr.Find(o.b, path...)
	line, col := o.at(off)
	return fieldErr(o.file, line, col, jsonerr.Path(path), format, args...)
}

// decode decodes the value at path (its bytes sub, at offset base in o)
// strictly into v, positioning errors at their field or byte.
func (o *wekaObj) decode(path []string, sub []byte, base int, v any) error {
	dec := json.NewDecoder(bytes.NewReader(sub))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	field, msg := jsonerr.Describe(err)
	if field != "" {
		return o.err(append(slices.Clip(path), fieldPath(field)...), "%s", msg)
	}
	off := 0
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1
	case errors.As(err, &ute):
		off = int(ute.Offset) - 1
	}
	line, col := o.at(base + max(off, 0))
	return fieldErr(o.file, line, col, jsonerr.Path(path), "invalid JSON: %s", msg)
}

// wekaSession is one session of a conversation, its requests in time order.
type wekaSession struct {
	id    string
	start float64 // seconds from the conversation's start
	reqs  []wekaTurn
}

// wekaTurn is one request as replayed, t in root-trace seconds.
type wekaTurn struct {
	t, api  float64
	think   *float64
	joined  bool // a subagent ran between it and the request before
	line    int
	in, out int
	ids     []int
}

// wekaRows reads Weka trace objects, one after another, strictly: each
// conversation is checked whole, then its sessions go by as rows, the
// conversation's first, then its subagents' in order of spawn.
func wekaRows(name string, br *bufio.Reader, fn func(*row) error) error {
	sc := objScanner{br: br, line: 1, col: 1}
	ids := map[string]int{} // conversation id → its line
	block, blockLine := 0, 0
	var r row
	for ordinal := 0; ; ordinal++ {
		o, err := sc.next(name)
		if err == io.EOF {
			if ordinal == 0 {
				return lineErr(name, 1, "no trace object in the file")
			}
			return nil
		}
		if err != nil {
			return err
		}
		ss, bs, err := o.sessions(ordinal)
		if err != nil {
			return err
		}
		if first, dup := ids[ss[0].id]; dup {
			return o.err([]string{"id"}, "%q is the id of the conversation on line %d too", ss[0].id, first)
		}
		ids[ss[0].id] = o.line
		switch {
		case block == 0:
			block, blockLine = bs, o.line
		case bs != block:
			return o.err([]string{"block_size"}, "%d differs from %d on line %d: one file, one block size", bs, block, blockLine)
		}
		for _, s := range ss {
			for k, u := range s.reqs {
				start := seconds(s.start)
				r = row{line: u.line, id: s.id, keyed: true, turn: k, start: start, block: block,
					l: jsonLine{file: name, n: u.line},
					t: Turn{Offset: seconds(u.t - s.start), InputTokens: u.in, OutputTokens: u.out, HashIDs: u.ids}}
				if k > 0 {
					r.t.Think = wekaThink(s.reqs[k-1], u)
				}
				r.at = start + r.t.Offset
				if err := fn(&r); err != nil {
					return err
				}
			}
		}
	}
}

// wekaThink is the wait before turn u, whose previous turn is prev: its
// think_time, or the recorded gap from prev's end when it has none or
// when a subagent ran between them.
func wekaThink(prev, u wekaTurn) time.Duration {
	if u.think != nil && !u.joined {
		return seconds(*u.think)
	}
	return seconds(max(u.t-prev.t-prev.api, 0))
}

// sessions checks conversation o (the ordinal-th of its file) and returns
// its sessions, the conversation's first, and its block size.
func (o *wekaObj) sessions(ordinal int) ([]wekaSession, int, error) {
	var tr wekaTrace
	if err := o.decode(nil, o.b, 0, &tr); err != nil {
		return nil, 0, err
	}
	var missing []string
	for _, k := range []struct {
		key string
		ok  bool
	}{{"id", tr.ID != nil}, {"block_size", tr.BlockSize != nil}, {"requests", tr.Requests != nil}} {
		if !k.ok {
			missing = append(missing, k.key)
		}
	}
	if len(missing) > 0 {
		line, col := o.at(0)
		return nil, 0, fieldErr(o.file, line, col, missing[0], "required (a Weka trace has id, block_size and requests)")
	}
	switch {
	case *tr.ID == "":
		return nil, 0, o.err([]string{"id"}, "must not be empty")
	case *tr.BlockSize < 1 || *tr.BlockSize > maxBlockSize:
		return nil, 0, o.err([]string{"block_size"}, "must be 1 to %s tokens (got %d)", numfmt.Thousands(maxBlockSize), *tr.BlockSize)
	case tr.ToolTokens < 0 || tr.ToolTokens > bounds.Tokens:
		return nil, 0, o.err([]string{"tool_tokens"}, "must be 0 to %s (got %d)", numfmt.Thousands(bounds.Tokens), tr.ToolTokens)
	case tr.SystemTokens < 0 || tr.SystemTokens > bounds.Tokens:
		return nil, 0, o.err([]string{"system_tokens"}, "must be 0 to %s (got %d)", numfmt.Thousands(bounds.Tokens), tr.SystemTokens)
	}
	global := false
	if sc := tr.HashIDScope; sc != nil {
		switch *sc {
		case "local":
		case "global":
			global = true
		default:
			return nil, 0, o.err([]string{"hash_id_scope"}, `must be "local" or "global" (got %q)`, *sc)
		}
	}
	w := wekaReader{o: o, block: *tr.BlockSize, global: global, ordinal: ordinal}
	root := wekaSession{id: *tr.ID}
	var subs []wekaSession
	agents := map[string]int{}
	joined := false
	offs := o.elements(0, "requests", len(tr.Requests))
	for i, raw := range tr.Requests {
		path := []string{"requests", strconv.Itoa(i)}
		base := o.offset(offs, []string{"requests"}, i)
		var head struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Type == nil {
			return nil, 0, o.err(path, `want an object with a "type": "n", "s" or "subagent"`)
		}
		switch *head.Type {
		case "n", "s":
			u, err := w.request(path, raw, base, *head.Type, 0)
			if err != nil {
				return nil, 0, err
			}
			u.joined, joined = joined, false
			root.reqs = append(root.reqs, u)
		case "subagent":
			s, err := w.subagent(path, raw, base, *tr.ID, agents)
			if err != nil {
				return nil, 0, err
			}
			joined = true
			if len(s.reqs) > 0 {
				subs = append(subs, s)
			}
		default:
			return nil, 0, o.err(append(path, "type"), `must be "n", "s" or "subagent" (got %q)`, *head.Type)
		}
	}
	if len(root.reqs) == 0 && len(subs) == 0 {
		return nil, 0, o.err([]string{"requests"}, "no requests in the conversation %q", *tr.ID)
	}
	ss := append([]wekaSession{root}, subs...)
	if len(root.reqs) == 0 {
		ss = subs
	}
	for i := range ss {
		slices.SortStableFunc(ss[i].reqs, func(a, b wekaTurn) int { return cmp.Compare(a.t, b.t) })
		ss[i].start = ss[i].reqs[0].t
	}
	return ss, *tr.BlockSize, nil
}

// wekaReader checks one conversation's requests.
type wekaReader struct {
	o       *wekaObj
	block   int
	global  bool
	ordinal int
}

// request checks request raw of type typ at path (offset base in the
// object); spawn is its subagent's spawn time (0 for the conversation's
// own).
func (w *wekaReader) request(path []string, raw json.RawMessage, base int, typ string, spawn float64) (wekaTurn, error) {
	var q wekaRequest
	if typ == "s" {
		var s wekaStreaming
		if err := w.o.decode(path, raw, base, &s); err != nil {
			return wekaTurn{}, err
		}
		if s.TTFT != nil {
			if err := w.seconds(append(path, "ttft"), *s.TTFT); err != nil {
				return wekaTurn{}, err
			}
		}
		q = s.wekaRequest
	} else if err := w.o.decode(path, raw, base, &q); err != nil {
		return wekaTurn{}, err
	}
	var missing []string
	for _, k := range []struct {
		key string
		ok  bool
	}{{"t", q.T != nil}, {"in", q.In != nil}, {"out", q.Out != nil}} {
		if !k.ok {
			missing = append(missing, k.key)
		}
	}
	if len(missing) > 0 {
		return wekaTurn{}, w.o.err(path, "%s required (a request has t, in and out)", missing[0])
	}
	for _, c := range []struct {
		key string
		s   *float64
	}{{"t", q.T}, {"api_time", q.APITime}, {"think_time", q.ThinkTime}} {
		if c.s != nil {
			if err := w.seconds(append(path, c.key), *c.s); err != nil {
				return wekaTurn{}, err
			}
		}
	}
	for _, c := range []struct {
		key string
		n   int
	}{{"in", *q.In}, {"out", *q.Out}} {
		if c.n < 0 || c.n > bounds.Tokens {
			return wekaTurn{}, w.o.err(append(path, c.key), "must be 0 to %s tokens (got %d)", numfmt.Thousands(bounds.Tokens), c.n)
		}
	}
	if most := bounds.Tokens/w.block + 1; len(q.HashIDs) > most {
		return wekaTurn{}, w.o.err(append(path, "hash_ids"), "too many (%s): a prompt of at most %s tokens is at most %s blocks of %d",
			numfmt.Thousands(float64(len(q.HashIDs))), numfmt.Thousands(bounds.Tokens), numfmt.Thousands(float64(most)), w.block)
	}
	ids := make([]int, len(q.HashIDs))
	for i, id := range q.HashIDs {
		if id < 0 {
			return wekaTurn{}, w.o.err(append(path, "hash_ids", strconv.Itoa(i)), "must be ≥ 0 (got %d)", id)
		}
		ids[i] = w.blockID(id)
	}
	t := *q.T
	if spawn > 0 && t+1e-6 < spawn {
		t += spawn // an older capture's subagent time, from its spawn
	}
	line, _ := w.o.at(base)
	u := wekaTurn{t: t, think: q.ThinkTime, line: line, in: *q.In, out: *q.Out, ids: ids}
	if q.APITime != nil {
		u.api = *q.APITime
	}
	return u, nil
}

// blockID is hash id id as a block of the whole file: a local-scope id
// belongs to its conversation alone.
func (w *wekaReader) blockID(id int) int {
	if w.global {
		return id
	}
	x := uint64(id)*0x9e3779b97f4a7c15 ^ uint64(w.ordinal+1)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	return int(x & math.MaxInt64)
}

// subagent checks subagent marker raw at path (offset base in the
// object) of conversation id, whose agents so far are agents (id →
// index), and returns its session.
func (w *wekaReader) subagent(path []string, raw json.RawMessage, base int, id string, agents map[string]int) (wekaSession, error) {
	var sa wekaSubagent
	if err := w.o.decode(path, raw, base, &sa); err != nil {
		return wekaSession{}, err
	}
	switch {
	case sa.T == nil:
		return wekaSession{}, w.o.err(path, "t required (a subagent has t, agent_id and requests)")
	case sa.AgentID == nil:
		return wekaSession{}, w.o.err(path, "agent_id required (a subagent has t, agent_id and requests)")
	case sa.Requests == nil:
		return wekaSession{}, w.o.err(path, "requests required (a subagent has t, agent_id and requests)")
	case *sa.AgentID == "":
		return wekaSession{}, w.o.err(append(path, "agent_id"), "must not be empty")
	case sa.ToolTokens < 0 || sa.SystemTokens < 0:
		return wekaSession{}, w.o.err(path, "tool_tokens and system_tokens must be ≥ 0")
	}
	if err := w.seconds(append(path, "t"), *sa.T); err != nil {
		return wekaSession{}, err
	}
	if j, dup := agents[*sa.AgentID]; dup {
		return wekaSession{}, w.o.err(append(path, "agent_id"), "%q is requests[%d]'s agent_id too", *sa.AgentID, j)
	}
	agents[*sa.AgentID], _ = strconv.Atoi(path[len(path)-1])
	s := wekaSession{id: id + "::sa:" + *sa.AgentID}
	inPath := append(slices.Clip(path), "requests")
	offs := w.o.elements(base, "requests", len(sa.Requests))
	for i, inner := range sa.Requests {
		ip := append(slices.Clip(inPath), strconv.Itoa(i))
		ib := w.o.offset(offs, inPath, i)
		var head struct {
			Type *string `json:"type"`
		}
		if err := json.Unmarshal(inner, &head); err != nil || head.Type == nil || *head.Type != "n" && *head.Type != "s" {
			return wekaSession{}, w.o.err(ip, `want a request of "type": "n" or "s" (subagents do not nest)`)
		}
		u, err := w.request(ip, inner, ib, *head.Type, *sa.T)
		if err != nil {
			return wekaSession{}, err
		}
		s.reqs = append(s.reqs, u)
	}
	return s, nil
}

// seconds checks a time in seconds at path: 0 to a century.
func (w *wekaReader) seconds(path []string, s float64) error {
	switch {
	case s < 0:
		return w.o.err(path, "must be ≥ 0 s (got %s)", num(s))
	case !bounds.Seconds(s):
		return w.o.err(path, "must be ≤ %s s, a century (got %s)", numfmt.Thousands(bounds.CenturySeconds), num(s))
	}
	return nil
}

// objScanner cuts a stream into top-level JSON objects, counting lines
// and columns, without decoding them.
type objScanner struct {
	br        *bufio.Reader
	line, col int
	buf       []byte
}

// next returns the next object, or io.EOF after the last.
func (sc *objScanner) next(name string) (*wekaObj, error) {
	// Blanks (and a byte-order mark) before it.
	for {
		c, err := sc.br.ReadByte()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		if c == 0xEF && sc.line == 1 && sc.col == 1 {
			if b, _ := sc.br.Peek(2); len(b) == 2 && b[0] == 0xBB && b[1] == 0xBF {
				_, _ = sc.br.Discard(2)
				continue
			}
		}
		switch c {
		case ' ', '\t', '\r':
			sc.col++
			continue
		case '\n':
			sc.line, sc.col = sc.line+1, 1
			continue
		case '{':
		default:
			return nil, fieldErr(name, sc.line, sc.col, "", "want a Weka trace object ({\"id\": ..., \"requests\": [...]}), got %q", string(c))
		}
		break
	}
	o := &wekaObj{file: name, line: sc.line, col: sc.col}
	sc.buf = append(sc.buf[:0], '{')
	sc.col++
	depth, inStr, esc := 1, false, false
	for depth > 0 {
		c, err := sc.br.ReadByte()
		if err == io.EOF {
			return nil, fieldErr(name, sc.line, sc.col, "", "the file ends inside the object begun on line %d", o.line)
		}
		if err != nil {
			return nil, err
		}
		if len(sc.buf) >= maxWekaObject {
			return nil, fieldErr(name, o.line, o.col, "", "the object is longer than %s bytes", numfmt.Thousands(maxWekaObject))
		}
		sc.buf = append(sc.buf, c)
		if c == '\n' {
			sc.line, sc.col = sc.line+1, 1
		} else {
			sc.col++
		}
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	o.b, sc.buf = sc.buf, nil // the object keeps the bytes; the next starts afresh
	return o, nil
}
