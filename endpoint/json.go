package endpoint

import (
	"strconv"
	"unicode/utf8"
)

// parser is a validating, allocation-free JSON scanner specialised to the
// few members of a chat-completion chunk that sixpin reads; every other
// value is validated and skipped.
type parser struct {
	b []byte
	i int
}

type memberFunc func(key []byte, c *chunk) bool

// Byte classes for the scanner's loops: a lookup per byte is cheaper
// than a switch, and these loops are most of the per-chunk CPU.
var (
	isSpace [256]bool // JSON whitespace
	isPlain [256]bool // a string byte that needs no check: not '"', '\\' or a control character
	isDigit [256]bool
)

func init() {
	for _, c := range " \t\n\r" {
		isSpace[c] = true
	}
	for c := 0x20; c < 256; c++ {
		isPlain[c] = c != '"' && c != '\\'
	}
	for c := '0'; c <= '9'; c++ {
		isDigit[c] = true
	}
}

// ws skips whitespace; compact JSON has none, so the common case is one
// comparison.
func (p *parser) ws() {
	if p.i < len(p.b) && p.b[p.i] <= ' ' {
		p.skipSpace()
	}
}

func (p *parser) skipSpace() {
	b, i := p.b, p.i
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	p.i = i
}

// whole parses all of p's input as one object, calling member for each of
// its members: a malformed value, or anything after it, is errMalformed.
func (p *parser) whole(member memberFunc, c *chunk) error {
	p.ws()
	if !p.object(member, c) {
		return errMalformed
	}
	p.ws()
	if p.i != len(p.b) {
		return errMalformed
	}
	return nil
}

// object parses {"k": v, ...}, calling member with p positioned at each value;
// member must consume the value.
func (p *parser) object(member memberFunc, c *chunk) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !member(key, c) {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// optObject parses an object with member, or null; seen, if not nil, is
// set when it is an object.
func (p *parser) optObject(member memberFunc, c *chunk, seen *bool) bool {
	if p.isNull() {
		return true
	}
	if seen != nil {
		*seen = true
	}
	return p.object(member, c)
}

// strOrSkip reads a string, or validates and skips any other value
// (nil).
func (p *parser) strOrSkip() ([]byte, bool) {
	if p.i < len(p.b) && p.b[p.i] == '"' {
		return p.str()
	}
	return nil, p.skip()
}

// errorValue reads an error member: null is none; anything else marks c
// an error, an object read with member, any other value skipped.
func (p *parser) errorValue(member memberFunc, c *chunk) bool {
	if p.isNull() {
		return true
	}
	c.hasError = true
	if p.i < len(p.b) && p.b[p.i] == '{' {
		return p.object(member, c)
	}
	return p.skip()
}

// optArray parses an array with elem, or null.
func (p *parser) optArray(elem func(c *chunk) bool, c *chunk) bool {
	if p.isNull() {
		return true
	}
	return p.array(elem, c)
}

// array parses [v, ...], calling elem with p positioned at each element.
func (p *parser) array(elem func(c *chunk) bool, c *chunk) bool {
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return true
	}
	for {
		p.ws()
		if !elem(c) {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str parses a JSON string and returns its raw body (escapes not decoded).
func (p *parser) str() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		b, i := p.b, p.i
		for i < len(b) && isPlain[b[i]] {
			i++
		}
		if p.i = i; i >= len(b) {
			break
		}
		ch := p.b[p.i]
		switch {
		case ch == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case ch == '\\':
			if p.i+1 >= len(p.b) {
				return nil, false
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.b) {
					return nil, false
				}
				for _, h := range p.b[p.i+2 : p.i+6] {
					if !isHex(h) {
						return nil, false
					}
				}
				p.i += 6
			default:
				return nil, false
			}
		case ch < 0x20:
			return nil, false
		default:
			p.i++
		}
	}
	return nil, false
}

func isHex(h byte) bool {
	return '0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F'
}

// isNull consumes a null literal if one is next.
func (p *parser) isNull() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// number parses a JSON number and returns its text.
func (p *parser) number() ([]byte, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		b, i := p.b, p.i
		for i < len(b) && isDigit[b[i]] {
			i++
		}
		n := i - p.i
		p.i = i
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return p.b[start:p.i], true
}

// integer parses a number (or null, as 0) and returns it as an int64;
// fractions are truncated.
func (p *parser) integer() (int64, bool) {
	if p.isNull() {
		return 0, true
	}
	num, ok := p.number()
	if !ok {
		return 0, false
	}
	var v int64
	neg := false
	for i, d := range num {
		switch {
		case d == '-' && i == 0:
			neg = true
		case '0' <= d && d <= '9':
			v = v*10 + int64(d-'0')
		default: // fraction or exponent: rare, take the slow path
			f, err := strconv.ParseFloat(string(num), 64)
			return int64(f), err == nil
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// skip validates and consumes any JSON value.
func (p *parser) skip() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch ch := p.b[p.i]; {
	case ch == '{':
		return p.object(func(_ []byte, _ *chunk) bool { return p.skip() }, nil)
	case ch == '[':
		return p.array(func(_ *chunk) bool { return p.skip() }, nil)
	case ch == '"':
		_, ok := p.str()
		return ok
	case ch == '-' || '0' <= ch && ch <= '9':
		_, ok := p.number()
		return ok
	default:
		for _, lit := range [...]string{"null", "true", "false"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return true
			}
		}
		return false
	}
}

// optString parses a string or null and returns the string body.
func (p *parser) optString() ([]byte, bool) {
	if p.isNull() {
		return nil, true
	}
	return p.str()
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD (as
// encoding/json does); everything else, HTML characters and U+2028
// included, as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
