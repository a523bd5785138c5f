package results

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// spill streams finished records to a file in a compact binary form
// (varints, times in µs, chunk times as deltas; about 3 bytes a chunk), so
// a run of any length keeps no per-request data in memory. The windows are
// cut after the run (steady: auto depends on the whole series), and one
// pass over the spill then fills each window's histograms.
//
// The file is self-describing, so that Recover can rebuild a results
// file from it when the run was killed: spillMagic, then frames, each a
// uvarint length and a payload whose first byte is its kind — the run's
// Header (JSON), a string (the next id of the string table: classes,
// session ends, buckets, error classes), or a record. A frame cut short by
// a crash ends the file.
type spill struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  []byte
	// strID interns the record's short strings; each new one is written
	// as a string frame before the record that first uses it.
	strID map[string]uint64
	n     int
	// closed is true once the file is closed, removed once it is gone.
	closed, removed bool
}

// spillMagic opens every spill file.
const spillMagic = "sixpin-spill/v1\n"

// Frame kinds.
const (
	frameHeader = 'H'
	frameString = 'S'
	frameRecord = 'R'
)

// newSpill creates the spill at path (which must not exist), or a new
// temporary file in the system's temporary directory when path is "".
func newSpill(path string) (*spill, error) {
	var f *os.File
	var err error
	if path == "" {
		f, err = os.CreateTemp("", "sixpin-records-*.spill")
	} else {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("create record spill file: %w", err)
	}
	s := &spill{path: f.Name(), f: f, w: bufio.NewWriterSize(f, 1<<16), strID: map[string]uint64{}}
	if _, err := s.w.WriteString(spillMagic); err != nil {
		s.close(true)
		return nil, fmt.Errorf("write record spill: %w", err)
	}
	return s, nil
}

// frame writes one frame of kind k.
func (s *spill) frame(k byte, payload []byte) error {
	var hdr [binary.MaxVarintLen64 + 1]byte
	n := binary.PutUvarint(hdr[:], uint64(len(payload)+1))
	hdr[n] = k
	if _, err := s.w.Write(hdr[:n+1]); err != nil {
		return fmt.Errorf("write record spill: %w", err)
	}
	if _, err := s.w.Write(payload); err != nil {
		return fmt.Errorf("write record spill: %w", err)
	}
	return nil
}

// header writes the run's header frame.
func (s *spill) header(h *Header) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode spill header: %w", err)
	}
	if err := s.frame(frameHeader, b); err != nil {
		return err
	}
	return s.flush()
}

// flush writes what is buffered to the file, so a reader of the file (a
// checkpoint, or Recover after a crash) sees every record put so far.
func (s *spill) flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("flush record spill: %w", err)
	}
	return nil
}

func us(d time.Duration) int64 { return d.Microseconds() }

