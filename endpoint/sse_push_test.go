package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

// sseOutcome is all a reading of a stream gives: its events, the error it
// ended with, and whether it was cut inside a line.
type sseOutcome struct {
	events []string
	err    error
	cut    bool
}

func (o sseOutcome) String() string {
	return fmt.Sprintf("events %q, error %v, cut %v", o.events, o.err, o.cut)
}

func (o sseOutcome) equal(p sseOutcome) bool {
	return slices.Equal(o.events, p.events) && o.err == p.err && o.cut == p.cut
}

// pullSSE reads r with a reader of the given buffer size and line limit.
func pullSSE(r io.Reader, size, maxLine int) sseOutcome {
	s := newSSEReaderSize(r, size, maxLine)
	events, err := readAllSSE(s)
	return sseOutcome{events, err, s.cut}
}

// junk is what pushSSE writes into space after the bytes it commits, as a
// caller that squeezed chunked framing out of its read leaves it there:
// none of it may be read.
const junk = "\r\n\n\rdata: junk\n\n"

// pushSSE feeds in to s through space and commit, in pieces whose sizes
// piece gives, told how many bytes were fed before (a piece is cut to
// what space has room for), taking out every event
// after each piece; the stream's end is found, as a connection's is, by a
// read into space that gets nothing. It fails t when space is empty, when
// parse asks for more after end, or when an event returned in place
// changes before the next space.
func pushSSE(t testing.TB, s *sseReader, in []byte, piece func(off int) int) sseOutcome {
	t.Helper()
	var o sseOutcome
	var held [][]byte // events returned in place since the last space, and their copies
	var copies []string
	ended, off := false, 0
	for {
		d, more, err := s.parse()
		switch {
		case err != nil:
			o.err, o.cut = err, s.cut
			if d, more, err2 := s.parse(); d != nil || more || err2 != err {
				t.Fatalf("after %v, parse returned %q, %v, %v", err, d, more, err2)
			}
			return o
		case !more:
			o.events = append(o.events, string(d))
			if inBuffer(s, d) {
				held, copies = append(held, d), append(copies, string(d))
			}
			continue
		case ended:
			t.Fatal("parse asked for more after end")
		}
		for i, d := range held {
			if string(d) != copies[i] {
				t.Fatalf("an event returned in place changed before space: %q, was %q", d, copies[i])
			}
		}
		held, copies = held[:0], copies[:0]
		p := s.space()
		if len(p) == 0 {
			t.Fatal("space is empty")
		}
		if len(in) == 0 {
			s.end(io.EOF)
			ended = true
			continue
		}
		n := min(len(p), len(in), max(piece(off), 1))
		copy(p, in[:n])
		copy(p[n:], junk)
		s.arrival(n < len(p))
		s.commit(n)
		in, off = in[n:], off+n
	}
}

// inBuffer reports whether d lies in s's buffer.
func inBuffer(s *sseReader, d []byte) bool {
	if len(d) == 0 {
		return false
	}
	at, b := uintptr(unsafe.Pointer(&d[0])), uintptr(unsafe.Pointer(&s.buf[0]))
	return at >= b && at < b+uintptr(len(s.buf))
}

// sseStreams are streams the table tests read, for reading them pushed.
var sseStreams = []string{
	"data: {\"a\":1}\n\n", "data:x\n\n", "data:  x\n\n", "data: {\"a\":\ndata: 1}\n\n",
	"data: a\r\n\r\ndata: b\r\n\r\n", "data: a\r\rdata: b\r\r", "data: a\r\r\ndata: b\n\n", "data: a\rdata: b\n\n",
	"\xef\xbb\xbfdata: a\n\n", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n", "data: a\n\xef\xbb\xbfdata: b\n\n",
	": ping\nevent: message\nid: 7\nretry: 100\ndata: a\n\n: ping\n\n",
	"data: \n\ndata:\n\ndata\n\ndata: b\n\n", "data\ndata: x\n\n", "datax: 1\ndata : 2\n\n",
	"data: a\n\ndata: b\n", "data: a\n\ndata: b", "data: [DONE]\n\n", "data: a\r",
	"data: a\n\ndata: {\"us", "data: a\r\rdata: {\"us", "data: a\n",
	"", "\xef\xbb\xbf", "\xef\xbb", "\r", "\n", "\r\n", "\r\r\n\n", "data: a\r\r\r\n\r\n",
	"data: a\r\n\rdata: b\r\n\r\n", "data:\x00\xff\r\n\n", "data: \t \n\n",
	strings.Repeat(": ping\n\n", 40) + "data: a\n\n",
	strings.Repeat("x", 40) + "\r\ndata: " + strings.Repeat("y", 40) + "\n\n",
	"data: " + strings.Repeat("y", 70) + "\r\r" + "data: " + strings.Repeat("z", 33) + "\r",
	"\xef\xbb\xbfdata: " + strings.Repeat("y", 60) + "\n\n",
	"data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\n" + "data: {\"choices\":\ndata: [{\"delta\":{}}]}\n\n" + ": ping\r\ndata: {\"a\":1}\r\n\r\n",
}

