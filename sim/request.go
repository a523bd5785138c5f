package sim

import (
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// genRequest is a generation request in protocol-neutral terms: what each
// protocol's decoder makes of its body, and what plan decides on.
type genRequest struct {
	model string // as asked; "" for the served model
	// turns is the prompt as messages, which the simulated chat template
	// lays out (see hashTurn); raw, when set instead, is a plain prompt
	// (legacy completions): a BOS token, then its tokens, no template.
	turns []turn
	raw   *string
	// maxTokens caps the output, reasoning included (nil: up to the
	// context window).
	maxTokens *int
	minTokens int
	ignoreEOS bool
	// noReasoning sends every output token as answer; otherwise the
	// first ReasoningShare of them are reasoning, at most
	// reasoningBudget when that is > 0.
	noReasoning     bool
	reasoningBudget int
	stream          bool
	// markedOnly caches the prompt only up to its last cache breakpoint
	// (turn.mark), as Anthropic's cache_control does; otherwise every
	// whole block is cached, as vLLM's automatic prefix caching does.
	markedOnly bool
	// tools is set when the request declares tools or carries tool
	// calls: its content class is tool-calls (see classify).
	tools bool
}

// turn is one message of a prompt: its role and its text parts, in order.
type turn struct {
	role  string
	parts []string
	// mark is 1 + the index of the turn's last part that carries a
	// cache breakpoint; 0 for none.
	mark int
}

// job is what the simulator decided to do with one valid request.
type job struct {
	prompt    int      // prompt tokens
	out       int      // output tokens, reasoning included
	reasoning int      // the first reasoning tokens of out
	hashes    []uint64 // chain hashes of the prompt's cacheable KV blocks, with prefix caching
	finish    string   // "length" or "stop"
	hash      uint64   // of (Seed, prompt text)
	fault     string   // "" or a Fault class
	text      outText  // how its output tokens read
	alpha     float64  // speculative decoding's acceptance rate, 0–1 (SpecDecode.acceptance)
}

// refusalKind is why a request is refused before any output.
type refusalKind int

const (
	refInvalid    refusalKind = iota // 400: the request is malformed
	refContext                       // 400: prompt (+ max tokens) over the context window
	refAuth                          // 401: wrong or missing API key
	refRateLimit                     // 429: a quota is exhausted
	refServer                        // 500: a server error
	refOverloaded                    // overloaded: 503 (OpenAI's protocols), 529 (Anthropic's)
	refClosing                       // 503: the Server is closing
)

// refusal is a refused request in protocol-neutral terms; each protocol
// renders it as its own status and error body.
type refusal struct {
	kind refusalKind
	msg  string // what happened, in the simulator's words
	// For refContext: the prompt, the max tokens asked (-1: none) and
	// the context window, in tokens.
	prompt, maxTokens, limit int
	// For refRateLimit from the limiter: the bucket over its limit and
	// that limit (nil for a simulated fault).
	bucket *bucketKind
	quota  int
}

func invalid(format string, args ...any) *refusal {
	return &refusal{kind: refInvalid, msg: fmt.Sprintf(format, args...)}
}

// Hash salts: independent draws from one request hash.
const (
	saltLength = 0x6c656e677468 // "length"
	saltFault  = 0x6661756c74   // "fault"
	saltWords  = 0x776f726473   // "words"
)

// plan validates g and decides its token counts, length and fault, all
// deterministic in (Seed, prompt text).
func (s *Server) plan(g *genRequest) (job, *refusal) {
	var j job
	h := uint64(fnvOffset)
	h = hashUint64(h, uint64(s.cfg.Seed))
	var bh *blockHasher
	if s.caching {
		bh = newBlockHasher(s.cfg.BlockSize)
	}
	marked := 0 // prompt tokens up to the last cache breakpoint
	if g.raw != nil {
		j.prompt = 1 + s.countTokens(*g.raw)
		if bh != nil {
			bh.add(tokBOS)
			for _, id := range s.encode(*g.raw) {
				bh.add(uint64(id))
			}
		}
		h = hashByte(hashString(h, *g.raw), 0x1c)
	} else {
		for i := range g.turns {
			t := &g.turns[i]
			n, mark := s.hashTurn(bh, t)
			if mark >= 0 {
				marked = j.prompt + mark
			}
			j.prompt += n
			h = hashString(h, t.role)
			h = hashByte(h, 0x1f)
			for k, p := range t.parts {
				if k > 0 {
					h = hashByte(h, 0x1d)
				}
				h = hashString(h, p)
			}
			h = hashByte(h, 0x1e)
		}
		j.prompt += primeTokens
		if bh != nil {
			// The assistant prime is the header of the answer's message,
			// so a next request that carries the answer reuses it too.
			bh.startMessage("assistant")
			bh.header("assistant", primeTokens)
		}
	}
	if bh != nil {
		j.hashes = bh.hashes
		if g.markedOnly {
			j.hashes = j.hashes[:marked/s.cfg.BlockSize]
		}
	}
	j.hash = h

	maxTok := g.maxTokens
	if maxTok != nil && *maxTok < 1 {
		return j, invalid("max_tokens must be at least 1, got %d.", *maxTok)
	}
	if g.minTokens < 0 {
		return j, invalid("min_tokens must be greater than or equal to 0, got %d.", g.minTokens)
	}
	if maxTok != nil && g.minTokens > *maxTok {
		return j, invalid("min_tokens must be less than or equal to max_tokens=%d, got %d.", *maxTok, g.minTokens)
	}
	limit := s.cfg.MaxModelLen
	var capTok int // output tokens allowed
	if maxTok != nil {
		if j.prompt+*maxTok > limit {
			return j, &refusal{kind: refContext, prompt: j.prompt, maxTokens: *maxTok, limit: limit}
		}
		capTok = *maxTok
	} else {
		if j.prompt >= limit {
			return j, &refusal{kind: refContext, prompt: j.prompt, maxTokens: -1, limit: limit}
		}
		capTok = limit - j.prompt
	}

	out := naturalLength(mix(h^saltLength), s.cfg.NaturalOutputTokens)
	natural := out
	if g.ignoreEOS && maxTok != nil {
		out = *maxTok
	}
	out = max(out, g.minTokens)
	j.finish = "stop"
	if out >= capTok {
		out, j.finish = capTok, "length"
	}
	j.out = out
	j.text = outText{hash: h}
	if s.cfg.SpecDecode != nil {
		j.text.class = classify(g)
	}
	if s.cfg.LoopPastEOS && out > natural {
		j.text.loopFrom = max(natural, LoopPhraseTokens)
	}
	if d := s.cfg.SpecDecode; d != nil {
		j.alpha = d.acceptance(j.text.class, j.text.repetitiveness(out))
	}
	if !g.noReasoning {
		j.reasoning = int(math.Round(s.cfg.ReasoningShare * float64(out)))
		if g.reasoningBudget > 0 {
			j.reasoning = min(j.reasoning, g.reasoningBudget)
		}
	}
	j.fault = pickFault(s.faults, unitFloat(mix(h^saltFault)))
	if j.fault == FaultEmpty {
		j.out, j.reasoning, j.finish = 0, 0, "stop"
	}
	return j, nil
}

// primeTokens is the length of the assistant prime the template adds
// after the last message.
const primeTokens = 3

// hashTurn counts one turn's tokens as the simulated template lays them
// out and, with bh (prefix caching), feeds them to it. The template's
// tokens per message are a header of up to primeTokens role tokens before
// the content and a footer after it (ChatML's "<|im_start|>role\n" and
// "<|im_end|>\n"), and the first token of each message is marked, so that
// roles and message boundaries take part in the block hashes. It returns
// the turn's tokens and where its cache breakpoint ends (tokens into the
// turn; -1 for none).
func (s *Server) hashTurn(bh *blockHasher, t *turn) (n, mark int) {
	head := min(s.overhead, primeTokens)
	n, mark = head, -1
	if bh != nil {
		bh.startMessage(t.role)
		bh.header(t.role, head)
	}
	for k, p := range t.parts {
		if bh != nil {
			ids := s.encode(p)
			for _, id := range ids {
				bh.add(uint64(id))
			}
			n += len(ids)
		} else {
			n += s.countTokens(p)
		}
		if k+1 == t.mark {
			mark = n
		}
	}
	if bh != nil {
		bh.footer(s.overhead - head)
	}
	return n + s.overhead - head, mark
}

// naturalLength is a lognormal output length with the given median and
// σ = 0.5, drawn from the 64-bit hash h; at least 1.
func naturalLength(h uint64, median int) int {
	// Box–Muller from two 32-bit halves.
	u1 := (float64(h>>32) + 0.5) / (1 << 32)
	u2 := (float64(h&0xffffffff) + 0.5) / (1 << 32)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return max(1, int(math.Round(float64(median)*math.Exp(0.5*z))))
}

// faultBand is one fault class's share [lo, hi) of [0, 1).
type faultBand struct {
	class  string
	lo, hi float64
}

// faultBands lays the classes with a positive probability end to end on
// [0, 1) in faultClasses order.
func faultBands(f map[string]float64) []faultBand {
	var bands []faultBand
	lo := 0.0
	for _, c := range faultClasses {
		if p := f[c]; p > 0 {
			bands = append(bands, faultBand{c, lo, lo + p})
			lo += p
		}
	}
	return bands
}

func pickFault(bands []faultBand, u float64) string {
	for _, b := range bands {
		if u >= b.lo && u < b.hi {
			return b.class
		}
	}
	return ""
}

// countWords counts whitespace-separated words in s (as strings.Fields
// would) without allocating.
func countWords(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); {
		c := s[i]
		var space bool
		if c < utf8.RuneSelf {
			space = asciiSpace[c]
			i++
		} else {
			r, size := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// FNV-1a, 64 bit, inlined over strings so hashing a long prompt allocates
// nothing.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashUint64(h, v uint64) uint64 {
	for i := 0; i < 8; i++ {
		h = hashByte(h, byte(v>>(8*i)))
	}
	return h
}

// mix is splitmix64's finaliser: it spreads a hash's bits so that salted
// variants of it are independent draws.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps h to [0, 1).
func unitFloat(h uint64) float64 { return float64(h>>11) / (1 << 53) }
