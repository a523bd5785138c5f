package results

import (
	"fmt"
	"io"
	"os"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
)

// Recovered is a run rebuilt from its record spill.
type Recovered struct {
	Run *Run
	// Requests is how many whole records the spill held before its end,
	// or before its damage.
	Requests int
	// SkippedBytes were left unread from the first frame that was cut
	// short or did not check out (a write cut off by a kill, zeros or
	// garbage left by a crash) to the end of the spill; Damage says what
	// that frame was ("" when none was).
	SkippedBytes int64
	Damage       string
}

// Recover rebuilds a results file from the record spill at path (a run
// that was killed, ran out of memory or panicked, or a run still going):
// the header and every whole record before the spill's end or its first
// damage, measured and judged as a finished run is, and marked incomplete
// with why (and what was skipped).
func Recover(path string, why string) (*Recovered, error) {
	return RecoverUpTo(path, -1, why)
}

// RecoverUpTo is Recover reading only the first size bytes of the spill
// (all of it when size < 0): a spill still being written, as of its last
// flush (SpillState.Bytes).
func RecoverUpTo(path string, size int64, why string) (*Recovered, error) {
	c := newCollector()
	c.src = path
	var h *Header
	rd, err := eachRecord(path, size, -1, func(hd *Header) {
		h = hd
		c.warmth = Warmth{N: hd.Windows.WarmSessions} // as Begin did in the run
	}, c.Add)
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", path, err)
	}
	if h == nil {
		return nil, fmt.Errorf("recover %s: the spill has no header (the run died before its first request)", path)
	}
	m, err := c.Finish(h.Windows, h.SLO, h.Tol)
	if err != nil {
		return nil, fmt.Errorf("recover %s: %w", path, err)
	}
	n := c.Requests()
	reason := fmt.Sprintf("%s; rebuilt from its record spill with the %s measured until then", why, numfmt.Count(n, "request", ""))
	if rd.skipped > 0 {
		reason += fmt.Sprintf("; skipped the last %s bytes of the spill (%s)", numfmt.Int(rd.skipped), rd.damage)
	}
	run := Assemble(h, m, Ending{Incomplete: true, Reason: reason})
	return &Recovered{Run: run, Requests: n, SkippedBytes: rd.skipped, Damage: rd.damage}, nil
}

// eachRecord replays the first n whole records (all when n < 0) of the
// spill at path, read up to its first size bytes (all when size < 0),
// into one reused Record (fn must not keep it), and hands the header to
// onHeader (when not nil) as it comes by. It returns the reader, which
// says what was damaged and skipped.
func eachRecord(path string, size int64, n int, onHeader func(*Header), fn func(*record.Record)) (*spillReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open record spill: %w", err)
	}
	defer f.Close()
	var src io.Reader = f
	if size >= 0 {
		src = io.LimitReader(f, size)
	}
	rd, err := newSpillReader(src, path)
	if err != nil {
		return nil, err
	}
	return rd, readRecords(rd, path, n, onHeader, fn)
}

// readRecords replays the first n whole records of rd (all when n < 0)
// as eachRecord does. With n ≥ 0, fewer than n is an error.
func readRecords(rd *spillReader, name string, n int, onHeader func(*Header), fn func(*record.Record)) error {
	var rec record.Record
	read := 0
	for n < 0 || read < n {
		ok := rd.next(&rec)
		if rd.header != nil && onHeader != nil {
			onHeader(rd.header)
			onHeader = nil
		}
		if !ok {
			break
		}
		fn(&rec)
		read++
	}
	switch {
	case rd.err != nil:
		return fmt.Errorf("read record spill %s: %w", name, rd.err)
	case n >= 0 && read < n:
		then := rd.damage
		if then == "" {
			then = "its end"
		}
		return fmt.Errorf("read record spill %s: %d of %d records, then %s", name, read, n, then)
	}
	return nil
}

// SpillRead is what ReadSpill read of a spill.
type SpillRead struct {
	// Header is the run's header (nil: the spill has none, the run died
	// before its first request).
	Header *Header
	// Records is how many whole records were read; SkippedBytes and
	// Damage are as Recovered's.
	Records      int
	SkippedBytes int64
	Damage       string
}

// ReadSpill reads the record spill at path as Recover does, without
// measuring it: it hands the run's header to onHeader once it is read
// (before the first record), then every whole record, in the order the
// run finished them, to fn, up to the spill's end or its first damage.
// fn gets one reused Record and must not keep it. An error from
// onHeader or fn stops the reading and is returned.
func ReadSpill(path string, onHeader func(*Header) error, fn func(*record.Record) error) (SpillRead, error) {
	var out SpillRead
	f, err := os.Open(path)
	if err != nil {
		return out, fmt.Errorf("open record spill: %w", err)
	}
	defer f.Close()
	rd, err := newSpillReader(f, path)
	if err != nil {
		return out, err
	}
	var rec record.Record
	for {
		ok := rd.next(&rec)
		if rd.header != nil && out.Header == nil {
			out.Header = rd.header
			if err := onHeader(rd.header); err != nil {
				return out, err
			}
		}
		if !ok {
			break
		}
		if err := fn(&rec); err != nil {
			return out, err
		}
		out.Records++
	}
	out.SkippedBytes, out.Damage = rd.skipped, rd.damage
	if rd.err != nil {
		return out, fmt.Errorf("read record spill %s: %w", path, rd.err)
	}
	return out, nil
}
