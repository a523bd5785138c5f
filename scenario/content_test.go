package scenario

import (
	"reflect"
	"strings"
	"testing"
)

func TestContentErrors(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"unknown class", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: poetry}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: must be one of prose, code, json, tool-calls, repetitive (got "poetry")`,
		}},
		{"a mix class's unknown class", strings.Replace(valid, "  concurrency:", "  mix: {classes: [{name: a, weight: 1, prompt: {content: yaml}}]}\n  concurrency:", 1), []string{
			`t.yaml:5:58: pins.mix.classes[0].prompt.content: must be one of prose, code, json, tool-calls, repetitive (got "yaml")`,
		}},
		{"agentic sessions", strings.Replace(strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: code}", 1),
			"requests: 10", "duration: 1m\nworkload: {kind: agentic, turns: 3, growth_tokens: 50, think_seconds: 1}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: only for workload kind requests: an agentic session's or a trace's turns are prose`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.src))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if got := errStrings(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// The declared content, and each request's: the top-level class, a mix
// class's own, the default.
func TestContentDeclaredAndPlanned(t *testing.T) {
	mix := strings.Replace(valid, "  concurrency:",
		"  mix: {classes: [{name: a, weight: 3, prompt: {content: code}}, {name: b, weight: 1}]}\n  concurrency:", 1)
	for _, tt := range []struct {
		name, src, declared string
		perRequest          map[string]string // by mix class
		contents            []string
	}{
		{"default", valid, "prose", map[string]string{"": "prose"}, []string{"prose"}},
		{"top level", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: tool-calls}", 1), "tool-calls",
			map[string]string{"": "tool-calls"}, []string{"tool-calls"}},
		{"mix", mix, "code 75%, prose 25%", map[string]string{"a": "code", "b": "prose"}, []string{"prose", "code"}},
		{"mix inheriting json", strings.Replace(mix, "{tokens: 100}", "{tokens: 100, content: json}", 1), "code 75%, json 25%",
			map[string]string{"a": "code", "b": "json"}, []string{"code", "json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			plan := NewPlan(s)
			d := plan.Declared(Wire{})
			if d.Prompt.Content != tt.declared {
				t.Errorf("declared content %q, want %q", d.Prompt.Content, tt.declared)
			}
			if w := TokensWords(d.Prompt); !strings.HasSuffix(w, ", content "+tt.declared) {
				t.Errorf("words %q", w)
			}
			for i := range 40 {
				r := plan.Request(i)
				if r.Content != tt.perRequest[r.Class] {
					t.Fatalf("request %d of class %q: content %q, want %q", i, r.Class, r.Content, tt.perRequest[r.Class])
				}
			}
			if got := plan.Contents(); !reflect.DeepEqual(got, tt.contents) {
				t.Errorf("Contents() = %q, want %q", got, tt.contents)
			}
		})
	}
}
