package endpoint

import (
	"encoding/json"
	"testing"
)

const sampleChunk = `{"id":"chatcmpl-8f3a2b1c","object":"chat.completion.chunk","created":1764518400,"model":"qwen3.8-27b","choices":[{"index":0,"delta":{"content":" garden"},"logprobs":null,"finish_reason":null}],"sixpin_sent_unix_ns":1764518400123456789}`

func TestParseChunk(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want chunk
	}{
		{"content", sampleChunk, chunk{contentBytes: 7, model: []byte("qwen3.8-27b"), sentUnixNS: 1764518400123456789}},
		{"role only", `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, chunk{}},
		{"reasoning", `{"choices":[{"delta":{"reasoning_content":" why"}}]}`, chunk{reasoningBytes: 4}},
		{"reasoning (llama.cpp name)", `{"choices":[{"delta":{"reasoning":"ab","content":null}}]}`, chunk{reasoningBytes: 2}},
		{"escapes count raw", `{"choices":[{"delta":{"content":"a\n\u00e9\"b"}}]}`, chunk{contentBytes: 12}},
		{"finish", `{"choices":[{"delta":{},"finish_reason":"length"}]}`, chunk{finished: true, finishReason: []byte("length")}},
		{"tool call", `{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"x","arguments":"{}"}}]}}]}`, chunk{toolCall: true, toolBytes: 3}},
		{"tool call, id only", `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":null}]}}]}`, chunk{toolCall: true}},
		{"two tool calls", `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"ab"}},{"function":{"name":"cd","arguments":null}}]}}]}`,
			chunk{toolCall: true, toolBytes: 4}},
		{"empty tool_calls", `{"choices":[{"delta":{"content":"a","tool_calls":[]}}]}`, chunk{contentBytes: 1}},
		{"usage", `{"choices":[],"usage":{"prompt_tokens":8008,"completion_tokens":300,"total_tokens":8308,"prompt_tokens_details":{"cached_tokens":4096},"completion_tokens_details":{"reasoning_tokens":120}}}`,
			chunk{hasUsage: true, usage: usage{promptTokens: 8008, completionTokens: 300, cachedTokens: 4096, reasoningTokens: 120}}},
		{"null usage and details", `{"choices":[{"delta":{"content":"x"}}],"usage":null}`, chunk{contentBytes: 1}},
		{"usage null details", `{"usage":{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":null}}`, chunk{hasUsage: true, usage: usage{promptTokens: 5, completionTokens: 1}}},
		{"error event", `{"error":{"message":"overloaded","code":503}}`, chunk{hasError: true, errMessage: []byte("overloaded")}},
		{"error string", `{"error":"overloaded"}`, chunk{hasError: true, errMessage: []byte("overloaded")}},
		{"vLLM error object", `{"object":"error","message":"bad \"x\"","type":"BadRequestError","code":400}`,
			chunk{hasError: true, errMessage: []byte(`bad \"x\"`)}},
		{"a message is no error", `{"object":"chat.completion.chunk","message":"hi","choices":[]}`, chunk{}},
		{"numbers and literals skipped", `{"a":-1.5e+3,"b":[true,false,null,{}],"c":0,"choices":[]}`, chunk{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got chunk
			if err := parseChunk([]byte(c.in), &got); err != nil {
				t.Fatalf("parseChunk: %v", err)
			}
			if got.contentBytes != c.want.contentBytes || got.reasoningBytes != c.want.reasoningBytes ||
				got.toolCall != c.want.toolCall || got.finished != c.want.finished ||
				string(got.finishReason) != string(c.want.finishReason) || got.hasUsage != c.want.hasUsage ||
				got.usage != c.want.usage || string(got.model) != string(c.want.model) ||
				got.sentUnixNS != c.want.sentUnixNS || got.hasError != c.want.hasError || got.toolBytes != c.want.toolBytes ||
				string(got.errMessage) != string(c.want.errMessage) {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseChunkMalformed(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"choices":[{"delta":{"content":`, `{"a":1,}`, `{"a" 1}`, `{"a":tru}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{} x`, `[]`, `{"a":"` + "\x01" + `"}`,
		`{"usage":{"prompt_tokens":"5"}}`, `{"choices":{}}`,
	} {
		var c chunk
		if err := parseChunk([]byte(in), &c); err == nil {
			t.Errorf("parseChunk(%q) accepted malformed input", in)
		}
	}
}

// FuzzParseChunk checks that parseChunk never panics and never accepts what
// encoding/json rejects as a JSON object.
func FuzzParseChunk(f *testing.F) {
	f.Add(sampleChunk)
	f.Add(`{"a":[1,2,{"b":"c\\u0041"}],"d":null}`)
	f.Add(`{"x":1e5,"y":-0.5}`)
	f.Fuzz(func(t *testing.T, s string) {
		var c chunk
		err := parseChunk([]byte(s), &c)
		var v map[string]json.RawMessage
		stdErr := json.Unmarshal([]byte(s), &v)
		if err == nil && stdErr != nil {
			t.Fatalf("parseChunk accepted %q; encoding/json: %v", s, stdErr)
		}
	})
}

// BenchmarkParseChunk is the JSON half of the per-chunk client path.
func BenchmarkParseChunk(b *testing.B) {
	line := []byte(sampleChunk)
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	var c chunk
	for b.Loop() {
		if err := parseChunk(line, &c); err != nil {
			b.Fatal(err)
		}
	}
}
