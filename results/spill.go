package results

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"time"
	"unicode/utf8"

	"github.com/sixpin/sixpin/record"
)

// spill streams finished records to a file in a compact binary form
// (varints, times in µs, chunk times as deltas; about 3 bytes a chunk), so
// a run of any length keeps no per-request data in memory. The windows are
// cut after the run (steady: auto depends on the whole series), and one
// pass over the spill then fills each window's histograms.
//
// The file is self-describing, so that Recover can rebuild a results
// file from it when the run was killed: spillMagic, then frames, each a
// uvarint length, a payload whose first byte is its kind — the run's
// Header (JSON), a string (the next id of the string table: classes,
// session ends, buckets, error classes), or a record — and the payload's
// CRC-32C (4 bytes, little-endian). A frame cut short, or one that does
// not check out (zeros or garbage left by a crash), ends what is read.
//
// Frames are buffered whole and written whole: the file holds whole
// frames only. When it cannot take more (a full disk), it is cut back
// to its last whole frame and the frames since stay in memory, so that
// the run loses no record and the file stays recoverable; each timed
// flush tries the file again.
type spill struct {
	path string
	f    *os.File
	// pending are whole frames not yet in the file: a buffer while the
	// file takes them, every frame since the write that failed (err)
	// otherwise.
	pending     []byte
	pendingRecs int
	// size is the file's length, all of it whole frames, onDisk the
	// records among them.
	size   int64
	onDisk int
	// err is why the last flush did not reach the file (a full disk);
	// nil when it did.
	err error
	buf []byte
	// strID interns the record's short strings; each new one is written
	// as a string frame before the record that first uses it.
	strID map[string]uint64
	n     int
	// closed is true once the file is closed, removed once it is gone.
	closed, removed bool
}

// spillMagic opens every spill file; spillMagicV1 opened those of older
// sixpin versions, whose frames carry no checksum.
const (
	spillMagic   = "sixpin-spill/v2\n"
	spillMagicV1 = "sixpin-spill/v1\n"
)

// spillBuffer is how many bytes of frames are buffered before they are
// written to the file.
const spillBuffer = 1 << 16

// Frame kinds.
const (
	frameHeader = 'H'
	frameString = 'S'
	frameRecord = 'R'
)

// castagnoli is the frames' checksum table (CRC-32C: in hardware on
// amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	s := &spill{path: f.Name(), f: f, strID: map[string]uint64{}}
	s.pending = append(make([]byte, 0, spillBuffer), spillMagic...)
	return s, nil
}

// frame buffers one frame of kind k, and writes what is buffered to the
// file when the buffer is full and the file takes frames.
func (s *spill) frame(k byte, payload []byte) {
	b := binary.AppendUvarint(s.pending, uint64(len(payload)+1))
	at := len(b)
	b = append(b, k)
	b = append(b, payload...)
	s.pending = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[at:], castagnoli))
	if s.err == nil && len(s.pending) >= spillBuffer {
		s.flush()
	}
}

// header writes the run's header frame through to the file.
func (s *spill) header(h *Header) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode spill header: %w", err)
	}
	s.frame(frameHeader, b)
	s.flush()
	return nil
}

// flush writes the frames buffered, or kept in memory since the file
// stopped taking them, to the file, so that a reader of the file (a
// checkpoint, or Recover after a crash) sees every record put so far.
// When the file does not take them all (a full disk), it keeps the whole
// frames it took and is cut back to them; the rest stay in memory until
// a later flush writes them.
func (s *spill) flush() {
	if len(s.pending) == 0 || s.closed {
		return
	}
	n, err := s.f.WriteAt(s.pending, s.size)
	if err == nil {
		s.err = nil
		s.wrote(n, s.pendingRecs)
		return
	}
	s.err = err
	// WriteAt does not say how much it wrote: the file's length does (a
	// longer one left by an earlier attempt holds the same bytes).
	n = 0
	if fi, err := s.f.Stat(); err == nil {
		n = int(min(max(fi.Size()-s.size, 0), int64(len(s.pending))))
	}
	keep, recs := wholeFrames(s.pending[:n], s.size == 0)
	// A partial frame would end the file for a reader. Were the cut to
	// fail, the next write still starts over it, and readers stop at it.
	_ = s.f.Truncate(s.size + int64(keep))
	s.wrote(keep, recs)
}

