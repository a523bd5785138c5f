package tokenizer

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The item-sum property that sixpin's prompt builder relies on: text made
// of items — words with one leading space (" river", " The") and
// punctuation marks that directly follow a word and are followed by a
// space — has as many tokens as its items have, counted one by one. It
// holds when the pre-tokenizer never joins two items and never splits one,
// which the GPT-4, Qwen2 and o200k patterns guarantee for such text.

// itemMarks are the punctuation marks prompts put between words.
var itemMarks = []string{",", ".", "?", ";", ":"}

// itemWords reads prompt's word list (this package's tests may read its
// file; the packages do not depend on each other) and returns each word
// with a leading space, in lowercase and capitalised.
func itemWords(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile("../prompt/words.txt")
	if err != nil {
		t.Fatalf("read the prompt word list: %v", err)
	}
	var out []string
	for _, w := range strings.Fields(string(data)) {
		r, size := utf8.DecodeRuneInString(w)
		out = append(out, " "+w, " "+string(unicode.ToUpper(r))+w[size:])
	}
	if len(out) == 0 {
		t.Fatal("empty prompt word list")
	}
	return out
}

// randomItems returns a random sequence of n ≥ 1 items: a word first, no
// two marks in a row, and, unless endMark, a word last (so each mark is
// followed by a space).
func randomItems(rng *rand.Rand, words []string, n int, endMark bool) []string {
	items := []string{words[rng.IntN(len(words))]}
	for len(items) < n {
		last := items[len(items)-1]
		canMark := last[0] == ' ' && (len(items) < n-1 || endMark)
		if canMark && rng.IntN(4) == 0 {
			items = append(items, itemMarks[rng.IntN(len(itemMarks))])
		} else {
			items = append(items, words[rng.IntN(len(words))])
		}
	}
	return items
}

// itemSumHolds reports whether tok counts the concatenation of items as
// the sum of their counts.
func itemSumHolds(tok Tokenizer, counts map[string]int, items []string) (whole, sum int) {
	for _, it := range items {
		n, ok := counts[it]
		if !ok {
			n = tok.Count(it)
			counts[it] = n
		}
		sum += n
	}
	return tok.Count(strings.Join(items, "")), sum
}

// shrinkItems returns a shortest window of items on which the property
// still fails.
func shrinkItems(tok Tokenizer, counts map[string]int, items []string) []string {
	for size := 1; size <= len(items); size++ {
		for i := 0; i+size <= len(items); i++ {
			w := items[i : i+size]
			if whole, sum := itemSumHolds(tok, counts, w); whole != sum {
				return w
			}
		}
	}
	return items
}

func TestItemSum(t *testing.T) {
	words := itemWords(t)
	sequences := 3000
	if testing.Short() {
		sequences = 300
	}
	for _, name := range []string{Qwen2, Cl100kBase, O200kBase} {
		for _, endMark := range []bool{false, true} {
			sub := name
			if endMark {
				sub += "_ending_with_a_mark"
			}
			t.Run(sub, func(t *testing.T) {
				tok := mustGet(t, name)
				counts := map[string]int{}
				rng := rand.New(rand.NewPCG(7, 11))
				// Every item alone, then in random sequences.
				for _, w := range words {
					for _, m := range append([]string{""}, itemMarks...) {
						items := []string{w}
						if m != "" {
							items = append(items, m, words[rng.IntN(len(words))])
						}
						if whole, sum := itemSumHolds(tok, counts, items); whole != sum {
							t.Fatalf("%q: %d tokens, items sum to %d", strings.Join(items, ""), whole, sum)
						}
					}
				}
				for range sequences {
					items := randomItems(rng, words, 1+rng.IntN(120), endMark)
					if whole, sum := itemSumHolds(tok, counts, items); whole != sum {
						w := shrinkItems(tok, counts, items)
						whole, sum := itemSumHolds(tok, counts, w)
						t.Fatalf("items %q: %q has %d tokens, items sum to %d", w, strings.Join(w, ""), whole, sum)
					}
				}
			})
		}
	}
}
