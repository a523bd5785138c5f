package runner

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// The scenario's content classes are the prompt builder's.
func TestContentClassesAgree(t *testing.T) {
	var built []string
	for _, c := range prompt.Contents() {
		built = append(built, string(c))
	}
	if !slices.Equal(built, scenario.ContentClasses) {
		t.Errorf("prompt builds %q, scenario declares %q", built, scenario.ContentClasses)
	}
}

// contentScenario has one mix class per content class, each its name.
const contentScenario = `pins:
  model: {name: m}
  prompt: {tokens: 600}
  output: {tokens: 24, exact: true}
  concurrency: {mode: closed, streams: 1}
  mix:
    classes:
      - {name: prose, weight: 1}
      - {name: code, weight: 1, prompt: {content: code}}
      - {name: json, weight: 1, prompt: {content: json}}
      - {name: tool-calls, weight: 1, prompt: {content: tool-calls}}
      - {name: repetitive, weight: 1, prompt: {content: repetitive}}
requests: 100
`

// A prompt the runner builds in each content class reaches the
// simulator at its exact length and is classified as that class, which
// the simulator's answer shows (with spec_decode, the output takes its
// class's shape; see sim/outtext.go) — except tool-calls, which the
// simulator, like a server, sees only in a request's structure (declared
// tools, tool messages): a tool-call-looking text is json to it.
func TestContentClassifiedBySimulator(t *testing.T) {
	cfg := sim.Config{
		Timing: sim.TimingRoofline,
		Roofline: sim.Roofline{ParamsB: 0.001, BytesPerParam: 2, Layers: 2, Heads: 2, KVHeads: 1, HeadDim: 8,
			KVBytes: 2, PeakTFLOPS: 1000, MemBandwidthGBs: 1000, ComputeUtil: 1, MemUtil: 1},
		SpecDecode: &sim.SpecDecode{DraftTokens: 4, Acceptance: map[string]float64{
			sim.ClassProse: 0.5, sim.ClassCode: 0.6, sim.ClassJSON: 0.7, sim.ClassToolCalls: 0.8, sim.ClassRepetitive: 0.9}},
	}
	ts, _ := serveSim(t, cfg, nil)
	p := mustPlan(t, contentScenario)
	r := newRunner(t, p, simTarget(ts), WithTemplate(endpoint.Template{Overhead: simOverhead}))
	want := map[string]string{"tool-calls": sim.ClassJSON}
	seen := map[string]bool{}
	for i := range 100 {
		req := p.Request(i)
		if seen[req.Content] {
			continue
		}
		seen[req.Content] = true
		text := r.promptText(req)
		answer, promptTokens := ask(t, ts.URL, text)
		if promptTokens != req.PromptTokens {
			t.Errorf("%s: the simulator counts %d prompt tokens, pinned %d", req.Content, promptTokens, req.PromptTokens)
		}
		class, ok := want[req.Content]
		if !ok {
			class = req.Content
		}
		if got := answerClass(answer); got != class {
			t.Errorf("%s prompt: the simulator answers %s (%q), want %s; prompt %q…", req.Content, got, answer, class, text[:min(len(text), 300)])
		}
	}
	if len(seen) != len(scenario.ContentClasses) {
		t.Fatalf("the plan drew only %d content classes", len(seen))
	}
}

// ask sends text as one user message and returns the answer and the
// simulator's prompt count.
func ask(t *testing.T, url, text string) (string, int) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": sim.DefaultModel, "max_tokens": 24, "ignore_eos": true,
		"messages": []map[string]string{{"role": "user", "content": text}}})
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || len(c.Choices) == 0 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	return c.Choices[0].Message.Content, c.Usage.PromptTokens
}

// answerClass tells the class from the shape of a spec_decode
// simulator's answer: code starts "def", json "[{", tool calls
// `{"name":`, a repetitive answer repeats a 6-word phrase, prose none
// of these.
func answerClass(a string) string {
	f := strings.Fields(a)
	switch {
	case len(f) == 0:
		return "empty"
	case f[0] == "def":
		return sim.ClassCode
	case strings.HasPrefix(f[0], "[{"):
		return sim.ClassJSON
	case f[0] == `{"name":`:
		return sim.ClassToolCalls
	}
	for i := sim.LoopPhraseTokens; i < len(f); i++ {
		if f[i] != f[i-sim.LoopPhraseTokens] {
			return sim.ClassProse
		}
	}
	return sim.ClassRepetitive
}

// A builder whose tokenizer cannot build a planned content class is
// refused when the runner is made, naming the class.
func TestNewRefusesContentTheTokenizerCannotBuild(t *testing.T) {
	joinsLines := func(s string) (int, error) { return len(strings.Fields(s)) - strings.Count(s, "\n\t"), nil }
	b, err := prompt.NewBuilder(joinsLines)
	if err != nil {
		t.Fatal(err)
	}
	p := mustPlan(t, contentScenario)
	c := newClient(t, p, endpoint.Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, nil)
	if _, err := New(p, c, WithPrompts(b)); err == nil || !strings.Contains(err.Error(), "pins.prompt.content code") {
		t.Errorf("New: %v", err)
	}
}

// A from-logs plan needs a builder made with the logs' lines: without
// them New refuses it, naming the class; with them a request's prompt is
// the logs' lines, shared prefix included, at its exact length.
func TestFromLogsNeedsLogLines(t *testing.T) {
	p := mustPlan(t, `pins:
  model: {name: m}
  prompt: {tokens: 600, shared_prefix_tokens: 40, content: from-logs, logs: ../analyze/testdata/claude-code}
  output: {tokens: 24, exact: true}
  concurrency: {mode: closed, streams: 1}
requests: 10
`)
	tg := endpoint.Target{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
	if _, err := New(p, newClient(t, p, tg, nil)); err == nil || !strings.Contains(err.Error(), "pins.prompt.content from-logs: no log lines") {
		t.Fatalf("New without log lines: err = %v", err)
	}
	logs := prompt.NewLogLines()
	logs.Add("the parser test fails, fix it\nLet me run the tests.\n--- FAIL: TestParse (0.00s)\nThe split is off by one.")
	wordsCount := func(s string) (int, error) { return len(strings.Fields(s)), nil }
	b, err := prompt.NewBuilder(wordsCount, prompt.WithLogs(logs))
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(p, newClient(t, p, tg, nil), WithPrompts(b))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		text := r.promptText(p.Request(i))
		if n, _ := wordsCount(text); n != 600 || !strings.Contains(text, " Let me run the tests.\n") {
			t.Fatalf("request %d: %d words, want 600 of the logs' lines: %.200q", i, n, text)
		}
	}
}
