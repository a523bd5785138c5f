// Package trace holds recorded or published LLM traffic as sessions of
// requests, and reads and writes the files it comes in.
//
// The formats are sixpin's own JSONL
// (written by `sixpin analyze opencode --export-trace`), Mooncake's JSONL,
// Azure's LLM inference CSV and the Weka agentic-coding traces
// SemiAnalysis's AgentX replays (weka.go). Read holds a trace in memory; Open checks
// a file of any length in one pass and lets a replay read its sessions
// again as it goes (File), in memory that does not grow with its rows.
//
// Token counts follow the OpenAI usage convention used across sixpin:
// InputTokens is the whole prompt, of which CachedTokens were served from
// a prefix cache; OutputTokens is everything generated, of which
// ReasoningTokens were reasoning.
package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// MooncakeBlockTokens is the number of prompt tokens one Mooncake hash id
// stands for.
const MooncakeBlockTokens = 512

// Trace is recorded or published traffic: sessions of requests.
type Trace struct {
	// Source says where the trace came from (a file name, a database).
	Source string
	// Format is the file format Read found (FormatSixpin, FormatMooncake,
	// FormatAzure); empty for a trace built in Go.
	Format   string
	Sessions []Session
	// Block is how many prompt tokens one hash id stands for (a Weka
	// trace's block_size); 0: MooncakeBlockTokens.
	Block int
}

// Session is one conversation: requests that each re-send the history of
// the ones before.
type Session struct {
	ID string
	// Start is the first request's offset from the trace's start.
	Start time.Duration
	Turns []Turn
}

// Turn is one request of a session.
type Turn struct {
	// Offset is when the request was sent, from the session's start
	// (0 for the first turn).
	Offset time.Duration
	// Think is the wait before this turn: from the previous response's
	// end to this request (0 for the first turn; 0 when unknown).
	Think time.Duration
	// InputTokens is the whole prompt, CachedTokens the part of it read
	// from a prefix cache; OutputTokens is everything generated,
	// ReasoningTokens the part of it that was reasoning.
	InputTokens, CachedTokens, OutputTokens, ReasoningTokens int
	// HashIDs are block ids of the prompt (Mooncake: blocks of
	// BlockTokens tokens); requests sharing leading ids share prompt
	// prefixes.
	HashIDs []int
}

// BlockTokens is the number of prompt tokens one hash id stands for: 0
// when the trace has no hash ids.
func (t *Trace) BlockTokens() int {
	for _, s := range t.Sessions {
		for _, u := range s.Turns {
			if len(u.HashIDs) > 0 {
				return cmp.Or(t.Block, MooncakeBlockTokens)
			}
		}
	}
	return 0
}

// Turns counts the requests in the trace.
func (t *Trace) Turns() int {
	n := 0
	for _, s := range t.Sessions {
		n += len(s.Turns)
	}
	return n
}

// Formats Read understands.
const (
	FormatSixpin   = "sixpin"
	FormatMooncake = "mooncake"
	FormatAzure    = "azure"
	FormatWeka     = "weka"
)

// Error is a problem in a trace file: at a line (0: the whole file), a
// column (0: the whole line) and a field (a JSON key such as
// "input_tokens" or "hash_ids[2]", a CSV column name; "" when none is at
// fault).
type Error struct {
	File  string
	Line  int
	Col   int
	Field string
	Err   error
}

// Error formats e as "file:line:col: field: message", leaving out the
// parts that are unknown.
func (e *Error) Error() string {
	return fielderr.Format(e.File, e.Line, e.Col, e.Field, e.Err.Error())
}

func (e *Error) Unwrap() error { return e.Err }

// lineErr is an error about line as a whole; string arguments (text from
// the file) are cut short.
func lineErr(file string, line int, format string, args ...any) error {
	return fieldErr(file, line, 0, "", format, args...)
}

// fieldErr is an error at line:col in field; string arguments are cut
// short.
func fieldErr(file string, line, col int, field, format string, args ...any) error {
	return &Error{File: file, Line: line, Col: col, Field: field, Err: fmt.Errorf(format, clip.Args(args)...)}
}

// jsonLine is one line of a JSON Lines trace, for positioned errors.
type jsonLine struct {
	file string
	n    int
	b    []byte
}

