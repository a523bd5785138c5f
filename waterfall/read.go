package waterfall

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/results"
)

// WriteFile writes f to path atomically, as indented JSON.
func WriteFile(path string, f *File) error {
	return atomicfile.WriteJSON(path, "waterfall", f)
}

// ReadFile reads a waterfall file and checks it as Read does.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read waterfall: %w", err)
	}
	return Read(path, data)
}

// Read decodes a waterfall file's data (name is used in errors) and checks
// that it holds together: its schema, known pins in its order, every
// configuration a step reads, run indices in range, one measure per run,
// and steps that multiply from the start to the end. Each problem is a
// fielderr.Error at file:line:col and its field. A file written before
// the attribution recorded each pin's range is filled again (Fill).
func Read(name string, data []byte) (*File, error) {
	var errs fielderr.List
	at := func(path []string, format string, args ...any) {
		e := &fielderr.Error{File: name, Field: strings.Join(path, "."), Msg: fmt.Sprintf(format, args...)}
		if off, _ := jsonerr.Find(data, path...); off > 0 {
			e.Line, e.Col = jsonerr.LineCol(data, off)
		}
		errs = append(errs, e)
	}
	if s := results.SchemaOf(data); s != Schema {
		at([]string{"schema"}, "want %q, got %q: not a sixpin waterfall file", Schema, s)
		return nil, errs
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		field, msg := jsonerr.Describe(err)
		e := &fielderr.Error{File: name, Field: field, Msg: msg}
		e.Line, e.Col, _ = jsonerr.Position(data, err)
		return nil, fielderr.List{e}
	}
	for i, pin := range f.Order {
		if !slices.Contains(DefaultOrder, pin) {
			at([]string{"order", strconv.Itoa(i)}, "unknown pin %q", pin)
		}
	}
	keys := map[string]bool{}
	for i, c := range f.Configs {
		ci := strconv.Itoa(i)
		if keys[c.Key] {
			at([]string{"configs", ci, "key"}, "configuration %q is listed twice", c.Key)
		}
		keys[c.Key] = true
		if len(c.Meas) != len(c.Runs) {
			at([]string{"configs", ci, "measures"}, "%d measures for %d runs", len(c.Meas), len(c.Runs))
		}
		for j, r := range c.Runs {
			if r < 0 || r >= len(f.Runs) {
				at([]string{"configs", ci, "runs", strconv.Itoa(j)}, "run %d: the file holds %d runs", r, len(f.Runs))
			}
		}
	}
	for i, s := range f.Steps {
		if !keys[s.Config] {
			at([]string{"steps", strconv.Itoa(i), "config"}, "configuration %q is not in configs", s.Config)
		}
	}
	if len(f.Steps) > len(f.Order) {
		at([]string{"steps"}, "%d steps for %d moved pins", len(f.Steps), len(f.Order))
	}
	if !f.Incomplete && len(errs) == 0 {
		last := f.Start.Value
		if n := len(f.Steps); n > 0 {
			last = f.Steps[n-1].Value
		}
		if last != f.End.Value {
			at([]string{"end", "value"}, "%v, but the last step's value is %v", f.End.Value, last)
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	if a := f.Attribution; len(a.Pins) > 0 && a.Pins[0].Hi == 0 {
		// Written before the attribution recorded each pin's range: fill
		// it again from the configurations' measures.
		if err := Fill(&f); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return &f, nil
}
