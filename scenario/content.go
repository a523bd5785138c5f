package scenario

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"gopkg.in/yaml.v3"
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

// ContentClasses lists the synthetic content classes, the default
// (ContentProse) first.
var ContentClasses = []string{ContentProse, ContentCode, ContentJSON, ContentToolCalls, ContentRepetitive}

// ContentFromLogs is prompt text built from the lines of the user's own
// agent logs (pins.prompt.logs): a content class like the others, but not
// in ContentClasses, which are the classes sixpin makes up (a content
// check runs each of them).
const ContentFromLogs = "from-logs"

// contentNames are every value pins.prompt.content accepts.
var contentNames = append(slices.Clip(ContentClasses), ContentFromLogs)

// Content is pins.prompt.content: the class of the prompts' text, one
// class or weights over classes, drawn per request. In YAML it is a class
// name ("code") or a mapping of class names to weights ({code: 3, prose:
// 1}); a name is that class at weight 1. nil (unset) is prose at the top
// level and the top level's content in a mix class.
type Content map[string]float64

// Shorthand lets the strict decoder accept a class name.
func (c *Content) Shorthand(n *yaml.Node) string {
	*c = Content{n.Value: 1}
	return ""
}

// YAMLWant describes Content's YAML forms for messages.
func (c *Content) YAMLWant() string {
	return "a content class or a mapping of content classes to weights"
}

// UnmarshalYAML accepts a class name or a mapping, for plain yaml.v3
// decoding. It is lenient and does not validate; Load is strict.
func (c *Content) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*c = Content{n.Value: 1}
		return nil
	}
	var m map[string]float64
	if err := n.Decode(&m); err != nil {
		return err
	}
	*c = m
	return nil
}

// MarshalYAML writes one class as its name and several as a mapping, so
// that it reads back through Load.
func (c Content) MarshalYAML() (any, error) {
	switch len(c) {
	case 0:
		return nil, nil
	case 1:
		for k := range c {
			return k, nil
		}
	}
	return map[string]float64(c), nil
}

// classes returns c's classes of positive weight with their shares of
// the total (0–1), the largest share first (ties in ContentClasses order,
// then by name); nil c is prose alone.
func (c Content) classes() []contentShare {
	if len(c) == 0 {
		return []contentShare{{ContentProse, 1}}
	}
	var total float64
	for _, w := range c {
		total += max(w, 0)
	}
	var out []contentShare
	for k, w := range c {
		if w > 0 && total > 0 {
			out = append(out, contentShare{k, w / total})
		}
	}
	slices.SortFunc(out, func(a, b contentShare) int {
		if a.share != b.share {
			return cmp.Compare(b.share, a.share)
		}
		return cmp.Or(cmp.Compare(contentRank(a.class), contentRank(b.class)), strings.Compare(a.class, b.class))
	})
	return out
}

// contentShare is a content class and its share of requests (0–1).
type contentShare struct {
	class string
	share float64
}

// contentRank is a class's position in ContentClasses, then
// ContentFromLogs (unknown ones last).
func contentRank(c string) int {
	if i := slices.Index(contentNames, c); i >= 0 {
		return i
	}
	return len(contentNames)
}

// Shares is each class's share of requests (0–1), classes of no weight
// left out: nil c is prose alone, and weights that differ only in scale
// give the same shares.
func (c Content) Shares() map[string]float64 {
	out := map[string]float64{}
	for _, x := range c.classes() {
		out[x.class] = x.share
	}
	return out
}

// String words the content: "code", or "code 75%, prose 25%".
func (c Content) String() string { return sharesWords(c.classes(), "") }

// sharesWords words classes and their shares; logs, when set, follows
// from-logs in parentheses ("from-logs (logs/)").
func sharesWords(cs []contentShare, logs string) string {
	name := func(c string) string {
		if c == ContentFromLogs && logs != "" {
			return c + " (" + logs + ")"
		}
		return c
	}
	if len(cs) == 1 {
		return name(cs[0].class)
	}
	parts := make([]string, len(cs))
	for i, x := range cs {
		parts[i] = fmt.Sprintf("%s %s%%", name(x.class), numfmt.Short(100*x.share))
	}
	return strings.Join(parts, ", ")
}

