package prompt

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// agentTexts are texts as an agent's logs hold them: a prompt, an
// answer with code, a tool call's JSON, a tool's output with ANSI colours,
// CRLF ends, tabs, a blank line and a repeated one, non-ASCII text, a
// minified line far longer than a pool line.
var agentTexts = []string{
	"the parser test fails, fix it",
	"Let me run the tests.\n\nThe split is off by one:\n\n```go\nfunc split(s string) []string {\n\tparts := strings.Split(s, \",\")\n\treturn parts[1:]\n}\n```",
	`{"command":"go test ./parser/","description":"Run the tests"}`,
	"\x1b[31m--- FAIL: TestParse (0.00s)\x1b[0m\r\n    parse_test.go:12: got 1, want 2\r\nFAIL\r\nexit status 1",
	"--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1, want 2",
	"Résumé: the lexer reads runes — 日本語 too 🎉.\n  - first item\n  - second item",
	`{"a":` + strings.Repeat(`"lorem ipsum dolor sit amet",`, 40) + `"z":1}`,
	"Fixed: the parser now splits on every separator.",
}

func logLines(texts ...string) *LogLines {
	l := NewLogLines()
	for _, t := range texts {
		l.Add(t)
	}
	return l
}

func TestLogLines(t *testing.T) {
	l := logLines(agentTexts...)
	lines := l.Lines()
	seen := map[string]bool{}
	for _, line := range lines {
		switch {
		case !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1:
			t.Errorf("line %q: want one newline, at its end", line)
		case line[0] != ' ' && line[0] != '\t', strings.TrimSpace(line) == "":
			t.Errorf("line %q: want whitespace, then text", line)
		case strings.ContainsAny(line, "\r\x1b"):
			t.Errorf("line %q keeps a control character", line)
		case !utf8.ValidString(line):
			t.Errorf("line %q is not UTF-8", line)
		case len(strings.TrimLeft(line, " \t")) > maxLogLineBytes+1:
			t.Errorf("line %q: %d bytes, longer than %d", line, len(line), maxLogLineBytes)
		case seen[line]:
			t.Errorf("line %q twice", line)
		}
		seen[line] = true
	}
	for _, want := range []string{" the parser test fails, fix it\n", "\tparts := strings.Split(s, \",\")\n",
		"    parse_test.go:12: got 1, want 2\n", "  - first item\n", " [31m--- FAIL: TestParse (0.00s)[0m\n"} {
		if !seen[want] {
			t.Errorf("line %q missing from %q", want, lines)
		}
	}
	if l.Distinct() != len(lines) {
		t.Errorf("Distinct %d, want %d (no more than the pool holds)", l.Distinct(), len(lines))
	}

	// More distinct lines than a pool holds: a sample, the same for the
	// same texts.
	var many []string
	for i := range 3 * MaxLogLines {
		many = append(many, fmt.Sprintf("line %d of the log", i))
	}
	text := strings.Join(many, "\n")
	a, b := logLines(text), logLines(text)
	if len(a.Lines()) != MaxLogLines || a.Distinct() != 3*MaxLogLines {
		t.Errorf("%d lines kept of %d, want %d of %d", len(a.Lines()), a.Distinct(), MaxLogLines, 3*MaxLogLines)
	}
	if !slices.Equal(a.Lines(), b.Lines()) {
		t.Error("the same texts give other lines")
	}
	late := 0
	for _, line := range a.Lines() {
		var k int
		fmt.Sscanf(line, " line %d", &k)
		if k >= MaxLogLines {
			late++
		}
	}
	if late < MaxLogLines/2 {
		t.Errorf("%d of %d kept lines come after the first %d: want a sample of all of them", late, MaxLogLines, MaxLogLines)
	}
}

// The from-logs class is built to exact lengths by every tokenizer, alone
// and after any other class's text, from the logs' lines, and the same
// for the same seed.
func TestBuildFromLogs(t *testing.T) {
	l := logLines(agentTexts...)
	pool := map[string]bool{}
	for _, line := range l.Lines() {
		pool[line] = true
	}
	for name, count := range counters(t) {
		t.Run(name, func(t *testing.T) {
			b, err := NewBuilder(count, WithLogs(l))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Supports(FromLogs); err != nil {
				t.Fatalf("Supports: %v", err)
			}
			for _, n := range []int{1, 2, 3, 17, 200, 1000, 8000} {
				for seed := uint64(0); seed < 3; seed++ {
					text := b.BuildContent(FromLogs, seed, n)
					if got, _ := count(text); got != n {
						t.Fatalf("n %d seed %d: %d tokens in %q", n, seed, got, clip(text))
					}
					if again := b.BuildContent(FromLogs, seed, n); again != text {
						t.Fatalf("n %d seed %d: two texts for one seed", n, seed)
					}
					for _, before := range append(Contents(), FromLogs) {
						head := b.BuildContent(before, seed+100, 50)
						if got, _ := count(head + text); got != 50+n {
							t.Fatalf("n %d seed %d after %s: %d tokens, want %d, in %q", n, seed, before, got, 50+n, clip(head+text))
						}
					}
					if n < 1000 {
						continue
					}
					logged := 0
					for line := range strings.Lines(text) {
						if pool[line] {
							logged += len(line)
						}
					}
					if logged < len(text)*9/10 {
						t.Fatalf("n %d seed %d: %d of %d bytes are the logs' lines", n, seed, logged, len(text))
					}
				}
			}
			if b.BuildContent(FromLogs, 1, 500) == b.BuildContent(FromLogs, 2, 500) {
				t.Error("two seeds give the same text")
			}
		})
	}
}

func TestSupportsFromLogs(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []Option
		want string
	}{
		{"no logs", nil, "no log lines"},
		{"one line", []Option{WithLogs(logLines("only this line"))}, "1 of its lines"},
		{"none", []Option{WithLogs(NewLogLines())}, "0 of its lines"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBuilder(wordCount, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Supports(FromLogs); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Supports = %v, want an error saying %q", err, tt.want)
			}
			if err := b.Supports(Code); err != nil {
				t.Errorf("Supports(code) = %v", err)
			}
		})
	}
}
