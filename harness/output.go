package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// checkWritable fails (bad input) when the results could not be written
// to path: its directory is missing or read-only, or path is a directory.
// It runs before the first request, so that no run is measured only to be
// lost.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%w: results file %s is a directory", ErrBadInput, path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".sixpin-write-check-*")
	if err != nil {
		why := "cannot create a file there"
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err.Error()
		}
		return fmt.Errorf("%w: cannot write the results file %s: directory %s: %s", ErrBadInput, path, dir, why)
	}
	f.Close()
	return os.Remove(f.Name())
}

// spillBeside is the record spill's path for the results at path: path +
// suffix + ".spill", or, when that exists (the spill of a run that died,
// kept for `sixpin recover`), the first free path + suffix + ".N.spill".
func spillBeside(path, suffix string) string {
	base := path + suffix
	p := base + ".spill"
	for n := 2; ; n++ {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return p
		}
		p = base + "." + strconv.Itoa(n) + ".spill"
	}
}

// spillFile is a run's record spill: removed once its results are
// written, kept otherwise.
type spillFile struct{ col *results.Collector }

// remove deletes the spill: the results are safe.
func (s *spillFile) remove() { _ = s.col.Close() }

// release closes the spill and keeps it (a no-op after remove).
func (s *spillFile) release() { _ = s.col.Release() }

// keep keeps the spill, once the results it was measured into could not
// be written, and says on w what of them it holds: all, for `sixpin
// recover`; or, when its disk filled during the run, only the requests
// measured until then (the others, kept in memory, are lost with the
// results); a spill that holds none is removed.
func (s *spillFile) keep(w io.Writer) {
	s.release()
	st := s.col.Spill()
	all := numfmt.Count(s.col.Requests(), "request", "")
	switch {
	case st.InMemory == 0:
		fmt.Fprintf(w, "sixpin: the run's %s stay in %s: `sixpin recover %s -o FILE` rebuilds its results\n", all, st.Path, st.Path)
	case st.OnDisk == 0:
		s.remove()
		fmt.Fprintf(w, "sixpin: LOST: the %s measured, all of them: their record spill could not be written either (%v)\n", all, st.Err)
	default:
		fmt.Fprintf(w, "sixpin: LOST: %s of the %s measured, those after the record spill could not be written (%v); it holds the first %s: `sixpin recover %s -o FILE` rebuilds those\n",
			numfmt.Int(st.InMemory), all, st.Err, numfmt.Int(st.OnDisk), st.Path)
	}
}

// DefaultSpillMemory is how many bytes of records a run keeps in memory
// while its record spill cannot be written (a full disk) before it stops
// issuing: past it, the run ends early, marked incomplete.
const DefaultSpillMemory = 512_000_000

// spillWatch watches a run's record spill: it says when its disk fills
// and when it has room again, and stops issuing when the records kept in
// memory meanwhile pass the bound. It is used by the consumer of the
// records only.
type spillWatch struct {
	errOut io.Writer
	// max is the bound in bytes; stop stops issuing, with the reason.
	max  int
	stop context.CancelCauseFunc
	full bool
}

func newSpillWatch(cfg Config, stop context.CancelCauseFunc) *spillWatch {
	max := cfg.SpillMemory
	if max <= 0 {
		max = DefaultSpillMemory
	}
	return &spillWatch{errOut: cfg.ErrOut, max: max, stop: stop}
}

// check looks at the spill after a flush.
func (w *spillWatch) check(st results.SpillState) {
	switch {
	case st.Err != nil && !w.full:
		w.full = true
		fmt.Fprintf(w.errOut, "sixpin: warning: the record spill cannot be written (%v): it holds the first %s, and those since are kept in memory (at most %s, then the run stops)\n",
			st.Err, numfmt.Count(st.OnDisk, "request", ""), megabytes(w.max))
	case st.Err == nil && w.full:
		w.full = false
		fmt.Fprintf(w.errOut, "sixpin: the record spill is written again: it holds every request so far (%s)\n", numfmt.Int(st.OnDisk))
	}
	if st.Err != nil && st.MemoryBytes > w.max {
		w.stop(fmt.Errorf("the record spill could not be written (%v), and the records measured since outgrew the %s that may be kept in memory", st.Err, megabytes(w.max)))
	}
}

func megabytes(n int) string { return numfmt.Sig(float64(n)/1e6) + " MB" }

// save writes run to path with cfg's writer; when that fails (a full
// disk), to the same name in each fallback directory in turn, and says
// where. It returns the path written.
func save(cfg Config, path string, run *results.Run) (string, error) {
	write := writer(cfg)
	return saveWith(cfg, path, func(p string) error { return write(p, run) })
}

