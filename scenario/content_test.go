package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// logsDir is a directory of agent logs, relative to a scenario in this
// directory ("t.yaml").
const logsDir = "../analyze/testdata/claude-code"

func TestContentErrors(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"unknown class", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: poetry}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: must be one of prose, code, json, tool-calls, repetitive, from-logs (got "poetry")`,
		}},
		{"a mix class's unknown class", strings.Replace(valid, "  concurrency:", "  mix: {classes: [{name: a, weight: 1, prompt: {content: yaml}}]}\n  concurrency:", 1), []string{
			`t.yaml:5:58: pins.mix.classes[0].prompt.content: must be one of prose, code, json, tool-calls, repetitive, from-logs (got "yaml")`,
		}},
		{"a mapping's unknown class", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: 1, poetry: 2}}", 1), []string{
			`t.yaml:3:52: pins.prompt.content.poetry: not a content class (want prose, code, json, tool-calls, repetitive, from-logs)`,
		}},
		{"a negative weight", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: -1, json: 2}}", 1), []string{
			`t.yaml:3:41: pins.prompt.content.code: weight must be ≥ 0 (got -1)`,
		}},
		{"zero weights", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: 0, json: 0}}", 1), []string{
			`t.yaml:3:25: pins.prompt.content: weights must not all be 0`,
		}},
		{"a weight that is not a number", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: lots}}", 1), []string{
			`t.yaml:3:41: pins.prompt.content.code: must be a number (got "lots")`,
		}},
		{"agentic sessions", strings.Replace(strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: code}", 1),
			"requests: 10", "duration: 1m\nworkload: {kind: agentic, turns: 3, growth_tokens: 50, think_seconds: 1}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: only for workload kind requests: an agentic session's or a trace's turns are prose`,
		}},
		{"from-logs without logs", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: from-logs needs pins.prompt.logs: the agent logs to build prompts from (Claude Code transcripts or Codex rollouts, a .jsonl file or a directory of them)`,
		}},
		{"from-logs weighted without logs", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: 1, from-logs: 1}}", 1), []string{
			`t.yaml:3:55: pins.prompt.content.from-logs: from-logs needs pins.prompt.logs: the agent logs to build prompts from (Claude Code transcripts or Codex rollouts, a .jsonl file or a directory of them)`,
		}},
		{"a mix class's from-logs without logs", strings.Replace(valid, "  concurrency:", "  mix: {classes: [{name: a, weight: 1, prompt: {content: from-logs}}]}\n  concurrency:", 1), []string{
			`t.yaml:5:58: pins.mix.classes[0].prompt.content: from-logs needs pins.prompt.logs: the agent logs to build prompts from (Claude Code transcripts or Codex rollouts, a .jsonl file or a directory of them)`,
		}},
		{"logs without from-logs", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: code, logs: "+logsDir+"}", 1), []string{
			`t.yaml:3:46: pins.prompt.logs: only with content from-logs (the prompts are built from the logs' lines)`,
		}},
		{"logs with from-logs at weight 0", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {code: 1, from-logs: 0}, logs: "+logsDir+"}", 1), []string{
			`t.yaml:3:65: pins.prompt.logs: only with content from-logs (the prompts are built from the logs' lines)`,
		}},
		{"logs that are not there", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs, logs: no/such/logs}", 1), []string{
			`t.yaml:3:51: pins.prompt.logs: cannot read no/such/logs: no such file or directory`,
		}},
		{"logs in a mix class", strings.Replace(strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs, logs: "+logsDir+"}", 1),
			"  concurrency:", "  mix: {classes: [{name: a, weight: 1, prompt: {tokens: 100, logs: x}}]}\n  concurrency:", 1), []string{
			`t.yaml:5:68: pins.mix.classes[0].prompt.logs: only at the top-level prompt pin (pins.prompt)`,
		}},
		{"from-logs in agentic sessions", strings.Replace(strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs, logs: "+logsDir+"}", 1),
			"requests: 10", "duration: 1m\nworkload: {kind: agentic, turns: 3, growth_tokens: 50, think_seconds: 1}", 1), []string{
			`t.yaml:3:34: pins.prompt.content: only for workload kind requests: an agentic session's or a trace's turns are prose`,
			`t.yaml:3:51: pins.prompt.logs: only for workload kind requests, with content from-logs`,
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
		{"drawn per request", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: {json: 1, repetitive: 3}}", 1), "repetitive 75%, json 25%",
			nil, []string{"json", "repetitive"}},
		{"a mix class drawing", strings.Replace(mix, "{content: code}", "{content: {code: 1, json: 1}}", 1), "code 37.5%, json 37.5%, prose 25%",
			nil, []string{"prose", "code", "json"}},
		{"mix inheriting json", strings.Replace(mix, "{tokens: 100}", "{tokens: 100, content: json}", 1), "code 75%, json 25%",
			map[string]string{"a": "code", "b": "json"}, []string{"code", "json"}},
		{"from logs", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs, logs: "+logsDir+"}", 1), "from-logs (" + logsDir + ")",
			map[string]string{"": "from-logs"}, []string{"from-logs"}},
		{"from logs in a mix", strings.Replace(mix, "{tokens: 100}", "{tokens: 100, content: {from-logs: 1, json: 1}, logs: "+logsDir+"}", 1),
			"code 75%, json 12.5%, from-logs (" + logsDir + ") 12.5%", nil, []string{"code", "json", "from-logs"}},
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
				if tt.perRequest != nil && r.Content != tt.perRequest[r.Class] {
					t.Fatalf("request %d of class %q: content %q, want %q", i, r.Class, r.Content, tt.perRequest[r.Class])
				}
			}
			if got := plan.Contents(); !reflect.DeepEqual(got, tt.contents) {
				t.Errorf("Contents() = %q, want %q", got, tt.contents)
			}
		})
	}
}