// sseLimitStreams are streams over a limit of sseTestLimit bytes, and at it.
const sseTestLimit = 40

var sseLimitStreams = []string{
	"data:" + strings.Repeat("x", sseTestLimit-5) + "\n\n",
	"data:" + strings.Repeat("x", sseTestLimit-5) + "\r\n\r\n",
	"\xef\xbb\xbfdata:" + strings.Repeat("x", sseTestLimit-5) + "\n\n",
	"\xef\xbb\xbfdata:" + strings.Repeat("x", sseTestLimit-4) + "\n\n",
	"\xef\xbb\xbfdata:" + strings.Repeat("x", sseTestLimit-5),
	"\xef\xbb\xbfdata:" + strings.Repeat("x", sseTestLimit-4),
	"data: a\n\ndata:" + strings.Repeat("x", sseTestLimit-4) + "\n\n",
	"data: a\n\ndata:" + strings.Repeat("x", sseTestLimit-4),
	"data: a\n\ndata:" + strings.Repeat("x", sseTestLimit-5),
	"data:" + strings.Repeat("x", 25) + "\ndata:" + strings.Repeat("x", 25) + "\n\n",
	"data: a\ndata:" + strings.Repeat("x", 25) + "\ndata:" + strings.Repeat("x", 25) + "\n\n",
	":" + strings.Repeat("x", sseTestLimit) + "\n\n",
	"data: a\n\n" + ":" + strings.Repeat("x", sseTestLimit-1) + "\n\ndata: b\n\n",
	"data: " + strings.Repeat("x", 5*sseTestLimit),
	"data: a\n" + strings.Repeat("x", 5*sseTestLimit) + "\n\ndata: b\n\n",
}

// refCut is whether a stream ended inside a line.
func refCut(in []byte) bool {
	return len(in) > 0 && in[len(in)-1] != '\n' && in[len(in)-1] != '\r'
}

// refSSELimit is refSSE with a limit on lines (complete or not) and on an
// event's data: the events before the first line or event over it, and
// errLineTooLong; else refSSE's events and io.EOF.
func refSSELimit(in []byte, limit int) ([]string, error) {
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	var events, data []string
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			if len(in) > limit {
				return events, errLineTooLong
			}
			break
		}
		l := string(in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
		if len(l) > limit {
			return events, errLineTooLong
		}
		if l == "" {
			if d := strings.Join(data, "\n"); strings.TrimLeft(d, " \t\r\n") != "" {
				events = append(events, d)
			}
			data = nil
			continue
		}
		if field, value, found := strings.Cut(l, ":"); field == "data" && l[0] != ':' {
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			data = append(data, value)
			if len(strings.Join(data, "\n")) > limit {
				return events, errLineTooLong
			}
		}
	}
	if d := strings.Join(data, "\n"); data != nil && strings.TrimLeft(d, " \t\r\n") != "" {
		events = append(events, d)
	}
	return events, io.EOF
}

