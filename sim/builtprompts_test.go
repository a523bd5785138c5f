package sim

import (
	"slices"
	"testing"

	"github.com/sixpin/sixpin/prompt"
	"github.com/sixpin/sixpin/tokenizer"
)

// The prompts sixpin builds in each content class (package prompt; a
// test may import the client side) are classified as that class from 48
// tokens on, by every tokenizer they are built to — except tool-calls,
// which are text and so json here: the classifier finds tool calls in a
// request's structure (declared tools, tool messages), not in its text.
// Below 48 tokens a json prompt is its opener and one-token words, and a
// repetitive one has too few words to repeat.
func TestBuiltPromptsClassified(t *testing.T) {
	want := map[prompt.Content]string{prompt.ToolCalls: ClassJSON}
	for _, name := range []string{tokenizer.Words, tokenizer.Qwen2, tokenizer.O200kBase} {
		tok, err := tokenizer.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := prompt.NewBuilder(func(s string) (int, error) { return tok.Count(s), nil })
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range prompt.Contents() {
			class, ok := want[c]
			if !ok {
				class = string(c)
			}
			t.Run(name+"/"+string(c), func(t *testing.T) {
				for _, n := range []int{48, 64, 256, 1000, 8000} {
					for seed := uint64(0); seed < 10; seed++ {
						if got := classifyText(b.BuildContent(c, seed, n)); got != class {
							t.Fatalf("%d tokens, seed %d: classified %s, want %s", n, seed, got, class)
						}
					}
				}
			})
		}
	}
}

// A from-logs prompt (an agent log's lines) is classified by its text like
// any other, as one of the classes, at every length.
func TestFromLogsPromptsClassified(t *testing.T) {
	logs := prompt.NewLogLines()
	for _, text := range []string{
		"the parser test fails, fix it",
		"Let me run the tests.\n```go\nfunc split(s string) []string {\n\treturn strings.Split(s, \",\")[1:]\n}\n```",
		`{"command":"go test ./parser/","description":"Run the tests"}`,
		"--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2\nFAIL",
		"Fixed: the parser now splits on every separator.",
	} {
		logs.Add(text)
	}
	tok, err := tokenizer.Get(tokenizer.Words)
	if err != nil {
		t.Fatal(err)
	}
	b, err := prompt.NewBuilder(func(s string) (int, error) { return tok.Count(s), nil }, prompt.WithLogs(logs))
	if err != nil {
		t.Fatal(err)
	}
	classes := []string{ClassProse, ClassCode, ClassJSON, ClassToolCalls, ClassRepetitive}
	for _, n := range []int{1, 48, 1000, 8000} {
		for seed := uint64(0); seed < 10; seed++ {
			if got := classifyText(b.BuildContent(prompt.FromLogs, seed, n)); !slices.Contains(classes, got) {
				t.Fatalf("%d tokens, seed %d: classified %q", n, seed, got)
			}
		}
	}
}
