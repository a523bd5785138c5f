package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// chatRequest is the part of an OpenAI chat-completions request the
// simulator reads; other fields are ignored.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	Stream              bool          `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens int  `json:"min_tokens"`
}

type chatMessage struct {
	Role    string         `json:"role"`
	Content messageContent `json:"content"`
}

// messageContent is a message's text: a JSON string, null, or an array of
// parts whose "text" parts are joined with newlines (other parts, such as
// images, are ignored).
type messageContent string

func (c *messageContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = ""
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = messageContent(s)
		return nil
	case b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var sb strings.Builder
		for _, p := range parts {
			if p.Type != "text" {
				continue
			}
			if sb.Len() > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(p.Text)
		}
		*c = messageContent(sb.String())
		return nil
	}
	return fmt.Errorf("content must be a string or an array of parts, got %.20s", b)
}

// job is what the simulator decided to do with one valid request.
type job struct {
	prompt    int      // prompt tokens
	out       int      // output tokens, reasoning included
	reasoning int      // the first reasoning tokens of out
	hashes    []uint64 // chain hashes of the prompt's full KV blocks, with prefix caching
	finish    string   // "length" or "stop"
	hash      uint64   // of (Seed, prompt text)
	fault     string   // "" or a Fault class
}

// apiError is a refused request: its status and JSON body.
type apiError struct {
	status int
	body   []byte
}

// openAIError is the {"error":{...}} body OpenAI returns.
func openAIError(status int, typ, msg string) *apiError {
	type inner struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	}
	b, _ := json.Marshal(struct {
		Error inner `json:"error"`
	}{inner{msg, typ, nil}})
	return &apiError{status, b}
}

// vllmError is the flat {"object":"error",...} body vLLM returns.
func vllmError(status int, typ, msg string) *apiError {
	b, _ := json.Marshal(struct {
		Object  string  `json:"object"`
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}{"error", msg, typ, nil, status})
	return &apiError{status, b}
}

// Hash salts: independent draws from one request hash.
const (
	saltLength = 0x6c656e677468 // "length"
	saltFault  = 0x6661756c74   // "fault"
	saltWords  = 0x776f726473   // "words"
)

// plan validates req and decides its token counts, length and fault, all
// deterministic in (Seed, prompt text).
func (s *Server) plan(req *chatRequest) (job, *apiError) {
	var j job
	h := uint64(fnvOffset)
	h = hashUint64(h, uint64(s.cfg.Seed))
	var bh *blockHasher
	if s.caching {
		bh = newBlockHasher(s.cfg.BlockSize)
	}
	j.prompt = primeTokens
	for i := range req.Messages {
		m := &req.Messages[i]
		if bh != nil {
			j.prompt += s.hashMessage(bh, m) + s.overhead
		} else {
			j.prompt += s.countTokens(string(m.Content)) + s.overhead
		}
		h = hashString(h, m.Role)
		h = hashByte(h, 0x1f)
		h = hashString(h, string(m.Content))
		h = hashByte(h, 0x1e)
	}
	if bh != nil {
		// The assistant prime is the header of the answer's message, so a
		// next request that carries the answer reuses it too.
		bh.startMessage("assistant")
		bh.header("assistant", primeTokens)
		j.hashes = bh.hashes
	}
	j.hash = h

	maxTok := req.MaxTokens
	if req.MaxCompletionTokens != nil {
		maxTok = req.MaxCompletionTokens
	}
	if maxTok != nil && *maxTok < 1 {
		return j, openAIError(400, "invalid_request_error", fmt.Sprintf("max_tokens must be at least 1, got %d.", *maxTok))
	}
	if req.MinTokens < 0 {
		return j, openAIError(400, "invalid_request_error", fmt.Sprintf("min_tokens must be greater than or equal to 0, got %d.", req.MinTokens))
	}
	if maxTok != nil && req.MinTokens > *maxTok {
		return j, openAIError(400, "invalid_request_error", fmt.Sprintf("min_tokens must be less than or equal to max_tokens=%d, got %d.", *maxTok, req.MinTokens))
	}
	limit := s.cfg.MaxModelLen
	var capTok int // output tokens allowed
	if maxTok != nil {
		if j.prompt+*maxTok > limit {
			return j, vllmError(400, "BadRequestError", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				limit, j.prompt+*maxTok, j.prompt, *maxTok))
		}
		capTok = *maxTok
	} else {
		if j.prompt >= limit {
			return j, vllmError(400, "BadRequestError", fmt.Sprintf(
				"This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.",
				limit, j.prompt))
		}
		capTok = limit - j.prompt
	}

	out := naturalLength(mix(h^saltLength), s.cfg.NaturalOutputTokens)
	if req.IgnoreEOS && maxTok != nil {
		out = *maxTok
	}
	out = max(out, req.MinTokens)
	j.finish = "stop"
	if out >= capTok {
		out, j.finish = capTok, "length"
	}
	j.out = out
	j.reasoning = int(math.Round(s.cfg.ReasoningShare * float64(out)))
	j.fault = pickFault(s.faults, unitFloat(mix(h^saltFault)))
	if j.fault == FaultEmpty {
		j.out, j.reasoning, j.finish = 0, 0, "stop"
	}
	return j, nil
}

// primeTokens is the length of the assistant prime the template adds
// after the last message.
const primeTokens = 3

// hashMessage feeds one message's tokens, as the simulated template lays
// them out, to bh and returns its content tokens. The template's tokens
// per message are a header of up to primeTokens role tokens before the
// content and a footer after it (ChatML's "<|im_start|>role\n" and
// "<|im_end|>\n"), and the first token of each message is marked, so
// that roles and message boundaries take part in the block hashes.
func (s *Server) hashMessage(bh *blockHasher, m *chatMessage) int {
	head := min(s.overhead, primeTokens)
	bh.startMessage(m.Role)
	bh.header(m.Role, head)
	ids := s.encode(string(m.Content))
	for _, id := range ids {
		bh.add(uint64(id))
	}
	bh.footer(s.overhead - head)
	return len(ids)
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
