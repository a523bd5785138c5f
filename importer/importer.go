// Package importer translates another benchmark tool's invocation — vLLM's
// `vllm bench serve`, AIPerf's `aiperf profile`, GuideLLM's `guidellm
// benchmark`, an inference-perf config — into a sixpin scenario that
// sends the same workload: the same number of requests, the same input
// and output length distributions, the same concurrency or arrival
// process, the same don't-stop-early behaviour.
//
// Each importer follows one version of its peer's own argument
// definitions and sampling code (Peer says which, by repository, version
// and commit). A setting is translated faithfully, annotated where only a
// default or a detail differs (Note), or refused with the reason
// (Refusal); an unknown flag or key is refused by name. What a translation
// should make a server count is computed alongside (Totals), from the
// peer's semantics and from sixpin's own plan of the scenario.
//
// The package is data: it reads arguments and writes YAML, and runs
// nothing.
package importer

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/sixpin/sixpin/scenario"
)

// Peer identifies the tool an importer follows and the exact source it
// follows: the argument definitions and sampling code read to write it.
type Peer struct {
	// Name is the importer's name (`sixpin import NAME`).
	Name string
	// Command is the peer's command line as a user types it.
	Command string
	// Version is the peer's release (or "main" at a commit) followed.
	Version string
	// Source names the repository, commit and files followed.
	Source string
}

// Options tune an import.
type Options struct {
	// Name is the scenario's name ("" derives one from the peer).
	Name string
	// Profile is the path the profile will be written to, as the
	// scenario's target names it ("" when the caller writes none; the
	// scenario then names no target).
	Profile string
	// SpecialTokens is how many special tokens the peer's tokenizer adds
	// to a prompt (Hugging Face's num_special_tokens_to_add(): 1 for a
	// tokenizer that adds BOS, 0 for Qwen2's), which vLLM subtracts from
	// --random-input-len before drawing and the server adds back.
	SpecialTokens int
	// TemplateOverhead is what the server's chat template adds to each
	// prompt of a peer that speaks chat completions, in tokens. Peers
	// count a prompt's text tokens; sixpin's prompt pin counts what the
	// server counts, the template included. 0 pins the peer's text length
	// as the server's (see the note the import writes).
	TemplateOverhead int
}

// Result is one peer invocation translated.
type Result struct {
	Peer Peer
	// Name is the scenario's name (Options.Name, or one derived from the
	// peer and its dataset).
	Name string
	// Scenario is the scenario's YAML, every mapped setting commented
	// with the peer's flag; it loads with scenario.Parse.
	Scenario []byte
	// Profile is a profile's YAML for the target the peer addressed (nil:
	// the scenario needs none).
	Profile []byte
	// Notes annotate what is translated with a difference: a default that
	// differs, a detail sixpin does or measures otherwise.
	Notes []Note
	// Totals are what the translated workload should make a server count.
	Totals Totals
}

// Note is an annotation of one setting.
type Note struct {
	// Setting is the peer's flag or key ("--random-range-ratio",
	// "data.input_distribution"), or "" for the invocation as a whole.
	Setting string
	Text    string
}

func (n Note) String() string { return about(n.Setting, n.Text) }

// Refusal is a setting that cannot be translated faithfully, and why.
type Refusal struct {
	Setting string
	Reason  string
}

func (r Refusal) String() string { return about(r.Setting, r.Reason) }

// about is "setting: text", or text alone for the invocation as a whole.
func about(setting, text string) string {
	if setting == "" {
		return text
	}
	return setting + ": " + text
}

// Error is an import refused: every setting that cannot be translated,
// with its reason. Its Error names the peer and each setting.
type Error struct {
	Peer     string
	Refusals []Refusal
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "import %s: cannot translate faithfully:", e.Peer)
	for _, r := range e.Refusals {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// Totals are the token totals a translated workload should make a server
// count, in the server's prompt and generation tokens (sixpin's prompt
// pin: the chat template included).
type Totals struct {
	// Requests is how many requests the peer sends (measured ones; see
	// Warmup). RequestsExpected is set when the count itself is random
	// (an arrival process bounded by a duration): Requests is then its
	// expected value, rounded.
	Requests         int
	RequestsExpected bool
	// Input, Cached and Output are the peer's totals in tokens: exact
	// when Exact, else expected values (mean length × requests).
	Input, Cached, Output float64
	Exact                 bool
	// Why says how the peer's totals were computed ("200 × 512").
	Why []string
	// Warmup is what the peer sends the server before it measures
	// (requests and tokens; zero: none), which the scenario leaves out.
	Warmup Warmup
	// Plan is sixpin's plan of the scenario for its seed: exactly what
	// sixpin sends, and the digest of the sequence (results' parity).
	Plan scenario.Sequence
}

// Warmup is the requests a peer sends before it measures.
type Warmup struct {
	Requests      int
	Input, Output float64
	Setting       string
}

// problems gathers refusals and notes while an importer reads a peer's
// settings.
type problems struct {
	peer    string
	refused []Refusal
	notes   []Note
}

func (p *problems) refuse(setting, format string, args ...any) {
	p.refused = append(p.refused, Refusal{Setting: setting, Reason: fmt.Sprintf(format, args...)})
}

func (p *problems) note(setting, format string, args ...any) {
	p.notes = append(p.notes, Note{Setting: setting, Text: fmt.Sprintf(format, args...)})
}

// err is the refusal of the import, or nil.
func (p *problems) err() error {
	if len(p.refused) == 0 {
		return nil
	}
	return &Error{Peer: p.peer, Refusals: p.refused}
}

// finish renders w, checks that the scenario loads, and computes the
// totals: the peer's (from w's lengths) and sixpin's plan's.
func finish(peer Peer, w *workload, p *problems, o Options) (*Result, error) {
	if err := p.err(); err != nil {
		return nil, err
	}
	if o.Profile != "" && w.profile != nil {
		w.profilePath = o.Profile
	}
	data := w.render(peer, p.notes)
	sc, err := scenario.Parse(w.name+".yaml", data)
	if err != nil {
		// A translation sixpin cannot load is the importer's bug, or an
		// input beyond sixpin's bounds: say which settings produced it.
		var list scenario.ErrorList
		if errors.As(err, &list) {
			return nil, fmt.Errorf("import %s: the translated scenario does not load (%w); its YAML:\n%s", peer.Name, err, data)
		}
		return nil, err
	}
	plan := scenario.NewPlan(sc)
	n := plan.Len()
	t := w.totals()
	if n > 0 {
		t.Plan, _ = plan.Sequence(n)
	}
	r := &Result{Peer: peer, Name: w.name, Scenario: data, Notes: p.notes, Totals: t}
	if w.profile != nil {
		r.Profile = w.profile.render(peer)
	}
	return r, nil
}

// round6 rounds v to six significant digits, for YAML a person reads.
func round6(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	d := math.Pow(10, 6-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*d) / d
}
