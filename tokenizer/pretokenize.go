package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// splitter cuts text into pre-tokens, the pieces BPE encodes one by one.
// Implementations are safe for concurrent use.
type splitter interface {
	// split calls yield with consecutive non-empty pieces that together
	// cover s exactly, in order.
	split(s string, yield func(piece string))
}

// The GPT-2 and GPT-4 split patterns that gptSplitter implements by hand:
// Go's regexp has no lookahead (`\s+(?!\S)`), and regexp2 is about 20x
// slower (BenchmarkSplit).
const (
	contractionsCaseless = `(?i:'s|'t|'re|'ve|'m|'ll|'d)`
	contractionsASCII    = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`
	contractionsExact    = `'s|'t|'re|'ve|'m|'ll|'d`

	// gpt2Pattern is the Hugging Face ByteLevel pre-tokenizer's pattern
	// (use_regex: true).
	gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// gpt4Pattern returns the GPT-4 family pattern (cl100k_base, Llama 3 with
// `\p{N}{1,3}`; Qwen2 with `\p{N}`) with the given contraction alternatives.
func gpt4Pattern(contractions, numbers string) string {
	return contractions + `|[^\r\n\p{L}\p{N}]?\p{L}+|` + numbers +
		`| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
}

// contractionCase says which runes the contraction alternatives accept.
type contractionCase uint8

const (
	caseExact    contractionCase = iota // 's only
	caseASCII                           // 's 'S
	caseCaseless                        // 's 'S 'ſ, as (?i:...) matches
)

// knownPatterns maps each split pattern gptSplitter implements to its
// settings; newSplitter uses regexp2 for any other pattern.
var knownPatterns = func() map[string]*gptSplitter {
	m := map[string]*gptSplitter{gpt2Pattern: {gpt2: true, contractions: caseExact}}
	for c, cs := range map[string]contractionCase{
		contractionsCaseless: caseCaseless,
		contractionsASCII:    caseASCII,
		contractionsExact:    caseExact,
	} {
		m[gpt4Pattern(c, `\p{N}`)] = &gptSplitter{contractions: cs, maxDigits: 1}
		m[gpt4Pattern(c, `\p{N}{1,3}`)] = &gptSplitter{contractions: cs, maxDigits: 3}
	}
	return m
}()

// newSplitter returns the hand-written splitter for a known pattern, or a
// regexp2 one (.NET/Perl syntax, close to the Oniguruma syntax Hugging Face
// uses) for any other.
func newSplitter(pattern string) (splitter, error) {
	if g, ok := knownPatterns[pattern]; ok {
		return g, nil
	}
	return newRegexSplitter(pattern)
}

// newRegexSplitter returns a splitter that isolates every match of pattern,
// keeping the text between matches as pieces of its own (Hugging Face's
// Split with behavior Isolated).
func newRegexSplitter(pattern string) (*regexSplitter, error) {
	re, err := regexp2.Compile(pattern, regexp2.OptionMaxBacktrackingStackSize(-1))
	if err != nil {
		return nil, fmt.Errorf("compile split pattern %q: %w", pattern, err)
	}
	return &regexSplitter{re: re}, nil
}

// regexSplitter splits on the matches of a regexp2 pattern.
type regexSplitter struct {
	re *regexp2.Regexp
}

func (r *regexSplitter) split(s string, yield func(string)) {
	if s == "" {
		return
	}
	// With no backtracking limit and no timeout, regexp2 returns no error;
	// should it anyway, the unmatched rest is kept as one piece.
	locs, _ := r.re.FindAllStringIndex(s, -1)
	prev := 0
	for _, loc := range locs {
		if loc[0] > prev {
			yield(s[prev:loc[0]])
		}
		if loc[1] > loc[0] {
			yield(s[loc[0]:loc[1]])
		}
		prev = loc[1]
	}
	if prev < len(s) {
		yield(s[prev:])
	}
}

// gptSplitter is a hand-written matcher for the GPT-2 pattern and the GPT-4
// family (see knownPatterns), with the exact leftmost-first, backtracking
// semantics of the regular expression over runes. An invalid UTF-8 byte is
// one U+FFFD rune to it, as to regexp2 and Go's range loop, but the piece
// keeps the original byte.
type gptSplitter struct {
	gpt2         bool            // the GPT-2 pattern; otherwise GPT-4 family
	contractions contractionCase // which case the 's 't ... alternatives take
	maxDigits    int             // GPT-4 family: 1 for \p{N}, 3 for \p{N}{1,3}
}

// Rune classes as the patterns see them. Every rune is in exactly one.
const (
	clsOther   uint8 = iota // [^\s\p{L}\p{N}], including U+FFFD for bad bytes
	clsLetter               // \p{L}
	clsNumber               // \p{N}
	clsSpace                // \s other than \r and \n
	clsNewline              // \r or \n
)

// asciiClass is the class of each ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for b := range utf8.RuneSelf {
		t[b] = runeClass(rune(b))
	}
	return t
}()

// runeClass classifies r with Go's Unicode tables, which regexp2 uses too
// (its \s is unicode.IsSpace).
func runeClass(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clsNewline
	case unicode.IsSpace(r):
		return clsSpace
	case unicode.IsLetter(r):
		return clsLetter
	case unicode.IsNumber(r):
		return clsNumber
	}
	return clsOther
}

// classAt returns the class and byte size of the rune starting at s[i].
func classAt(s string, i int) (cls uint8, size int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	return runeClass(r), size
}

func (g *gptSplitter) split(s string, yield func(string)) {
	for i := 0; i < len(s); {
		j := g.next(s, i)
		yield(s[i:j])
		i = j
	}
}

// next returns the end of the match that starts at s[i]; i < len(s). Every
// rune starts a match of one of the alternatives, so matches tile the text.
func (g *gptSplitter) next(s string, i int) int {
	if s[i] == '\'' {
		if n := g.contraction(s[i+1:]); n > 0 {
			return i + 1 + n
		}
	}
	cls, size := classAt(s, i)
	if g.gpt2 {
		return g.nextGPT2(s, i, cls, size)
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if cls == clsLetter {
		return skipClass(s, i+size, clsLetter)
	}
	if (cls == clsOther || cls == clsSpace) && i+size < len(s) {
		if c2, size2 := classAt(s, i+size); c2 == clsLetter {
			return skipClass(s, i+size+size2, clsLetter)
		}
	}
	// \p{N}{1,maxDigits}
	if cls == clsNumber {
		j := i + size
		for k := 1; k < g.maxDigits && j < len(s); k++ {
			c2, size2 := classAt(s, j)
			if c2 != clsNumber {
				break
			}
			j += size2
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	if cls == clsOther || s[i] == ' ' && i+1 < len(s) && otherAt(s, i+1) {
		j := skipClass(s, i+size, clsOther)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	// A whitespace run: \s*[\r\n]+ ends after its last \r or \n;
	// \s+(?!\S) takes it all at the end of the text and all but its last
	// rune before other text; \s+ takes a lone whitespace rune.
	end, lastStart, afterNewline := spaceRun(s, i)
	if afterNewline > 0 {
		return afterNewline
	}
	return spaceMatch(s, i, end, lastStart)
}

// nextGPT2 is next for the GPT-2 pattern, after the contractions.
func (g *gptSplitter) nextGPT2(s string, i int, cls uint8, size int) int {
	// ` ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+`
	if cls != clsSpace && cls != clsNewline {
		return skipClass(s, i+size, cls)
	}
	if s[i] == ' ' && i+1 < len(s) {
		if c2, size2 := classAt(s, i+1); c2 != clsSpace && c2 != clsNewline {
			return skipClass(s, i+1+size2, c2)
		}
	}
	// \s+(?!\S)|\s+
	end, lastStart, _ := spaceRun(s, i)
	return spaceMatch(s, i, end, lastStart)
}

// spaceRun scans the whitespace run that starts at s[i]: it ends at end,
// its last rune starts at lastStart, and afterNewline is the offset after
// its last \r or \n (-1 if it has none).
func spaceRun(s string, i int) (end, lastStart, afterNewline int) {
	end, lastStart, afterNewline = i, i, -1
	for end < len(s) {
		c2, size2 := classAt(s, end)
		if c2 != clsSpace && c2 != clsNewline {
			break
		}
		lastStart = end
		end += size2
		if c2 == clsNewline {
			afterNewline = end
		}
	}
	return end, lastStart, afterNewline
}

// spaceMatch is where `\s+(?!\S)|\s+` ends for the run spaceRun found at
// s[i]: all of it at the end of the text or when it is one rune, else all
// but its last rune (which then leads the next match).
func spaceMatch(s string, i, end, lastStart int) int {
	if end == len(s) || lastStart == i {
		return end
	}
	return lastStart
}

// contraction returns the byte length of the contraction suffix ("s", "ll",
// ...) that rest starts with, or 0 if there is none.
func (g *gptSplitter) contraction(rest string) int {
	if rest == "" {
		return 0
	}
	c := rest[0]
	if g.contractions != caseExact && c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	switch c {
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v', 'l':
		if len(rest) < 2 {
			return 0
		}
		c2 := rest[1]
		if g.contractions != caseExact && c2 >= 'A' && c2 <= 'Z' {
			c2 += 'a' - 'A'
		}
		if c == 'r' && c2 == 'e' || c == 'v' && c2 == 'e' || c == 'l' && c2 == 'l' {
			return 2
		}
	case 0xC5: // U+017F ſ, which (?i:s) matches by case folding
		if g.contractions == caseCaseless && len(rest) >= 2 && rest[1] == 0xBF {
			return 2
		}
	}
	return 0
}

// skipClass returns the end of the run of runes of class cls from s[j].
func skipClass(s string, j int, cls uint8) int {
	for j < len(s) {
		c, size := classAt(s, j)
		if c != cls {
			break
		}
		j += size
	}
	return j
}

// otherAt reports whether the rune at s[j] is of class clsOther.
func otherAt(s string, j int) bool {
	c, _ := classAt(s, j)
	return c == clsOther
}
