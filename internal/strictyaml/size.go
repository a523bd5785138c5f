package strictyaml

import (
	"fmt"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/numfmt"
)

// Limits on a document, checked on its bytes before yaml.v3 parses it:
// yaml.v3 builds a node of some 150 bytes for every value before a
// decoder can count anything, and decoding adds as much again, so a
// 26 MB list of 13M numbers cost 3.6 GB before it could be refused.
const (
	// MaxItems is the most items one list may hold: bounds.Values, the
	// longest a scenario takes (an empirical distribution's values).
	MaxItems = bounds.Values
	// MaxNodes is the most values a document may hold in all (its
	// scalars, lists and mappings; aliases counted where they are used):
	// bounds.YAMLValues.
	MaxNodes = bounds.YAMLValues
	// maxDepth is how deep collections may nest: yaml.v3's own limit.
	maxDepth = 10_000
)

// size is what measure finds in a document without parsing it.
type size struct {
	// nodes bounds the nodes yaml.v3 builds below the document from
	// above: 1 for the root, 1 for each list item, 2 for each key and
	// value of a mapping.
	nodes int
	// longest is the most items of one list (exact for a document
	// yaml.v3 reads); line and col place the first list past MaxItems.
	longest   int
	line, col int
	// deep is set when collections nest past maxDepth.
	deep bool
}

// over reports whether s is past a limit (measure stops there).
func (s size) over() bool { return s.nodes > MaxNodes || s.longest > MaxItems || s.deep }

// Small reports whether data, a YAML document, is within MaxItems,
// MaxNodes and the nesting limit, as Decode requires, without parsing it:
// a caller that parses YAML with yaml.v3 itself checks first.
func Small(data []byte) bool { return !measure(data).over() }

// checkSize refuses a document past MaxItems, MaxNodes or maxDepth, with
// what kind says of it, before anything is allocated for its values.
func checkSize(file string, data []byte, kind Kind) *FieldError {
	s := measure(data)
	hint := ""
	if kind.Many != "" {
		hint = " (" + kind.Many + ")"
	}
	switch {
	case s.longest > MaxItems:
		return &FieldError{File: file, Line: s.line, Col: s.col,
			Msg: fmt.Sprintf("a list of more than %s items: more than a %s holds%s", numfmt.Thousands(MaxItems), kind.Noun, hint)}
	case s.nodes > MaxNodes:
		return &FieldError{File: file, Msg: fmt.Sprintf("more than %s values in all: more than a %s holds%s", numfmt.Thousands(MaxNodes), kind.Noun, hint)}
	case s.deep:
		return &FieldError{File: file, Msg: fmt.Sprintf("lists and mappings nested more than %s deep", numfmt.Thousands(maxDepth))}
	}
	return nil
}

// measure counts the values of a YAML document from its bytes, in one
// pass with a stack per open collection and no other memory, stopping
// once a limit is passed. It follows YAML's lexical structure — flow
// collections, block sequences by their entries' column, mapping keys by
// their ':', quoted and block scalars skipped whole, comments — closely
// enough to count every list's items exactly and never fewer nodes than
// yaml.v3 builds, for the documents yaml.v3 reads; for one it refuses,
// the count only needs to be finite.
func measure(data []byte) size {
	m := &meter{d: data, line: 1, scalar: -1}
	m.s.nodes = 1 // the root
	m.startLine()
	for m.i < len(m.d) && !m.s.over() {
		c := m.d[m.i]
		switch {
		case c == '\r' && m.i+1 < len(m.d) && m.d[m.i+1] == '\n', c == ' ' || c == '\t':
			m.i++
		case c == '\n' || c == '\r': // a lone CR breaks a line too
			m.i++
			m.line, m.bol = m.line+1, m.i
			if len(m.flow) == 0 {
				m.startLine()
			}
		case c == '#' && (m.i == m.bol || m.d[m.i-1] == ' ' || m.d[m.i-1] == '\t'):
			m.toEOL()
		case len(m.flow) > 0:
			m.flowToken(c)
		default:
			m.blockToken(c)
		}
	}
	return m.s
}

