package endpoint

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// DefaultMaxLineBytes bounds one SSE line, and one event's data, read from
// a stream (Options.MaxLineBytes): a chat-completion chunk is a few hundred
// bytes, a non-streamed answer with logprobs a few hundred KB.
const DefaultMaxLineBytes = 4 << 20

// sseBufferBytes is the read buffer of one stream. Lines longer than it
// are assembled in a side buffer, up to the line limit.
const sseBufferBytes = 4 << 10

// errLineTooLong is returned by sseReader.next for a line (or an event's
// data) longer than its limit. The stream cannot be read further.
var errLineTooLong = errors.New("SSE line longer than the limit")

// sseReader reads the data of Server-Sent Events from a stream, as the
// HTML standard's event-stream parser does: lines end in LF, CRLF or CR; a
// leading byte-order mark is ignored; lines starting with a colon are
// comments; an event's data lines are joined with LF and the event is
// dispatched at a blank line; the event, id and retry fields, and any
// other, are ignored. Events whose data is empty or only whitespace are
// skipped. At the end of the stream an event whose last line was complete
// is dispatched although no blank line followed it (servers that close
// right after their last event).
//
// The steady state allocates nothing: a single-line event whose blank line
// has already arrived is returned in place from the read buffer; any other
// is assembled in a buffer the reader keeps. An sseReader is owned by one
// goroutine.
type sseReader struct {
	// The fields the common path reads come first, the read buffer's state
	// held in place (not behind a pointer): the path reads them after a
	// read that may have slept while other streams ran, and every further
	// cache line it has to fetch then is a miss.
	br      bufio.Reader
	maxLine int
	// rest is what follows a lone CR in the last line read: further lines,
	// the last of them complete; restBlank is a blank line still to come
	// after them (a line that ended in CR CR LF).
	rest      []byte
	restBlank bool
	// started is set once the byte-order mark has been looked for.
	started bool
	// cut is set when the stream ended inside a line, which was dropped.
	cut bool
	// err is sticky: once the stream failed or ended, next returns it.
	err error
	// data is the current event's data, when it spans several lines or its
	// blank line had not arrived with it.
	data []byte
	// long assembles a line longer than br's buffer.
	long []byte
	// src is what br reads from, counting the arrivals of its data.
	src arrivals
	// ev is the parse of the event next returned, for its reader
	// (call.read): kept with the pooled reader, where it was a 360-byte
	// allocation per request (it escapes through the protocol's
	// interface).
	ev chunk
}

// arrivals counts the times new data arrived from the stream: a read that
// follows one that drained the connection (took less than it asked for)
// reads data that came after it, while a read that follows a full one
// reads data that was already waiting — an answer sent at once but longer
// than the buffer is one arrival, however many reads it takes, and
// however long the client took between them. Events that arrived together
// were parsed apart by the client, not sent apart by the server.
type arrivals struct {
	r io.Reader
	// n counts arrivals; full is set when the last read was not known to
	// drain the connection.
	n    uint32
	full bool
	// drained, when r knows it, says whether its last read drained the
	// connection (internal/h1's body: a chunked body's framing shortens
	// what Read returns, not what it read).
	drained interface{ Drained() bool }
}

func (c *arrivals) Read(p []byte) (int, error) {
	if !c.full {
		c.n++
	}
	k, err := c.r.Read(p)
	if c.drained != nil {
		c.full = !c.drained.Drained()
	} else {
		c.full = k == len(p)
	}
	return k, err
}

// reads is how many arrivals of data the reader has read so far.
func (s *sseReader) reads() uint32 { return s.src.n }

// newSSEReader reads events from r; maxLine bounds a line and an event's
// data (≤ 0: DefaultMaxLineBytes).
func newSSEReader(r io.Reader, maxLine int) *sseReader {
	return newSSEReaderSize(r, sseBufferBytes, maxLine)
}

// sseReaders keeps stream readers, their 4 KiB buffers with them, for
// the next request: one made per request was a tenth of what a short
// request allocated, and zeroing its buffer a cost of its own.
var sseReaders = sync.Pool{New: func() any { return &sseReader{br: *bufio.NewReaderSize(nil, sseBufferBytes)} }}

// getSSEReader is newSSEReader from the pool; give it back with
// putSSEReader once nothing it returned is held.
func getSSEReader(r io.Reader, maxLine int) *sseReader {
	s := sseReaders.Get().(*sseReader)
	s.reset(r, maxLine)
	return s
}

// putSSEReader gives s back to the pool, without what it read from or a
// buffer grown for a long line or event.
func putSSEReader(s *sseReader) {
	s.src, s.ev = arrivals{}, chunk{}
	s.br.Reset(nil)
	s.rest, s.long, s.err = nil, nil, nil
	if cap(s.data) > sseBufferBytes {
		s.data = nil
	}
	sseReaders.Put(s)
}

// newSSEReaderSize is newSSEReader with a read buffer of size bytes (at
// least 16), for tests of lines longer than the buffer.
func newSSEReaderSize(r io.Reader, size, maxLine int) *sseReader {
	s := &sseReader{br: *bufio.NewReaderSize(nil, size)}
	s.reset(r, maxLine)
	return s
}

