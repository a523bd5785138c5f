package export

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// RecordsFormat is the format of a per-request records file.
type RecordsFormat string

// Records formats.
const (
	// RecordsJSONL is JSON Lines: one object per request, a key per
	// column that has a value.
	RecordsJSONL RecordsFormat = "jsonl"
	// RecordsCSV is CSV with a header line: a cell per column, empty
	// where the request has no value.
	RecordsCSV RecordsFormat = "csv"
)

// RecordsFormatOf names the format of the records file at path by its
// extension: .jsonl (or .ndjson) is JSON Lines, .csv is CSV.
func RecordsFormatOf(path string) (RecordsFormat, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		return RecordsJSONL, nil
	case ".csv":
		return RecordsCSV, nil
	}
	return "", fmt.Errorf("records file %q: name it .jsonl (JSON Lines) or .csv (CSV); its extension says the format", path)
}

// Columns are a row's fields, in order: the JSON keys and the CSV header.
// Times are in milliseconds of run time (simulated time in a run made
// with --time-scale), offsets from the start of load; a request's
// latencies are measured from its scheduled start, as the results file's
// are. Token counts are the server's usage (absent when it sent none).
var Columns = []string{
	"request_id", "shard", "index", "session", "turn", "attempt", "class", "content",
	"scheduled_ms", "sent_ms", "end_ms", "sent_at", "lag_ms",
	"ttft_ms", "tpot_ms", "itl_mean_ms", "itl_p50_ms", "itl_max_ms", "e2e_ms", "chunks",
	"requested_input_tokens", "requested_output_tokens",
	"input_tokens", "cached_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens",
	"draft_tokens", "draft_accepted_tokens",
	"http_status", "error", "error_message",
}

// The columns' positions in a row.
const (
	colRequestID = iota
	colShard
	colIndex
	colSession
	colTurn
	colAttempt
	colClass
	colContent
	colScheduled
	colSent
	colEnd
	colSentAt
	colLag
	colTTFT
	colTPOT
	colITLMean
	colITLP50
	colITLMax
	colE2E
	colChunks
	colReqInput
	colReqOutput
	colInput
	colCached
	colCacheWrite
	colOutput
	colReasoning
	colDraft
	colDraftAccepted
	colHTTPStatus
	colError
	colErrorMessage
	numColumns
)

// cell is one column's value in a row: its text (a number's digits, or
// the string itself), and whether it has one and is a number.
type cell struct {
	text    string
	set     bool
	numeric bool
}

// RecordWriter writes one row per request to w as records are handed to
// it, buffered: it keeps one row, never the run. Call Begin once with
// the run's header, Write for each finished record, Flush at the end. It
// is not safe for concurrent use: the goroutine that consumes a run's
// records (the collector's) owns it.
type RecordWriter struct {
	w      *bufio.Writer
	format RecordsFormat
	csv    *csv.Writer
	// start is the wall-clock start of load, scale the wall time per run
	// time, shard the run's shard index (-1: none).
	start time.Time
	scale float64
	shard int
	begun bool
	rows  int
	err   error
	row   [numColumns]cell
	// gaps and line are scratch reused from row to row.
	gaps []itlGap
	line []byte
	strs []string
}

// NewRecordWriter returns a writer of rows in format f to w.
func NewRecordWriter(w io.Writer, f RecordsFormat) *RecordWriter {
	rw := &RecordWriter{w: bufio.NewWriterSize(w, 64<<10), format: f, shard: -1, scale: 1}
	if f == RecordsCSV {
		rw.csv = csv.NewWriter(rw.w)
	}
	return rw
}

// Begin takes the run's header (its start, time scale and shard) and
// writes the CSV header line.
func (rw *RecordWriter) Begin(h *results.Header) error {
	rw.start, rw.begun = h.StartedAt, true
	if h.TimeScale > 0 {
		rw.scale = h.TimeScale
	}
	if h.Shard != nil {
		rw.shard = h.Shard.Index
	}
	if rw.csv != nil {
		rw.fail(rw.csv.Write(Columns))
	}
	return rw.err
}

