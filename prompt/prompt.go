// Package prompt synthesises request prompts of an exact length in tokens,
// by any tokenizer.
//
// A prompt is deterministic for a seed, unique per seed from the
// first token, natural-looking, and linear in the length (no re-tokenising).
//
// The text is made of items that a byte-level BPE pre-tokenizer (GPT-4,
// Qwen2, Llama 3 and o200k patterns alike) never merges across: a word with
// one leading space (" river", " The") or a punctuation mark that follows a
// word and is followed by a space (","). A prompt's token count is then the
// sum of its items' counts, so a Builder counts each of its ~1,800 items
// once, with the model's tokenizer, and afterwards builds any length by
// arithmetic. NewBuilder checks that sum property on a sample before use.
//
// That is prose, Build's text. BuildContent builds the other content
// classes (Code, JSON, ToolCalls, Repetitive) the same way: from lines
// that start with whitespace and end with a newline, which no such
// pre-tokenizer joins either, each counted once (see content.go); and
// FromLogs, lines of the user's own agent logs made the same shape
// (LogLines, WithLogs).
package prompt

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"
)

//go:embed words.txt
var wordsText string

// words is the vocabulary: 903 common English words, each a single token
// with its leading space in the Qwen2 vocabulary (and, in practice, in
// every modern English-trained vocabulary).
var words = strings.Fields(wordsText)

// Punctuation marks used between words.
var marks = []string{",", ".", "?", ";", ":"}

// item is one piece of prompt text and its token count.
type item struct {
	text   string
	tokens int
}

// Builder builds prompts of exact token lengths for one tokenizer. It is
// immutable after NewBuilder and safe for concurrent use.
type Builder struct {
	lower, upper []item
	comma        item // ","; "." and "?" are in ends
	ends         []item
	semis        []item // ";", ":"
	// ones are lowercase items of exactly one token: they finish a prompt
	// exactly whatever the remaining count.
	ones []item
	// maxItemBytes bounds an item's length (for preallocation).
	maxItemBytes int
	// pools are the line-built content classes' lines (code, json,
	// tool-calls); prose and repetitive are built from the words above.
	pools map[Content]*linePool
}

// newGroup is an errgroup counting up to 16 items at once (a server's
// /tokenize answers one text per request).
func newGroup() *errgroup.Group {
	g := &errgroup.Group{}
	g.SetLimit(16)
	return g
}

// Option configures NewBuilder.
type Option func(*options)

type options struct{ logs *LogLines }

// WithLogs gives the builder the from-logs class's lines: NewBuilder
// counts each once, like the other classes' lines. Without it (or with no
// lines) FromLogs is not supported.
func WithLogs(l *LogLines) Option { return func(o *options) { o.logs = l } }