// wrote takes the first n bytes of pending, holding recs records, as
// written to the file.
func (s *spill) wrote(n, recs int) {
	s.size += int64(n)
	s.onDisk += recs
	s.pendingRecs -= recs
	s.pending = s.pending[:copy(s.pending, s.pending[n:])]
	if cap(s.pending) > 4*spillBuffer && len(s.pending) < spillBuffer { // memory kept while the disk was full
		s.pending = append(make([]byte, 0, spillBuffer), s.pending...)
	}
}

// wholeFrames returns the length of the whole frames at the start of b
// (after the magic when magic is true) and how many of them are records.
func wholeFrames(b []byte, magic bool) (n, records int) {
	if magic {
		if len(b) < len(spillMagic) {
			return 0, 0
		}
		n = len(spillMagic)
	}
	for {
		size, w := binary.Uvarint(b[n:])
		end := n + w + int(size) + crc32.Size
		if w <= 0 || end > len(b) {
			return n, records
		}
		if b[n+w] == frameRecord {
			records++
		}
		n = end
	}
}

// SpillState is where a run's records are.
type SpillState struct {
	// Path is the spill file, Bytes its length: whole frames only.
	Path  string
	Bytes int64
	// OnDisk records are whole in the file; InMemory ones are not (yet)
	// written to it: buffered, or kept since the file stopped taking
	// them, in MemoryBytes bytes (once the spill is closed, dropped).
	OnDisk, InMemory int
	MemoryBytes      int
	// Err is why the last flush did not reach the file (a full disk):
	// the records since stay in memory until a flush does. nil when it
	// did.
	Err error
}

func (s *spill) state() SpillState {
	return SpillState{Path: s.path, Bytes: s.size, OnDisk: s.onDisk, InMemory: s.n - s.onDisk, MemoryBytes: len(s.pending), Err: s.err}
}

func us(d time.Duration) int64 { return d.Microseconds() }

