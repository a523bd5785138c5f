package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// promptCount is prompt.Count as committed when the "words" tokenizer was
// written (sixpin's simulator's count): runs of bytes other than ' ', '\n',
// '\t' and '\r'. It is copied, not imported, so that this package does not
// depend on prompt, which may come to depend on it.
func promptCount(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		space := s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

// TestWordsCount checks that "words" counts as prompt.Count does, so '\v',
// '\f' and U+00A0 are inside words, unlike for strings.Fields.
func TestWordsCount(t *testing.T) {
	tok := mustGet(t, Words)
	parts := []string{"a", "bc", "é", " ", "  ", "\n", "\t", "\r", "\v", "\f", "\u00a0", "\u3000", "x\x00y", "\xff"}
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", " ", "one", " two words ", "a\v b\fc", "x\u00a0y z"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		want := promptCount(s)
		if got := tok.Count(s); got != want {
			t.Fatalf("Count(%q) = %d, prompt.Count = %d", s, got, want)
		}
		if got := len(tok.Encode(s)); got != want {
			t.Fatalf("len(Encode(%q)) = %d, prompt.Count = %d", s, got, want)
		}
	}
}

func TestWordsEncode(t *testing.T) {
	tok := mustGet(t, Words)
	ids := tok.Encode("the cat\tthe\n dog the")
	if len(ids) != 5 || ids[0] != ids[2] || ids[0] != ids[4] || ids[0] == ids[1] {
		t.Errorf("Encode = %v, want 5 ids, equal for equal words", ids)
	}
}
