package endpoint

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestRequestBody decodes the body requestBody writes and checks every
// member, with texts that need escaping.
func TestRequestBody(t *testing.T) {
	texts := []string{"plain words", "quote \" backslash \\ slash / <html> & \u2028", "tab\tnewline\nreturn\r nul\x00 bell\x07",
		"ünïcödé 漢字 🙂", "bad utf-8 \xff\xfe end", ""}
	msgs := make([]Message, len(texts))
	for i, s := range texts {
		msgs[i] = Message{Role: []string{RoleUser, RoleAssistant}[i%2], Content: s}
	}
	b := requestBody(`model "x"`, msgs, "max_completion_tokens", 77, []byte(`,"ignore_eos":true,"top_k":20`), 77)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("not JSON (%v): %s", err, b)
	}
	var wantMsgs []any
	for _, m := range msgs {
		wantMsgs = append(wantMsgs, map[string]any{"role": m.Role, "content": eachInvalidReplaced(m.Content)})
	}
	want := map[string]any{
		"model": `model "x"`, "messages": wantMsgs, "stream": true, "stream_options": map[string]any{"include_usage": true},
		"max_completion_tokens": float64(77), "ignore_eos": true, "top_k": float64(20), "min_tokens": float64(77),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body decodes to\n%v\nwant\n%v", got, want)
	}
}

// FuzzAppendJSONString: whatever the text, the JSON string decodes back
// to it (invalid UTF-8 replaced, as encoding/json does).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f\x7f", "é\xff", "\u2028<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: not a JSON string (%v): %s", s, err, b)
		}
		if want := eachInvalidReplaced(s); got != want {
			t.Fatalf("%q decodes to %q", s, got)
		}
	})
}

// eachInvalidReplaced is s with every byte that is not part of valid
// UTF-8 replaced by U+FFFD, as encoding/json writes it.
func eachInvalidReplaced(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += n
	}
	return b.String()
}