// content checks pins.prompt.content and each mix class's: known classes,
// weights ≥ 0 and not all 0, and only where prompts are built for
// independent requests; and pins.prompt.logs: the logs from-logs needs,
// set only with from-logs, at the top level, and a path that exists.
func (v *validator) content() {
	fromLogs := ""
	check := func(path string, c Content) {
		if len(c) == 0 {
			return
		}
		if !v.s.Workload.Independent() {
			v.errorf(path, "only for workload kind requests: an agentic session's or a trace's turns are prose")
			return
		}
		var total float64
		for _, k := range slices.Sorted(maps.Keys(c)) {
			switch w := c[k]; {
			case !slices.Contains(contentNames, k) && len(c) == 1:
				v.errorf(path, "must be one of %s (got %q)", strings.Join(contentNames, ", "), k)
			case !slices.Contains(contentNames, k):
				v.errorf(path+"."+k, "not a content class (want %s)", strings.Join(contentNames, ", "))
			case w < 0:
				v.errorf(path+"."+k, "weight must be ≥ 0 (got %s)", num(w))
			default:
				total += w
				if k == ContentFromLogs && w > 0 && fromLogs == "" {
					fromLogs = path
					if len(c) > 1 {
						fromLogs += "." + k
					}
				}
			}
		}
		if total == 0 && len(c) > 1 {
			v.errorf(path, "weights must not all be 0")
		}
	}
	check("pins.prompt.content", v.s.Pins.Prompt.Content)
	for i, c := range v.s.Pins.Mix.Classes {
		if c.Prompt != nil {
			check(fmt.Sprintf("pins.mix.classes[%d].prompt.content", i), c.Prompt.Content)
			if c.Prompt.Logs != "" {
				v.errorf(fmt.Sprintf("pins.mix.classes[%d].prompt.logs", i), "only at the top-level prompt pin (pins.prompt)")
			}
		}
	}
	logs := v.s.Pins.Prompt.Logs
	switch {
	case fromLogs != "" && logs == "":
		v.errorf(fromLogs, "from-logs needs pins.prompt.logs: the agent logs to build prompts from (Claude Code transcripts or Codex rollouts, a .jsonl file or a directory of them)")
	case logs == "":
	case !v.s.Workload.Independent():
		v.errorf("pins.prompt.logs", "only for workload kind requests, with content from-logs")
	case fromLogs == "":
		v.errorf("pins.prompt.logs", "only with content from-logs (the prompts are built from the logs' lines)")
	default:
		if _, err := os.Stat(v.s.LogsPath()); err != nil {
			v.errorf("pins.prompt.logs", "cannot read %s: %s", logs, statWords(err))
		}
	}
}

// statWords words a failed stat in a few words.
func statWords(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file or directory"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// LogsPath is pins.prompt.logs resolved: relative to the scenario file's
// directory unless absolute ("" when unset).
func (s *Scenario) LogsPath() string {
	p := s.Pins.Prompt.Logs
	if p == "" || filepath.IsAbs(p) || s.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(s.Path), p)
}

// ownsPromptTokens reports whether the class pins its own prompt length:
// it has a prompt pin that is not only a content class.
func (c Class) ownsPromptTokens() bool {
	return c.Prompt != nil && (len(c.Prompt.Content) == 0 || !c.Prompt.Tokens.IsZero())
}

// Independent reports whether w's prompts are built per request (kind
// requests, or unset): not agentic sessions, not a trace.
func (w *Workload) Independent() bool { return !w.Agentic() && !w.Replay() }

// contentDeclared is the prompt's declared content: the one class every
// request's prompt is, or each class's share of requests over the mix's
// classes and their contents ("code 75%, prose 25%"). Empty for
// workloads that are not independent requests.
func (s *Scenario) contentDeclared() string {
	if !s.Workload.Independent() {
		return ""
	}
	share := Content{}
	var total float64
	for _, c := range s.effectiveClasses() {
		total += c.weight
	}
	if total <= 0 { // no valid weights: Validate says so
		return ""
	}
	for _, c := range s.effectiveClasses() {
		for _, x := range c.content.classes() {
			share[x.class] += c.weight / total * x.share
		}
	}
	return sharesWords(share.classes(), s.Pins.Prompt.Logs)
}

// Contents returns the content classes the plan's requests use, in
// ContentClasses order, then ContentFromLogs.
func (p *Plan) Contents() []string {
	used := map[string]bool{}
	for _, c := range p.classes {
		for _, x := range c.contents {
			used[x.class] = true
		}
	}
	var out []string
	for _, c := range contentNames {
		if used[c] {
			out = append(out, c)
		}
	}
	return out
}
