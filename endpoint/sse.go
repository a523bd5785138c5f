package endpoint

import (
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

// errLineTooLong is returned by sseReader.next and parse for a line
// (complete or not) or an event's data longer than its limit. The stream
// cannot be read further.
var errLineTooLong = errors.New("SSE line longer than the limit")

// bom is the byte-order mark a stream may start with.
const bom = "\xef\xbb\xbf"

// sseReader reads the data of Server-Sent Events from a stream, as the
// HTML standard's event-stream parser does: lines end in LF, CRLF or CR
// (a CR that is the last byte buffered ends its line, and an LF that then
// comes first in the next bytes belongs to it and is skipped); a leading
// byte-order mark is ignored; lines starting with a colon are comments;
// an event's data lines are joined with LF and the event is dispatched at
// a blank line; the event, id and retry fields, and any other, are
// ignored. Events whose data is empty or only whitespace are skipped. At
// the end of the stream an event whose last line was complete is
// dispatched although no blank line followed it (servers that close right
// after their last event).
//
// The reader holds the stream's bytes in its own buffer, and one parser
// (parse) works on what is buffered only, saying when it needs more. It
// is fed in one of two ways. Pulled, next reads its source into the
// buffer whenever parse needs more. Pushed, an event loop that reads the
// connection itself reads into space, hands the bytes over with commit
// (arrival and end saying how the read went) and takes events out with
// parse; the reader then never reads.
//
// The steady state allocates nothing: a single-line event whose blank line
// has already arrived is returned in place from the buffer; any other is
// assembled in a buffer the reader keeps. An sseReader is owned by one
// goroutine.
type sseReader struct {
	// The fields the common path reads come first, held in place (not
	// behind a pointer): the path reads them after a read that may have
	// slept while other streams ran, and every further cache line it has
	// to fetch then is a miss.
	//
	// buf[r:w] is what has been committed and not yet parsed; the bytes
	// before r may still be held (an event returned in place), and are
	// moved only by space.
	buf  []byte
	r, w int
	// scanned is how many bytes from r on are known to hold no CR or LF:
	// an unfinished line is not scanned again from its start for each
	// read that adds to it.
	scanned int
	maxLine int
	// lines counts the data lines of the event being read, gathered in
	// data (which an event returned from it stays in until the next
	// event's first data line).
	lines int
	// skipLF is set when the last line ended in a CR that was the last
	// byte buffered: an LF that comes next is the rest of its CR LF.
	skipLF bool
	// started is set once the first line, and the byte-order mark it may
	// start with, has been read.
	started bool
	// cut is set when the stream ended inside a line, which was dropped.
	cut bool
	// err is sticky: once the stream failed or ended, and the events
	// before that were returned, parse and next return it.
	err error
	// ended is the end of the stream (end), which parse reports once it
	// has taken the events buffered before it.
	ended error
	// data is the current event's data, when it spans several lines or its
	// blank line had not arrived with it.
	data []byte
	// long holds the start of a line longer than buf, moved out of it by
	// space; empty when no such line is being read.
	long []byte
	// src is what next reads from, counting the arrivals of its data;
	// pushed, arrival counts them in it.
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

// arrival counts one read from the connection for reads, pushed, as
// arrivals.Read does pulled: a read is a new arrival unless the read
// before it was not drained. drained: the read got less than it asked
// for (all the connection had).
func (s *sseReader) arrival(drained bool) {
	if !s.src.full {
		s.src.n++
	}
	s.src.full = !drained
}

// newSSEReader reads events from r; maxLine bounds a line and an event's
// data (≤ 0: DefaultMaxLineBytes).
func newSSEReader(r io.Reader, maxLine int) *sseReader {
	return newSSEReaderSize(r, sseBufferBytes, maxLine)
}

// sseReaders keeps stream readers, their 4 KiB buffers with them, for
// the next request: one made per request was a tenth of what a short
// request allocated, and zeroing its buffer a cost of its own.
var sseReaders = sync.Pool{New: func() any { return &sseReader{buf: make([]byte, sseBufferBytes)} }}

// getSSEReader is newSSEReader from the pool; give it back with
// putSSEReader once nothing it returned is held. r may be nil for a
// reader that is pushed (space, commit, arrival, end, parse) and never
// pulled (next).
func getSSEReader(r io.Reader, maxLine int) *sseReader {
	s := sseReaders.Get().(*sseReader)
	s.reset(r, maxLine)
	return s
}

// putSSEReader gives s back to the pool, without what it read from or a
// buffer grown for a long line or event. A reader of another size than
// the pool's (newSSEReaderSize) is not kept.
func putSSEReader(s *sseReader) {
	if len(s.buf) != sseBufferBytes {
		return
	}
	s.src, s.ev = arrivals{}, chunk{}
	s.long, s.err, s.ended = nil, nil, nil
	if cap(s.data) > sseBufferBytes {
		s.data = nil
	}
	sseReaders.Put(s)
}

// newSSEReaderSize is newSSEReader with a buffer of size bytes (at least
// 16), for tests of lines longer than the buffer.
func newSSEReaderSize(r io.Reader, size, maxLine int) *sseReader {
	s := &sseReader{buf: make([]byte, max(size, 16))}
	s.reset(r, maxLine)
	return s
}

// reset makes s read r afresh, as newSSEReader's, keeping its buffer and
// the room its data buffer has.
func (s *sseReader) reset(r io.Reader, maxLine int) {
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	*s = sseReader{buf: s.buf, data: s.data[:0], maxLine: maxLine, src: arrivals{r: r}}
	s.src.drained, _ = r.(interface{ Drained() bool })
}

// next returns the data of the next event, reading the source as the
// parse needs. The slice is valid until the next call. At the end of the
// stream it returns io.EOF; on a line longer than the limit,
// errLineTooLong; else the source's error.
func (s *sseReader) next() ([]byte, error) {
	for empty := 0; ; {
		data, more, err := s.parse()
		if !more {
			return data, err
		}
		n, err := s.src.Read(s.space())
		s.commit(n)
		switch {
		case err != nil:
			s.end(err)
		case n > 0:
			empty = 0
		default:
			if empty++; empty == 100 { // as bufio gives up on a reader that returns nothing
				s.end(io.ErrNoProgress)
			}
		}
	}
}

// space returns the free room at the end of the buffer, to read the
// stream's next bytes into; it is never empty. It first moves what is
// buffered to the front, or, when the buffer holds nothing but the start
// of one line, moves that aside: call it only when parse has said it
// needs more (or before the first commit). It invalidates every slice
// parse returned.
func (s *sseReader) space() []byte {
	switch {
	case s.r == s.w:
		s.r, s.w = 0, 0
	case s.r > 0:
		s.w = copy(s.buf, s.buf[s.r:s.w])
		s.r = 0
	case s.w == len(s.buf):
		// A line longer than the buffer. parse bounded it by the limit
		// before it asked for more, so long stays within the limit and
		// a buffer.
		if s.scanned != s.w {
			panic("sseReader: space called with lines not yet parsed in a full buffer")
		}
		s.long = append(s.long, s.buf[:s.w]...)
		s.w, s.scanned = 0, 0
	}
	return s.buf[s.w:]
}

// commit makes the first n bytes of the last space part of the stream.
// (The caller may have squeezed a transfer encoding's framing out of what
// it read into space, in place: n is then less than it read.)
func (s *sseReader) commit(n int) {
	if n < 0 || n > len(s.buf)-s.w {
		panic("sseReader: commit of more than space gave")
	}
	s.w += n
}

// end marks the end of the stream: io.EOF (or nil) for a clean end, else
// the failure. parse returns the events already committed first. Only the
// first end counts.
func (s *sseReader) end(err error) {
	if err == nil {
		err = io.EOF
	}
	if s.ended == nil {
		s.ended = err
	}
}

// parse returns the data of the next event complete in what was
// committed, or more when it needs more bytes (which it never does after
// end). A slice of data is valid until the next call of parse or space: a
// single-line event whose blank line was committed with it lies in the
// buffer (and stays valid until space), any other in a buffer of the
// reader's that the next event's data overwrites. After end, parse
// returns the events committed before it — then, at io.EOF, an event whose
// last line was complete — and then end's error, for good. A line longer
// than the limit, complete or not, or an event's data longer, is
// errLineTooLong, for good: the reader stops at it.
func (s *sseReader) parse() (data []byte, more bool, err error) {
	if s.err != nil {
		return nil, false, s.err
	}
	for {
		line, inPlace, ok := s.line()
		if !ok {
			if s.err != nil { // the line is too long
				return nil, false, s.err
			}
			if s.ended == nil {
				return nil, true, nil
			}
			return s.finish()
		}
		if len(line) == 0 { // a blank line dispatches the event
			if s.lines > 0 {
				s.lines = 0
				if !blank(s.data) {
					return s.data, false, nil
				}
			}
			continue
		}
		value, ok := dataValue(line)
		if !ok {
			continue // a comment, or a field other than data
		}
		if s.lines == 0 && inPlace && s.blankNext() {
			if blank(value) {
				continue
			}
			return value, false, nil
		}
		if s.lines == 0 {
			s.data = s.data[:0]
		} else {
			s.data = append(s.data, '\n')
		}
		if len(s.data)+len(value) > s.maxLine {
			s.err = errLineTooLong
			return nil, false, s.err
		}
		s.data = append(s.data, value...)
		s.lines++
	}
}

// finish is parse at the end of the stream, once no complete line is
// left: a line the stream ended inside is dropped (cut, at io.EOF), and
// at io.EOF an event whose last line was complete is dispatched.
func (s *sseReader) finish() ([]byte, bool, error) {
	if n := len(s.long) + s.w - s.r; n > 0 {
		head := s.long
		if len(head) == 0 {
			head = s.buf[s.r:s.w]
		}
		if !s.started && bytes.HasPrefix(head, []byte(bom)) {
			n -= len(bom)
		}
		if n > s.maxLine {
			s.err = errLineTooLong
			return nil, false, s.err
		}
		s.cut = s.cut || s.ended == io.EOF
		s.long, s.r = s.long[:0], s.w
	}
	s.err = s.ended
	if s.ended == io.EOF && s.lines > 0 {
		s.lines = 0
		if !blank(s.data) {
			return s.data, false, nil
		}
	}
	return nil, false, s.err
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
// the line just read, and reports whether there was one.
func (s *sseReader) blankNext() bool {
	if s.r >= s.w { // also when the line ended in a CR that was the last byte
		return false
	}
	switch s.buf[s.r] {
	case '\n':
		s.r++
	case '\r':
		s.r++
		if s.r == s.w {
			s.skipLF = true
		} else if s.buf[s.r] == '\n' {
			s.r++
		}
	default:
		return false
	}
	return true
}

// line returns the next complete line in what is buffered, without its
// terminator, and whether it lies in the buffer (not in long); ok is
// false when there is none, with s.err set if the unfinished line is
// already longer than the limit. The line is valid until the next call.
func (s *sseReader) line() (line []byte, inPlace, ok bool) {
	b := s.buf[s.r:s.w]
	if s.skipLF {
		if len(b) == 0 {
			return nil, false, false
		}
		s.skipLF = false
		if b[0] == '\n' {
			s.r++
			b = b[1:]
		}
	}
	k := s.scanned
	end, next := 0, 0 // the line is b[:end]; the next starts at b[next]
	if j := bytes.IndexByte(b[k:], '\n'); j >= 0 {
		j += k
		end, next = j, j+1
		if i := bytes.IndexByte(b[k:j], '\r'); i >= 0 {
			end = k + i
			if end+1 < j {
				next = end + 1 // a lone CR
			}
		}
	} else if i := bytes.IndexByte(b[k:], '\r'); i >= 0 {
		end, next = k+i, k+i+1
		s.skipLF = next == len(b)
	} else {
		s.scanned = len(b)
		if n := len(s.long) + len(b); n > s.maxLine && (s.started || n > s.maxLine+len(bom)) {
			s.err = errLineTooLong
		}
		return nil, false, false
	}
	s.r += next
	s.scanned = 0
	line, inPlace = b[:end], true
	if len(s.long) > 0 {
		line, inPlace = append(s.long, line...), false
		s.long = line[:0]
	}
	if !s.started {
		s.started = true
		line = bytes.TrimPrefix(line, []byte(bom))
	}
	if len(line) > s.maxLine {
		s.err = errLineTooLong
		return nil, false, false
	}
	return line, inPlace, true
}
