package prompt

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// wordCount counts whitespace-separated words: sixpin's simulator's count.
func wordCount(s string) (int, error) { return len(strings.Fields(s)), nil }

// charPairs is a toy tokenizer that still has the sum property: per
// space-separated field, one token per two letters (rounded up) plus one
// for a punctuation mark.
func charPairs(s string) (int, error) {
	n := 0
	for _, f := range strings.Fields(s) {
		letters := strings.TrimRightFunc(f, unicode.IsPunct)
		n += (len(letters) + 1) / 2
		if len(letters) < len(f) {
			n++
		}
	}
	return n, nil
}

func builder(t testing.TB, count func(string) (int, error)) *Builder {
	t.Helper()
	b, err := NewBuilder(count)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBuildExactLength(t *testing.T) {
	for name, count := range map[string]func(string) (int, error){"words": wordCount, "char pairs": charPairs} {
		b := builder(t, count)
		for _, n := range []int{1, 2, 3, 17, 1000, 8000, 120000} {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				for seed := uint64(0); seed < 5; seed++ {
					text := b.Build(seed, n)
					if got, _ := count(text); got != n {
						t.Fatalf("seed %d: %d tokens, want %d", seed, got, n)
					}
				}
			})
		}
	}
}

func TestBuildDeterministicAndUnique(t *testing.T) {
	b := builder(t, wordCount)
	if first, again := b.Build(7, 500), b.Build(7, 500); first != again {
		t.Fatal("same seed gave different text")
	}
	seen := map[string]uint64{}
	for seed := uint64(0); seed < 5000; seed++ {
		p := b.Build(seed, 16)
		if other, dup := seen[p]; dup {
			t.Fatalf("seeds %d and %d share their first 16 tokens", other, seed)
		}
		seen[p] = seed
	}
	if b.Build(1, 0) != "" || b.Build(1, -3) != "" {
		t.Fatal("non-positive n must give empty text")
	}
}

func TestBuildNaturalLooking(t *testing.T) {
	b := builder(t, wordCount)
	s := b.Build(3, 2000)
	if !strings.HasPrefix(s, " ") || !unicode.IsUpper(rune(s[1])) {
		t.Errorf("text must start with a space and a capital: %q", s[:20])
	}
	distinct := map[string]bool{}
	for _, w := range strings.Fields(s) {
		distinct[strings.Trim(strings.ToLower(w), ",.?;:")] = true
	}
	if len(distinct) < 500 {
		t.Errorf("only %d distinct words in 2000: not natural-looking", len(distinct))
	}
	sentences := strings.Count(s, ".") + strings.Count(s, "?")
	if sentences < 100 || sentences > 400 {
		t.Errorf("%d sentences in 2000 words", sentences)
	}
	if strings.Contains(s, "  ") || strings.Contains(s, ",,") || strings.Contains(s, " ,") {
		t.Errorf("malformed spacing or punctuation in %q", s)
	}
}

// A prompt built from two parts counts as the sum of the parts: shared
// prefixes and unique tails can be concatenated.
func TestConcatenationAddsUp(t *testing.T) {
	b := builder(t, charPairs)
	text := b.Build(1, 300) + b.Build(2, 700)
	if got, _ := charPairs(text); got != 1000 {
		t.Fatalf("prefix + tail = %d tokens, want 1000", got)
	}
}

func TestNewBuilderRejectsBrokenTokenizers(t *testing.T) {
	// A tokenizer whose long texts count less than their items breaks the
	// sum (as one that merged across words would).
	capped := func(s string) (int, error) { return min(len(strings.Fields(s)), 30), nil }
	if _, err := NewBuilder(capped); err == nil || !strings.Contains(err.Error(), "merges across words") {
		t.Errorf("capped tokenizer: %v", err)
	}
	// No one-token word at all.
	if _, err := NewBuilder(func(s string) (int, error) { return 2 * len(strings.Fields(s)), nil }); err == nil || !strings.Contains(err.Error(), "one-token") {
		t.Errorf("two tokens per word: %v", err)
	}
	if _, err := NewBuilder(func(string) (int, error) { return 0, fmt.Errorf("server down") }); err == nil || !strings.Contains(err.Error(), "server down") {
		t.Errorf("failing counter: %v", err)
	}
}

// BenchmarkBuild measures synthesis at the sizes (8K, 120K, 200K
// tokens); it must stay linear and under 50 ms at 200K.
func BenchmarkBuild(b *testing.B) {
	bl := builder(b, wordCount)
	for _, n := range []int{8_000, 120_000, 200_000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = bl.Build(uint64(i), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}
