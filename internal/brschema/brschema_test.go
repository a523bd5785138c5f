package brschema

import (
	"strings"
	"testing"
)

const good = `{"version": "0.2", "run": {"uid": "x"}, "results": {"request_performance": {"aggregate": {"latency": {"time_to_first_token": {"units": "s", "mean": 0.1, "p50": 0.09, "p90": 0.2, "window": "steady"}}}}}}`

// The checks are not vacuous: each broken report is refused, by the
// schemas or by the rules they leave to llm-d's classes, and the good
// one passes.
func TestCheckRefusesABrokenReport(t *testing.T) {
	t.Parallel()
	if err := Check([]byte(good), "steady"); err != nil {
		t.Fatalf("the good report: %v", err)
	}
	for name, c := range map[string]struct{ old, new, want string }{
		"unknown unit":    {`"units": "s"`, `"units": "seconds"`, "br_v0_2_json_schema.json"},
		"no uid":          {`"uid": "x"`, `"id": "x"`, "br_v0_2_json_schema.json"},
		"no mean":         {`"mean": 0.1, `, ``, "br_v0_2_json_schema.json"},
		"unknown key":     {`"latency"`, `"latencies"`, "br_v0_2_json_schema.json"},
		"a bad timestamp": {`"uid": "x"`, `"uid": "x", "time": {"start": "yesterday"}`, "br_v0_2_1_json_schema.json"},
		"a rate's units":  {`"units": "s"`, `"units": "tokens/s"`, `time_to_first_token in "tokens/s"`},
		"percentiles":     {`"p90": 0.2`, `"p90": 0.01`, "p90 = 0.01 below"},
		"no window":       {`, "window": "steady"`, ``, "window <nil>"},
		"an unknown stat": {`"time_to_first_token"`, `"time_to_last_token"`, "br_v0_2_json_schema.json"},
	} {
		doc := strings.Replace(good, c.old, c.new, 1)
		if err := Check([]byte(doc), "steady"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}
