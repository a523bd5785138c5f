// Package fielderr is sixpin's error about one field of an input file.
//
// An Error reads "file:line:col: field: message"; a List holds every such
// error found in a file. The YAML, trace and results-file readers share
// them.
package fielderr

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/clip"
)

// Error is one problem with a document, named by its field path
// ("pins.mix.classes[1].weight": dots between keys, [i] for sequence items)
// and, when it came from a file, positioned in it (1-based line
// and column; zero when unknown).
type Error struct {
	File  string
	Line  int
	Col   int
	Field string
	Msg   string
}

// Error formats e as "file:line:col: field: msg", leaving out the parts
// that are unknown.
func (e *Error) Error() string { return Format(e.File, e.Line, e.Col, e.Field, e.Msg) }

// Format formats a problem as "file:line:col: field: msg", leaving out
// the parts that are unknown (empty, or a zero line or column) and
// cutting a long field path short.
func Format(file string, line, col int, field, msg string) string {
	var b strings.Builder
	where := file
	if line > 0 {
		where += ":" + strconv.Itoa(line)
		if col > 0 {
			where += ":" + strconv.Itoa(col)
		}
	}
	where = strings.TrimPrefix(where, ":")
	if where != "" {
		b.WriteString(where)
		b.WriteString(": ")
	}
	if field != "" {
		b.WriteString(clip.String(field)) // a key may be a megabyte long
		b.WriteString(": ")
	}
	b.WriteString(msg)
	return b.String()
}

// List is every problem found in a document, in file order. Functions
// return one (never an empty one) when anything is wrong; errors.As finds
// it, and each *FieldError in it.
type List []*Error

// Error joins the errors' messages, one per line.
func (l List) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l List) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Err returns l as an error, or nil when l is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Sort orders l by position; errors without one (whole-file problems) come
// first, and errors at the same position keep their order.
func (l List) Sort() {
	slices.SortStableFunc(l, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
