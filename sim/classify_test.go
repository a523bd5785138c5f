package sim

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	user := func(s string) []turn { return []turn{{role: "user", parts: []string{s}}} }
	raw := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		g    genRequest
		want string
	}{
		{"prose", genRequest{turns: user("Tell me about the history of the river and the towns that grew along its banks over many years.")}, ClassProse},
		{"prose with an aside", genRequest{turns: user("Write a letter (a short one) to my aunt about the garden, the weather and the new dog we adopted last week.")}, ClassProse},
		{"empty", genRequest{turns: user("")}, ClassProse},
		{"no user message", genRequest{turns: []turn{{role: "system", parts: []string{"{}"}}}}, ClassProse},
		{"code", genRequest{turns: user("func add(a, b int) int {\n\treturn a + b;\n}\nfix the bug")}, ClassCode},
		{"code fence", genRequest{turns: user("Why does this fail?\n```\nprint hello world\n```")}, ClassCode},
		{"json object", genRequest{turns: user(`{"name": "ada", "tags": ["a", "b"], "age": 36}`)}, ClassJSON},
		{"json array", genRequest{turns: user(`[{"id": 1}, {"id": 2}]`)}, ClassJSON},
		{"json fence", genRequest{turns: user("Fill this in:\n```json\n{\"a\": \"\", \"b\": \"\"}\n```")}, ClassJSON},
		{"repetitive", genRequest{turns: user(strings.Repeat("the cat sat on the mat ", 20))}, ClassRepetitive},
		{"repetitive beats code", genRequest{turns: user(strings.Repeat("x = f(x); ", 20))}, ClassRepetitive},
		{"short repeats are not repetitive", genRequest{turns: user("no no no no no")}, ClassProse},
		{"tools declared", genRequest{tools: true, turns: user("What is the weather in Paris today?")}, ClassToolCalls},
		{"tool result", genRequest{turns: []turn{{role: "user", parts: []string{"weather?"}}, {role: "tool", parts: []string{"sunny"}}}}, ClassToolCalls},
		{"last user message counts", genRequest{turns: []turn{{role: "user", parts: []string{`{"a": 1, "b": 2}`}}, {role: "assistant", parts: []string{"ok"}},
			{role: "user", parts: []string{"now explain what you did in a few plain words please"}}}}, ClassProse},
		{"legacy prompt", genRequest{raw: raw("int main() { return 0; }")}, ClassCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(&tc.g); got != tc.want {
				t.Errorf("classify = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestToolsAcrossProtocols checks each protocol tells the classifier of
// tools (declared, or tool blocks in Messages) — the output then reads as
// tool calls — and that the escaped output keeps every body and event
// valid JSON, streamed or not.
func TestToolsAcrossProtocols(t *testing.T) {
	_, ts := start(t, specConfig(2))
	tools := []any{map[string]any{"name": "weather"}}
	toolBlock := map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}}}
	for _, tc := range []struct {
		name, path string
		body       map[string]any
		want       bool
	}{
		{"chat", "/v1/chat/completions", map[string]any{"messages": userMsg("weather?"), "tools": tools, "max_tokens": 30}, true},
		{"chat, empty tools", "/v1/chat/completions", map[string]any{"messages": userMsg("weather?"), "tools": []any{}, "max_tokens": 30}, false},
		{"messages", "/v1/messages", map[string]any{"model": "m", "messages": []any{msg("user", "weather?")}, "tools": tools, "max_tokens": 30}, true},
		{"messages, tool result", "/v1/messages", map[string]any{"model": "m", "messages": []any{toolBlock}, "max_tokens": 30}, true},
		{"responses", "/v1/responses", map[string]any{"input": "weather?", "tools": tools, "max_output_tokens": 30}, true},
		{"responses, no tools", "/v1/responses", map[string]any{"input": "weather?", "max_output_tokens": 30}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["ignore_eos"] = true
			_, b := readAll(t, ts.URL, tc.path, tc.body, nil)
			if !json.Valid(b) {
				t.Fatalf("invalid JSON body: %s", b)
			}
			if got := strings.Contains(string(b), `{\"name\":`); got != tc.want {
				t.Errorf("tool-call output %v, want %v: %s", got, tc.want, b)
			}
			_, evs := streamEvents(t, ts.URL, tc.path, tc.body)
			for _, e := range evs {
				if e.data != "[DONE]" && !json.Valid([]byte(e.data)) {
					t.Errorf("invalid JSON event: %s", e.data)
				}
			}
		})
	}
}
