package harness

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// rowsFile is a run's per-request records file (--records), written by
// the goroutine that consumes the run's records, after the collector: a
// row per finished request, off the per-chunk path. A write that fails
// (a full disk) is said once and stops the rows, never the run: the
// results and the spill are what the run keeps. Its methods do nothing
// on a nil rowsFile (no --records).
type rowsFile struct {
	f      *export.RecordsFile
	errOut io.Writer
	warned bool
}

// createRecords creates cfg's records file, nil without --records.
func createRecords(cfg Config) (*rowsFile, error) {
	if cfg.Records == "" {
		return nil, nil
	}
	f, err := export.CreateRecords(cfg.Records)
	if err != nil {
		return nil, fmt.Errorf("%w: --records: %w", ErrBadInput, err)
	}
	return &rowsFile{f: f, errOut: cfg.ErrOut}, nil
}

// begin starts the rows with the run's header.
func (r *rowsFile) begin(h *results.Header) {
	if r != nil {
		r.warn(r.f.Begin(h))
	}
}

// write writes rec's row.
func (r *rowsFile) write(rec *record.Record) {
	if r != nil && !r.warned {
		r.warn(r.f.Write(rec))
	}
}

// finish closes the file and says how many rows it holds.
func (r *rowsFile) finish() {
	if r == nil || r.f == nil {
		return
	}
	err := r.f.Close()
	r.warn(err)
	if err == nil {
		fmt.Fprintf(r.errOut, "sixpin: wrote %s to %s\n", numfmt.Count(r.f.Rows(), "per-request row", ""), r.f.Path())
	}
	r.f = nil
}

// close closes the file on a way out that did not finish it.
func (r *rowsFile) close() {
	if r != nil && r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}

func (r *rowsFile) warn(err error) {
	if err != nil && !r.warned {
		r.warned = true
		fmt.Fprintf(r.errOut, "sixpin: warning: per-request records %s: %v; no more rows are written (the results are not affected)\n", r.f.Path(), err)
	}
}

// numbered is path with n before its extension: the records file of a
// set's member n (rows.jsonl → rows.3.jsonl).
func numbered(path string, n int) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + strconv.Itoa(n) + ext
}
