package prompt

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sixpin/sixpin/tokenizer"
)

// counters are every tokenizer the package is built for: the toy ones
// above and the built-in BPE vocabularies (a test may import tokenizer;
// the package does not).
func counters(t testing.TB) map[string]func(string) (int, error) {
	t.Helper()
	out := map[string]func(string) (int, error){"words-toy": wordCount, "char pairs": charPairs}
	for _, name := range []string{tokenizer.Words, tokenizer.Qwen2, tokenizer.Cl100kBase, tokenizer.O200kBase} {
		tok, err := tokenizer.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = func(s string) (int, error) { return tok.Count(s), nil }
	}
	return out
}

var (
	buildersOnce sync.Once
	builders     map[string]*Builder
	buildersErr  error
)

// allBuilders builds one Builder per counter, once for the package's tests.
func allBuilders(t testing.TB) map[string]*Builder {
	t.Helper()
	cs := counters(t)
	buildersOnce.Do(func() {
		builders = map[string]*Builder{}
		for name, c := range cs {
			b, err := NewBuilder(c)
			if err != nil {
				buildersErr = fmt.Errorf("%s: %w", name, err)
				return
			}
			builders[name] = b
		}
	})
	if buildersErr != nil {
		t.Fatal(buildersErr)
	}
	return builders
}

// Every class is built to the exact length by every tokenizer, alone and
// after any other class's text.
func TestBuildContentExactLength(t *testing.T) {
	cs := counters(t)
	for name, b := range allBuilders(t) {
		count := cs[name]
		for _, class := range Contents() {
			t.Run(fmt.Sprintf("%s/%s", name, class), func(t *testing.T) {
				if err := b.Supports(class); err != nil {
					t.Fatalf("Supports: %v", err)
				}
				for _, n := range []int{1, 2, 3, 17, 200, 1000, 8000} {
					for seed := uint64(0); seed < 3; seed++ {
						text := b.BuildContent(class, seed, n)
						if got, _ := count(text); got != n {
							t.Fatalf("n %d seed %d: %d tokens in %q", n, seed, got, clip(text))
						}
						for _, before := range Contents() {
							head := b.BuildContent(before, seed+100, 50)
							if got, _ := count(head + text); got != 50+n {
								t.Fatalf("n %d seed %d after %s: %d tokens, want %d, in %q", n, seed, before, got, 50+n, clip(head+text))
							}
						}
					}
				}
			})
		}
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:200] + " … " + s[len(s)-200:]
	}
	return s
}

func TestBuildContentDeterministic(t *testing.T) {
	b := builder(t, wordCount)
	for _, class := range Contents() {
		if first, again := b.BuildContent(class, 9, 700), b.BuildContent(class, 9, 700); first != again {
			t.Errorf("%s: same seed gave different text", class)
		}
		if b.BuildContent(class, 9, 700) == b.BuildContent(class, 10, 700) {
			t.Errorf("%s: seeds 9 and 10 gave the same text", class)
		}
		if b.BuildContent(class, 9, 0) != "" {
			t.Errorf("%s: n 0 gave text", class)
		}
	}
	if b.BuildContent(Prose, 4, 900) != b.Build(4, 900) {
		t.Error("BuildContent(Prose) differs from Build")
	}
}

// What each class looks like, at its start.
func TestBuildContentShape(t *testing.T) {
	b := builder(t, wordCount)
	for _, c := range []struct {
		class  Content
		prefix string
		holds  string
	}{
		{Prose, " ", ". "},
		{Code, "\t", "\n\t"},
		{JSON, " [\n  {\"id\": ", `"score": `},
		{ToolCalls, " [\n  {\"id\": \"call_", `"type": "function", "function": {"name": `},
		{Repetitive, " ", ". "},
	} {
		s := b.BuildContent(c.class, 5, 500)
		if !strings.HasPrefix(s, c.prefix) || !strings.Contains(s, c.holds) {
			t.Errorf("%s: %q", c.class, clip(s))
		}
	}
}

func TestParseContent(t *testing.T) {
	for _, c := range Contents() {
		if got, err := ParseContent(string(c)); got != c || err != nil {
			t.Errorf("%s: %q, %v", c, got, err)
		}
	}
	if _, err := ParseContent("poetry"); err == nil || !strings.Contains(err.Error(), "prose, code, json, tool-calls, repetitive") {
		t.Errorf("poetry: %v", err)
	}
}

// A tokenizer that joins lines (here: a newline and the next line's
// indentation take one token off) loses the classes built of lines, not
// the builder.
func TestSupportsRefusesAClassTheTokenizerBreaks(t *testing.T) {
	joinsLines := func(s string) (int, error) {
		return len(strings.Fields(s)) - strings.Count(s, "\n\t"), nil
	}
	b, err := NewBuilder(joinsLines)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Supports(Code); err == nil || !strings.Contains(err.Error(), "merges across its lines") {
		t.Errorf("code: %v", err)
	}
	if err := b.Supports(JSON); err != nil {
		t.Errorf("json: %v", err)
	}
	if err := b.Supports("poetry"); err == nil {
		t.Error("unknown class supported")
	}
}

// BenchmarkBuildContent is BenchmarkBuild per class at 120K tokens.
func BenchmarkBuildContent(b *testing.B) {
	bl := builder(b, wordCount)
	const n = 120_000
	for _, class := range Contents() {
		b.Run(string(class), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				_ = bl.BuildContent(class, uint64(i), n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
		})
	}
}

// Two seeds' prompts differ within their first lines, and a prompt uses
// every line of its pool once before it repeats one.
func TestBuildContentUniqueLines(t *testing.T) {
	b := builder(t, wordCount)
	for _, class := range []Content{Code, JSON, ToolCalls} {
		seen := map[string]uint64{}
		for seed := uint64(0); seed < 5000; seed++ {
			p := b.BuildContent(class, seed, 40)
			if other, dup := seen[p]; dup {
				t.Fatalf("%s: seeds %d and %d share their first 40 tokens", class, other, seed)
			}
			seen[p] = seed
		}
		size := len(b.pools[class].lines)
		lines := strings.SplitAfter(b.BuildContent(class, 1, 20*size), "\n")
		if class != Code {
			lines = lines[1:] // the opener
		}
		once := map[string]bool{}
		for _, l := range lines[:size] {
			if once[l] {
				t.Fatalf("%s: line %q repeats within the first %d lines", class, l, size)
			}
			once[l] = true
		}
	}
}
