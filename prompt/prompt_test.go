package prompt

import (
	"fmt"
	"testing"
)

func TestWordsLengthAndDeterminism(t *testing.T) {
	for _, n := range []int{1, 2, 17, 1000, 120000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a := Words(7, n)
			if got := Count(a); got != n {
				t.Fatalf("Count(Words(7, %d)) = %d", n, got)
			}
			if b := Words(7, n); a != b {
				t.Fatal("same seed gave different text")
			}
			if c := Words(8, n); c == a {
				t.Fatal("different seeds gave the same text")
			}
		})
	}
	if Words(1, 0) != "" || Words(1, -3) != "" {
		t.Fatal("non-positive n must give empty text")
	}
}

func TestWordsUniquePrefixes(t *testing.T) {
	// Prompts of different seeds must differ early, so that no prefix-cache
	// block (16 tokens in vLLM) is shared by accident.
	seen := map[string]uint64{}
	for seed := uint64(0); seed < 5000; seed++ {
		p := Words(seed, 16)
		if other, dup := seen[p]; dup {
			t.Fatalf("seeds %d and %d share their first 16 words", other, seed)
		}
		seen[p] = seed
	}
}

func TestWordsNaturalLooking(t *testing.T) {
	s := Words(3, 2000)
	distinct := map[string]bool{}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			distinct[s[start:i]] = true
			start = i + 1
		}
	}
	if len(distinct) < 500 {
		t.Fatalf("only %d distinct words in 2000: not natural-looking", len(distinct))
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"", 0}, {"   ", 0}, {"a", 1}, {" a  b\n c\t", 3}, {"one two", 2}} {
		if got := Count(c.in); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

// BenchmarkWords200K measures building a 200,000-token prompt.
func BenchmarkWords200K(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = Words(uint64(i), 200_000)
	}
}
