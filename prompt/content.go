package prompt

import (
	"fmt"
	"strings"
)

// Content is a class of prompt text: what the model is asked to read,
// which decides how well a speculative drafter guesses what it writes.
type Content string

// The content classes. Every class is built to exact lengths by the same
// item arithmetic; Prose is Build's text.
const (
	// Prose is sentences of common English words (the default).
	Prose Content = "prose"
	// Code is tab-indented Go-like lines: assignments, calls, loops,
	// returns, comments.
	Code Content = "code"
	// JSON is a JSON array of records, one per line, two-space indented.
	JSON Content = "json"
	// ToolCalls is a JSON array of OpenAI-style function calls, one per
	// line: {"id": ..., "type": "function", "function": {"name": ...,
	// "arguments": "..."}}.
	ToolCalls Content = "tool-calls"
	// Repetitive is one sentence, drawn from the seed, repeated to the
	// length.
	Repetitive Content = "repetitive"
	// FromLogs is lines of the user's own agent logs, in a seeded
	// shuffle like Code's: a Builder builds it only when made WithLogs.
	// It is not in Contents, which lists the synthetic classes.
	FromLogs Content = "from-logs"
)

// Contents lists every content class, Prose first.
func Contents() []Content { return []Content{Prose, Code, JSON, ToolCalls, Repetitive} }

// ParseContent returns the class named s, or an error naming the classes.
func ParseContent(s string) (Content, error) {
	for _, c := range Contents() {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, 0, len(Contents()))
	for _, c := range Contents() {
		names = append(names, string(c))
	}
	return "", fmt.Errorf("unknown content %q (valid: %s)", s, strings.Join(names, ", "))
}
