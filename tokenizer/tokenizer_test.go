package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestGet(t *testing.T) {
	for _, name := range []string{Words, Cl100kBase, O200kBase, Qwen2} {
		t.Run(name, func(t *testing.T) {
			tok := mustGet(t, name)
			if tok.Name() != name {
				t.Errorf("Name() = %q, want %q", tok.Name(), name)
			}
			if again := mustGet(t, name); again != tok {
				t.Errorf("second Get returned a different tokenizer")
			}
			_, isDecoder := tok.(Decoder)
			if want := name != Words; isDecoder != want {
				t.Errorf("implements Decoder: %v, want %v", isDecoder, want)
			}
		})
	}
}

func TestGetUnknown(t *testing.T) {
	for _, name := range []string{"", "gpt2", "Qwen2", "hf:"} {
		_, err := Get(name)
		if err == nil {
			t.Fatalf("Get(%q): no error", name)
		}
		if name != "hf:" {
			for _, valid := range Names() {
				if !strings.Contains(err.Error(), valid) {
					t.Errorf("Get(%q) error %q does not list %q", name, err, valid)
				}
			}
		}
	}
}

// TestTiktoken checks the OpenAI encodings on known encodings and round
// trips.
func TestTiktoken(t *testing.T) {
	cases := []struct {
		name, text string
		want       []int
	}{
		{Cl100kBase, "hello world", []int{15339, 1917}},
		{O200kBase, "hello world", []int{24912, 2375}},
		{Cl100kBase, "<|endoftext|>", []int{100257}},
		{O200kBase, "<|endoftext|>", []int{199999}},
		{Cl100kBase, "a<|fim_prefix|>b", []int{64, 100258, 65}},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.text, func(t *testing.T) {
			tok := mustGet(t, c.name)
			if got := tok.Encode(c.text); !slices.Equal(got, c.want) {
				t.Errorf("Encode = %v, want %v", got, c.want)
			}
			if got := tok.Count(c.text); got != len(c.want) {
				t.Errorf("Count = %d, want %d", got, len(c.want))
			}
		})
	}
}

// roundTripTexts are decoded back to themselves by every Decoder.
var roundTripTexts = []string{
	"", "hello world", "Hello, world! It's 2024.\n\n  Indented\ttab\r\nCRLF",
	"中文 日本語 한국어 العربية 👨‍👩‍👧‍👦", "<|endoftext|>first<|endoftext|> second",
	strings.Repeat(" ", 5000), strings.Repeat("a", 20000), strings.Repeat("ab1 ", 3000),
}

func TestRoundTrip(t *testing.T) {
	for _, name := range []string{Cl100kBase, O200kBase, Qwen2} {
		tok := mustGet(t, name)
		for _, text := range roundTripTexts {
			ids := tok.Encode(text)
			if got := tok.(Decoder).Decode(ids); got != text {
				t.Errorf("%s: Decode(Encode(%.30q...)) = %.30q...", name, text, got)
			}
			if n := tok.Count(text); n != len(ids) {
				t.Errorf("%s: Count(%.30q...) = %d, len(Encode) = %d", name, text, n, len(ids))
			}
		}
	}
}

// TestConcurrent encodes from many goroutines at once (run with -race)
// and checks every result against a sequential encoding.
func TestConcurrent(t *testing.T) {
	texts := slices.Clone(roundTripTexts)
	for _, c := range loadVectors(t) {
		if len(c.Text) < 10000 {
			texts = append(texts, c.Text)
		}
	}
	for _, name := range []string{Words, Cl100kBase, O200kBase, Qwen2} {
		t.Run(name, func(t *testing.T) {
			// A fresh BPE, so goroutines race to fill an empty cache.
			tok := mustGet(t, name)
			if b, ok := tok.(*BPE); ok {
				tok = b.withEmptyCache()
			}
			want := make([][]int, len(texts))
			var wg sync.WaitGroup
			errs := make(chan error, 8*len(texts))
			for g := range 8 {
				wg.Go(func() {
					for k := range texts {
						i := (k + g*7) % len(texts)
						ids := tok.Encode(texts[i])
						if n := tok.Count(texts[i]); n != len(ids) {
							errs <- fmt.Errorf("text %d: Count %d != len(Encode) %d", i, n, len(ids))
						}
						if g == 0 {
							want[i] = ids
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			for i, text := range texts {
				if got := tok.Encode(text); !slices.Equal(got, want[i]) {
					t.Errorf("text %d: encodings differ between runs", i)
				}
			}
		})
	}
}

// withEmptyCache returns a copy of t that shares its model but not its
// piece cache.
func (t *BPE) withEmptyCache() *BPE {
	c := *t
	c.cache = newPieceCache()
	return &c
}

// TestInvalidUTF8 checks that every tokenizer encodes an invalid byte as
// U+FFFD, which is what a server receiving the text as JSON sees.
func TestInvalidUTF8(t *testing.T) {
	for _, name := range []string{Cl100kBase, O200kBase, Qwen2} {
		tok := mustGet(t, name)
		for text, replaced := range map[string]string{
			"a\xffb":            "a\ufffdb",
			"\xe2\x82 x\xc5":    "\ufffd\ufffd x\ufffd", // a cut-off "€": two bad bytes
			"<|endoftext|>\xff": "<|endoftext|>\ufffd",
		} {
			want := tok.Encode(replaced)
			if got := tok.Encode(text); !slices.Equal(got, want) {
				t.Errorf("%s: Encode(%q) = %v, want %v (U+FFFD per bad byte)", name, text, got, want)
			}
		}
	}
}
