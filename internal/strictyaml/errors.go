package strictyaml

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/clip"
)

// FieldError is one problem with a document, named by its field path
// ("pins.mix.classes[1].weight": dots between keys, [i] for sequence items)
// and, when it came from a file, positioned in it (1-based line
// and column; zero when unknown).
type FieldError struct {
	File  string
	Line  int
	Col   int
	Field string
	Msg   string
}

// Error formats e as "file:line:col: field: msg", leaving out the parts
// that are unknown.
func (e *FieldError) Error() string {
	var b strings.Builder
	where := e.File
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
		if e.Col > 0 {
			where += ":" + strconv.Itoa(e.Col)
		}
	}
	where = strings.TrimPrefix(where, ":")
	if where != "" {
		b.WriteString(where)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(clip.String(e.Field)) // a key may be a megabyte long
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in a document, in file order. Functions
// return one (never an empty one) when anything is wrong; errors.As finds
// it, and each *FieldError in it.
type ErrorList []*FieldError

// Error joins the errors' messages, one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// Err returns l as an error, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Sort orders l by position; errors without one (whole-file problems) come
// first, and errors at the same position keep their order.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, func(a, b *FieldError) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