// NewBuilder counts every item with count (a tokenizer's Count, or a
// server's /tokenize; about 1,800 calls, up to 16 at once, so count must be
// safe for concurrent use) and verifies on samples up to 2,000 tokens that
// the count of the whole equals the sum of its items. It fails when the tokenizer
// breaks that property or has no one-token word.
func NewBuilder(count func(text string) (int, error), opts ...Option) (*Builder, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	b := &Builder{}
	// Items are counted in context, after an anchor word: what an item adds
	// to a text is what matters (a word-level count gives "," one token
	// alone but none after a word).
	const anchor = " the"
	base, err := count(anchor)
	if err != nil {
		return nil, fmt.Errorf("count %q: %w", anchor, err)
	}
	c := func(s string) (item, error) {
		n, err := count(anchor + s)
		if err != nil {
			return item{}, fmt.Errorf("count %q: %w", s, err)
		}
		n -= base
		if n < 0 {
			return item{}, fmt.Errorf("count %q: adds a negative count %d", s, n)
		}
		return item{s, n}, nil
	}
	// Count every item, 16 at a time (a server's /tokenize answers one
	// text per request).
	b.lower, b.upper = make([]item, len(words)), make([]item, len(words))
	markItems := make([]item, len(marks))
	g := newGroup()
	for i, w := range words {
		g.Go(func() (err error) {
			r, size := utf8.DecodeRuneInString(w)
			if b.lower[i], err = c(" " + w); err != nil {
				return err
			}
			b.upper[i], err = c(" " + string(unicode.ToUpper(r)) + w[size:])
			return err
		})
	}
	for i, m := range marks {
		g.Go(func() (err error) {
			markItems[i], err = c(m)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, it := range b.lower {
		b.maxItemBytes = max(b.maxItemBytes, len(it.text)+1)
		if it.tokens == 1 {
			b.ones = append(b.ones, it)
		}
	}
	for i, m := range marks {
		switch m {
		case ",":
			b.comma = markItems[i]
		case ".", "?":
			b.ends = append(b.ends, markItems[i])
		default:
			b.semis = append(b.semis, markItems[i])
		}
	}
	if len(b.ones) == 0 {
		return nil, errors.New("the tokenizer has no one-token word in sixpin's vocabulary: exact prompt lengths are impossible")
	}
	if b.pools, err = countPools(c); err != nil {
		return nil, err
	}
	classes := Contents()
	if o.logs != nil {
		p, err := countLines(c, "", o.logs.Lines())
		if err != nil {
			return nil, fmt.Errorf("content %s: %w", FromLogs, err)
		}
		b.pools[FromLogs] = p
		classes = append(classes, FromLogs)
	}
	// The sum property, checked on a sample of each class: prose's failure
	// fails the builder; another class's only that class (see Supports).
	for _, class := range classes {
		if p := b.pools[class]; p != nil && p.err != nil {
			continue
		}
		for _, n := range []int{1, 37, 2000} {
			text := b.BuildContent(class, 0x5eed, n)
			got, err := count(text)
			if err != nil {
				return nil, fmt.Errorf("verify prompt synthesis: %w", err)
			}
			if got == n {
				continue
			}
			if b.pools[class] == nil {
				return nil, fmt.Errorf("verify prompt synthesis: a %d-token %s prompt counts %d tokens: this tokenizer merges across words, so lengths cannot be built by arithmetic", n, class, got)
			}
			b.pools[class].err = fmt.Errorf("a %d-token %s prompt counts %d tokens: this tokenizer merges across its lines, so lengths cannot be built by arithmetic", n, class, got)
			break
		}
	}
	return b, nil
}

// Build returns text of exactly n tokens (0 for n ≤ 0), for the seed. The
// same (seed, n) always gives the same text; different seeds differ from
// the first word on, so no prefix cache can serve one request from
// another's prompt. The text is sentences of 6–18 words with commas, and
// starts with a space (" The …"), so it can follow any other built text
// without changing either's count.
func (b *Builder) Build(seed uint64, n int) string {
	if n <= 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(n * (b.maxItemBytes + 1))
	b.build(&sb, seed, n)
	return sb.String()
}

func (b *Builder) build(sb *strings.Builder, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 0x736978_70696e)) // "sixpin"
	left := n
	put := func(it item) {
		if it.tokens > left {
			it = b.ones[rng.IntN(len(b.ones))]
		}
		sb.WriteString(it.text)
		left -= it.tokens
	}
	for left > 0 {
		sentence := 6 + rng.IntN(13)
		put(b.upper[rng.IntN(len(b.upper))])
		for w := 1; w < sentence && left > 0; w++ {
			if w > 1 && rng.IntN(10) == 0 && left > 0 {
				if rng.IntN(4) == 0 {
					put(b.semis[rng.IntN(len(b.semis))])
				} else {
					put(b.comma)
				}
				if left == 0 {
					break
				}
			}
			put(b.lower[rng.IntN(len(b.lower))])
		}
		if left > 0 {
			put(b.ends[rng.IntN(len(b.ends))])
		}
	}
}
