package sim

import "strconv"

// This file is the text of a response's output tokens: each token is one
// word after a space (so a whitespace split counts the tokens), made
// deterministically from the request's hash and the token's index, in the
// shape of the request's content class (see classify) when SpecDecode is
// configured, and looping past the natural end under Config.LoopPastEOS.

// LoopPhraseTokens is the length in tokens of the phrase a looping output
// repeats (Config.LoopPastEOS) and of the repetitive class's phrase.
const LoopPhraseTokens = 6

// repeatNgram is the n-gram (in tokens) whose repeats repetitiveness
// counts; repetitivenessTokens bounds the tokens it reads, so that a
// request's cost at admission stays bounded (a map of at most that many
// n-grams).
const (
	repeatNgram          = 8
	repetitivenessTokens = 16384
)

// outText makes the output tokens of one response. It is a value, safe
// for concurrent use.
type outText struct {
	class    string // "": plain words, as before classes; else a content class's shape
	hash     uint64 // the request's hash
	loopFrom int    // > 0: from this token on, repeat the LoopPhraseTokens before it
}

// appendToken appends the text of output token i: a space and one word,
// JSON-escaped when esc is set.
func (o *outText) appendToken(b []byte, i int, esc bool) []byte {
	if o.loopFrom > 0 && i >= o.loopFrom {
		p := max(0, o.loopFrom-LoopPhraseTokens)
		i = p + (i-p)%(o.loopFrom-p)
	}
	b = append(b, ' ')
	switch o.class {
	case ClassCode:
		return o.appendTemplate(b, codeTemplate, i, esc)
	case ClassJSON:
		if i == 0 {
			b = append(b, '[')
		}
		return o.appendTemplate(b, jsonTemplate, i, esc)
	case ClassToolCalls:
		return o.appendTemplate(b, toolTemplate, i, esc)
	case ClassProse:
		return append(b, words[mix(o.hash^saltWords^uint64(i))>>58]...)
	case ClassRepetitive:
		i %= LoopPhraseTokens
	}
	// Today's words, kept for outputs without a class: a Weyl sequence,
	// which repeats short n-grams more than random words do.
	return append(b, words[((o.hash^saltWords)+uint64(i)*0x9e3779b97f4a7c15)>>58]...)
}

// Template slots: a piece of text, or a value drawn per unit (a function,
// a record) from the request's hash.
const (
	slotIdent = "\x00i" // two words joined by _, one per unit
	slotWord  = "\x00w" // a word, one per token
	slotNum   = "\x00n" // 0–9999, one per token
)

// A template is a unit of output, one token per element; each element's
// pieces are concatenated (slots filled in). Raw newlines are escaped as
// \n when the token is JSON-escaped; no piece holds a quote or backslash
// that is not escaped in the table below.
type template [][]string

var codeTemplate = template{
	{"def"}, {"get_", slotIdent, "(rows):\n   "},
	{slotIdent, "_sum"}, {"="}, {"0\n   "},
	{"for"}, {slotIdent}, {"in"}, {"rows:\n       "},
	{slotIdent, "_sum"}, {"+="}, {slotIdent, ".", slotWord, "\n   "},
	{"return"}, {slotIdent, "_sum\n\n"},
}

var jsonTemplate = template{
	{`{"id":`}, {slotNum, ","}, {`"name":`}, {`"`, slotIdent, `",`},
	{`"score":`}, {slotNum, ","}, {`"tags":`}, {`["`, slotWord, `",`}, {`"`, slotWord, `"],`},
	{`"ok":`}, {"true},\n"},
}

var toolTemplate = template{
	{`{"name":`}, {`"`, slotIdent, `",`}, {`"arguments":`}, {`{"`, slotWord, `":`},
	{`"`, slotWord, `",`}, {`"`, slotIdent, `":`}, {slotNum, "}}\n"},
}

// appendTemplate appends token i of a repeated template.
func (o *outText) appendTemplate(b []byte, t template, i int, esc bool) []byte {
	unit, pos := i/len(t), i%len(t)
	hu := mix(o.hash ^ saltWords ^ uint64(unit)*0x9e3779b97f4a7c15)
	ht := mix(hu ^ uint64(pos+1))
	for _, piece := range t[pos] {
		switch piece {
		case slotIdent:
			b = append(b, words[hu>>58]...)
			b = append(b, '_')
			b = append(b, words[(hu>>52)&63]...)
		case slotWord:
			b = append(b, words[ht>>58]...)
		case slotNum:
			b = strconv.AppendUint(b, ht%10000, 10)
		default:
			b = appendEscaped(b, piece, esc)
		}
	}
	return b
}

// appendEscaped appends s, JSON-escaped when esc is set.
func appendEscaped(b []byte, s string, esc bool) []byte {
	if !esc {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\n':
			b = append(b, '\\', 'n')
		case '"', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return b
}

// repetitiveness is the share (0–1) of the first n output tokens (at most
// the first 16,384) that end an 8-token sequence already seen earlier in
// the output: 0 for text that never repeats itself, near 1 for a phrase
// over and over.
func (o *outText) repetitiveness(n int) float64 {
	n = min(n, repetitivenessTokens)
	if n <= repeatNgram {
		return 0
	}
	seen := make(map[uint64]struct{}, n)
	var ring [repeatNgram]uint64
	var buf []byte
	rep := 0
	for i := 0; i < n; i++ {
		buf = o.appendToken(buf[:0], i, false)
		ring[i%repeatNgram] = hashString(fnvOffset, string(buf))
		if i < repeatNgram-1 {
			continue
		}
		g := uint64(fnvOffset)
		for k := i - repeatNgram + 1; k <= i; k++ {
			g = hashUint64(g, ring[k%repeatNgram])
		}
		if _, ok := seen[g]; ok {
			rep++
		} else {
			seen[g] = struct{}{}
		}
	}
	return float64(rep) / float64(n)
}
