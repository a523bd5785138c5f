package prompt

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// linePool is a content class's counted lines.
type linePool struct {
	opener item   // written first when it fits (zero: none)
	lines  []item // in pool order
	// bySize are the lines sorted by token count, for finishing a text
	// with lines that fit.
	bySize []item
	// err is why the class cannot be built with this tokenizer (nil: it
	// can).
	err error
	// bytesPerToken is the lines' mean length in bytes per token, and
	// maxLineBytes the longest line's (for preallocation).
	bytesPerToken float64
	maxLineBytes  int
}

// newLinePool counts opener and lines with c; lines that add no token are
// dropped (they would not advance a text).
func newLinePool(opener item, lines []item) *linePool {
	p := &linePool{opener: opener}
	var bytes, tokens int
	for _, l := range lines {
		if l.tokens > 0 {
			p.lines = append(p.lines, l)
			bytes, tokens = bytes+len(l.text), tokens+l.tokens
			p.maxLineBytes = max(p.maxLineBytes, len(l.text))
		}
	}
	if tokens > 0 {
		p.bytesPerToken = float64(bytes) / float64(tokens)
	}
	if len(p.lines) < 2 || len(p.lines) > maxPoolLines {
		p.err = fmt.Errorf("%d of its lines add a token with this tokenizer (want 2 to %d)", len(p.lines), maxPoolLines)
	}
	p.bySize = slices.Clone(p.lines)
	slices.SortStableFunc(p.bySize, func(a, b item) int { return a.tokens - b.tokens })
	return p
}

// Supports reports whether the builder can build content c: nil, or why
// not (an unknown class, or a tokenizer that merges across the class's
// lines so that their lengths cannot be built by arithmetic).
func (b *Builder) Supports(c Content) error {
	switch c {
	case Prose, Repetitive:
		return nil
	}
	p := b.pools[c]
	switch {
	case p == nil && c == FromLogs:
		return errors.New("no log lines were given to the prompt builder")
	case p == nil:
		_, err := ParseContent(string(c))
		return err
	}
	return p.err
}

// BuildContent returns text of content c and exactly n tokens (0 for
// n ≤ 0), for the seed; BuildContent(Prose, …) is Build. Like Build's, the
// text is deterministic for (c, seed, n), starts with whitespace so that it
// can follow any built text, and any built text can follow it. A class
// that Supports refuses, or an unknown one, is built as prose.
func (b *Builder) BuildContent(c Content, seed uint64, n int) string {
	if n <= 0 {
		return ""
	}
	var sb strings.Builder
	switch p := b.pools[c]; {
	case c == Repetitive:
		sb.Grow(n * (b.maxItemBytes + 1))
		b.buildRepetitive(&sb, seed, n)
	case p != nil && p.err == nil:
		// The mean with a quarter's margin: a text's lines are the pool's
		// in a seeded order, so its bytes per token stay near the mean.
		sb.Grow(len(p.opener.text) + int(1.25*p.bytesPerToken*float64(n)) + max(p.maxLineBytes, b.maxItemBytes))
		b.buildLines(&sb, p, seed, n)
	default:
		sb.Grow(n * (b.maxItemBytes + 1))
		b.build(&sb, seed, n)
	}
	return sb.String()
}

// buildLines writes p's opener, then p's lines in a seeded shuffle (Fisher
// and Yates', one draw per line: no line repeats before the pool is
// spent, and two seeds share their first k lines one time in about
// len(lines)^k), shuffled again for each pass over the pool; when the
// next line does not fit, lines that do, then one-token words.
func (b *Builder) buildLines(sb *strings.Builder, p *linePool, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 0x736978_70696e))
	left := n
	if p.opener.tokens <= left {
		sb.WriteString(p.opener.text)
		left -= p.opener.tokens
	}
	var perm [maxPoolLines]uint16
	size := len(p.lines)
	for i := range size {
		perm[i] = uint16(i)
	}
	for k := 0; left > 0; k++ {
		if k == size {
			k = 0
		}
		j := k + rng.IntN(size-k)
		perm[k], perm[j] = perm[j], perm[k]
		it := p.lines[perm[k]]
		if it.tokens > left {
			i, _ := slices.BinarySearchFunc(p.bySize, left+1, func(l item, t int) int { return l.tokens - t })
			if i == 0 {
				it = b.ones[rng.IntN(len(b.ones))]
			} else {
				it = p.bySize[rng.IntN(i)]
			}
		}
		sb.WriteString(it.text)
		left -= it.tokens
	}
}

// buildRepetitive draws one sentence of 6–12 words from the seed and
// repeats it to the length, finishing with one-token words.
func (b *Builder) buildRepetitive(sb *strings.Builder, seed uint64, n int) {
	rng := rand.New(rand.NewPCG(seed, 0x736978_70696e))
	phrase := make([]item, 1, 13)
	phrase[0] = b.upper[rng.IntN(len(b.upper))]
	for range 5 + rng.IntN(7) {
		phrase = append(phrase, b.lower[rng.IntN(len(b.lower))])
	}
	phrase = append(phrase, b.ends[0])
	for left := n; left > 0; {
		for _, it := range phrase {
			if left == 0 {
				break
			}
			if it.tokens > left {
				it = b.ones[rng.IntN(len(b.ones))]
			}
			sb.WriteString(it.text)
			left -= it.tokens
		}
	}
}

// countPools counts the line pools' items with c, up to 16 at once.
func countPools(c func(string) (item, error)) (map[Content]*linePool, error) {
	specs := []struct {
		content Content
		opener  string
		lines   []string
	}{
		{Code, "", codePool()},
		{JSON, jsonOpener, jsonPool()},
		{ToolCalls, jsonOpener, toolCallPool()},
	}
	pools := make(map[Content]*linePool, len(specs)+1)
	for _, s := range specs {
		p, err := countLines(c, s.opener, s.lines)
		if err != nil {
			return nil, fmt.Errorf("content %s: %w", s.content, err)
		}
		pools[s.content] = p
	}
	return pools, nil
}

// countLines counts a pool's opener ("": none) and lines with c, up to
// 16 at once.
func countLines(c func(string) (item, error), opener string, lines []string) (*linePool, error) {
	counted := make([]item, len(lines))
	var op item
	g := newGroup()
	if opener != "" {
		g.Go(func() (err error) { op, err = c(opener); return err })
	}
	for i, l := range lines {
		g.Go(func() (err error) { counted[i], err = c(l); return err })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return newLinePool(op, counted), nil
}
