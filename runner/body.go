package runner

import (
	"strconv"
	"unicode/utf8"
)

// Chat roles.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
)

// message is one chat message: sixpin sends text content only.
type message struct {
	role, content string
}

// userMessage is a conversation of one user message.
func userMessage(text string) []message { return []message{{roleUser, text}} }

// requestBody renders a streaming chat-completion request:
//
//	{"model":M,"messages":[...],"stream":true,"stream_options":{"include_usage":true},
//	 "max_tokens":N <extra> ,"min_tokens":K}
//
// extra is the target's request extensions as `,"k":v` pairs (encodeExtra);
// minTokens 0 leaves min_tokens out. Writing the JSON directly costs one
// exact-size allocation and one pass over the prompt text, against
// encoding/json's reflection, its HTML escaping and a buffer that grows.
func requestBody(model string, msgs []message, maxTokensField string, maxTokens int, extra []byte, minTokens int) []byte {
	n := len(model) + len(extra) + 160
	for _, m := range msgs {
		n += len(m.role) + len(m.content) + 32
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, model)
	b = append(b, `,"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendJSONString(b, m.role)
		b = append(b, `,"content":`...)
		b = appendJSONString(b, m.content)
		b = append(b, '}')
	}
	b = append(b, `],"stream":true,"stream_options":{"include_usage":true},"`...)
	if maxTokensField == "" {
		maxTokensField = "max_tokens"
	}
	b = append(b, maxTokensField...)
	b = append(b, `":`...)
	b = strconv.AppendInt(b, int64(maxTokens), 10)
	b = append(b, extra...)
	if minTokens > 0 {
		b = append(b, `,"min_tokens":`...)
		b = strconv.AppendInt(b, int64(minTokens), 10)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD (as
// encoding/json does); everything else, HTML characters and U+2028
// included, as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
