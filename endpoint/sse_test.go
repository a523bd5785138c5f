package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// refSSE is the HTML standard's event-stream parser written as plainly as
// possible, for checking sseReader: the whole stream at once, lines split
// on CRLF, LF or CR, with sseReader's two documented choices (events of
// blank data are skipped; at the end, an event whose last line was
// complete is dispatched).
func refSSE(in []byte) []string {
	in = bytes.TrimPrefix(in, []byte("\xef\xbb\xbf"))
	var lines []string
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			break // the stream ended inside a line
		}
		lines = append(lines, string(in[:i]))
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			i++
		}
		in = in[i+1:]
	}
	var events []string
	var data []string
	dispatch := func() {
		d := strings.Join(data, "\n")
		if strings.TrimLeft(d, " \t\r\n") != "" {
			events = append(events, d)
		}
		data = nil
	}
	for _, l := range lines {
		if l == "" {
			dispatch()
			continue
		}
		if l[0] == ':' {
			continue
		}
		field, value, found := strings.Cut(l, ":")
		if found {
			value = strings.TrimPrefix(value, " ")
		}
		if field == "data" {
			data = append(data, value)
		}
	}
	if data != nil {
		dispatch()
	}
	return events
}

// readAllSSE reads every event from s until it fails or ends.
func readAllSSE(s *sseReader) ([]string, error) {
	var events []string
	for {
		d, err := s.next()
		if err != nil {
			return events, err
		}
		events = append(events, string(d))
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"one event", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"no space after the colon", "data:x\n\n", []string{"x"}},
		{"only one leading space is removed", "data:  x\n\n", []string{" x"}},
		{"multi-line data joins with LF", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"CRLF", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone CR", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"CR then CRLF", "data: a\r\r\ndata: b\n\n", []string{"a", "b"}},
		{"lone CR inside a line", "data: a\rdata: b\n\n", []string{"a\nb"}},
		{"byte-order mark", "\xef\xbb\xbfdata: a\n\n", []string{"a"}},
		{"a second BOM is data", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n", nil},
		{"comments and other fields", ": ping\nevent: message\nid: 7\nretry: 100\ndata: a\n\n: ping\n\n", []string{"a"}},
		{"empty data skipped", "data: \n\ndata:\n\ndata\n\ndata: b\n\n", []string{"b"}},
		{"bare data field is an empty line of data", "data\ndata: x\n\n", []string{"\nx"}},
		{"a field named like data", "datax: 1\ndata : 2\n\n", nil},
		{"end without a blank line", "data: a\n\ndata: b\n", []string{"a", "b"}},
		{"end inside a line", "data: a\n\ndata: b", []string{"a"}},
		{"DONE is data", "data: [DONE]\n\n", []string{"[DONE]"}},
		{"no final LF after CR", "data: a\r", []string{"a"}},
	}
	for _, c := range cases {
		for _, rd := range []struct {
			name string
			wrap func(io.Reader) io.Reader
			size int
		}{
			{"whole", func(r io.Reader) io.Reader { return r }, sseBufferBytes},
			{"byte by byte", iotest.OneByteReader, sseBufferBytes},
			{"half reads, small buffer", iotest.HalfReader, 16},
		} {
			t.Run(c.name+"/"+rd.name, func(t *testing.T) {
				got, err := readAllSSE(newSSEReaderSize(rd.wrap(strings.NewReader(c.in)), rd.size, 0))
				if err != io.EOF {
					t.Errorf("error %v, want io.EOF", err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("events %q, want %q", got, c.want)
				}
				if ref := refSSE([]byte(c.in)); !slices.Equal(ref, c.want) {
					t.Errorf("the reference parser says %q, the test %q", ref, c.want)
				}
			})
		}
	}
}

// TestSSEReaderComments reads 12,000 comment lines before the first event:
// there is no limit on them.
func TestSSEReaderComments(t *testing.T) {
	in := strings.Repeat(": ping\n\n", 12_000) + "data: a\n\n"
	got, err := readAllSSE(newSSEReader(strings.NewReader(in), 0))
	if err != io.EOF || !slices.Equal(got, []string{"a"}) {
		t.Errorf("events %q, error %v; want [a], io.EOF", got, err)
	}
}

// TestSSEReaderLineLimit checks the line limit: a line or an event of the
// limit's length is read, one byte more fails, and memory stays bounded
// by the limit however long the line is.
func TestSSEReaderLineLimit(t *testing.T) {
	const limit = 1000
	payload := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name    string
		in      string
		want    []string
		wantErr error
	}{
		{"line at the limit", "data:" + payload(limit-5) + "\n\n", []string{payload(limit - 5)}, io.EOF},
		{"line at the limit, CRLF", "data:" + payload(limit-5) + "\r\n\r\n", []string{payload(limit - 5)}, io.EOF},
		{"line over the limit", "data: a\n\ndata:" + payload(limit-4) + "\n\n", []string{"a"}, errLineTooLong},
		{"event over the limit", "data:" + payload(600) + "\ndata:" + payload(600) + "\n\n", nil, errLineTooLong},
		{"comment over the limit", ":" + payload(limit) + "\n\n", nil, errLineTooLong},
		{"endless line", "data: " + payload(100*limit), nil, errLineTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSSEReaderSize(strings.NewReader(c.in), 64, limit)
			got, err := readAllSSE(s)
			if !errors.Is(err, c.wantErr) || !slices.Equal(got, c.want) {
				t.Errorf("events %d, error %v; want %d, %v", len(got), err, len(c.want), c.wantErr)
			}
			if n := cap(s.long) + cap(s.data); n > 4*limit {
				t.Errorf("the reader holds %d bytes of buffers for a limit of %d", n, limit)
			}
		})
	}
}