// meter is measure's state.
type meter struct {
	d    []byte
	i    int
	line int // 1-based line of d[i]
	bol  int // the offset where that line begins
	// flow holds the open flow collections, innermost last; block the
	// open block sequences, by their entries' column.
	flow, block []coll
	// scalar is the parent column of the block scalar being skipped (its
	// text is the lines indented more), -1 when none.
	scalar int
	// key is the column of the last key or entry on the line: a block
	// scalar that follows is indented past it.
	key int
	s   size
}

// coll is an open collection.
type coll struct {
	seq   bool
	items int  // items (a list) or pairs (a mapping) so far
	empty bool // flow: nothing since its opener or its last comma
	col   int  // block: its entries' column (0-based)
	line  int  // where it starts
	at    int  // its column there (1-based)
}

func (m *meter) col() int { return m.i - m.bol }

// sep reports whether d[j] ends a token: a space, a line end or the end.
func (m *meter) sep(j int) bool {
	return j >= len(m.d) || m.d[j] == ' ' || m.d[j] == '\t' || m.d[j] == '\n' || m.d[j] == '\r'
}

func (m *meter) toEOL() {
	for m.i < len(m.d) && m.d[m.i] != '\n' && m.d[m.i] != '\r' {
		m.i++
	}
}

// startLine handles a line's indentation in block context: the text of a
// block scalar is skipped, and block sequences less indented than the
// line (or as much, when it is no entry) end.
func (m *meter) startLine() {
	j := m.i
	for j < len(m.d) && m.d[j] == ' ' {
		j++
	}
	indent := j - m.i
	if j == len(m.d) || m.d[j] == '\n' || m.d[j] == '\r' || m.d[j] == '#' {
		return // blank, or a comment: nothing ends
	}
	if m.scalar >= 0 {
		if indent > m.scalar {
			m.toEOL()
			return
		}
		m.scalar = -1
	}
	if indent == 0 && j+3 <= len(m.d) && (string(m.d[j:j+3]) == "---" || string(m.d[j:j+3]) == "...") && m.sep(j+3) {
		m.block = m.block[:0] // a document's start or end
		m.i = j + 3
		return
	}
	if indent == 0 && m.d[j] == '%' {
		m.toEOL() // a directive
		return
	}
	entry := m.d[j] == '-' && m.sep(j+1)
	for n := len(m.block); n > 0 && (m.block[n-1].col > indent || !entry && m.block[n-1].col == indent); n-- {
		m.block = m.block[:n-1]
	}
	m.i, m.key = j, indent
}

// blockToken reads one token in block context.
func (m *meter) blockToken(c byte) {
	col := m.col()
	switch {
	case c == '-' && m.sep(m.i+1): // a block sequence entry
		n := len(m.block)
		for n > 0 && m.block[n-1].col > col {
			n--
		}
		m.block = m.block[:n]
		if n == 0 || m.block[n-1].col != col {
			if n >= maxDepth {
				m.s.deep = true
				return
			}
			m.block = append(m.block, coll{seq: true, col: col, line: m.line, at: col + 1})
		}
		m.item(&m.block[len(m.block)-1])
		m.key = col
		m.i++
	case (c == '?' || c == ':') && m.sep(m.i+1): // an explicit key, a value
		m.pair()
		m.i++
	case c == '[' || c == '{':
		m.open(c == '[')
	case c == '"' || c == '\'':
		m.quoted(c)
		if m.i < len(m.d) && m.d[m.i] == ':' {
			m.key = col
		}
	case c == '|' || c == '>': // a block scalar: its text is indented past its key
		m.scalar = m.key
		m.toEOL()
	case c == '&' || c == '!' || c == '*': // an anchor, a tag, an alias (a key, before a ": ")
		for m.i < len(m.d) && !m.sep(m.i) && !(m.d[m.i] == ':' && m.sep(m.i+1)) {
			m.i++
		}
	default: // a plain scalar, to a ": ", a " #" or the line's end
		for m.i < len(m.d) && m.d[m.i] != '\n' && m.d[m.i] != '\r' {
			if m.d[m.i] == ':' && m.sep(m.i+1) {
				m.key = col
				return
			}
			if (m.d[m.i] == ' ' || m.d[m.i] == '\t') && m.i+1 < len(m.d) && m.d[m.i+1] == '#' {
				return
			}
			m.i++
		}
	}
}

