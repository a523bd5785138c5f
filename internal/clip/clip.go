// Package clip shortens text taken from an input file before an error
// message echoes it, so that a one-line error stays one short line
// whatever the file holds.
package clip

import (
	"strconv"
	"strings"
)

// MaxRunes is how many runes of an echoed value an error message keeps.
const MaxRunes = 80

// String returns s cut to MaxRunes runes, "…" appended when it was cut,
// and control characters escaped as in a Go string literal (without the
// quotes) so the message stays on one line.
func String(s string) string {
	short, cut := head(s)
	if strings.IndexFunc(short, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		q := strconv.Quote(short)
		short = q[1 : len(q)-1]
	}
	if cut {
		short += "…"
	}
	return short
}

// Quote returns s cut as String does, in Go double quotes, with "…"
// after the closing quote when it was cut.
func Quote(s string) string {
	short, cut := head(s)
	q := strconv.Quote(short)
	if cut {
		q += "…"
	}
	return q
}

// Cut returns s cut to MaxRunes runes, "…" appended when it was cut, and
// nothing escaped: for a value a message formats with %q.
func Cut(s string) string {
	short, cut := head(s)
	if cut {
		short += "…"
	}
	return short
}

// Args returns args with every string in it Cut, for a message built
// with fmt from values read from a file.
func Args(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = Cut(s)
		}
		out[i] = a
	}
	return out
}

// head returns s's first MaxRunes runes and whether s was longer.
func head(s string) (string, bool) {
	if len(s) <= MaxRunes {
		return s, false
	}
	n := 0
	for i := range s {
		if n == MaxRunes {
			return s[:i], true
		}
		n++
	}
	return s, false
}
