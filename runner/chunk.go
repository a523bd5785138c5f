package runner

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/sixpin/sixpin/results"
)

// chunk is what sixpin reads from one streamed chat-completion chunk. Byte
// lengths are of the raw JSON string bodies (escapes counted as written);
// they only apportion token counts across chunks, so that is close enough.
type chunk struct {
	contentBytes   int
	reasoningBytes int
	toolBytes      int  // tool calls' names and arguments
	toolCall       bool // a delta carried tool_calls
	finished       bool // some choice carried a non-null finish_reason
	finishReason   []byte
	hasUsage       bool
	usage          usage
	model          []byte // aliases the input line
	sentUnixNS     int64  // server send stamp (sixpin's simulator); 0 if absent
	// hasError marks an in-band error event: an "error" member (OpenAI),
	// or "object": "error" (vLLM); errMessage is its message's raw JSON
	// string body (error.message, or the top-level message), if any.
	hasError   bool
	errMessage []byte
	message    []byte // a top-level "message" string
}

// usage is the OpenAI usage object, with the detail fields sixpin needs.
type usage struct {
	promptTokens     int
	completionTokens int
	cachedTokens     int
	reasoningTokens  int
}

// results converts u to the record's form.
func (u usage) results() results.Usage {
	return results.Usage{
		PromptTokens:     u.promptTokens,
		CompletionTokens: u.completionTokens,
		ReasoningTokens:  u.reasoningTokens,
		CachedTokens:     u.cachedTokens,
	}
}

// errorText is an error event's message, decoded, or else the whole
// event (raw is the event's data). It allocates: error path only.
func (c *chunk) errorText(raw []byte) string {
	msg := c.errMessage
	if msg == nil {
		msg = c.message
	}
	var s string
	if msg != nil && json.Unmarshal([]byte(`"`+string(msg)+`"`), &s) == nil && s != "" {
		return s
	}
	return string(raw)
}

var errMalformed = errors.New("malformed JSON")

// parseChunk reads one SSE data payload into c. It validates the whole JSON
// value (a malformed chunk is an error, not a partial read) and allocates
// nothing: the per-chunk client path runs millions of times per run.
func parseChunk(b []byte, c *chunk) error {
	*c = chunk{}
	p := parser{b: b}
	p.ws()
	if !p.object(p.topMember, c) {
		return errMalformed
	}
	p.ws()
	if p.i != len(p.b) {
		return errMalformed
	}
	if c.hasError && c.errMessage == nil {
		c.errMessage = c.message
	}
	return nil
}

// parser is a validating, allocation-free JSON scanner specialised to the
// few members of a chat-completion chunk that sixpin reads; every other
// value is validated and skipped.
type parser struct {
	b []byte
	i int
}

type memberFunc func(key []byte, c *chunk) bool

// Byte classes for the scanner's loops: a lookup per byte is cheaper
// than a switch, and these loops are most of the per-chunk CPU.
var (
	isSpace [256]bool // JSON whitespace
	isPlain [256]bool // a string byte that needs no check: not '"', '\\' or a control character
	isDigit [256]bool
)

func init() {
	for _, c := range " \t\n\r" {
		isSpace[c] = true
	}
	for c := 0x20; c < 256; c++ {
		isPlain[c] = c != '"' && c != '\\'
	}
	for c := '0'; c <= '9'; c++ {
		isDigit[c] = true
	}
}

// ws skips whitespace; compact JSON has none, so the common case is one
// comparison.
func (p *parser) ws() {
	if p.i < len(p.b) && p.b[p.i] <= ' ' {
		p.skipSpace()
	}
}

func (p *parser) skipSpace() {
	b, i := p.b, p.i
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	p.i = i
}