// flowToken reads one token inside a flow collection.
func (m *meter) flowToken(c byte) {
	top := &m.flow[len(m.flow)-1]
	switch c {
	case '[', '{':
		top.empty = false
		m.open(c == '[')
	case ']', '}':
		m.i++
		if !top.empty {
			m.entry(top)
		}
		m.flow = m.flow[:len(m.flow)-1]
		if n := len(m.flow); n > 0 {
			m.flow[n-1].empty = false
		}
	case ',':
		m.i++
		m.entry(top)
		top.empty = true
	case ':':
		m.i++
		if m.sep(m.i) || m.i < len(m.d) && isFlowIndicator(m.d[m.i]) {
			m.flowValue(top)
		} else {
			top.empty = false // inside a plain scalar (http://h:8)
		}
	case '"', '\'':
		top.empty = false
		m.quoted(c)
		if m.i < len(m.d) && m.d[m.i] == ':' { // "key":value, as JSON writes it
			m.i++
			m.flowValue(top)
		}
	case '?':
		m.i++
	default: // a plain scalar, an anchor, a tag or an alias
		top.empty = false
		for m.i < len(m.d) && !m.sep(m.i) && !isFlowIndicator(m.d[m.i]) && !(m.d[m.i] == ':' && (m.sep(m.i+1) || m.i+1 < len(m.d) && isFlowIndicator(m.d[m.i+1]))) {
			m.i++
		}
	}
}

// flowValue counts a value indicator inside top: in a list it makes the
// item a one-pair mapping (its key and value two nodes more); in a
// mapping the pair is counted at its comma or the closing brace.
func (m *meter) flowValue(top *coll) {
	if top.seq {
		m.s.nodes += 2
	}
}

func isFlowIndicator(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

// open starts a flow collection at d[i].
func (m *meter) open(seq bool) {
	if len(m.flow) >= maxDepth {
		m.s.deep = true
		return
	}
	m.flow = append(m.flow, coll{seq: seq, empty: true, line: m.line, at: m.col() + 1})
	m.i++
}

// entry counts one entry of a flow collection: an item, or a pair.
func (m *meter) entry(c *coll) {
	if c.seq {
		m.item(c)
	} else {
		m.pair()
	}
}

// item counts one item of the list c.
func (m *meter) item(c *coll) {
	c.items++
	m.s.nodes++
	if c.items > m.s.longest {
		m.s.longest = c.items
		if c.items == MaxItems+1 {
			m.s.line, m.s.col = c.line, c.at
		}
	}
}

// pair counts one key and its value.
func (m *meter) pair() { m.s.nodes += 2 }

// quoted skips the quoted scalar that starts at d[i] with quote q.
func (m *meter) quoted(q byte) {
	for m.i++; m.i < len(m.d); m.i++ {
		switch c := m.d[m.i]; {
		case c == '\n' || c == '\r' && (m.i+1 == len(m.d) || m.d[m.i+1] != '\n'):
			m.line, m.bol = m.line+1, m.i+1
		case c == '\\' && q == '"':
			if m.i+1 < len(m.d) && m.d[m.i+1] == '\n' {
				m.line, m.bol = m.line+1, m.i+2
			}
			m.i++
		case c == q && q == '\'' && m.i+1 < len(m.d) && m.d[m.i+1] == '\'':
			m.i++
		case c == q:
			m.i++
			return
		}
	}
}
