package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// splitAll returns the pieces sp cuts s into.
func splitAll(sp splitter, s string) []string {
	var out []string
	sp.split(s, func(p string) { out = append(out, p) })
	return out
}

// splitterPairs returns, for each pattern gptSplitter implements, the hand
// written splitter and regexp2's, which defines the right answer.
func splitterPairs(t testing.TB) map[string][2]splitter {
	t.Helper()
	pairs := map[string][2]splitter{}
	for pattern, g := range knownPatterns {
		re, err := newRegexSplitter(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pairs[pattern] = [2]splitter{g, re}
	}
	return pairs
}

// checkSplit fails t if the hand-written splitter and regexp2 disagree on s.
func checkSplit(t testing.TB, pattern string, pair [2]splitter, s string) {
	t.Helper()
	got, want := splitAll(pair[0], s), splitAll(pair[1], s)
	if !slices.Equal(got, want) {
		t.Fatalf("pattern %s\ntext %q\nhand-written %q\nregexp2      %q", pattern, s, got, want)
	}
	if strings.Join(got, "") != s {
		t.Fatalf("pieces of %q do not cover it: %q", s, got)
	}
}

// splitCorpus holds texts that exercise each alternative of the patterns.
var splitCorpus = []string{
	"", "a", " ", "  ", "\n", "Hello world", "Hello, world!", "I'm here, they'RE not; it'S ok'LL'd",
	"'s 's 'sound 'ſ 'ſx 'Ss x'S", "don't can't won't y'all ''s", "a  b   c    d",
	"line1\nline2\r\n\r\nline3\n\n\n  x", "  \n  x", " \n", "\t\tx", "\t(x", " (x", "((x", "..x",
	"x  ", "x \n", "x\n ", "  leading", "trailing  ", "12345678 9 ١٢٣٤ ²³ ⅫⅪ", " 123 x1y22z333",
	"\u00a0x \u00a0 \u3000x\u3000\u3000y", "a\u2028b\u2029c\u0085d", "e\u0301 café", "中文字符 和 English",
	"👋🏽 world 🌍!", "\xff\xfe bad \xc5 \xe2\x82 x\xe2\x82\xacy", "$$$\n\n", "!!!\r\n\r\nx", "?\n \n",
	"foo_bar-baz.qux", "\v\fx", "  \t \n \t  y", "a'", "'", "''", "'\n", "\u017f'\u017f",
}

func TestSplittersMatchRegexp2(t *testing.T) {
	pairs := splitterPairs(t)
	for pattern, pair := range pairs {
		for _, s := range splitCorpus {
			checkSplit(t, pattern, pair, s)
		}
	}
}

// splitAlphabet is what random texts are made of: each pattern class,
// the contraction letters in both cases, ſ, Unicode spaces and numbers,
// marks, and invalid UTF-8.
var splitAlphabet = []string{
	"a", "b", "s", "t", "r", "e", "v", "m", "l", "d", "S", "T", "R", "E", "V", "M", "L", "D", "X",
	"0", "7", "'", "'", "'", " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f",
	".", ",", "!", "?", "(", ")", "-", "_", "\"", "/", "$",
	"\u00a0", "\u3000", "\u2028", "\u0085", "\u017f", "\u212a", "é", "e\u0301", "\u0301", "\u200d",
	"中", "文", "²", "Ⅻ", "٣", "👋", "🏽", "\ufffd", "\xff", "\xc5", "\xe2\x82", "\xf0\x9f",
}

func randomText(rng *rand.Rand, maxParts int) string {
	var b strings.Builder
	for range rng.IntN(maxParts + 1) {
		b.WriteString(splitAlphabet[rng.IntN(len(splitAlphabet))])
	}
	return b.String()
}

func TestSplittersMatchRegexp2Random(t *testing.T) {
	pairs := splitterPairs(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		s := randomText(rng, 40)
		for pattern, pair := range pairs {
			checkSplit(t, pattern, pair, s)
		}
	}
}

// FuzzSplitters checks the hand-written splitters against regexp2 on any
// text: go test -fuzz FuzzSplitters ./tokenizer/
func FuzzSplitters(f *testing.F) {
	for _, s := range splitCorpus {
		f.Add(s)
	}
	pairs := splitterPairs(f)
	f.Fuzz(func(t *testing.T, s string) {
		for pattern, pair := range pairs {
			checkSplit(t, pattern, pair, s)
		}
	})
}

func TestRegexSplitterKeepsGaps(t *testing.T) {
	sp, err := newRegexSplitter(`\p{N}+`)
	if err != nil {
		t.Fatal(err)
	}
	got := splitAll(sp, "ab12cd345")
	want := []string{"ab", "12", "cd", "345"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
