package tokenizer

import (
	"fmt"
	"strings"

	tiktoken "github.com/tiktoken-go/tokenizer"
)

// tiktokenSpecials are the special tokens of each tiktoken encoding, which
// github.com/tiktoken-go/tokenizer leaves to its callers.
var tiktokenSpecials = map[tiktoken.Encoding][]addedToken{
	tiktoken.Cl100kBase: {
		{content: "<|endoftext|>", id: 100257},
		{content: "<|fim_prefix|>", id: 100258},
		{content: "<|fim_middle|>", id: 100259},
		{content: "<|fim_suffix|>", id: 100260},
		{content: "<|endofprompt|>", id: 100276},
	},
	tiktoken.O200kBase: {
		{content: "<|endoftext|>", id: 199999},
		{content: "<|endofprompt|>", id: 200018},
	},
}

// tiktokenizer wraps an OpenAI tiktoken encoding, whose vocabulary
// github.com/tiktoken-go/tokenizer embeds. Its codec is safe for concurrent
// use as long as nobody calls SetErrorMode, which this package never does.
// The codec splits text with regexp2, which is slow (~1.4M tokens/s on
// English, BenchmarkEncode) and quadratic on some whitespace: 100 KB of
// " \n" repeated takes seconds.
type tiktokenizer struct {
	name     string
	codec    tiktoken.Codec
	specials *addedMatcher
	special  map[int]string // special token text by id, for Decode
}

func newTiktoken(enc tiktoken.Encoding) (*tiktokenizer, error) {
	c, err := tiktoken.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %q: %w", enc, err)
	}
	t := &tiktokenizer{name: string(enc), codec: c, special: map[int]string{}}
	t.specials = newAddedMatcher(tiktokenSpecials[enc])
	for _, s := range tiktokenSpecials[enc] {
		t.special[s.id] = s.content
	}
	return t, nil
}

func (t *tiktokenizer) Name() string { return t.name }

// Encode returns the ids of text; special tokens such as <|endoftext|> in
// it are recognised, and each invalid UTF-8 byte is encoded as U+FFFD.
func (t *tiktokenizer) Encode(text string) []int {
	ids := make([]int, 0, len(text)/4+4)
	t.specials.segments(text, func(seg string, id int) {
		if id >= 0 {
			ids = append(ids, id)
			return
		}
		// In its default error mode the codec fails only if regexp2
		// does, which the encodings' generated matchers do not.
		u, _, _ := t.codec.Encode(seg)
		for _, v := range u {
			ids = append(ids, int(v))
		}
	})
	return ids
}

func (t *tiktokenizer) Count(text string) int {
	n := 0
	t.specials.segments(text, func(seg string, id int) {
		if id >= 0 {
			n++
			return
		}
		c, _ := t.codec.Count(seg)
		n += c
	})
	return n
}

// Decode returns the text of ids; unknown ids are skipped.
func (t *tiktokenizer) Decode(ids []int) string {
	var b strings.Builder
	run := make([]uint, 0, len(ids))
	flush := func() {
		if s, err := t.codec.Decode(run); err == nil {
			b.WriteString(s)
		} else { // an unknown id: decode one by one, skipping it
			for _, id := range run {
				if s, err := t.codec.Decode([]uint{id}); err == nil {
					b.WriteString(s)
				}
			}
		}
		run = run[:0]
	}
	for _, id := range ids {
		if s, ok := t.special[id]; ok {
			flush()
			b.WriteString(s)
			continue
		}
		if id >= 0 {
			run = append(run, uint(id))
		}
	}
	flush()
	return b.String()
}