// saveWith writes a file with write(path), falling back as save does.
func saveWith(cfg Config, path string, write func(path string) error) (string, error) {
	err := write(path)
	if err == nil {
		return path, nil
	}
	dirs := cfg.FallbackDirs
	if dirs == nil {
		dirs = []string{".", os.TempDir()}
	}
	for _, dir := range dirs {
		alt := filepath.Join(dir, filepath.Base(path))
		if abs(alt) == abs(path) {
			continue
		}
		if werr := write(alt); werr == nil {
			fmt.Fprintf(cfg.ErrOut, "sixpin: could not write %s (%v): the results went to %s instead\n", path, err, alt)
			return alt, nil
		}
	}
	return "", fmt.Errorf("write results %s: %w (no fallback directory took them either)", path, err)
}

func writer(cfg Config) func(string, *results.Run) error {
	if cfg.WriteResults != nil {
		return cfg.WriteResults
	}
	return results.WriteFile
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// checkpointer rewrites the results file from the record spill every
// interval once a run has gone on for CheckpointAfter, so a run killed
// without a chance to write (SIGKILL, out of memory) still leaves a
// results file, marked incomplete. The consumer of the records fires it
// (the spill is flushed in that goroutine); the spill is read back and
// the file written in another, one checkpoint at a time.
type checkpointer struct {
	cfg   Config
	col   *results.Collector
	out   string
	start time.Time
	tick  *time.Ticker
	busy  chan struct{}
	// scraper, if not nil, gives each checkpoint the server metrics
	// so far.
	scraper *endpoint.Scraper
}

func newCheckpointer(cfg Config, col *results.Collector, out string, every time.Duration, start time.Time, scraper *endpoint.Scraper) *checkpointer {
	c := &checkpointer{cfg: cfg, col: col, out: out, start: start, scraper: scraper}
	if every > 0 && out != "" {
		c.tick = time.NewTicker(every)
	}
	return c
}

// ticks is the checkpoint clock (nil: never).
func (c *checkpointer) ticks() <-chan time.Time {
	if c.tick == nil {
		return nil
	}
	return c.tick.C
}

// fire starts a checkpoint unless the run is younger than
// CheckpointAfter, one is still being written, or the spill lags behind
// the records (its disk is full: the checkpoint would miss some).
func (c *checkpointer) fire() {
	after := CheckpointAfter
	if c.cfg.CheckpointAfter > 0 {
		after = c.cfg.CheckpointAfter
	}
	if time.Since(c.start) < after {
		return
	}
	if c.busy != nil {
		select {
		case <-c.busy:
		default:
			return
		}
	}
	c.col.Flush()
	st := c.col.Spill()
	if st.Err != nil {
		return
	}
	busy := make(chan struct{})
	c.busy = busy
	go func() {
		defer close(busy)
		rec, err := results.RecoverUpTo(st.Path, st.Bytes, fmt.Sprintf("a checkpoint of a run still going %s after its start", time.Since(c.start).Round(time.Second)))
		if err == nil {
			if c.scraper != nil {
				rec.Run.Server = serverSide(c.scraper.Snapshot(), rec.Run.Windows)
			}
			err = writer(c.cfg)(c.out, rec.Run)
		}
		if err != nil {
			fmt.Fprintf(c.cfg.ErrOut, "sixpin: warning: checkpoint: %v\n", err)
		}
	}()
}

// stop stops the clock and waits for a checkpoint being written.
func (c *checkpointer) stop() {
	if c.tick != nil {
		c.tick.Stop()
	}
	if c.busy != nil {
		<-c.busy
	}
}

// spillFlushEvery is how often the record spill is flushed to its file
// while a run goes on: what a killed run can lose.
const spillFlushEvery = time.Second

// consume adds every record to col, then hands it to observe, flushing
// the spill every spillFlushEvery (so a run killed by SIGKILL or the OOM
// killer loses at most that much), watching it with sw, calling every
// (if not nil) as often, and firing checkpoints on the way.
func consume(records <-chan *record.Record, col *results.Collector, sw *spillWatch, ck *checkpointer, observe func(*record.Record), every func()) {
	flush := time.NewTicker(spillFlushEvery)
	defer flush.Stop()
	for {
		select {
		case rec, ok := <-records:
			if !ok {
				ck.stop()
				return
			}
			col.Add(rec)
			observe(rec)
		case <-flush.C:
			col.Flush()
			sw.check(col.Spill())
			if every != nil {
				every()
			}
		case <-ck.ticks():
			ck.fire()
		}
	}
}
