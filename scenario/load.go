package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/trace"
	"gopkg.in/yaml.v3"
)

// Load reads the scenario file at path and returns it parsed, with defaults
// applied and validated (see Parse). A file that cannot be read gives a
// wrapped *fs.PathError; a bad scenario gives an ErrorList.
func Load(path string) (*Scenario, error) {
	data, err := bounds.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes one scenario from data, strictly: exactly one YAML
// document, no unknown keys, every value of its field's type. It then
// applies defaults, validates, and sets Path to path and SHA256 to the hex
// digest of data. path is used for error positions and the default name.
//
// On failure it returns a nil Scenario and an ErrorList holding every
// problem found, each positioned at file:line:col. Warnings land in the
// returned Scenario's Warnings.
func Parse(path string, data []byte) (*Scenario, error) {
	if len(data) > bounds.FileBytes {
		return nil, ErrorList{{File: path, Msg: fmt.Sprintf("the file is %s bytes, more than a scenario's %s (a long list of values belongs in a trace)",
			numfmt.Thousands(float64(len(data))), numfmt.Thousands(bounds.FileBytes))}}
	}
	var s Scenario
	doc, all := strictyaml.Decode(path, data, &s, yamlKind)
	if doc == nil {
		return nil, all
	}
	if err := sweepList(path, doc); err != nil {
		return nil, ErrorList{err}
	}

	sum := sha256.Sum256(data)
	s.Path, s.SHA256 = path, hex.EncodeToString(sum[:])
	if !doc.Has("seed") {
		s.Seed = DefaultSeed
	}
	s.applyDefaults(doc.Has)
	s.readTrace()
	verrs, warns := s.validate(doc.Has)

	for _, e := range verrs {
		if !doc.Failed(e.Field) {
			all = append(all, doc.Place(e))
		}
	}
	if len(all) > 0 {
		all.Sort()
		return nil, all
	}
	for _, w := range warns {
		doc.Place(w)
	}
	warns.Sort()
	s.Warnings = warns
	return &s, nil
}

// Shorthand lets the strict decoder accept steady: auto.
func (s *Steady) Shorthand(n *yaml.Node) string {
	if n.ShortTag() != "!!str" || n.Value != "auto" {
		return "must be " + s.YAMLWant() + " (got " + strictyaml.Got(n) + ")"
	}
	*s = Steady{Auto: true}
	return ""
}

// YAMLWant describes Steady's YAML forms for messages.
func (s *Steady) YAMLWant() string { return `"auto" or a mapping {start, end}` }

// String formats s as "auto", "[30s, 5m)" or "[30s, last arrival)".
func (s Steady) String() string {
	switch {
	case s.Auto:
		return "auto"
	case s.End == 0:
		return fmt.Sprintf("[%s, last arrival)", shortDur(s.Start))
	}
	return fmt.Sprintf("[%s, %s)", shortDur(s.Start), shortDur(s.End))
}

// UnmarshalYAML accepts "auto" or {start, end}, for plain yaml.v3 decoding.
// It is lenient and does not validate; Load is strict.
func (s *Steady) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Value == "auto" {
		*s = Steady{Auto: true}
		return nil
	}
	var y struct {
		Start Duration `yaml:"start"`
		End   Duration `yaml:"end"`
	}
	if err := n.Decode(&y); err != nil {
		return err
	}
	*s = Steady{Start: y.Start.D(), End: y.End.D()}
	return nil
}

// MarshalYAML writes "auto" or {start, end} as duration strings, so it reads
// back through Load.
func (s Steady) MarshalYAML() (any, error) {
	if s.Auto {
		return "auto", nil
	}
	type bounds struct {
		Start Duration `yaml:"start"`
		End   Duration `yaml:"end,omitempty"`
	}
	return bounds{Duration(s.Start), Duration(s.End)}, nil
}

// readTrace reads a trace replay's file, relative to the scenario's.
func (s *Scenario) readTrace() {
	w := &s.Workload
	if !w.Replay() || w.File == "" {
		return
	}
	path := w.File
	if !filepath.IsAbs(path) && s.Path != "" {
		path = filepath.Join(filepath.Dir(s.Path), path)
	}
	if w.Format == FormatMLPerfAgentic {
		w.MLPerf, w.readErr = trace.ReadMLPerfAgentic(path, w.SHA256)
		if w.MLPerf != nil {
			w.Trace = trace.FromTrace(w.MLPerf.Trace(wordCount, w.KeepsReasoning()))
		}
		return
	}
	w.Trace, w.readErr = trace.Open(path)
}

// wordCount is sixpin's word-level token count (one token per
// whitespace-separated word): what a dataset of real texts is summarised
// in before a target's tokenizer is known.
func wordCount(s string) int { return len(strings.Fields(s)) }

// sweepList explains a sweep given as a list: sweeping several pins at once
// is refused, with the reason, rather than reported as a type error.
func sweepList(path string, doc *strictyaml.Doc) *FieldError {
	v, ok := doc.Node("sweep")
	if !ok || v.Kind != yaml.SequenceNode {
		return nil
	}
	msg := "must be one mapping {pin, values}, not a list"
	if len(v.Content) > 1 {
		msg = fmt.Sprintf("sweeps one pin at a time (got %d): varying two pins at once confounds them — no figure could say which one moved it; write one scenario per pin", len(v.Content))
	}
	return &FieldError{File: path, Line: v.Line, Col: v.Column, Field: "sweep", Msg: msg}
}

// yamlKind names a scenario file in the errors about the whole file.
var yamlKind = strictyaml.Kind{Noun: "scenario", Keys: "name, pins, ...",
	Many: "an empirical distribution's values are at most " + numfmt.Thousands(bounds.Values) + "; replay a trace instead"}