// reset makes s read r afresh, as newSSEReader's, keeping its read
// buffer and the room its data buffer has.
func (s *sseReader) reset(r io.Reader, maxLine int) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	*s = sseReader{br: s.br, data: s.data[:0], maxLine: maxLine, src: arrivals{r: r}}
	s.src.drained, _ = r.(interface{ Drained() bool })
	s.br.Reset(&s.src)
}

// next returns the data of the next event. The slice is valid until the
// next call. At the end of the stream it returns io.EOF; on a line longer
// than the limit, errLineTooLong; else the underlying reader's error.
func (s *sseReader) next() ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	lines := 0 // data lines in the current event, gathered in s.data
	for {
		line, inPlace, err := s.line()
		if err != nil {
			if err == io.EOF && lines > 0 && !blank(s.data) {
				s.err = err
				return s.data, nil
			}
			s.err = err
			return nil, err
		}
		if len(line) == 0 { // a blank line dispatches the event
			if lines > 0 && !blank(s.data) {
				return s.data, nil
			}
			lines = 0
			continue
		}
		value, ok := dataValue(line)
		if !ok {
			continue // a comment, or a field other than data
		}
		if lines == 0 && inPlace && s.blankNext() {
			if blank(value) {
				continue
			}
			return value, nil
		}
		if lines == 0 {
			s.data = s.data[:0]
		} else {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > s.maxLine {
			s.err = errLineTooLong
			return nil, s.err
		}
		s.data = append(s.data, value...)
		lines++
	}
}

// dataValue returns the value of a data field line ("data:v", "data: v" or
// a bare "data"), and whether the line is one.
func dataValue(line []byte) ([]byte, bool) {
	if len(line) < 4 || line[0] != 'd' || string(line[:4]) != "data" {
		return nil, false
	}
	switch {
	case len(line) == 4:
		return line[4:], true
	case line[4] != ':':
		return nil, false // another field whose name starts with "data"
	case len(line) > 5 && line[5] == ' ':
		return line[6:], true
	}
	return line[5:], true
}

// blank reports whether b is empty or only JSON whitespace.
func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// blankNext consumes a blank line that is already buffered right after
// the line just read, without reading further (a read could move the
// buffer under a line returned in place). It reports whether there was
// one.
func (s *sseReader) blankNext() bool {
	n := s.br.Buffered()
	if n == 0 {
		return false
	}
	p, _ := s.br.Peek(min(n, 2))
	switch {
	case p[0] == '\n':
		s.br.Discard(1)
	case p[0] == '\r' && len(p) == 2 && p[1] == '\n':
		s.br.Discard(2)
	case p[0] == '\r': // a lone CR ends a line too; an LF after it is one more blank line
		s.br.Discard(1)
	default:
		return false
	}
	return true
}

// line returns the next line without its terminator, and whether it lies
// in br's buffer (so that nothing must be read before it is used).
func (s *sseReader) line() ([]byte, bool, error) {
	if s.rest != nil {
		return s.split(s.rest, false), false, nil
	}
	if s.restBlank {
		s.restBlank = false
		return nil, false, nil
	}
	raw, err := s.br.ReadSlice('\n')
	inPlace := true
	if err != nil && err == bufio.ErrBufferFull { // err != nil first: the common case loads no global
		s.long = append(s.long[:0], raw...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > s.maxLine+2 {
				return nil, false, errLineTooLong
			}
			raw, err = s.br.ReadSlice('\n')
			s.long = append(s.long, raw...)
		}
		raw, inPlace = s.long, false
	}
	switch {
	case err == nil:
		raw = raw[:len(raw)-1] // the LF
		if len(raw) > 0 && raw[len(raw)-1] == '\r' {
			raw = raw[:len(raw)-1]
		}
	case err == io.EOF && bytes.IndexByte(raw, '\r') >= 0:
		// The stream ended after lines ended by CR, and maybe inside one
		// more line, which is not a line.
		i := bytes.LastIndexByte(raw, '\r')
		s.cut = s.cut || i < len(raw)-1
		raw = raw[:i]
	default:
		// A line the stream ended in the middle of is not a line.
		s.cut = s.cut || err == io.EOF && len(raw) > 0
		return nil, false, err
	}
	if !s.started {
		s.started = true
		raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
	}
	if len(raw) > s.maxLine {
		return nil, false, errLineTooLong
	}
	if bytes.IndexByte(raw, '\r') < 0 {
		return raw, inPlace, nil
	}
	return s.split(raw, inPlace), false, nil
}

// split returns b's first line, ended by a lone CR, and keeps what
// follows in s.rest; inPlace says whether b lies in br's buffer, which
// the next read may overwrite: the rest is then copied out (lines after a
// lone CR are rare). first stays valid until the next line() call, which
// takes the rest, not the buffer.
func (s *sseReader) split(b []byte, inPlace bool) []byte {
	i := bytes.IndexByte(b, '\r')
	if i < 0 {
		s.rest = nil
		return b
	}
	first, rest := b[:i], b[i+1:]
	switch {
	case len(rest) == 0:
		// b ended in a lone CR just before the CR LF we stripped: that CR
		// LF is a blank line of its own.
		s.rest, s.restBlank = nil, true
	case inPlace:
		s.long = append(s.long[:0], rest...)
		s.rest = s.long
	default:
		s.rest = rest
	}
	return first
}
