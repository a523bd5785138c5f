package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// Dialect formats: `sixpin report --dialect` writes text or JSON.
const (
	DialectText = "text"
	DialectJSON = "json"
)

// DialectInput is one run's figures under one peer's definitions, with
// the file they come from.
type DialectInput struct {
	Name   string
	Run    *results.Run
	Report *results.DialectReport
}

// dialectJSON is one run's dialect report as JSON: the figures with the
// run's identity, validity and pins, as every other report carries them.
type dialectJSON struct {
	File          string `json:"file"`
	SixpinVersion string `json:"sixpin_version"`
	Scenario      string `json:"scenario"`
	Seed          int64  `json:"seed"`
	Target        string `json:"target"`
	Valid         bool   `json:"valid"`
	// Invalid says why the run is not valid.
	Invalid []string  `json:"invalid,omitempty"`
	Pins    []pinJSON `json:"pins"`
	*results.DialectReport
}

// pinJSON is one pin of the card.
type pinJSON struct {
	Pin      string `json:"pin"`
	Declared string `json:"declared"`
	Observed string `json:"observed"`
	Verified string `json:"verified"`
	Reason   string `json:"reason,omitempty"`
}

// WriteDialect writes runs' dialect reports in format (DialectText or
// DialectJSON): text is each run's header, pin card and figures, each
// labelled with its definition; JSON one indented object for one run,
// JSON Lines for several.
func WriteDialect(w io.Writer, format string, runs []DialectInput) error {
	if format == DialectJSON {
		return writeDialectJSON(w, runs)
	}
	for i, in := range runs {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if len(runs) > 1 {
			if _, err := fmt.Fprintf(w, "══ %s ══\n", in.Name); err != nil {
				return err
			}
		}
		if err := writeDialectText(w, in); err != nil {
			return err
		}
	}
	return nil
}

func writeDialectJSON(w io.Writer, runs []DialectInput) error {
	for _, in := range runs {
		run := in.Run
		obj := dialectJSON{File: in.Name, SixpinVersion: run.SixpinVersion, Scenario: run.Scenario.Name, Seed: run.Scenario.Seed,
			Target: TargetLabel(run.Target), Valid: run.Valid, Invalid: run.Invalid, Pins: []pinJSON{}, DialectReport: in.Report}
		for _, r := range PinCard(run).Rows {
			obj.Pins = append(obj.Pins, pinJSON{Pin: r.Pin, Declared: r.Declared, Observed: r.Observed, Verified: string(r.Verdict), Reason: r.Reason})
		}
		var b []byte
		var err error
		if len(runs) == 1 {
			b, err = json.MarshalIndent(obj, "", "  ")
		} else {
			b, err = json.Marshal(obj)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func writeDialectText(w io.Writer, in DialectInput) error {
	run, d := in.Run, in.Report
	p := &numfmt.Printer{W: w}
	writeRunHead(p, run)
	p.F("IN %s's DEFINITIONS (--dialect %s) — %s\n", dialectNames[d.Dialect], d.Dialect, d.Peer)
	p.F("  source:      %s\n", d.Source)
	p.F("  window:      %s\n", d.Window)
	p.F("  percentiles: %s\n", d.Percentiles)
	if d.Unavailable != "" {
		p.F("UNAVAILABLE: %s\n", d.Unavailable)
	}
	p.F("\n")
	if err := WritePinCard(w, PinCard(run)); err != nil {
		return err
	}
	p.F("\n")
	// A definition is printed once, under the run of figures it defines.
	for i, f := range d.Figures {
		v := dialectValue(f)
		if f.Value == nil && f.Unavailable == d.Unavailable {
			v = "unavailable"
		}
		p.F("  %-40s %s\n", f.Name+":", v)
		if i+1 == len(d.Figures) || d.Figures[i+1].Definition != f.Definition {
			p.F("      ↳ %s\n", f.Definition)
		}
	}
	for _, n := range d.Notes {
		p.F("Note: %s\n", n)
	}
	return p.Err
}

// dialectNames are the peers' names as they spell them.
var dialectNames = map[string]string{
	results.DialectVLLM: "vLLM", results.DialectAIPerf: "AIPerf", results.DialectGuideLLM: "GuideLLM", results.DialectMLPerf: "MLPerf",
}

// dialectValue words a figure's value as the peers print theirs: counts
// whole, the rest to two decimals; an unavailable one with its reason.
func dialectValue(f results.DialectFigure) string {
	if f.Value == nil {
		return "unavailable — " + f.Unavailable
	}
	switch f.Unit {
	case "requests", "tokens":
		return fmt.Sprintf("%.0f", *f.Value)
	}
	return fmt.Sprintf("%.2f", *f.Value)
}