// decode decodes the line into v (strictly when strict: unknown keys are
// errors) and returns a positioned error: syntax errors at their column,
// type errors and unknown keys at their key's value.
func (l jsonLine) decode(v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(l.b))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if err == nil && dec.More() {
		return l.err("", "more than one JSON value on the line")
	}
	if err == nil {
		return nil
	}
	field, msg := jsonerr.Describe(err)
	if field != "" {
		return l.err(field, "%s", msg)
	}
	if _, col, ok := jsonerr.Position(l.b, err); ok {
		return fieldErr(l.file, l.n, col, "", "invalid JSON: %s", msg)
	}
	return fieldErr(l.file, l.n, 1, "", "invalid JSON: %s", msg)
}

// err is an error at field ("input_tokens", "hash_ids[1]"), positioned
// at its value; "" positions it at the line's start.
func (l jsonLine) err(field, format string, args ...any) error {
	col := 1
	if field != "" {
		if off, ok := jsonerr.Find(l.b, fieldPath(field)...); ok {
			_, col = jsonerr.LineCol(l.b, off)
		}
	}
	return fieldErr(l.file, l.n, col, field, format, args...)
}

// missing reports the first of keys that the line lacks (present tells),
// as an error at the line's start.
func (l jsonLine) missing(keys []string, present []bool) error {
	var absent []string
	for i, k := range keys {
		if !present[i] {
			absent = append(absent, k)
		}
	}
	switch len(absent) {
	case 0:
		return nil
	case 1:
		return fieldErr(l.file, l.n, 1, absent[0], "required")
	}
	return fieldErr(l.file, l.n, 1, absent[0], "required (so are %s)", strings.Join(absent[1:], ", "))
}

// maxHashIDs is the most hash ids a request can have: the blocks of a
// prompt of bounds.Tokens tokens.
const maxHashIDs = (bounds.Tokens + MooncakeBlockTokens - 1) / MooncakeBlockTokens

// hashIDs checks a request's hash ids: at most maxHashIDs, each ≥ 0.
func (l jsonLine) hashIDs(ids []int) error {
	if len(ids) > maxHashIDs {
		return l.err("hash_ids", "too many (%s): a prompt of at most %s tokens is at most %s blocks of %d",
			numfmt.Thousands(float64(len(ids))), numfmt.Thousands(bounds.Tokens), numfmt.Thousands(maxHashIDs), MooncakeBlockTokens)
	}
	for i, id := range ids {
		if id < 0 {
			return l.err(fmt.Sprintf("hash_ids[%d]", i), "must be ≥ 0 (got %d)", id)
		}
	}
	return nil
}

