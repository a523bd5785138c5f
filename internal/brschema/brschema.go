// Package brschema checks an llm-d Benchmark Report for sixpin's tests:
// against llm-d-benchmark's published JSON schemas (v0.2 and v0.2.1,
// embedded; their source and licence are in README.md and LICENSE
// beside them), and against the rules those schemas leave to
// llm-d-benchmark's Pydantic classes (each statistic's units) and to
// sixpin (percentiles in order, every statistic naming its window).
//
// Only tests import it: it links a JSON-Schema validator the sixpin
// binary does not need.
package brschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The schemas, as llm-d-benchmark publishes them.
var (
	//go:embed br_v0_2_json_schema.json
	v02 []byte
	//go:embed br_v0_2_1_json_schema.json
	v021 []byte
)

// Names are the schemas' file names, in the order Check reports them.
var Names = []string{"br_v0_2_json_schema.json", "br_v0_2_1_json_schema.json"}

var (
	compileOnce sync.Once
	compiled    []*jsonschema.Schema
	compileErr  error
)

// schemas compiles the embedded schemas once: draft 2020-12, formats
// (date-time) asserted, nothing fetched.
func schemas() ([]*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		for i, data := range [][]byte{v02, v021} {
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			if err != nil {
				compileErr = fmt.Errorf("%s: %w", Names[i], err)
				return
			}
			c := jsonschema.NewCompiler()
			c.DefaultDraft(jsonschema.Draft2020)
			c.AssertFormat()
			url := "file:///sixpin/" + Names[i]
			if err := c.AddResource(url, doc); err != nil {
				compileErr = err
				return
			}
			s, err := c.Compile(url)
			if err != nil {
				compileErr = fmt.Errorf("compile %s: %w", Names[i], err)
				return
			}
			compiled = append(compiled, s)
		}
	})
	return compiled, compileErr
}

// Validate checks a report's JSON against both schemas only.
func Validate(data []byte) error {
	ss, err := schemas()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	var errs []error
	for i, s := range ss {
		if err := s.Validate(inst); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", Names[i], err))
		}
	}
	return errors.Join(errs...)
}

// UnitsAllowed are the units llm-d-benchmark's Pydantic classes
// (schema_v0_2.py, base.py) allow for each statistic, by its key: what
// the JSON schemas leave unchecked.
var UnitsAllowed = map[string][]string{
	"input_length": {"count"}, "output_length": {"count"},
	"time_to_first_token": {"ms", "s"}, "request_latency": {"ms", "s"},
	"time_per_output_token": {"ms/token", "s/token"}, "inter_token_latency": {"ms/token", "s/token"},
	"normalized_time_per_output_token": {"ms/token", "s/token"},
	"input_token_rate":                 {"tokens/s"}, "output_token_rate": {"tokens/s"}, "total_token_rate": {"tokens/s"},
	"request_rate":   {"queries/s"},
	"kv_cache_usage": {"percent", "fraction"}, "cache_hit_rate": {"percent", "fraction"},
	"running_requests": {"count"}, "waiting_requests": {"count"},
}

// Check validates a report's JSON against both schemas, then checks
// every statistic (an object with units): its key is one UnitsAllowed
// lists and its units one it allows, its percentiles from min to max do
// not decrease, and it names window as its window.
func Check(data []byte, window string) error {
	if err := Validate(data); err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	var errs []error
	walk("", doc, window, &errs)
	return errors.Join(errs...)
}

// walk checks every statistic under v, at path.
func walk(path string, v any, window string, errs *[]error) {
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			walk(fmt.Sprintf("%s[%d]", path, i), e, window, errs)
		}
	case map[string]any:
		u, ok := x["units"].(string)
		if !ok {
			for k, e := range x {
				walk(path+"."+k, e, window, errs)
			}
			return
		}
		key := path[strings.LastIndex(path, ".")+1:]
		if allowed, known := UnitsAllowed[key]; !known || !slices.Contains(allowed, u) {
			*errs = append(*errs, fmt.Errorf("%s in %q: allowed %v", path, u, allowed))
		}
		if x["window"] != window {
			*errs = append(*errs, fmt.Errorf("%s: window %v, want %q", path, x["window"], window))
		}
		prev := math.Inf(-1)
		for _, p := range []string{"min", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99p9", "max"} {
			if f, ok := x[p].(float64); ok {
				if f < prev {
					*errs = append(*errs, fmt.Errorf("%s: %s = %v below the one before it (%v)", path, p, f, prev))
				}
				prev = f
			}
		}
	}
}
