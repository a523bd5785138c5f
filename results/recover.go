package results

import (
	"fmt"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// Recovered is a run rebuilt from its record spill.
type Recovered struct {
	Run *Run
	// Requests is how many records the spill held whole; Truncated is
	// true when it ended inside one (the writer was killed mid-write).
	Requests  int
	Truncated bool
}

// Recover rebuilds a results file from the record spill at path (a run
// that was killed, ran out of memory or panicked, or a run still going):
// the header and every whole record in it, measured and judged as a
// finished run is, and marked incomplete with why.
func Recover(path string, why string) (*Recovered, error) {
	c := newCollector()
	c.src = path
	var h *Header
	n, truncated, err := eachRecord(path, -1, func(hd *Header) { h = hd }, func(r *Record) {
		_ = c.Add(r) // no spill to write: cannot fail
	})
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
	reason := fmt.Sprintf("%s; rebuilt from its record spill with the %s measured until then", why, numfmt.Count(n, "request", ""))
	if truncated {
		reason += " (the last one, cut mid-write, was dropped)"
	}
	run := Assemble(h, m, Ending{Incomplete: true, Reason: reason})
	return &Recovered{Run: run, Requests: n, Truncated: truncated}, nil
}

// eachRecord replays the first n whole records of the spill at path (all
// when n < 0) into one reused Record (fn must not keep it), and hands the
// header to onHeader (when not nil) as it comes by. It returns how many
// records it read and whether the file ended inside a frame.
func eachRecord(path string, n int, onHeader func(*Header), fn func(*Record)) (read int, truncated bool, err error) {
	f, rd, err := openSpill(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	var rec Record
	for n < 0 || read < n {
		ok, err := rd.next(&rec)
		if rd.header != nil && onHeader != nil {
			onHeader(rd.header)
			onHeader = nil
		}
		if err != nil {
			return read, false, err
		}
		if !ok {
			return read, rd.truncated, nil
		}
		fn(&rec)
		read++
	}
	return read, false, nil
}
