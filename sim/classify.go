package sim

import "strings"

// Thresholds of classifyText, documented in docs/simulator.md.
const (
	// repetitiveMinWords is the fewest words a text needs to be judged
	// repetitive; repetitiveShare is the share of its words (of its first
	// classifyWords) that must end a repeatedWords-word sequence seen
	// earlier in it.
	repetitiveMinWords = 16
	repetitiveShare    = 0.5
	repeatedWords      = 4
	classifyWords      = 2048
	// indentedShare is the share of a text's lines (at least
	// codeMinLines) that, indented, make it code.
	indentedShare = 1.0 / 3
	codeMinLines  = 3
	// jsonShare and codeShare are the shares of a text's non-space bytes
	// that JSON punctuation ({}[]":,) and code punctuation ((){};=<>)
	// must reach.
	jsonShare = 0.10
	codeShare = 0.04
)

// classify is the content class of a request, from what a server can see:
// tool-calls when the request declares tools (a non-empty tools list, in
// any protocol) or carries tool calls or tool results (chat's tool_calls,
// a tool or function message, Messages' tool_use and tool_result blocks,
// Responses' function_call_output); otherwise the class of its
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
//   - repetitive: at least 16 words, and at least half of them (of the
//     first 2048) end a 4-word sequence seen earlier in the text (a
//     compressibility measure: text that an LZ-style coder would mostly
//     copy from itself);
//   - json: it begins with { or [ (or holds a ```json fence) and JSON
//     punctuation ({}[]":,) is at least 10% of its non-space bytes;
//   - code: it holds a ``` fence, or code punctuation ((){};=<>) is at
//     least 4% of its non-space bytes, or it has at least 3 lines and a
//     third of them are indented (a tab or two spaces);
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
	if strings.Contains(t, "```") || share(codeP) >= codeShare || indented(t) {
		return ClassCode
	}
	return ClassProse
}

// repetitive reports whether s has at least repetitiveMinWords words of
// which at least repetitiveShare end a sequence of repeatedWords words
// seen earlier in s, counting its first classifyWords words.
func repetitive(s string) bool {
	var ring [repeatedWords]uint64
	seen := make(map[uint64]struct{}, 64)
	n, rep, from := 0, 0, -1
	for i := 0; i <= len(s) && n < classifyWords; i++ {
		space := i == len(s) || s[i] < 0x80 && asciiSpace[s[i]]
		switch {
		case !space && from < 0:
			from = i
		case space && from >= 0:
			ring[n%repeatedWords] = hashString(fnvOffset, s[from:i])
			if n >= repeatedWords-1 {
				g := uint64(fnvOffset)
				for k := n - repeatedWords + 1; k <= n; k++ {
					g = hashUint64(g, ring[k%repeatedWords])
				}
				if _, ok := seen[g]; ok {
					rep++
				} else {
					seen[g] = struct{}{}
				}
			}
			n, from = n+1, -1
		}
	}
	return n >= repetitiveMinWords && float64(rep) >= repetitiveShare*float64(n)
}

// indented reports whether s has at least codeMinLines lines of which at
// least indentedShare begin with a tab or two spaces.
func indented(s string) bool {
	lines, in := 0, 0
	for len(s) > 0 {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		lines++
		if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "  ") {
			in++
		}
	}
	return lines >= codeMinLines && float64(in) >= indentedShare*float64(lines)
}
