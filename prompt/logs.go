package prompt

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The from-logs class: lines of the user's own agent logs (their
// prompts, tool calls and results, answers), built to exact lengths like
// the code class's lines. A LogLines gathers them from the logs' texts;
// NewBuilder counts them once (WithLogs).
const (
	// MaxLogLines bounds the from-logs pool: a build shuffles it on the
	// stack, and NewBuilder counts each line once.
	MaxLogLines = maxPoolLines
	// maxLogLineBytes bounds a line (longer ones are cut at a space, or
	// a character): a minified file in a tool result would otherwise be
	// one line of thousands of tokens.
	maxLogLineBytes = 240
	// maxIndent bounds a line's kept indentation, in bytes.
	maxIndent = 16
)

// LogLines gathers the from-logs class's lines from texts: each text
// split into lines, blank lines dropped, every line made to start with
// whitespace and end with a newline (its indentation kept; a line
// without one gets a space) with control characters other than tabs
// dropped and invalid UTF-8 replaced, cut to 240 bytes, each distinct line once.
// When there are more than MaxLogLines distinct lines it keeps a uniform
// sample of them, drawn from a fixed seed: the same texts in the same
// order always give the same lines. Memory is the kept lines and 8 bytes
// per distinct line seen. Not safe for concurrent use.
type LogLines struct {
	lines []string
	seen  map[uint64]struct{}
	rng   *rand.Rand
	// distinct counts the distinct lines seen.
	distinct int
}

// NewLogLines returns an empty LogLines.
func NewLogLines() *LogLines {
	return &LogLines{seen: map[uint64]struct{}{}, rng: rand.New(rand.NewPCG(poolSeed, 4))}
}

// Add takes the lines of one text.
func (l *LogLines) Add(text string) {
	for raw := range strings.Lines(text) {
		line, ok := logLine(raw)
		if !ok {
			continue
		}
		h := fnv64a(line)
		if _, dup := l.seen[h]; dup {
			continue
		}
		l.seen[h] = struct{}{}
		// Reservoir sampling (Vitter's algorithm R): every distinct line
		// is kept with the same chance.
		switch j := l.rng.IntN(l.distinct + 1); {
		case len(l.lines) < MaxLogLines:
			l.lines = append(l.lines, line)
		case j < MaxLogLines:
			l.lines[j] = line
		}
		l.distinct++
	}
}

// Lines returns the kept lines (at most MaxLogLines), each starting with
// whitespace and ending with a newline. The slice is l's own.
func (l *LogLines) Lines() []string { return l.lines }

// Distinct is how many distinct lines were seen, kept or not.
func (l *LogLines) Distinct() int { return l.distinct }

// logLine makes one line of a log's text a pool line; ok is false for a
// blank one.
func logLine(raw string) (string, bool) {
	s := strings.ToValidUTF8(raw, "\uFFFD")
	if strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }) {
		s = strings.Map(func(r rune) rune {
			if r != '\t' && unicode.IsControl(r) {
				return -1
			}
			return r
		}, s)
	}
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	body := strings.TrimLeft(s, " \t")
	indent := s[:len(s)-len(body)]
	body = strings.TrimLeftFunc(body, unicode.IsSpace)
	if body == "" {
		return "", false
	}
	if len(body) > maxLogLineBytes {
		cut := maxLogLineBytes
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		if sp := strings.LastIndexByte(body[:cut], ' '); sp > maxLogLineBytes/2 {
			cut = sp
		}
		body = strings.TrimRight(body[:cut], " ")
	}
	switch {
	case indent == "":
		indent = " "
	case len(indent) > maxIndent:
		indent = indent[:maxIndent]
	}
	return indent + body + "\n", true
}

// fnv64a is the line's 64-bit FNV-1a hash: fixed, so that which lines
// are kept never depends on the process.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
