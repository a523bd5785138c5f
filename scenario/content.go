package scenario

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// Content classes of prompt text (pins.prompt.content): what the model is
// asked to read, which decides how well a speculative drafter guesses
// what it writes. Package prompt builds each to exact lengths.
const (
	ContentProse      = "prose"
	ContentCode       = "code"
	ContentJSON       = "json"
	ContentToolCalls  = "tool-calls"
	ContentRepetitive = "repetitive"
)

// ContentClasses lists the content classes, the default (ContentProse)
// first.
var ContentClasses = []string{ContentProse, ContentCode, ContentJSON, ContentToolCalls, ContentRepetitive}

// ContentClass returns the pin's content class: Content, or ContentProse
// when unset.
func (p PromptPin) ContentClass() string {
	if p.Content == "" {
		return ContentProse
	}
	return p.Content
}

// content checks pins.prompt.content and each mix class's: a known class,
// and only where prompts are built for independent requests.
func (v *validator) content() {
	check := func(path, c string) {
		switch {
		case c == "":
		case !isContentClass(c):
			v.errorf(path, "must be one of %s (got %q)", strings.Join(ContentClasses, ", "), c)
		case !independent(v.s.Workload):
			v.errorf(path, "only for workload kind requests: an agentic session's or a trace's turns are prose")
		}
	}
	check("pins.prompt.content", v.s.Pins.Prompt.Content)
	for i, c := range v.s.Pins.Mix.Classes {
		if c.Prompt != nil {
			check(fmt.Sprintf("pins.mix.classes[%d].prompt.content", i), c.Prompt.Content)
		}
	}
}

// ownsPromptTokens reports whether the class pins its own prompt length:
// it has a prompt pin that is not only a content class.
func (c Class) ownsPromptTokens() bool {
	return c.Prompt != nil && (c.Prompt.Content == "" || !c.Prompt.Tokens.IsZero())
}

// independent reports whether w's prompts are built per request (kind
// requests, or unset).
func independent(w Workload) bool { return !w.Agentic() && !w.Replay() }

func isContentClass(c string) bool {
	for _, k := range ContentClasses {
		if k == c {
			return true
		}
	}
	return false
}

// contentDeclared is the prompt's declared content: the one class every
// request's prompt is, or, when the mix's classes differ, each content's
// share of the weight ("code 70%, prose 30%"), in order of first use.
// Empty for workloads that are not independent requests.
func (s *Scenario) contentDeclared() string {
	if !independent(s.Workload) {
		return ""
	}
	var order []string
	weight := map[string]float64{}
	var total float64
	for _, c := range s.effectiveClasses() {
		if _, seen := weight[c.content]; !seen {
			order = append(order, c.content)
		}
		weight[c.content] += c.weight
		total += c.weight
	}
	if len(order) == 1 || total <= 0 {
		return order[0]
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s %s%%", c, numfmt.Short(100*weight[c]/total))
	}
	return strings.Join(parts, ", ")
}

// Contents returns the content classes the plan's requests use, in
// ContentClasses order.
func (p *Plan) Contents() []string {
	used := map[string]bool{}
	for _, c := range p.classes {
		used[c.content] = true
	}
	var out []string
	for _, c := range ContentClasses {
		if used[c] {
			out = append(out, c)
		}
	}
	return out
}
