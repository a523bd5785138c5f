package trace

import (
	"bufio"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// MaxUnsorted is the most requests of a trace file whose sessions do not
// appear in order of start: such a file is read into memory whole (some
// 300 bytes a request) to be replayed in order; sorted, a file of any
// length streams.
const MaxUnsorted = 1_000_000

// File is a trace to replay. Open checks a trace file whole and
// summarises it in one pass, in a few MB and some hundred bytes per
// session with an id, whatever its length; its sessions are then read
// again, in order of start, as a replay wants them (Sessions). A file
// whose sessions do not appear in order of start, and a trace built in Go
// (FromTrace), are held in memory instead. A File is safe for concurrent
// use; each Cursor is for one goroutine.
type File struct {
	summary Summary
	path    string
	// origin is what the rows' times count from (Azure's: its first
	// row; the trace's start is its earliest).
	origin time.Duration
	// turns is how many turns each session with an id has, for a cursor
	// to know when it has read one whole.
	turns map[string]int
	// mem is the trace in memory, order its sessions' indices in order
	// of start; nil when the file streams.
	mem   *Trace
	order []int
}

// Open checks and summarises the trace file at path (see File). Its
// errors are Read's: they name the file, line, column and field.
func Open(path string) (*File, error) {
	f := &File{path: path}
	tk, err := f.pass(nil)
	if err != nil {
		return nil, err
	}
	if !tk.sorted {
		if tk.sum.n > MaxUnsorted {
			return nil, &Error{File: path, Err: fmt.Errorf("its sessions are not in order of start, and at %s requests it is too long to put in order in memory (at most %s): sort the file by start",
				numfmt.Thousands(float64(tk.sum.n)), numfmt.Thousands(MaxUnsorted))}
		}
		t, err := Read(path)
		if err != nil {
			return nil, err
		}
		return FromTrace(t), nil
	}
	if _, fromFirst := rowsOf(tk.format); fromFirst {
		f.origin = tk.earliest
	}
	f.summary = tk.sum.summary(tk.sessions, f.origin)
	f.summary.Source, f.summary.Format = path, tk.format
	f.turns = make(map[string]int, len(tk.byID))
	spans := make([]span, 0, len(tk.byID))
	for id, s := range tk.byID {
		f.turns[id] = s.turns
		spans = append(spans, span{s.start, s.end})
	}
	switch {
	case tk.own == 0:
		f.summary.PeakSessions = peakOf(spans)
	case len(tk.byID) == 0:
		f.summary.PeakSessions = tk.ownPk
	default: // both: the sessions' spans in order of start
		if f.summary.PeakSessions, err = f.Peak(1, 0); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// FromTrace is t as a File, held in memory.
func FromTrace(t *Trace) *File {
	f := &File{mem: t, summary: t.Summarize(), order: make([]int, len(t.Sessions))}
	for i := range f.order {
		f.order[i] = i
	}
	slices.SortStableFunc(f.order, func(a, b int) int { return cmp.Compare(t.Sessions[a].Start, t.Sessions[b].Start) })
	return f
}

// Summary describes the trace.
func (f *File) Summary() Summary { return f.summary }

// pass reads the file's rows through a tracker, calling fn (when not nil)
// with each row placed: its session's index and start (from the trace's
// start) and its turn's index; it stops at fn's first error.
func (f *File) pass(fn func(r *row, index int, start time.Duration, turn int) error) (*tracker, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	defer file.Close()
	format, br, done, err := openRows(f.path, file)
	if err != nil {
		return nil, err
	}
	defer done()
	read, _ := rowsOf(format)
	tk := newTracker(f.path)
	tk.format = format
	err = read(f.path, br, func(r *row) error {
		index, start, turn, err := tk.add(r)
		if err != nil || fn == nil {
			return err
		}
		return fn(r, index, start-f.origin, turn)
	})
	if err == nil {
		err = tk.finish()
	}
	if err == nil && tk.sessions == 0 {
		err = errors.New("no requests in the trace")
	}
	return tk, named(f.path, err)
}

// named makes err, when not nil, an *Error naming the file.
func named(name string, err error) error {
	var te *Error
	if err != nil && !errors.As(err, &te) {
		err = &Error{File: name, Err: err}
	}
	return err
}

// openRows reads a trace from r: gzip undone, its format detected. done
// releases what it opened.
func openRows(name string, r io.Reader) (format string, br *bufio.Reader, done func(), err error) {
	br = bufio.NewReaderSize(r, peekSize)
	done = func() {}
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", nil, done, &Error{File: name, Err: err}
		}
		done = func() { zr.Close() }
		br = bufio.NewReaderSize(zr, peekSize)
	}
	format, br, err = detect(name, br)
	return format, br, done, err
}

// rowsOf is the row reader of a format, and whether its times count from
// its first row.
func rowsOf(format string) (rowReader, bool) {
	switch format {
	case FormatSixpin:
		return sixpinRows, false
	case FormatMooncake:
		return mooncakeRows, false
	case FormatWeka:
		return wekaRows, false
	}
	return azureRows, true
}

// errStop ends a pass early.
var errStop = errors.New("stop")

// Cursor reads a File's sessions in order of start (equal starts in the
// file's order).
type Cursor struct {
	f    *File
	next func() (placed, bool)
	stop func()
	err  error
	// queue holds the sessions begun and not yet returned, in order of
	// start; open those of them whose turns are not all read, by id.
	queue []*pending
	open  map[string]*pending
	// at is the next session of a trace in memory.
	at int
}

// placed is a row as the tracker placed it.
type placed struct {
	index int
	start time.Duration
	turn  int
	id    string
	keyed bool
	t     Turn
}

// pending is a session being read.
type pending struct {
	index int
	s     Session
	turns []int // the turns' indices, while they may be out of order
	whole bool
}

// Sessions returns a cursor over the trace's sessions from the first. A
// file is read again as the cursor goes, keeping only the sessions begun
// and not yet returned: those under way, in a file in order of start.
// The caller closes it.
func (f *File) Sessions() *Cursor {
	c := &Cursor{f: f, open: map[string]*pending{}}
	if f.mem != nil {
		return c
	}
	c.next, c.stop = iter.Pull(func(yield func(placed) bool) {
		_, err := f.pass(func(r *row, index int, start time.Duration, turn int) error {
			if !yield(placed{index: index, start: start, turn: turn, id: r.id, keyed: r.keyed, t: r.t}) {
				return errStop
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			c.err = err
		}
	})
	return c
}

// Next returns the next session and its index (its position in the file
// in order of start, or in the Trace given to FromTrace); false at the
// end or on an error (Err).
func (c *Cursor) Next() (index int, s Session, ok bool) {
	if m := c.f.mem; m != nil {
		if c.at >= len(c.f.order) {
			return 0, Session{}, false
		}
		i := c.f.order[c.at]
		c.at++
		return i, m.Sessions[i], true
	}
	for {
		if len(c.queue) > 0 && c.queue[0].whole {
			p := c.queue[0]
			c.queue = c.queue[1:]
			p.sort()
			return p.index, p.s, true
		}
		r, ok := c.next()
		if !ok {
			if c.err == nil && len(c.queue) > 0 {
				c.err = &Error{File: c.f.path, Err: errors.New("the file changed since it was read: a session's turns are missing")}
			}
			return 0, Session{}, false
		}
		p := c.open[r.id]
		if p == nil {
			p = &pending{index: r.index, s: Session{ID: r.id, Start: r.start}}
			c.queue = append(c.queue, p)
			if r.keyed {
				c.open[r.id] = p
			}
		}
		p.s.Turns = append(p.s.Turns, r.t)
		p.turns = append(p.turns, r.turn)
		if !r.keyed || len(p.s.Turns) == c.f.turns[r.id] {
			p.whole = true
			delete(c.open, r.id)
		}
	}
}

// sort puts a session's turns in order of their indices.
func (p *pending) sort() {
	if slices.IsSorted(p.turns) {
		return
	}
	idx := make([]int, len(p.turns))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(p.turns[a], p.turns[b]) })
	turns := make([]Turn, len(idx))
	for k, i := range idx {
		turns[k] = p.s.Turns[i]
	}
	p.s.Turns = turns
}

// Err is what stopped the cursor early, if anything.
func (c *Cursor) Err() error { return c.err }

// Close releases the cursor's file.
func (c *Cursor) Close() {
	if c.stop != nil {
		c.stop()
	}
}

// Peak is the most sessions under way at once in shard i of n: the
// sessions whose position in order of start is i modulo n (the whole
// trace for 1, 0). It reads the sessions through a cursor.
func (f *File) Peak(n, i int) (int, error) {
	c := f.Sessions()
	defer c.Close()
	var p peaker
	for k := 0; ; k++ {
		_, s, ok := c.Next()
		if !ok {
			break
		}
		if k%n == i && len(s.Turns) > 0 {
			p.add(span{s.Start, s.Start + s.Turns[len(s.Turns)-1].Offset})
		}
	}
	return p.peak, c.Err()
}

// Requests calls fn with every request of the trace, in the file's
// order, reading the file again.
func (f *File) Requests(fn func(Turn)) error {
	if f.mem != nil {
		for _, s := range f.mem.Sessions {
			for _, u := range s.Turns {
				fn(u)
			}
		}
		return nil
	}
	_, err := f.pass(func(r *row, _ int, _ time.Duration, _ int) error {
		fn(r.t)
		return nil
	})
	return err
}
