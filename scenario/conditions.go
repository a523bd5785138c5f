package scenario

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// Conditions are the conditions of a tier as written, each with its place
// in the file: `abort_on:` here, and a tiers file's tiers. Package verdict
// reads them (verdict.ParseTier); scenario only keeps the texts and their
// positions, so that an error in one names file:line:col. In YAML a list of
// strings, or one string of comma-separated conditions:
//
//	abort_on: [ttft_ms.p90 <= 5000, error_rate <= 5%]
//	abort_on: "ttft_ms.p90 <= 5000, error_rate <= 5%"
type Conditions []ConditionText

// ConditionText is one condition as written ("ttft_ms.p90 <= 2000") and
// where: its 1-based line and column (zero when it came from no file).
type ConditionText struct {
	Text      string
	Line, Col int
}

// Shorthand reads one condition from a scalar.
func (c *ConditionText) Shorthand(n *yaml.Node) string {
	if n.ShortTag() != "!!str" {
		return "must be a condition such as \"ttft_ms.p90 <= 2000\" (got " + n.Value + ")"
	}
	*c = ConditionText{Text: strings.TrimSpace(n.Value), Line: n.Line, Col: n.Column}
	return ""
}

// YAMLWant describes a condition's form for error messages.
func (*ConditionText) YAMLWant() string { return `a condition such as "ttft_ms.p90 <= 2000"` }

// Shorthand reads a string of comma-separated conditions, each placed at
// its own column when the string is on one line.
func (c *Conditions) Shorthand(n *yaml.Node) string {
	if n.ShortTag() != "!!str" {
		return "must be " + c.YAMLWant() + " (got " + n.Value + ")"
	}
	*c = SplitConditions(n.Value, n.Line, n.Column+quoteWidth(n))
	return ""
}

// YAMLWant describes the forms of a list of conditions.
func (*Conditions) YAMLWant() string {
	return `a list of conditions, or one string of them separated by commas ("ttft_ms.p90 <= 2000, error_rate <= 1%")`
}

// SplitConditions splits s at its commas into conditions, trimmed, each
// placed at line and the column where it starts (s beginning at col;
// 0 for neither when s came from no file). Empty parts are kept, so
// that they can be refused.
func SplitConditions(s string, line, col int) Conditions {
	var cs Conditions
	off := 0
	for part := range strings.SplitSeq(s, ",") {
		lead := len(part) - len(strings.TrimLeft(part, " \t"))
		ct := ConditionText{Text: strings.TrimSpace(part)}
		if line > 0 && !strings.Contains(s, "\n") {
			ct.Line, ct.Col = line, col+off+lead
		} else if line > 0 {
			ct.Line, ct.Col = line, col
		}
		cs = append(cs, ct)
		off += len(part) + 1
	}
	return cs
}

// quoteWidth is how far a scalar's text starts after its node's column:
// one for a quoted string, none for a plain one.
func quoteWidth(n *yaml.Node) int {
	if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0 {
		return 1
	}
	return 0
}
