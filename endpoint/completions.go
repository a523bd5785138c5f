package endpoint

import (
	"net/http"
	"strconv"
)

// completions is OpenAI's legacy completions (POST {base}/completions), as
// vLLM, SGLang and llama.cpp still serve it for engines benchmarked that
// way: the prompt is one text, and the stream's chunks are chat's with
// choices[].text for the delta (parseChunk reads both).
type completions struct{}

func (completions) path() string { return "/completions" }

func (completions) auth(h http.Header, key string) { bearer(h, key) }

func (completions) done(data []byte) bool { return isDone(data) }

func (completions) event(data []byte, c *chunk) error { return parseChunk(data, c) }

// body renders a streaming completions request:
//
//	{"model":M,"prompt":T,"stream":true,"stream_options":{"include_usage":true},
//	 "max_tokens":N <extra> ,"min_tokens":K}
//
// A conversation's messages are joined into the prompt with blank lines
// between them (no chat template: the server applies none).
func (completions) body(r bodyRequest) []byte {
	n := len(r.model) + len(r.extra) + 160
	for _, m := range r.msgs {
		n += len(m.Content) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, `{"model":`...)
	b = appendJSONString(b, r.model)
	b = append(b, `,"prompt":`...)
	if len(r.msgs) == 1 {
		b = appendJSONString(b, r.msgs[0].Content)
	} else {
		text := make([]byte, 0, n)
		for i, m := range r.msgs {
			if i > 0 {
				text = append(text, "\n\n"...)
			}
			text = append(text, m.Content...)
		}
		b = appendJSONString(b, string(text))
	}
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true},"max_tokens":`...)
	b = strconv.AppendInt(b, int64(r.maxTokens), 10)
	return appendTail(b, r)
}
