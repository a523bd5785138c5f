package tokenizer

import (
	"strings"
	"testing"
)

// benchText returns English prose of about 200,000 Qwen2 tokens: the
// prose_long vector (881 tokens) repeated.
func benchText(b *testing.B) string {
	b.Helper()
	for _, c := range loadVectors(b) {
		if c.Name == "prose_long" {
			n := 200_000/len(c.IDs) + 1
			return strings.Repeat(c.Text+"\n\n", n)
		}
	}
	b.Fatal("no prose_long vector")
	return ""
}

// BenchmarkEncode encodes ~200K tokens of English; tokens/s is the rate.
// The qwen2 piece cache is warm after the first iteration, as in a run
// that encodes many prompts; see BenchmarkEncodeColdCache.
func BenchmarkEncode(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{Qwen2, Cl100kBase, O200kBase} {
		b.Run(name, func(b *testing.B) {
			tok := mustGet(b, name)
			n := 0
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				n = len(tok.Encode(text))
			}
			b.ReportMetric(float64(n), "tokens/op")
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkCount is BenchmarkEncode for Count.
func BenchmarkCount(b *testing.B) {
	text := benchText(b)
	for _, name := range []string{Qwen2, Cl100kBase, O200kBase} {
		b.Run(name, func(b *testing.B) {
			tok := mustGet(b, name)
			n := 0
			for b.Loop() {
				n = tok.Count(text)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkEncodeColdCache encodes with qwen2's piece cache empty each
// time: the first encoding of a text in a process. The repeated prose
// soon fills the cache; the 77,619-token lorem text has more distinct
// words.
func BenchmarkEncodeColdCache(b *testing.B) {
	texts := map[string]string{"prose": benchText(b)}
	for _, c := range loadVectors(b) {
		if c.Name == "lorem_50k" {
			texts["lorem"] = c.Text
		}
	}
	tok := mustGet(b, Qwen2).(*BPE)
	for name, text := range texts {
		b.Run(name, func(b *testing.B) {
			n := 0
			for b.Loop() {
				b.StopTimer()
				cold := tok.withEmptyCache()
				b.StartTimer()
				n = len(cold.Encode(text))
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkQwen2Load is Get("qwen2")'s first-use cost: decompressing and
// parsing the embedded tokenizer.json.
func BenchmarkQwen2Load(b *testing.B) {
	for b.Loop() {
		if _, err := loadQwen2(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplit compares the hand-written Qwen2 pre-tokenizer with
// regexp2 running the same pattern, on the BenchmarkEncode text.
func BenchmarkSplit(b *testing.B) {
	text := benchText(b)
	pattern := gpt4Pattern(contractionsCaseless, `\p{N}`)
	re, err := newRegexSplitter(pattern)
	if err != nil {
		b.Fatal(err)
	}
	for name, sp := range map[string]splitter{"hand-written": knownPatterns[pattern], "regexp2": re} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sp.split(text, func(string) {})
			}
		})
	}
}
