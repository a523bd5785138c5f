package results

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// spill streams finished records to a temporary file in a compact binary
// form (varints, times in µs, chunk times as deltas; about 3 bytes a
// chunk), so a run of any length keeps no per-request data in memory. The
// windows are cut after the run (steady: auto depends on the whole series),
// and one pass over the spill then fills each window's histograms.
type spill struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
	// strs interns the record's short strings (class, session end,
	// rate-limit bucket).
	strs  []string
	strID map[string]uint64
	errID map[ErrorClass]uint64
	n     int
}

func newSpill(dir string) (*spill, error) {
	f, err := os.CreateTemp(dir, "sixpin-records-*.bin")
	if err != nil {
		return nil, fmt.Errorf("create record spill file: %w", err)
	}
	s := &spill{f: f, w: bufio.NewWriterSize(f, 1<<16), strID: map[string]uint64{}, errID: map[ErrorClass]uint64{}}
	for i, c := range ErrorClasses {
		s.errID[c] = uint64(i + 1)
	}
	return s, nil
}

func us(d time.Duration) int64 { return d.Microseconds() }

func usDur(v int64) time.Duration { return time.Duration(v) * time.Microsecond }

func (s *spill) put(r *Record) error {
	b := s.buf[:0]
	var flags uint64
	if r.HasUsage {
		flags |= 1
	}
	if r.ToolCalls {
		flags |= 2
	}
	b = binary.AppendUvarint(b, uint64(r.Index))
	b = binary.AppendUvarint(b, s.intern(r.Class))
	b = binary.AppendUvarint(b, s.intern(r.SessionEnd))
	b = binary.AppendUvarint(b, s.intern(r.RateLimitBucket))
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
	b = binary.AppendUvarint(b, s.errID[r.Err])
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
	s.buf = b
	var hdr [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(b)))]); err != nil {
		return fmt.Errorf("write record spill: %w", err)
	}
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("write record spill: %w", err)
	}
	s.n++
	return nil
}

// intern returns the id of a short string in the spill's table.
func (s *spill) intern(v string) uint64 {
	id, ok := s.strID[v]
	if !ok {
		id = uint64(len(s.strs))
		s.strs = append(s.strs, v)
		s.strID[v] = id
	}
	return id
}

// str returns the interned string id (or "" for an unknown id).
func (s *spill) str(id uint64) string {
	if id < uint64(len(s.strs)) {
		return s.strs[id]
	}
	return ""
}

// each replays every record in order into one reused Record; fn must not
// keep it.
func (s *spill) each(fn func(r *Record)) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("flush record spill: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("rewind record spill: %w", err)
	}
	rd := bufio.NewReaderSize(s.f, 1<<16)
	var r Record
	var payload []byte
	for i := 0; i < s.n; i++ {
		n, err := binary.ReadUvarint(rd)
		if err != nil {
			return fmt.Errorf("read record spill: %w", err)
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(rd, payload); err != nil {
			return fmt.Errorf("read record spill: %w", err)
		}
		if err := s.decode(payload, &r); err != nil {
			return err
		}
		fn(&r)
	}
	return s.w.Flush()
}

var errSpillCorrupt = errors.New("record spill is corrupt")

func (s *spill) decode(b []byte, r *Record) error {
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
	if e := d.u(); e > 0 && e <= uint64(len(ErrorClasses)) {
		r.Err = ErrorClasses[e-1]
	}
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
	if d.err != nil {
		return errSpillCorrupt
	}
	return nil
}

func (s *spill) close() error {
	name := s.f.Name()
	err := s.f.Close()
	if rmErr := os.Remove(name); err == nil {
		err = rmErr
	}
	return err
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