// TestSSEPush reads the table tests' streams, and streams at and over a
// line limit, pushed: split at every byte, byte by byte and in random
// pieces, through buffers of several sizes. Every reading must give what
// the reader pulled gives, and what the reference parsers give.
func TestSSEPush(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type stream struct {
		in    string
		limit int
	}
	var streams []stream
	for _, in := range sseStreams {
		streams = append(streams, stream{in, 0}, stream{in, sseTestLimit})
	}
	for _, in := range sseLimitStreams {
		streams = append(streams, stream{in, sseTestLimit})
	}
	for _, st := range streams {
		in := []byte(st.in)
		want := sseOutcome{cut: refCut(in)}
		if st.limit == 0 {
			want.events, want.err = refSSE(in), io.EOF
		} else {
			want.events, want.err = refSSELimit(in, st.limit)
		}
		if want.err != io.EOF {
			want.cut = false
		}
		for _, size := range []int{sseBufferBytes, 16, 17, 31} {
			name := fmt.Sprintf("%q/size=%d/limit=%d", st.in, size, st.limit)
			check := func(how string, got sseOutcome) {
				t.Helper()
				if !got.equal(want) {
					t.Errorf("%s, %s: %s; want %s", name, how, got, want)
				}
			}
			check("pulled whole", pullSSE(bytes.NewReader(in), size, st.limit))
			check("pulled byte by byte", pullSSE(iotest.OneByteReader(bytes.NewReader(in)), size, st.limit))
			check("pushed byte by byte", pushSSE(t, newSSEReaderSize(nil, size, st.limit), in, func(int) int { return 1 }))
			if st.limit > 0 {
				// A line over the limit is not read to its end: the reader
				// holds at most the limit and a buffer of it.
				s := newSSEReaderSize(nil, size, st.limit)
				pushSSE(t, s, in, func(int) int { return 1 })
				if n := cap(s.long); n > 2*(st.limit+len(bom)+size) {
					t.Errorf("%s: the reader holds %d bytes of a long line for a limit of %d", name, n, st.limit)
				}
			}
			for k := 0; k <= len(in); k++ {
				got := pushSSE(t, newSSEReaderSize(nil, size, st.limit), in, func(off int) int {
					if off < k {
						return k - off
					}
					return len(in)
				})
				check(fmt.Sprintf("pushed split at %d", k), got)
			}
			for range 20 {
				seed := rng.Uint64()
				r := rand.New(rand.NewPCG(seed, 0))
				check(fmt.Sprintf("pushed in random pieces (seed %d)", seed),
					pushSSE(t, newSSEReaderSize(nil, size, st.limit), in, func(int) int { return 1 + r.IntN(24) }))
			}
		}
	}
}

// TestSSEPushPool: a pooled reader is pushed with no source, and goes
// back to the pool without the buffers a long line or event grew, or the
// event it parsed.
func TestSSEPushPool(t *testing.T) {
	s := getSSEReader(nil, 0)
	long := "data: " + strings.Repeat("x", 3*sseBufferBytes) + "\ndata: y\n\n"
	got := pushSSE(t, s, []byte("data: a\n\n"+long), func(int) int { return 1000 })
	want := sseOutcome{events: []string{"a", strings.Repeat("x", 3*sseBufferBytes) + "\ny"}, err: io.EOF}
	if !got.equal(want) {
		t.Fatalf("%.80s; want %.80s", got, want)
	}
	if cap(s.long) <= sseBufferBytes || cap(s.data) <= sseBufferBytes {
		t.Fatalf("long %d and data %d bytes: the test should grow both", cap(s.long), cap(s.data))
	}
	s.ev.model = []byte("m")
	putSSEReader(s)
	if s.long != nil || s.data != nil || s.ev.model != nil || s.err != nil || s.ended != nil {
		t.Errorf("a reader back in the pool keeps long %d, data %d bytes, ev %v, err %v, ended %v",
			cap(s.long), cap(s.data), s.ev.model != nil, s.err, s.ended)
	}
	s = getSSEReader(nil, 0)
	defer putSSEReader(s)
	if got := pushSSE(t, s, []byte("data: b\n\n"), func(int) int { return 1 }); !got.equal(sseOutcome{events: []string{"b"}, err: io.EOF}) {
		t.Errorf("a reader from the pool: %s", got)
	}
}

// TestSSEPushEnd: after end with a failure, parse returns the events
// committed before it, not the event in progress, and then the failure,
// for good; the stream is not said to be cut.
func TestSSEPushEnd(t *testing.T) {
	failure := errors.New("connection reset")
	s := newSSEReader(nil, 0)
	in := "data: a\n\ndata: b\r\rdata: c\ndata: d"
	n := copy(s.space(), in)
	s.commit(n)
	s.end(failure)
	s.end(io.EOF) // only the first end counts
	var got []string
	for range 4 {
		d, more, err := s.parse()
		if more {
			t.Fatal("parse asked for more after end")
		}
		if err != nil {
			if err != failure {
				t.Fatalf("error %v, want %v", err, failure)
			}
			continue
		}
		got = append(got, string(d))
	}
	if !slices.Equal(got, []string{"a", "b"}) || s.cut {
		t.Errorf("events %q, cut %v; want [a b], not cut", got, s.cut)
	}
}