// TestSSEReaderAllocations: the steady state allocates nothing per event,
// in place or assembled.
func TestSSEReaderAllocations(t *testing.T) {
	for _, c := range []struct {
		name  string
		event string
	}{
		{"single line", "data: {\"choices\":[{\"delta\":{\"content\":\" a\"}}]}\n\n"},
		{"two lines", "data: {\"choices\":\ndata: [{\"delta\":{\"content\":\" a\"}}]}\n\n"},
		{"comment and CRLF", ": ping\r\ndata: {\"a\":1}\r\n\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(strings.Repeat(c.event, 2000))
			rd := bytes.NewReader(body)
			s := newSSEReader(rd, 0)
			for range 100 { // warm up the buffers
				if _, err := s.next(); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := s.next(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%.1f allocations per event, want 0", allocs)
			}
		})
	}
}

// FuzzSSE reads arbitrary streams with sseReader, whole, byte by byte and
// through a small buffer, and checks every reading against refSSE.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n", "data: a\r\n\r\n", "data: a\r\rdata: b\r\r", "\xef\xbb\xbfdata: a\n\n",
		": ping\n\ndata: [DONE]\n\n", "data: {\"a\":\ndata: 1}\n\n", "data\n\n", "data: a\r\r\n",
		"event: x\ndata: y\nid: 1\n\n", "data: a\n\ndata: b", strings.Repeat("x", 40) + "\r\ndata: " + strings.Repeat("y", 40) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := refSSE(in)
		for _, rd := range []struct {
			name string
			r    io.Reader
			size int
		}{
			{"whole", bytes.NewReader(in), sseBufferBytes},
			{"byte by byte", iotest.OneByteReader(bytes.NewReader(in)), sseBufferBytes},
			{"small buffer", iotest.HalfReader(bytes.NewReader(in)), 16},
		} {
			got, err := readAllSSE(newSSEReaderSize(rd.r, rd.size, len(in)+1))
			if err != io.EOF {
				t.Fatalf("%s: error %v on %q", rd.name, err, in)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s: events %s, reference %s, on %q", rd.name, fmtEvents(got), fmtEvents(want), in)
			}
		}
	})
}

func fmtEvents(ev []string) string { return fmt.Sprintf("%q", ev) }

// TestSSEReaderCutLine: a stream that ends inside a line drops the line
// and says it was cut; one that ends after a whole line does not.
func TestSSEReaderCutLine(t *testing.T) {
	cases := []struct {
		in  string
		cut bool
	}{
		{"data: a\n\ndata: {\"us", true},
		{"data: a\r\rdata: {\"us", true},
		{"data: a\n\n", false},
		{"data: a\n", false},
		{"data: a\r", false},
	}
	for _, c := range cases {
		sr := newSSEReader(strings.NewReader(c.in), 0)
		got, err := readAllSSE(sr)
		if err != io.EOF || !slices.Equal(got, []string{"a"}) || sr.cut != c.cut {
			t.Errorf("%q: events %q, error %v, cut %v; want [a], io.EOF, cut %v", c.in, got, err, sr.cut, c.cut)
		}
	}
}

// reads is what a reader returns, read by read.
type reads [][]byte

func (r *reads) Read(p []byte) (int, error) {
	if len(*r) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*r)[0])
	if n < len((*r)[0]) {
		(*r)[0] = (*r)[0][n:]
	} else {
		*r = (*r)[1:]
	}
	return n, nil
}

// The reader counts arrivals, not reads: an answer longer than its buffer
// sent at once is read full, full, short — one arrival — and events that
// came after a read that drained the connection are a new one.
func TestSSEReaderArrivals(t *testing.T) {
	event := func(i int) string { return fmt.Sprintf("data: {\"i\":%d,\"pad\":%q}\n\n", i, strings.Repeat("x", 40)) }
	var burst strings.Builder
	for i := range 100 {
		burst.WriteString(event(i)) // ~6 KB: more than the 4 KB buffer
	}
	src := reads{[]byte(burst.String()), []byte(event(100)), []byte(event(101))}
	sr := newSSEReader(&src, 0)
	var at []uint32
	for {
		if _, err := sr.next(); err != nil {
			break
		}
		at = append(at, sr.reads())
	}
	if len(at) != 102 || at[0] != 1 || at[99] != 1 || at[100] != 2 || at[101] != 3 {
		t.Errorf("%d events; arrivals at 0, 99, 100, 101: %v", len(at), []uint32{at[0], at[99], at[100], at[101]})
	}
}