func usDur(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

func (s *spill) put(r *Record) error {
	ids := [4]uint64{}
	for i, v := range [4]string{r.Class, r.SessionEnd, r.RateLimitBucket, string(r.Err)} {
		id, err := s.intern(v)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	b := s.buf[:0]
	var flags uint64
	if r.HasUsage {
		flags |= 1
	}
	if r.ToolCalls {
		flags |= 2
	}
	if r.Usage.CacheWriteTokens > 0 {
		flags |= 4 // a cache-write count follows the cached count
	}
	if r.Server.Has {
		flags |= 8 // the server's timings follow the chunks
		if r.Server.QueueKnown {
			flags |= 16
		}
	}
	if r.Backoff > 0 || r.Withheld > 0 {
		flags |= 32 // the backoff and the withheld arrivals come last
	}
	b = binary.AppendUvarint(b, uint64(r.Index))
	b = binary.AppendUvarint(b, ids[0])
	b = binary.AppendUvarint(b, ids[1])
	b = binary.AppendUvarint(b, ids[2])
	b = binary.AppendVarint(b, int64(r.Session))
	b = binary.AppendUvarint(b, uint64(r.Turn))
	b = binary.AppendUvarint(b, uint64(r.Attempt))
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, us(r.Scheduled))
	b = binary.AppendVarint(b, us(r.Sent)-us(r.Scheduled))
	b = binary.AppendVarint(b, us(r.End)-us(r.Scheduled))
	b = binary.AppendUvarint(b, uint64(r.RequestedPromptTokens))
	b = binary.AppendUvarint(b, uint64(r.RequestedOutputTokens))
	b = binary.AppendUvarint(b, uint64(r.Usage.PromptTokens))
	b = binary.AppendUvarint(b, uint64(r.Usage.CompletionTokens))
	b = binary.AppendUvarint(b, uint64(r.Usage.ReasoningTokens))
	b = binary.AppendUvarint(b, uint64(r.Usage.CachedTokens))
	if flags&4 != 0 {
		b = binary.AppendUvarint(b, uint64(r.Usage.CacheWriteTokens))
	}
	b = binary.AppendUvarint(b, ids[3])
	b = binary.AppendUvarint(b, uint64(r.HTTPStatus))
	b = binary.AppendUvarint(b, uint64(r.Reconnects))
	b = binary.AppendUvarint(b, uint64(len(r.Chunks)))
	prev := us(r.Scheduled)
	for _, c := range r.Chunks {
		var cf uint64
		if c.Reasoning {
			cf |= 1
		}
		if c.ClientLagUS >= 0 {
			cf |= 2
		}
		b = binary.AppendVarint(b, us(c.At)-prev)
		prev = us(c.At)
		b = binary.AppendUvarint(b, uint64(c.Tokens)<<2|cf)
		if c.ClientLagUS >= 0 {
			b = binary.AppendUvarint(b, uint64(c.ClientLagUS))
		}
	}
	if t := r.Server; t.Has { // after the chunks: older spills end there
		b = binary.AppendUvarint(b, uint64(max(us(t.Queue), 0)))
		b = binary.AppendUvarint(b, uint64(max(us(t.Prefill), 0)))
		b = binary.AppendUvarint(b, uint64(max(us(t.Decode), 0)))
		b = binary.AppendUvarint(b, uint64(max(t.PromptTokens, 0)))
		b = binary.AppendUvarint(b, uint64(max(t.CachedTokens, 0)))
		b = binary.AppendUvarint(b, uint64(max(t.PredictedTokens, 0)))
	}
	if flags&32 != 0 {
		b = binary.AppendUvarint(b, uint64(max(us(r.Backoff), 0)))
		b = binary.AppendUvarint(b, uint64(max(r.Withheld, 0)))
	}
	s.buf = b
	if err := s.frame(frameRecord, b); err != nil {
		return err
	}
	s.n++
	return nil
}

// intern returns the id of a short string in the spill's table, writing
// a string frame the first time it is seen.
func (s *spill) intern(v string) (uint64, error) {
	id, ok := s.strID[v]
	if !ok {
		id = uint64(len(s.strID))
		s.strID[v] = id
		if err := s.frame(frameString, []byte(v)); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// close closes the file, and removes it when remove is true.
func (s *spill) close(remove bool) error {
	var err error
	if !s.closed {
		s.closed = true
		err = s.w.Flush()
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
	}
	if remove && !s.removed {
		s.removed = true
		if rmErr := os.Remove(s.path); err == nil {
			err = rmErr
		}
	}
	return err
}

var errSpillCorrupt = errors.New("record spill is corrupt")

// spillReader reads a spill file frame by frame.
type spillReader struct {
	rd      *bufio.Reader
	strs    []string
	payload []byte
	header  *Header
	// Truncated is true when the file ended inside a frame (the writer
	// was killed mid-write).
	truncated bool
}

// openSpill opens the spill at path and checks its magic.
func openSpill(path string) (*os.File, *spillReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open record spill: %w", err)
	}
	r := &spillReader{rd: bufio.NewReaderSize(f, 1<<16)}
	magic := make([]byte, len(spillMagic))
	if _, err := io.ReadFull(r.rd, magic); err != nil || string(magic) != spillMagic {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a sixpin record spill", path)
	}
	return f, r, nil
}

// next reads up to the next record into rec and reports whether there was
// one; header and string frames on the way are taken in. A frame cut short
// ends the file (truncated); a frame that does not decode is an error.
func (r *spillReader) next(rec *Record) (bool, error) {
	for {
		n, err := binary.ReadUvarint(r.rd)
		if err == io.EOF {
			return false, nil
		}
		if err != nil || n == 0 || n > 1<<30 {
			r.truncated = err == io.ErrUnexpectedEOF
			if r.truncated {
				return false, nil
			}
			return false, errSpillCorrupt
		}
		if cap(r.payload) < int(n) {
			r.payload = make([]byte, n)
		}
		p := r.payload[:n]
		if _, err := io.ReadFull(r.rd, p); err != nil {
			r.truncated = true
			return false, nil
		}
		switch p[0] {
		case frameString:
			r.strs = append(r.strs, string(p[1:]))
		case frameHeader:
			var h Header
			if err := json.Unmarshal(p[1:], &h); err != nil {
				return false, fmt.Errorf("record spill header: %w", err)
			}
			r.header = &h
		case frameRecord:
			return true, r.decode(p[1:], rec)
		default:
			return false, errSpillCorrupt
		}
	}
}

// str returns the interned string id (or "" for an unknown id).
func (r *spillReader) str(id uint64) string {
	if id < uint64(len(r.strs)) {
		return r.strs[id]
	}
	return ""
}

// each replays every record put so far, in order, into one reused Record;
// fn must not keep it.
func (s *spill) each(fn func(r *Record)) error {
	if err := s.flush(); err != nil {
		return err
	}
	read, _, err := eachRecord(s.path, s.n, nil, fn)
	if err == nil && read != s.n {
		err = fmt.Errorf("read record spill: %d of %d records", read, s.n)
	}
	return err
}

func (s *spillReader) decode(b []byte, r *Record) error {
	d := varintReader{b: b}
	chunks := r.Chunks[:0]
	*r = Record{}
	r.Index = int(d.u())
	r.Class = s.str(d.u())
	r.SessionEnd = s.str(d.u())
	r.RateLimitBucket = s.str(d.u())
	r.Session = int(d.i())
	r.Turn = int(d.u())
	r.Attempt = int(d.u())
	flags := d.u()
	r.HasUsage = flags&1 != 0
	r.ToolCalls = flags&2 != 0
	sched := d.i()
	r.Scheduled = usDur(sched)
	r.Sent = usDur(sched + d.i())
	r.End = usDur(sched + d.i())
	r.RequestedPromptTokens = int(d.u())
	r.RequestedOutputTokens = int(d.u())
	r.Usage.PromptTokens = int(d.u())
	r.Usage.CompletionTokens = int(d.u())
	r.Usage.ReasoningTokens = int(d.u())
	r.Usage.CachedTokens = int(d.u())
	if flags&4 != 0 {
		r.Usage.CacheWriteTokens = int(d.u())
	}
	r.Err = ErrorClass(s.str(d.u()))
	r.HTTPStatus = int(d.u())
	r.Reconnects = int(d.u())
	n := int(d.u())
	prev := sched
	for j := 0; j < n && d.err == nil; j++ {
		prev += d.i()
		at := usDur(prev)
		tf := d.u()
		c := Chunk{At: at, Tokens: int32(tf >> 2), Reasoning: tf&1 != 0, ClientLagUS: -1}
		if tf&2 != 0 {
			c.ClientLagUS = int32(d.u())
		}
		chunks = append(chunks, c)
	}
	r.Chunks = chunks
	if flags&8 != 0 {
		t := &r.Server
		t.Has, t.QueueKnown = true, flags&16 != 0
		t.Queue, t.Prefill, t.Decode = usDur(int64(d.u())), usDur(int64(d.u())), usDur(int64(d.u()))
		t.PromptTokens, t.CachedTokens, t.PredictedTokens = int(d.u()), int(d.u()), int(d.u())
	}
	if flags&32 != 0 {
		r.Backoff, r.Withheld = usDur(int64(d.u())), int(d.u())
	}
	if d.err != nil {
		return errSpillCorrupt
	}
	return nil
}

type varintReader struct {
	b   []byte
	err error
}

func (d *varintReader) u() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errSpillCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *varintReader) i() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errSpillCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}