// Write writes r's row. Its chunks' token counts must be assigned
// (results.Collector.Add does; records read back from a spill have
// them). After an error every Write returns it and writes nothing.
func (rw *RecordWriter) Write(r *record.Record) error {
	if rw.err != nil {
		return rw.err
	}
	if !rw.begun {
		return errors.New("records: Write before Begin")
	}
	rw.fill(r)
	if rw.csv != nil {
		rw.strs = rw.strs[:0]
		for _, c := range rw.row {
			rw.strs = append(rw.strs, c.text)
		}
		rw.fail(rw.csv.Write(rw.strs))
	} else {
		rw.line = appendJSONRow(rw.line[:0], &rw.row)
		_, err := rw.w.Write(rw.line)
		rw.fail(err)
	}
	if rw.err == nil {
		rw.rows++
	}
	return rw.err
}

// Rows is how many rows were written.
func (rw *RecordWriter) Rows() int { return rw.rows }

// Flush writes what is buffered.
func (rw *RecordWriter) Flush() error {
	if rw.csv != nil {
		rw.csv.Flush()
		rw.fail(rw.csv.Error())
	}
	rw.fail(rw.w.Flush())
	return rw.err
}

func (rw *RecordWriter) fail(err error) {
	if err != nil && rw.err == nil {
		rw.err = fmt.Errorf("write records: %w", err)
	}
}

// itlGap is one gap between token-bearing chunks: its length in µs per
// token, and the k tokens of the chunk after it.
type itlGap struct {
	perTokenUS float64
	k          int
}

// fill sets rw.row to r's values. Every time is read at µs resolution,
// as the spill keeps it, so a row is the same from a run and from its
// spill.
func (rw *RecordWriter) fill(r *record.Record) {
	row := &rw.row
	*row = [numColumns]cell{}
	str := func(i int, s string) {
		if s != "" {
			row[i] = cell{text: s, set: true}
		}
	}
	num := func(i int, v int64) { row[i] = cell{text: strconv.FormatInt(v, 10), set: true, numeric: true} }
	ms := func(i int, us float64) { row[i] = cell{text: msText(us), set: true, numeric: true} }

	str(colRequestID, r.RequestID)
	if rw.shard >= 0 {
		num(colShard, int64(rw.shard))
	}
	num(colIndex, int64(r.Index))
	if r.Session >= 0 {
		num(colSession, int64(r.Session))
		num(colTurn, int64(r.Turn))
		num(colAttempt, int64(r.Attempt))
	}
	str(colClass, r.Class)
	str(colContent, r.Content)
	sched, sent, end := r.Scheduled.Microseconds(), r.Sent.Microseconds(), r.End.Microseconds()
	ms(colScheduled, float64(sched))
	ms(colSent, float64(sent))
	ms(colEnd, float64(end))
	if !rw.start.IsZero() {
		at := rw.start.Add(time.Duration(float64(sent) * rw.scale * float64(time.Microsecond)))
		str(colSentAt, at.UTC().Format("2006-01-02T15:04:05.000000Z07:00"))
	}
	ms(colLag, float64(sent-sched))
	ms(colE2E, float64(end-sched))
	num(colChunks, int64(len(r.Chunks)))
	num(colReqInput, int64(r.RequestedPromptTokens))
	num(colReqOutput, int64(r.RequestedOutputTokens))
	if r.HasUsage {
		u := r.Usage
		num(colInput, int64(u.PromptTokens))
		num(colCached, int64(u.CachedTokens))
		num(colCacheWrite, int64(u.CacheWriteTokens))
		num(colOutput, int64(u.CompletionTokens))
		num(colReasoning, int64(u.ReasoningTokens))
	}
	if t := r.Server; t.Has && t.DraftTokens > 0 {
		num(colDraft, int64(t.DraftTokens))
		num(colDraftAccepted, int64(t.DraftAccepted))
	}
	if r.HTTPStatus != 0 {
		num(colHTTPStatus, int64(r.HTTPStatus))
	}
	str(colError, string(r.Err))
	str(colErrorMessage, r.ErrMsg)
	if r.Failed() || len(r.Chunks) == 0 {
		return // latencies are a successful request's, as the results count them
	}
	first := r.Chunks[0].At.Microseconds()
	ms(colTTFT, float64(first-sched))
	out := r.OutputTokens()
	if out <= 1 || end <= first || !r.DecodeMeasured() {
		return // no decode, or one the client did not observe
	}
	ms(colTPOT, float64(end-first)/float64(out-1))
	rw.gaps = rw.gaps[:0]
	tokens, maxGap := 0, 0.0
	prev := first
	for _, ch := range r.Chunks[1:] {
		at := ch.At.Microseconds()
		k := max(int(ch.Tokens), 1)
		g := itlGap{perTokenUS: float64(at-prev) / float64(k), k: k}
		rw.gaps = append(rw.gaps, g)
		tokens += k
		maxGap = max(maxGap, g.perTokenUS)
		prev = at
	}
	ms(colITLMean, float64(prev-first)/float64(tokens))
	ms(colITLP50, weightedMedian(rw.gaps, tokens))
	ms(colITLMax, maxGap)
}