func usDur(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

// put adds a record to the spill.
func (s *spill) put(r *record.Record) {
	ids := [4]uint64{}
	for i, v := range [4]string{r.Class, r.SessionEnd, r.RateLimitBucket, string(r.Err)} {
		ids[i] = s.intern(v)
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
		flags |= 32 // the backoff and the withheld arrivals follow the server's timings
	}
	if r.TokenReads > 0 {
		flags |= 64 // the token reads follow the backoff
	}
	if r.RequestID != "" {
		flags |= 128 // the request's id follows the token reads
	}
	if r.ErrMsg != "" {
		flags |= 256 // the failure's message follows the request's id
	}
	if r.Output != nil {
		flags |= 512 // the answer's score follows the failure's message
	}
	if r.Server.Has && (r.Server.DraftTokens > 0 || r.Server.DraftAccepted > 0) {
		flags |= 1024 // the server's draft counts follow the answer's score
	}
	var content uint64
	if r.Content != "" {
		flags |= 2048 // the prompt's content class comes last
		content = s.intern(r.Content)
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
	if flags&64 != 0 {
		b = binary.AppendUvarint(b, uint64(r.TokenReads))
	}
	if flags&128 != 0 {
		b = appendString(b, r.RequestID, maxSpillID)
	}
	if flags&256 != 0 {
		b = appendString(b, r.ErrMsg, maxSpillErrMsg)
	}
	if o := r.Output; o != nil {
		b = binary.AppendUvarint(b, uint64(o.Words))
		b = binary.AppendUvarint(b, uint64(math.Round(o.RepeatShare*scoreScale)))
		b = binary.AppendUvarint(b, uint64(math.Round(o.Distinct2*scoreScale)))
		b = binary.AppendUvarint(b, uint64(math.Round(o.Compression*scoreScale)))
	}
	if flags&1024 != 0 {
		b = binary.AppendUvarint(b, uint64(max(r.Server.DraftTokens, 0)))
		b = binary.AppendUvarint(b, uint64(max(r.Server.DraftAccepted, 0)))
	}
	if flags&2048 != 0 {
		b = binary.AppendUvarint(b, content)
	}
	s.buf = b
	s.n++
	s.pendingRecs++
	s.frame(frameRecord, b)
}

// scoreScale is the fixed point of an answer's score in the spill (six
// decimal places).
const scoreScale = 1e6

// intern returns the id of a short string in the spill's table, writing
// a string frame the first time it is seen.
func (s *spill) intern(v string) uint64 {
	id, ok := s.strID[v]
	if !ok {
		id = uint64(len(s.strID))
		s.strID[v] = id
		s.frame(frameString, []byte(v))
	}
	return id
}

// close writes what it can to the file (what the file does not take is
// dropped: state says how many records) and closes it, and removes it
// when remove is true.
func (s *spill) close(remove bool) error {
	var err error
	if !s.closed {
		if !remove {
			s.flush()
		}
		s.closed = true
		s.pending = nil
		err = s.f.Close()
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

// spillReader reads a spill frame by frame. Reading stops at the end of
// the spill, or at the first frame that is cut short or does not check
// out, whose bytes and those after it are skipped: no frame is trusted
// after a damaged one.
type spillReader struct {
	rd *bufio.Reader
	// sums is true when the frames carry their checksum (all but v1).
	sums    bool
	strs    []string
	payload bytes.Buffer
	header  *Header
	// pos counts the bytes read, end those up to the last whole frame.
	pos, end int64
	// damage says why reading stopped before the end ("" when it did
	// not), and skipped how many bytes from the damaged frame on were
	// left unread; err is an error reading the file.
	damage  string
	skipped int64
	err     error
}

// newSpillReader reads the spill in src, called name, from its magic on.
func newSpillReader(src io.Reader, name string) (*spillReader, error) {
	r := &spillReader{rd: bufio.NewReaderSize(src, spillBuffer)}
	magic := make([]byte, len(spillMagic))
	if _, err := io.ReadFull(r.rd, magic); err != nil || string(magic) != spillMagic && string(magic) != spillMagicV1 {
		return nil, fmt.Errorf("%s is not a sixpin record spill", name)
	}
	r.sums = string(magic) == spillMagic
	r.pos = int64(len(magic))
	r.end = r.pos
	return r, nil
}

// ReadByte reads one byte, counting it (for binary.ReadUvarint).
func (r *spillReader) ReadByte() (byte, error) {
	b, err := r.rd.ReadByte()
	if err == nil {
		r.pos++
	}
	return b, err
}

// next reads up to the next record into rec and reports whether there was
// one; header and string frames on the way are taken in. It reports false
// at the end of the spill, at a damaged frame (damage), or on an error
// reading it (err).
func (r *spillReader) next(rec *record.Record) bool {
	for {
		kind, p, ok := r.frame()
		if !ok {
			return false
		}
		switch kind {
		case frameString:
			r.strs = append(r.strs, string(p))
		case frameHeader:
			var h Header
			if err := json.Unmarshal(p, &h); err != nil {
				return r.stop("a header that does not decode")
			}
			r.header = &h
		case frameRecord:
			if r.decode(p, rec) != nil {
				return r.stop("a record that does not decode")
			}
			r.end = r.pos
			return true
		default:
			return r.stop("zeros or garbage, not a frame")
		}
		r.end = r.pos
	}
}

// frame reads the next frame and returns its kind and payload (valid
// until the next call); false at the end, at damage or on an error.
func (r *spillReader) frame() (byte, []byte, bool) {
	n, err := binary.ReadUvarint(r)
	switch {
	case err == io.EOF:
		return 0, nil, false
	case err == io.ErrUnexpectedEOF:
		return 0, nil, r.stop("a frame cut short")
	case err != nil || n == 0:
		return 0, nil, r.stop("zeros or garbage, not a frame")
	}
	if r.sums {
		n += crc32.Size
	}
	// Copied as it comes, not read into a buffer of n bytes: in garbage,
	// n may be anything.
	r.payload.Reset()
	got, err := io.CopyN(&r.payload, r.rd, int64(n))
	r.pos += got
	switch {
	case err == io.EOF:
		return 0, nil, r.stop("a frame cut short")
	case err != nil:
		r.err = err
		return 0, nil, false
	}
	p := r.payload.Bytes()
	if r.sums {
		body, sum := p[:len(p)-crc32.Size], p[len(p)-crc32.Size:]
		if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(sum) {
			return 0, nil, r.stop("a frame whose checksum does not match: zeros or garbage")
		}
		p = body
	}
	return p[0], p[1:], true
}

// stop ends reading at the frame that began at r.end, damaged (why), and
// counts the bytes skipped from there to the end of the spill.
func (r *spillReader) stop(why string) bool {
	rest, err := io.Copy(io.Discard, r.rd)
	r.damage, r.skipped, r.err = why, r.pos+rest-r.end, err
	return false
}

// str returns the interned string id (or "" for an unknown id).
func (r *spillReader) str(id uint64) string {
	if id < uint64(len(r.strs)) {
		return r.strs[id]
	}
	return ""
}

// each replays every record put so far, in order, into one reused Record;
// fn must not keep it. It reads the file's whole frames, then those kept
// in memory.
func (s *spill) each(fn func(r *record.Record)) error {
	s.flush()
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("read record spill: %w", err)
	}
	defer f.Close()
	rd, err := newSpillReader(io.MultiReader(io.LimitReader(f, s.size), bytes.NewReader(s.pending)), s.path)
	if err != nil {
		return err
	}
	return readRecords(rd, s.path, s.n, nil, fn)
}

func (s *spillReader) decode(b []byte, r *record.Record) error {
	d := varintReader{b: b}
	chunks := r.Chunks[:0]
	*r = record.Record{}
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
	r.Err = record.ErrorClass(s.str(d.u()))
	r.HTTPStatus = int(d.u())
	r.Reconnects = int(d.u())
	n := int(d.u())
	prev := sched
	for j := 0; j < n && d.err == nil; j++ {
		prev += d.i()
		at := usDur(prev)
		tf := d.u()
		c := record.Chunk{At: at, Tokens: int32(tf >> 2), Reasoning: tf&1 != 0, ClientLagUS: -1}
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
	if flags&64 != 0 {
		r.TokenReads = int(d.u())
	}
	if flags&128 != 0 {
		r.RequestID = d.str()
	}
	if flags&256 != 0 {
		r.ErrMsg = d.str()
	}
	if flags&512 != 0 {
		r.Output = &record.OutputScore{Words: int(d.u()), RepeatShare: float64(d.u()) / scoreScale,
			Distinct2: float64(d.u()) / scoreScale, Compression: float64(d.u()) / scoreScale}
	}
	if flags&1024 != 0 {
		r.Server.DraftTokens, r.Server.DraftAccepted = int(d.u()), int(d.u())
	}
	if flags&2048 != 0 {
		r.Content = s.str(d.u())
	}
	if d.err != nil {
		return errSpillCorrupt
	}
	return nil
}

// The longest request id and failure message a spill keeps, in bytes;
// longer ones are cut at a rune boundary.
const (
	maxSpillID     = 256
	maxSpillErrMsg = 1024
)

// appendString appends v, cut to at most limit bytes at a rune
// boundary, as a uvarint length and its bytes.
func appendString(b []byte, v string, limit int) []byte {
	if len(v) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
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

// str reads a string appendString wrote.
func (d *varintReader) str() string {
	n := d.u()
	if d.err != nil || n > uint64(len(d.b)) {
		d.err = errSpillCorrupt
		return ""
	}
	v := string(d.b[:n])
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