// Contents drawn per request come in their weights' shares, and
// declaring content leaves every other draw of the plan as it was.
func TestContentDrawnPerRequest(t *testing.T) {
	plain, err := Parse("t.yaml", []byte(strings.Replace(valid, "requests: 10", "requests: 4000", 1)))
	if err != nil {
		t.Fatal(err)
	}
	drawn, err := Parse("t.yaml", []byte(strings.Replace(strings.Replace(valid, "requests: 10", "requests: 4000", 1),
		"{tokens: 100}", "{tokens: {dist: uniform, min: 50, max: 150}, content: {code: 1, json: 1, tool-calls: 2}}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	plain.Pins.Prompt.Tokens = drawn.Pins.Prompt.Tokens
	pp, pd := NewPlan(plain), NewPlan(drawn)
	n := map[string]int{}
	for i := range 4000 {
		a, b := pp.Request(i), pd.Request(i)
		if a.PromptTokens != b.PromptTokens || a.Seed != b.Seed || a.OutputTokens != b.OutputTokens {
			t.Fatalf("request %d: content moved the other draws: %+v vs %+v", i, a, b)
		}
		n[b.Content]++
	}
	for c, want := range map[string]float64{"code": 0.25, "json": 0.25, "tool-calls": 0.5} {
		if got := float64(n[c]) / 4000; got < want-0.03 || got > want+0.03 {
			t.Errorf("%s: %.3f of requests, want %.2f", c, got, want)
		}
	}
}

// A content round-trips through YAML: one class as its name, several as
// a mapping.
func TestContentYAML(t *testing.T) {
	for _, c := range []Content{{"code": 1}, {"code": 3, "prose": 1}} {
		b, err := yaml.Marshal(struct {
			C Content `yaml:"c"`
		}{c})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			C Content `yaml:"c"`
		}
		if err := yaml.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back.C, c) {
			t.Errorf("%v: %s read back as %v (%v)", c, b, back.C, err)
		}
	}
}

// pins.prompt.logs is relative to the scenario file, like workload.file.
func TestLogsPath(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("..", "analyze", "testdata", "codex"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ file, logs, want string }{
		{"testdata/t.yaml", "../" + logsDir, filepath.Join("..", "analyze", "testdata", "claude-code")},
		{"t.yaml", logsDir, filepath.Join("..", "analyze", "testdata", "claude-code")},
		{"testdata/t.yaml", abs, abs},
	} {
		src := strings.Replace(valid, "{tokens: 100}", "{tokens: 100, content: from-logs, logs: "+tt.logs+"}", 1)
		s, err := Parse(tt.file, []byte(src))
		if err != nil {
			t.Fatalf("%s, logs %s: %v", tt.file, tt.logs, err)
		}
		if got := s.LogsPath(); got != tt.want {
			t.Errorf("%s, logs %s: LogsPath %q, want %q", tt.file, tt.logs, got, tt.want)
		}
	}
}