// fieldPath splits "a.b[2]" into the JSON path "a", "b", "2".
func fieldPath(field string) []string {
	return strings.FieldsFunc(field, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
}

// tokens checks a token count read from field: 0 to bounds.Tokens.
func (l jsonLine) tokens(field string, n int) error {
	switch {
	case n < 0:
		return l.err(field, "must be ≥ 0 (got %d)", n)
	case n > bounds.Tokens:
		return l.err(field, "must be ≤ %s tokens (got %d)", numfmt.Thousands(bounds.Tokens), n)
	}
	return nil
}

// seconds checks a time in seconds read from field: 0 to a century.
func (l jsonLine) seconds(field string, s float64) error {
	switch {
	case s < 0:
		return l.err(field, "must be ≥ 0 s (got %s)", num(s))
	case !bounds.Seconds(s):
		return l.err(field, "must be ≤ %s s, a century (got %s)", numfmt.Thousands(bounds.CenturySeconds), num(s))
	}
	return nil
}

// num formats x in the shortest form that reads back exactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Extensions are the file name endings of trace files (sixpin and
// Mooncake JSONL, Azure CSV, Weka JSON, each perhaps gzipped).
var Extensions = []string{".jsonl", ".ndjson", ".csv", ".json", ".jsonl.gz", ".ndjson.gz", ".csv.gz", ".json.gz"}

// IsTraceName reports whether a file name ends like a trace file's.
func IsTraceName(name string) bool {
	for _, ext := range Extensions {
		if strings.HasSuffix(strings.ToLower(name), ext) {
			return true
		}
	}
	return false
}

// peekSize bounds the first line format detection looks at.
const peekSize = 1 << 20

// Read reads a trace file whole into memory, detecting its format: sixpin
// JSONL (lines with a "session" key), Mooncake JSONL (lines with
// "timestamp" and "input_length"), Weka JSON (objects with "requests",
// one after another, compact or pretty-printed) or Azure's LLM inference
// CSV (a header with TIMESTAMP, ContextTokens and GeneratedTokens). A gzip-compressed
// file is read through. Errors name the file and line. (Open replays a
// file of any length without holding it.)
func Read(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	defer f.Close()
	return Decode(path, f)
}

// Decode reads a trace from r as Read does; name is used in errors and
// as the trace's Source.
func Decode(name string, r io.Reader) (*Trace, error) {
	format, br, done, err := openRows(name, r)
	if err != nil {
		return nil, err
	}
	defer done()
	read, fromFirst := rowsOf(format)
	t, err := collect(name, read, fromFirst, br)
	if err != nil {
		return nil, named(name, err)
	}
	t.Source, t.Format = name, format
	return t, nil
}

// collect reads every row of a trace into its sessions, sorted by start.
func collect(name string, read rowReader, fromFirst bool, br *bufio.Reader) (*Trace, error) {
	tk := newTracker(name)
	var (
		ss    []Session
		turns [][]int // each session's turn indices, in the order read
	)
	err := read(name, br, func(r *row) error {
		index, start, turn, err := tk.add(r)
		if err != nil {
			return err
		}
		if index == len(ss) {
			ss, turns = append(ss, Session{ID: r.id, Start: start}), append(turns, nil)
		}
		ss[index].Turns = append(ss[index].Turns, r.t)
		turns[index] = append(turns[index], turn)
		return nil
	})
	if err == nil {
		err = tk.finish()
	}
	if err == nil && len(ss) == 0 {
		err = errors.New("no requests in the trace")
	}
	if err != nil {
		return nil, err
	}
	for i := range ss {
		p := pending{s: ss[i], turns: turns[i]}
		p.sort()
		ss[i] = p.s
		if fromFirst {
			ss[i].Start -= tk.earliest
		}
	}
	sortSessions(ss)
	return &Trace{Sessions: ss, Block: tk.sum.block}, nil
}

// detect names the format from the first non-blank line, and returns a
// reader of the whole file still: br itself when the line fits its
// buffer, else one that reads the line again, whole, before the rest.
func detect(name string, br *bufio.Reader) (string, *bufio.Reader, error) {
	buf, _ := br.Peek(br.Size())
	rest := bytes.TrimLeft(buf, " \t\r\n")
	if line, _, found := bytes.Cut(rest, []byte("\n")); found || len(buf) < br.Size() {
		format, err := sniff(name, bytes.TrimSpace(line))
		return format, br, err
	}
	// A first line longer than the buffer (a Mooncake line with a long
	// hash_ids): read up to its end.
	var head []byte
	for {
		chunk, err := br.ReadSlice('\n')
		head = append(head, chunk...)
		if err == nil && len(bytes.TrimSpace(head)) > 0 || err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	line := bytes.TrimSpace(head)
	if i := bytes.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:] // blank lines before it
	}
	format, err := sniff(name, line)
	return format, bufio.NewReaderSize(io.MultiReader(bytes.NewReader(head), br), peekSize), err
}

func sniff(name string, line []byte) (string, error) {
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	if len(line) == 0 {
		return "", &Error{File: name, Err: errors.New("empty trace file")}
	}
	if string(line) == "{" {
		return FormatWeka, nil // a pretty-printed object: a Weka conversation
	}
	if line[0] == '{' {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(line, &keys); err != nil {
			// Let the reader report the line properly.
			return FormatSixpin, nil
		}
		if _, ok := keys["session"]; ok {
			return FormatSixpin, nil
		}
		if _, ok := keys["requests"]; ok {
			return FormatWeka, nil // one conversation on one line
		}
		_, ts := keys["timestamp"]
		_, in := keys["input_length"]
		if ts || in {
			return FormatMooncake, nil
		}
		return "", lineErr(name, 1, "unrecognised trace line: want sixpin JSONL (\"session\", \"turn\", ...), Mooncake JSONL (\"timestamp\", \"input_length\", ...) or a Weka trace ({\"id\": ..., \"requests\": [...]})")
	}
	if _, err := azureColumns(string(line)); err == nil {
		return FormatAzure, nil
	}
	return "", lineErr(name, 1, "unrecognised trace format: want sixpin or Mooncake JSONL, or a CSV with TIMESTAMP, ContextTokens and GeneratedTokens columns")
}

// lines calls fn for each non-blank line with its 1-based number. Lines
// may be of any length.
func lines(br *bufio.Reader, fn func(n int, line []byte) error) error {
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			n++
			if t := bytes.TrimSpace(line); len(t) > 0 {
				if n == 1 {
					t = bytes.TrimPrefix(t, []byte("\ufeff"))
				}
				if ferr := fn(n, t); ferr != nil {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// seconds converts seconds to a Duration, to the nanosecond.
func seconds(s float64) time.Duration {
	return time.Duration(s*1e9 + copysignHalf(s))
}

func copysignHalf(s float64) float64 {
	if s < 0 {
		return -0.5
	}
	return 0.5
}
