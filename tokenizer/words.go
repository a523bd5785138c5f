package tokenizer

// words is sixpin's word-level count: one token per run of bytes other
// than ' ', '\n', '\t' and '\r', exactly as prompt.Count counts.
type words struct{}

func (words) Name() string { return "words" }

// Encode returns one id per word: the word's 32-bit FNV-1a hash with the
// top bit cleared, so equal words have equal ids (different words almost
// always differ). The ids cannot be decoded.
func (words) Encode(text string) []int {
	var ids []int
	forEachWord(text, func(w string) {
		h := uint32(2166136261) // FNV-1a
		for i := 0; i < len(w); i++ {
			h ^= uint32(w[i])
			h *= 16777619
		}
		ids = append(ids, int(h&0x7fffffff))
	})
	return ids
}

// Count returns the number of words in text.
func (words) Count(text string) int {
	n, in := 0, false
	for i := 0; i < len(text); i++ {
		space := isWordSpace(text[i])
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

func isWordSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// forEachWord calls yield with each word of text.
func forEachWord(text string, yield func(string)) {
	start := -1
	for i := 0; i < len(text); i++ {
		if isWordSpace(text[i]) {
			if start >= 0 {
				yield(text[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		yield(text[start:])
	}
}