// weightedMedian is the median of the gaps, each counted k times (as the
// ITL histogram counts them): the smallest value whose cumulative count
// reaches half of total, rounded half up.
func weightedMedian(gaps []itlGap, total int) float64 {
	slices.SortFunc(gaps, func(a, b itlGap) int { return cmp.Compare(a.perTokenUS, b.perTokenUS) })
	want := max((total+1)/2, 1)
	n := 0
	for _, g := range gaps {
		n += g.k
		if n >= want {
			return g.perTokenUS
		}
	}
	return gaps[len(gaps)-1].perTokenUS
}

// msText formats a time in µs as milliseconds, to the µs.
func msText(us float64) string {
	return strconv.FormatFloat(math.Round(us)/1000, 'f', -1, 64)
}

// appendJSONRow appends row as one JSON object and a newline, keys in
// column order, absent values left out.
func appendJSONRow(b []byte, row *[numColumns]cell) []byte {
	b = append(b, '{')
	first := true
	for i, c := range row {
		if !c.set {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, Columns[i]...)
		b = append(b, '"', ':')
		if c.numeric {
			b = append(b, c.text...)
		} else {
			b = appendJSONString(b, c.text)
		}
	}
	return append(b, '}', '\n')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\ufffd"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// RecordsFile is a records file a run writes as it goes: its rows
// stream to the file (buffered), so a run of any length keeps one row in
// memory. Like RecordWriter, it is owned by one goroutine.
type RecordsFile struct {
	*RecordWriter
	f    *os.File
	path string
}

// CreateRecords creates (or truncates) the records file at path, in the
// format its extension names (RecordsFormatOf).
func CreateRecords(path string) (*RecordsFile, error) {
	format, err := RecordsFormatOf(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create records file: %w", err)
	}
	return &RecordsFile{RecordWriter: NewRecordWriter(f, format), f: f, path: path}, nil
}

// Path is the file's path.
func (rf *RecordsFile) Path() string { return rf.path }

// Close flushes the rows and closes the file; it returns the first error
// writing them met. Closing twice does nothing more.
func (rf *RecordsFile) Close() error {
	if rf.f == nil {
		return rf.err
	}
	_ = rf.Flush()
	if err := rf.f.Close(); err != nil {
		rf.fail(err)
	}
	rf.f = nil
	return rf.err
}

// SpillRecords writes the records kept in the spill at spill (a run that
// was killed, or any spill `sixpin recover` reads) to out, one row each,
// in the format out's extension names. The file is written atomically
// and streamed: a spill of any size is read once, a record at a time.
// It returns what was read of the spill (its records are the rows
// written).
func SpillRecords(spill, out string) (results.SpillRead, error) {
	format, err := RecordsFormatOf(out)
	if err != nil {
		return results.SpillRead{}, err
	}
	var read results.SpillRead
	err = atomicfile.Write(out, func(w io.Writer) error {
		rw := NewRecordWriter(w, format)
		var err error
		read, err = results.ReadSpill(spill, rw.Begin, rw.Write)
		if err != nil {
			return err
		}
		if read.Header == nil {
			return fmt.Errorf("%s has no header (the run died before its first request)", spill)
		}
		return rw.Flush()
	})
	return read, err
}