// TestSSEPushCRAtEnd: a CR that is the last byte committed ends its line
// at once (the event is returned without waiting for the next bytes), and
// an LF that comes first in the next bytes is skipped, not a blank line.
func TestSSEPushCRAtEnd(t *testing.T) {
	s := newSSEReader(nil, 0)
	feed := func(b string) {
		n := copy(s.space(), b)
		s.commit(n)
	}
	next := func() string {
		d, more, err := s.parse()
		if err != nil {
			t.Fatal(err)
		}
		if more {
			return "(more)"
		}
		return string(d)
	}
	feed("data: a\r\r")
	if d := next(); d != "a" {
		t.Fatalf("%q, want a", d)
	}
	// data: b CR | LF data: c CR LF | CR LF: one event, "b\nc", if the
	// LF after the CR is skipped; "b" then "c" if it were a blank line.
	feed("data: b\r")
	if d := next(); d != "(more)" {
		t.Fatalf("%q, want more", d)
	}
	feed("\ndata: c\r\n")
	if d := next(); d != "(more)" {
		t.Fatalf("%q, want more", d)
	}
	feed("\r\n")
	if d := next(); d != "b\nc" {
		t.Fatalf("%q, want b LF c", d)
	}
}

// TestSSEPushArrivals counts arrivals pushed as TestSSEReaderArrivals
// does pulled: full, full, short reads are one arrival, and a read after
// a short one is a new one.
func TestSSEPushArrivals(t *testing.T) {
	s := newSSEReader(nil, 0)
	for i, drained := range []bool{false, false, true, true, false, true} {
		s.arrival(drained)
		if want := []uint32{1, 1, 1, 2, 3, 3}[i]; s.reads() != want {
			t.Fatalf("after read %d: %d arrivals, want %d", i, s.reads(), want)
		}
	}
}

// TestSSEPushInPlace: pushed, a single-line event whose blank line came
// with it is returned in place, and reading allocates nothing, in place or
// assembled.
func TestSSEPushInPlace(t *testing.T) {
	for _, c := range []struct {
		name    string
		event   string
		inPlace bool
	}{
		{"single line", "data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\n", true},
		{"single line CRLF", "data: {\"a\":1}\r\n\r\n", true},
		{"two lines", "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\" a\"}}]}\n\n", false},
		{"comment and CRLF", ": ping\r\ndata: {\"a\":1}\r\n\r\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSSEReader(nil, 0)
			body := []byte(strings.Repeat(c.event, 2000))
			feed := func() []byte {
				for {
					d, more, err := s.parse()
					if err != nil {
						t.Fatal(err)
					}
					if !more {
						return d
					}
					if len(body) == 0 {
						body = []byte(strings.Repeat(c.event, 2000))
					}
					n := copy(s.space(), body)
					s.arrival(true)
					s.commit(n)
					body = body[n:]
				}
			}
			if d := feed(); inBuffer(s, d) != c.inPlace {
				t.Errorf("%q returned in place: %v, want %v", d, inBuffer(s, d), c.inPlace)
			}
			for range 100 { // warm up the buffers
				feed()
			}
			if allocs := testing.AllocsPerRun(1000, func() { feed() }); allocs != 0 {
				t.Errorf("%.1f allocations per event, want 0", allocs)
			}
		})
	}
}

// FuzzSSEPushPull reads arbitrary streams pushed (in pieces the seed
// picks, through a buffer of 16 to 79 bytes) and pulled (whole through
// the usual buffer, and byte by byte through the small one), with no
// limit that matters and with a small one, and checks they agree with
// each other and with the reference parsers.
func FuzzSSEPushPull(f *testing.F) {
	for i, s := range append(append([]string{}, sseStreams...), sseLimitStreams...) {
		f.Add([]byte(s), uint8(i), uint8(i*7), uint64(i))
	}
	f.Fuzz(func(t *testing.T, in []byte, size, limit uint8, seed uint64) {
		small := 16 + int(size)%64
		for _, maxLine := range []int{len(in) + 1, 1 + int(limit)%96} {
			want := sseOutcome{cut: refCut(in)}
			want.events, want.err = refSSELimit(in, maxLine)
			if want.err != io.EOF {
				want.cut = false
			}
			if maxLine > len(in) {
				if ref := refSSE(in); !slices.Equal(ref, want.events) || want.err != io.EOF {
					t.Fatalf("refSSE %q, refSSELimit %s on %q", ref, want, in)
				}
			}
			r := rand.New(rand.NewPCG(seed, uint64(maxLine)))
			for how, got := range map[string]sseOutcome{
				"pulled whole":        pullSSE(bytes.NewReader(in), sseBufferBytes, maxLine),
				"pulled byte by byte": pullSSE(iotest.OneByteReader(bytes.NewReader(in)), small, maxLine),
				"pushed":              pushSSE(t, newSSEReaderSize(nil, small, maxLine), in, func(int) int { return 1 + r.IntN(2*small) }),
			} {
				if !got.equal(want) {
					t.Fatalf("limit %d, buffer %d, %s: %s; want %s; on %q", maxLine, small, how, got, want, in)
				}
			}
		}
	})
}
