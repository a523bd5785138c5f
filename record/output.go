package record

import (
	"compress/flate"
	"hash/maphash"
)

// What the model wrote, scored. Speculative decoding makes tok/s depend
// on what is generated: output that repeats itself is what a drafter
// guesses best, so a benchmark whose answers degenerate (a loop forced on
// by ignore_eos, a random-weight model) measures the drafter, not the
// server. sixpin keeps the answer text of a sample of its requests, scores
// each when it ends, and lets the text go.

// MaxTextBytes bounds the answer text kept of one response (the raw JSON
// string bodies of its content deltas, escapes as written): enough words
// to score, never a whole long answer.
const MaxTextBytes = 16 << 10

// textSampleAll and textSampleEvery are the sample: the first 256
// requests a run sends, then one in 16.
const (
	textSampleAll   = 256
	textSampleEvery = 16
)

// KeepsText reports whether the n-th request a run sends (from 0) keeps
// its answer's text for scoring: a sample bounded in memory and CPU at
// any rate.
func KeepsText(n int64) bool { return n < textSampleAll || n%textSampleEvery == 0 }

// The thresholds of a degenerate answer: at least DegenerateMinWords
// words, and one word sequence repeating over DegenerateRepeatShare of
// them or more (a loop). Prose repeats short phrases over a few percent
// of its words; a model stuck in a loop covers most of its answer.
const (
	DegenerateMinWords    = 32
	DegenerateRepeatShare = 0.5
)

// OutputScore is an answer's text scored: how much one repeated word
// sequence covers, how varied its word pairs are, how well it compresses.
type OutputScore struct {
	// Words is how many words were scored (of the first MaxTextBytes).
	Words int
	// RepeatShare is the share of the words that the longest word
	// sequence occurring twice or more covers, counting its
	// non-overlapping occurrences (capped at 1): ~0.01 for prose, near 1
	// for a loop.
	RepeatShare float64
	// Distinct2 is distinct word pairs ÷ word pairs (1: none repeats).
	Distinct2 float64
	// Compression is the text's bytes ÷ its DEFLATE-compressed bytes:
	// 2–3 for prose, far more for repetition.
	Compression float64
}

// Degenerate reports whether the answer is a loop (see
// DegenerateRepeatShare).
func (s *OutputScore) Degenerate() bool {
	return s != nil && s.Words >= DegenerateMinWords && s.RepeatShare >= DegenerateRepeatShare
}

// ScoreOutput scores text (nil when it holds no word) with a Scorer of
// its own; a collector keeps one Scorer instead.
func ScoreOutput(text []byte) *OutputScore { return new(Scorer).Score(text) }

// Scorer scores answers, reusing its word buffer, maps and DEFLATE writer
// (one is ~1 MB to make) from one answer to the next: it runs once per
// sampled request, never per chunk. Not safe for concurrent use.
type Scorer struct {
	seed  maphash.Seed
	ws    []uint64 // each word's hash
	pairs map[[2]uint64]struct{}
	seen  map[uint64]int
	fw    *flate.Writer
}

// Score scores text (nil when it holds no word).
func (sc *Scorer) Score(text []byte) *OutputScore {
	text = text[:min(len(text), MaxTextBytes)]
	if sc.pairs == nil {
		sc.seed, sc.pairs, sc.seen = maphash.MakeSeed(), map[[2]uint64]struct{}{}, map[uint64]int{}
	}
	ws := sc.ws[:0]
	eachWord(text, func(w []byte) { ws = append(ws, maphash.Bytes(sc.seed, w)) })
	sc.ws = ws
	if len(ws) == 0 {
		return nil
	}
	s := &OutputScore{Words: len(ws), Distinct2: 1}
	if len(ws) > 1 {
		clear(sc.pairs)
		for i := 1; i < len(ws); i++ {
			sc.pairs[[2]uint64{ws[i-1], ws[i]}] = struct{}{}
		}
		s.Distinct2 = float64(len(sc.pairs)) / float64(len(ws)-1)
	}
	if l, at := sc.longestRepeat(ws); l > 0 {
		s.RepeatShare = min(1, float64(l*occurrences(ws, at, l))/float64(len(ws)))
	}
	s.Compression = sc.compression(text)
	return s
}

// eachWord calls fn with each word of text: what lies between white
// space, a JSON string's escaped white space (\n, \t, \r) counted as such.
func eachWord(text []byte, fn func(w []byte)) {
	start := -1
	for i := 0; i < len(text); i++ {
		sep := 0
		switch c := text[i]; {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			sep = 1
		case c == '\\' && i+1 < len(text) && (text[i+1] == 'n' || text[i+1] == 't' || text[i+1] == 'r'):
			sep = 2
		}
		if sep == 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(text[start:i])
			start = -1
		}
		i += sep - 1
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// longestRepeat is the length of the longest word sequence of ws that
// occurs at least twice (occurrences may overlap), and where its first
// occurrence starts: a binary search over the length, each length checked
// by hashing every window of it (Rabin–Karp).
func (sc *Scorer) longestRepeat(ws []uint64) (length, at int) {
	lo, hi := 0, len(ws)-1 // lo repeats (0 trivially); hi+1 cannot
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if i := sc.repeatOf(ws, mid); i >= 0 {
			lo, at = mid, i
		} else {
			hi = mid - 1
		}
	}
	return lo, at
}

// repeatOf is where a word sequence of length l that occurs again first
// starts, or −1 when none of length l does.
func (sc *Scorer) repeatOf(ws []uint64, l int) int {
	const base = 1099511628211
	var h, pow uint64 = 0, 1
	for i := 0; i < l; i++ {
		h = h*base + ws[i]
		pow *= base
	}
	seen := sc.seen
	clear(seen)
	seen[h] = 0
	for i := l; i < len(ws); i++ {
		h = h*base + ws[i] - pow*ws[i-l]
		start := i - l + 1
		if first, ok := seen[h]; ok && equalWords(ws[first:first+l], ws[start:start+l]) {
			return first
		}
		if _, ok := seen[h]; !ok {
			seen[h] = start
		}
	}
	return -1
}

func equalWords(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// occurrences counts the non-overlapping occurrences of ws[at:at+l] in ws.
func occurrences(ws []uint64, at, l int) int {
	n := 0
	for i := 0; i+l <= len(ws); {
		if equalWords(ws[i:i+l], ws[at:at+l]) {
			n++
			i += l
			continue
		}
		i++
	}
	return n
}

// compression is len(text) ÷ its DEFLATE-compressed length.
func (sc *Scorer) compression(text []byte) float64 {
	var out countWriter
	if sc.fw == nil {
		sc.fw, _ = flate.NewWriter(&out, flate.DefaultCompression)
	} else {
		sc.fw.Reset(&out)
	}
	_, _ = sc.fw.Write(text)
	_ = sc.fw.Close()
	if out == 0 {
		return 1
	}
	return float64(len(text)) / float64(out)
}

// countWriter counts what is written to it.
type countWriter int

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