// object parses {"k": v, ...}, calling member with p positioned at each value;
// member must consume the value.
func (p *parser) object(member memberFunc, c *chunk) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.ws()
		key, ok := p.str()
		if !ok {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !member(key, c) {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// array parses [v, ...], calling elem with p positioned at each element.
func (p *parser) array(elem func(c *chunk) bool, c *chunk) bool {
	if p.i >= len(p.b) || p.b[p.i] != '[' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return true
	}
	for {
		p.ws()
		if !elem(c) {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str parses a JSON string and returns its raw body (escapes not decoded).
func (p *parser) str() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	p.i++
	start := p.i
	for p.i < len(p.b) {
		b, i := p.b, p.i
		for i < len(b) && isPlain[b[i]] {
			i++
		}
		if p.i = i; i >= len(b) {
			break
		}
		ch := p.b[p.i]
		switch {
		case ch == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case ch == '\\':
			if p.i+1 >= len(p.b) {
				return nil, false
			}
			switch p.b[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.b) {
					return nil, false
				}
				for _, h := range p.b[p.i+2 : p.i+6] {
					if !isHex(h) {
						return nil, false
					}
				}
				p.i += 6
			default:
				return nil, false
			}
		case ch < 0x20:
			return nil, false
		default:
			p.i++
		}
	}
	return nil, false
}

func isHex(h byte) bool {
	return '0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F'
}

// isNull consumes a null literal if one is next.
func (p *parser) isNull() bool {
	if len(p.b)-p.i >= 4 && string(p.b[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// number parses a JSON number and returns its text.
func (p *parser) number() ([]byte, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		b, i := p.b, p.i
		for i < len(b) && isDigit[b[i]] {
			i++
		}
		n := i - p.i
		p.i = i
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	return p.b[start:p.i], true
}

// integer parses a number (or null, as 0) and returns it as an int64;
// fractions are truncated.
func (p *parser) integer() (int64, bool) {
	if p.isNull() {
		return 0, true
	}
	num, ok := p.number()
	if !ok {
		return 0, false
	}
	var v int64
	neg := false
	for i, d := range num {
		switch {
		case d == '-' && i == 0:
			neg = true
		case '0' <= d && d <= '9':
			v = v*10 + int64(d-'0')
		default: // fraction or exponent: rare, take the slow path
			f, err := strconv.ParseFloat(string(num), 64)
			return int64(f), err == nil
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

// skip validates and consumes any JSON value.
func (p *parser) skip() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch ch := p.b[p.i]; {
	case ch == '{':
		return p.object(func(_ []byte, _ *chunk) bool { return p.skip() }, nil)
	case ch == '[':
		return p.array(func(_ *chunk) bool { return p.skip() }, nil)
	case ch == '"':
		_, ok := p.str()
		return ok
	case ch == '-' || '0' <= ch && ch <= '9':
		_, ok := p.number()
		return ok
	default:
		for _, lit := range [...]string{"null", "true", "false"} {
			if len(p.b)-p.i >= len(lit) && string(p.b[p.i:p.i+len(lit)]) == lit {
				p.i += len(lit)
				return true
			}
		}
		return false
	}
}

// optString parses a string or null and returns the string body.
func (p *parser) optString() ([]byte, bool) {
	if p.isNull() {
		return nil, true
	}
	return p.str()
}

func (p *parser) topMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "choices":
		if p.isNull() {
			return true
		}
		return p.array(p.choice, c)
	case "usage":
		if p.isNull() {
			return true
		}
		c.hasUsage = true
		return p.object(p.usageMember, c)
	case "model":
		s, ok := p.optString()
		c.model = s
		return ok
	case "sixpin_sent_unix_ns":
		v, ok := p.integer()
		c.sentUnixNS = v
		return ok
	case "error":
		switch {
		case p.isNull():
			return true
		case p.i < len(p.b) && p.b[p.i] == '{':
			c.hasError = true
			return p.object(p.errorMember, c)
		case p.i < len(p.b) && p.b[p.i] == '"':
			c.hasError = true
			s, ok := p.str()
			c.errMessage = s
			return ok
		}
		c.hasError = true
		return p.skip()
	case "object":
		s, ok := p.optString()
		if string(s) == "error" {
			c.hasError = true
		}
		return ok
	case "message":
		if p.i < len(p.b) && p.b[p.i] == '"' {
			s, ok := p.str()
			c.message = s
			return ok
		}
		return p.skip()
	}
	return p.skip()
}

func (p *parser) errorMember(key []byte, c *chunk) bool {
	if string(key) == "message" && p.i < len(p.b) && p.b[p.i] == '"' {
		s, ok := p.str()
		c.errMessage = s
		return ok
	}
	return p.skip()
}

func (p *parser) choice(c *chunk) bool {
	return p.object(p.choiceMember, c)
}

func (p *parser) choiceMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "delta", "message":
		if p.isNull() {
			return true
		}
		return p.object(p.deltaMember, c)
	case "finish_reason":
		s, ok := p.optString()
		if s != nil {
			c.finished = true
			c.finishReason = s
		}
		return ok
	}
	return p.skip()
}

func (p *parser) deltaMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "content":
		s, ok := p.optString()
		c.contentBytes += len(s)
		return ok
	case "reasoning_content", "reasoning":
		s, ok := p.optString()
		c.reasoningBytes += len(s)
		return ok
	case "tool_calls":
		if p.isNull() {
			return true
		}
		return p.array(p.toolCallElem, c)
	}
	return p.skip()
}

// toolCallElem reads one tool call of a delta: its function's name and
// arguments are output text.
func (p *parser) toolCallElem(c *chunk) bool {
	c.toolCall = true
	return p.object(p.toolCallMember, c)
}

func (p *parser) toolCallMember(key []byte, c *chunk) bool {
	if string(key) != "function" {
		return p.skip()
	}
	if p.isNull() {
		return true
	}
	return p.object(p.functionMember, c)
}

func (p *parser) functionMember(key []byte, c *chunk) bool {
	switch string(key) {
	case "name", "arguments":
		s, ok := p.optString()
		c.toolBytes += len(s)
		return ok
	}
	return p.skip()
}

func (p *parser) usageMember(key []byte, c *chunk) bool {
	var dst *int
	switch string(key) {
	case "prompt_tokens":
		dst = &c.usage.promptTokens
	case "completion_tokens":
		dst = &c.usage.completionTokens
	case "prompt_tokens_details":
		if p.isNull() {
			return true
		}
		return p.object(p.detailMember, c)
	case "completion_tokens_details":
		if p.isNull() {
			return true
		}
		return p.object(p.detailMember, c)
	default:
		return p.skip()
	}
	v, ok := p.integer()
	*dst = int(v)
	return ok
}

func (p *parser) detailMember(key []byte, c *chunk) bool {
	var dst *int
	switch string(key) {
	case "cached_tokens":
		dst = &c.usage.cachedTokens
	case "reasoning_tokens":
		dst = &c.usage.reasoningTokens
	default:
		return p.skip()
	}
	v, ok := p.integer()
	*dst = int(v)
	return ok
}
