package tokenizer

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"
)

// addedToken is a token matched in the raw text before pre-tokenization:
// a special token such as <|im_start|>, or an added non-special one.
type addedToken struct {
	content    string
	id         int
	lstrip     bool // also takes the whitespace on its left
	rstrip     bool // also takes the whitespace on its right
	singleWord bool // only where not inside a word
}

// addedMatcher finds added tokens in text, leftmost first and, among
// those starting at the same byte, longest first (Hugging Face's
// LeftmostLongest).
type addedMatcher struct {
	byFirst [256][]addedToken // by first byte, longest first
}

func newAddedMatcher(tokens []addedToken) *addedMatcher {
	if len(tokens) == 0 {
		return nil
	}
	m := &addedMatcher{}
	for _, t := range tokens {
		if t.content == "" {
			continue
		}
		f := t.content[0]
		m.byFirst[f] = append(m.byFirst[f], t)
	}
	for i := range m.byFirst {
		slices.SortStableFunc(m.byFirst[i], func(a, b addedToken) int {
			return cmp.Compare(len(b.content), len(a.content))
		})
	}
	return m
}

// segments calls yield with the text between added tokens (id -1) and with
// each added token's span and id, in order; the spans cover text exactly.
// A nil matcher yields text whole.
func (m *addedMatcher) segments(text string, yield func(seg string, id int)) {
	if m == nil {
		if text != "" {
			yield(text, -1)
		}
		return
	}
	prev := 0
	for p := 0; p < len(text); p++ {
		cands := m.byFirst[text[p]]
		if cands == nil {
			continue
		}
		for _, t := range cands {
			if len(text)-p < len(t.content) || text[p:p+len(t.content)] != t.content {
				continue
			}
			start, end := p, p+len(t.content)
			if t.singleWord && !m.wordBoundary(text, start, end) {
				continue
			}
			if t.lstrip {
				start = trimSpaceLeft(text, prev, start)
			}
			if t.rstrip {
				end = trimSpaceRight(text, end)
			}
			if start > prev {
				yield(text[prev:start], -1)
			}
			yield(text[start:end], t.id)
			prev = end
			p = end - 1
			break
		}
	}
	if prev < len(text) {
		yield(text[prev:], -1)
	}
}

// wordBoundary reports whether text[start:end] is not part of a larger word.
func (m *addedMatcher) wordBoundary(text string, start, end int) bool {
	if start > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:start])
		if isWordRune(r) {
			return false
		}
	}
	if end < len(text) {
		r, _ := utf8.DecodeRuneInString(text[end:])
		if isWordRune(r) {
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// trimSpaceLeft moves start left over whitespace, not before floor.
func trimSpaceLeft(text string, floor, start int) int {
	for start > floor {
		r, size := utf8.DecodeLastRuneInString(text[floor:start])
		if !unicode.IsSpace(r) {
			break
		}
		start -= size
	}
	return start
}

// trimSpaceRight moves end right over whitespace.
func trimSpaceRight(text string, end int) int {
	for end < len(text) {
		r, size := utf8.DecodeRuneInString(text[end:])
		if !unicode.IsSpace(r) {
			break
		}
		end += size
	}
	return end
}
