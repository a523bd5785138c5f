// Package prompt synthesises request prompts of a given length in tokens:
// deterministic for a seed, unique per seed, and cheap (linear in length).
//
// This first synthesiser draws from a list of 903 common English words, each
// of which is a single token (with its leading space) in the Qwen2, Llama 3
// and OpenAI tiktoken vocabularies, so a prompt of N words is N tokens on
// those tokenizers up to the first word; sixpin's simulator counts one
// token per word. Exact counts by a model's own tokenizer come later.
package prompt

import (
	_ "embed"
	"math/rand/v2"
	"strings"
)

//go:embed words.txt
var wordsText string

// words is the vocabulary; each entry is one token with a leading space.
var words = strings.Fields(wordsText)

// maxWordLen bounds the bytes one word takes (for preallocation).
const maxWordLen = 11

// Words returns n words of text (n tokens by sixpin's word-level count),
// chosen by a PCG generator seeded with seed. The same (seed, n) always gives
// the same text; different seeds give different text from the first word on,
// so no server prefix cache can serve one request from another's prompt.
// n ≤ 0 gives "".
func Words(seed uint64, n int) string {
	if n <= 0 {
		return ""
	}
	rng := rand.New(rand.NewPCG(seed, 0x736978_70696e)) // "sixpin"
	var b strings.Builder
	b.Grow(n * (maxWordLen + 1))
	nw := uint32(len(words))
	b.WriteString(words[rng.Uint32N(nw)])
	for i := 1; i < n; i++ {
		b.WriteByte(' ')
		b.WriteString(words[rng.Uint32N(nw)])
	}
	return b.String()
}

// Count returns the number of words in s: the token count of a prompt made
// by Words, and the simulator's count of any text.
func Count(s string) int {
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
