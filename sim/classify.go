package sim

import "strings"

// Thresholds of classifyText, documented in docs/simulator.md.
const (
	// repetitiveMinWords is the fewest words a text needs to be judged
	// repetitive; repetitiveDistinct is the distinct-word share below
	// which it is (of its first classifyWords words).
	repetitiveMinWords = 16
	repetitiveDistinct = 0.25
	classifyWords      = 2048
	// jsonShare and codeShare are the shares of a text's non-space bytes
	// that JSON punctuation ({}[]":,) and code punctuation ((){};=<>)
	// must reach.
	jsonShare = 0.10
	codeShare = 0.04
)

// classify is the content class of a request, from what a server can see:
// tool-calls when the request declares tools (chat's tools) or carries
// tool calls or tool results (chat's tool_calls, a tool or function
// message, Responses' function_call_output); otherwise the class of its
// last user message's text (a legacy completion's prompt), by
// classifyText. It is deterministic and looks at nothing else.
func classify(g *genRequest) string {
	if g.tools {
		return ClassToolCalls
	}
	if g.raw != nil {
		return classifyText(*g.raw)
	}
	last := -1
	for i := range g.turns {
		switch g.turns[i].role {
		case "tool", "function":
			return ClassToolCalls
		case "user":
			last = i
		}
	}
	if last < 0 {
		return ClassProse
	}
	return classifyText(strings.Join(g.turns[last].parts, "\n"))
}

// classifyText is the content class of a text, the first rule that holds:
//
//   - repetitive: at least 16 words, fewer than 25% of them distinct (of
//     the first 2048 words);
//   - json: it begins with { or [ (or holds a ```json fence) and JSON
//     punctuation ({}[]":,) is at least 10% of its non-space bytes;
//   - code: it holds a ``` fence, or code punctuation ((){};=<>) is at
//     least 4% of its non-space bytes;
//   - prose: anything else.
func classifyText(s string) string {
	if repetitive(s) {
		return ClassRepetitive
	}
	t := strings.TrimSpace(s)
	var nonSpace, jsonP, codeP int
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c < 0x80 && asciiSpace[c] {
			continue
		}
		nonSpace++
		switch c {
		case '{', '}', '[', ']', '"', ':', ',':
			jsonP++
		}
		switch c {
		case '(', ')', '{', '}', ';', '=', '<', '>':
			codeP++
		}
	}
	if nonSpace == 0 {
		return ClassProse
	}
	share := func(n int) float64 { return float64(n) / float64(nonSpace) }
	if (t[0] == '{' || t[0] == '[' || strings.Contains(t, "```json")) && share(jsonP) >= jsonShare {
		return ClassJSON
	}
	if strings.Contains(t, "```") || share(codeP) >= codeShare {
		return ClassCode
	}
	return ClassProse
}

// repetitive reports whether s has at least repetitiveMinWords words of
// which fewer than repetitiveDistinct are distinct, counting its first
// classifyWords words.
func repetitive(s string) bool {
	seen := make(map[string]struct{}, 64)
	n, from := 0, -1
	for i := 0; i <= len(s) && n < classifyWords; i++ {
		space := i == len(s) || s[i] < 0x80 && asciiSpace[s[i]]
		switch {
		case !space && from < 0:
			from = i
		case space && from >= 0:
			seen[s[from:i]] = struct{}{}
			n, from = n+1, -1
		}
	}
	return n >= repetitiveMinWords && float64(len(seen)) < repetitiveDistinct*float64(n)
}
