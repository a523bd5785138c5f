package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// The schemas are llm-d-benchmark's, unchanged (testdata/br/README.md):
// v0.2, and v0.2.1, of which every v0.2 report is one.
var schemaFiles = []string{"testdata/br/br_v0_2_json_schema.json", "testdata/br/br_v0_2_1_json_schema.json"}

// compileSchemas compiles the vendored schemas, offline, with formats
// (date-time) asserted.
func compileSchemas(t *testing.T) []*jsonschema.Schema {
	t.Helper()
	var out []*jsonschema.Schema
	for _, f := range schemaFiles {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource(abs, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(abs)
		if err != nil {
			t.Fatalf("compile %s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

// unitsAllowed are the units llm-d's Pydantic classes (schema_v0_2.py,
// base.py) allow for each statistic, by its key: what the JSON schema
// does not check. A statistic the export writes must be listed here.
var unitsAllowed = map[string][]string{
	"input_length": {"count"}, "output_length": {"count"},
	"time_to_first_token": {"ms", "s"}, "request_latency": {"ms", "s"},
	"time_per_output_token": {"ms/token", "s/token"}, "inter_token_latency": {"ms/token", "s/token"},
	"normalized_time_per_output_token": {"ms/token", "s/token"},
	"input_token_rate":                 {"tokens/s"}, "output_token_rate": {"tokens/s"}, "total_token_rate": {"tokens/s"},
	"request_rate":   {"queries/s"},
	"kv_cache_usage": {"percent", "fraction"}, "cache_hit_rate": {"percent", "fraction"},
	"running_requests": {"count"}, "waiting_requests": {"count"},
}

// checkReport validates one report's JSON against every schema, then
// the rules the schemas leave to llm-d's classes: each statistic's units,
// its percentiles in order, and its window.
func checkReport(t *testing.T, what string, schemas []*jsonschema.Schema, data []byte) map[string]any {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i, s := range schemas {
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s does not validate against %s:\n%v", what, schemaFiles[i], err)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	walkStats(t, what, "", doc)
	return doc
}

// walkStats checks every statistic (an object with units) under v.
func walkStats(t *testing.T, what, path string, v any) {
	t.Helper()
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			walkStats(t, what, fmt.Sprintf("%s[%d]", path, i), e)
		}
	case map[string]any:
		if u, ok := x["units"].(string); ok && !strings.HasSuffix(path, "time_series") {
			key := path[strings.LastIndex(path, ".")+1:]
			allowed, known := unitsAllowed[key]
			if !known || !slices.Contains(allowed, u) {
				t.Errorf("%s: %s in %q (allowed: %v)", what, path, u, allowed)
			}
			if x["window"] != "steady" {
				t.Errorf("%s: %s names no steady window: %v", what, path, x["window"])
			}
			prev := math.Inf(-1)
			for _, p := range []string{"min", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99p9", "max"} {
				if f, ok := x[p].(float64); ok {
					if f < prev {
						t.Errorf("%s: %s: %s = %v below the one before (%v)", what, path, p, f, prev)
					}
					prev = f
				}
			}
			return
		}
		for k, e := range x {
			walkStats(t, what, path+"."+k, e)
		}
	}
}

// get reads a dotted path of a decoded report.
func get(doc map[string]any, path string) any {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// encode writes one report as JSON, as `sixpin report --format br0.2` does.
func encode(t *testing.T, r *export.BenchmarkReport) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := export.WriteBenchmarkReports(&b, []*export.BenchmarkReport{r}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fixedSim writes a simulator profile with fixed timing.
func fixedSim(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixed.yaml")
	src := "name: fixed\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\nsim: {model: m, timing: fixed, fixed: {ttft: 20ms, itl: 2ms}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func scenarioFile(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func quiet(cfg harness.Config) harness.Config {
	cfg.Out, cfg.ErrOut = &bytes.Buffer{}, &bytes.Buffer{}
	cfg.Getenv = func(string) string { return "" }
	return cfg
}

const brSrc = `name: br
seed: 4
pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 40, max: 120}}
  output: {tokens: 12, exact: true}
  concurrency: {mode: closed, streams: 2}
requests: 30
windows: {burst: 1s}
`

// A sweep's points, each a run: one report per point, valid against the
// schemas, stages 0 and 1 of one experiment (one eid, a uid each), each
// the point's steady window in the report's units: its TTFT and E2E in
// s and its TPOT and ITL in s/token, the results' own percentiles
// divided by 1,000; token lengths in count; the aggregate output rate
// in tokens/s beside the concurrency; the figures sixpin does not have
// left out. A run alone is a report of stage 0.
func TestBenchmarkReportOfASweep(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	out := filepath.Join(t.TempDir(), "sweep.json")
	o, err := harness.Run(context.Background(), context.Background(), quiet(harness.Config{
		ScenarioPath: scenarioFile(t, brSrc+"sweep: {pin: concurrency.streams, values: [1, 3]}\n"), Profile: fixedSim(t), Output: out}))
	if err != nil {
		t.Fatal(err)
	}
	reports := export.BenchmarkReportsOfSet(o.Set)
	if len(reports) != 2 {
		t.Fatalf("%d reports of 2 points", len(reports))
	}
	uids := map[string]bool{}
	for i, r := range reports {
		run := o.Set.Runs[i]
		doc := checkReport(t, fmt.Sprintf("point %d", i), schemas, encode(t, r))
		w := run.Windows[results.WindowSteady]
		if r.Run.EID != reports[0].Run.EID || uids[r.Run.UID] || r.Scenario.Load.Standardized.Stage != i {
			t.Errorf("point %d: eid %s (first %s), uid %s seen %v, stage %d", i, r.Run.EID, reports[0].Run.EID, r.Run.UID, uids[r.Run.UID], r.Scenario.Load.Standardized.Stage)
		}
		uids[r.Run.UID] = true
		if c := r.Scenario.Load.Standardized.Concurrency; c == nil || *c != int(o.Set.Values[i]) {
			t.Errorf("point %d: concurrency %v, want %v", i, c, o.Set.Values[i])
		}
		for _, c := range []struct {
			path string
			want float64
		}{
			{"results.request_performance.aggregate.latency.time_to_first_token.mean", w.TTFTMs.Mean / 1000},
			{"results.request_performance.aggregate.latency.time_to_first_token.p50", w.TTFTMs.P50 / 1000},
			{"results.request_performance.aggregate.latency.time_to_first_token.p99", w.TTFTMs.P99 / 1000},
			{"results.request_performance.aggregate.latency.request_latency.p90", w.E2EMs.P90 / 1000},
			{"results.request_performance.aggregate.latency.time_per_output_token.p50", w.TPOTMs.P50 / 1000},
			{"results.request_performance.aggregate.latency.inter_token_latency.p95", w.ITLMs.P95 / 1000},
			{"results.request_performance.aggregate.requests.input_length.max", w.PromptTokens.Max},
			{"results.request_performance.aggregate.requests.output_length.p50", w.OutputPerReq.P50},
			{"results.request_performance.aggregate.requests.total", float64(w.Requests)},
			{"results.request_performance.aggregate.throughput.output_token_rate.mean", w.AggregateOutputTokS},
			{"results.request_performance.aggregate.throughput.request_rate.mean", float64(w.Completed) / w.DurationS},
			{"scenario.load.standardized.input_seq_len.max", 120},
			{"scenario.load.standardized.output_seq_len.value", 12},
		} {
			got, ok := get(doc, c.path).(float64)
			if !ok || math.Abs(got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("point %d: %s = %v, want %v", i, c.path, get(doc, c.path), c.want)
			}
		}
		if u := get(doc, "results.request_performance.aggregate.latency.time_to_first_token.units"); u != "s" {
			t.Errorf("TTFT in %v", u)
		}
		for _, absent := range []string{"results.request_performance.aggregate.latency.normalized_time_per_output_token",
			"results.request_performance.aggregate.throughput.input_token_rate", "results.request_performance.aggregate.throughput.total_token_rate",
			"scenario.load.standardized.rate_qps"} {
			if v := get(doc, absent); v != nil {
				t.Errorf("point %d: %s = %v: sixpin has no such figure", i, absent, v)
			}
		}
		if s := get(doc, "scenario.load.standardized.input_seq_len.distribution"); s != "uniform" {
			t.Errorf("input distribution %v", s)
		}
		if d := r.Scenario.Load.Metadata.Description; !strings.Contains(d, "steady window") || !strings.Contains(d, "simulated") {
			t.Errorf("load description %q", d)
		}
	}
	one := export.BenchmarkReportOf(o.Set.Runs[0])
	checkReport(t, "a run alone", schemas, encode(t, one))
	if one.Scenario.Load.Standardized.Stage != 0 || one.Run.EID == reports[0].Run.EID {
		t.Errorf("a run alone: stage %d, eid %s (the sweep's %s)", one.Scenario.Load.Standardized.Stage, one.Run.EID, reports[0].Run.EID)
	}
	if again := export.BenchmarkReportOf(o.Set.Runs[0]); again.Run.UID != one.Run.UID {
		t.Error("exporting a run again gives it another uid")
	}

	// Several reports go to stdout as JSON Lines, and to files as
	// llm-d-benchmark names them.
	var b bytes.Buffer
	if err := export.WriteBenchmarkReports(&b, reports); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines for 2 reports", len(lines))
	}
	for i, l := range lines {
		checkReport(t, fmt.Sprintf("line %d", i+1), schemas, []byte(l))
	}
	base := filepath.Join(t.TempDir(), "br.json")
	paths, err := export.WriteBenchmarkReportFiles(base, reports)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{strings.TrimSuffix(base, ".json") + "_0.json", strings.TrimSuffix(base, ".json") + "_1.json"}; !slices.Equal(paths, want) {
		t.Fatalf("files %v, want %v", paths, want)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, p, schemas, data)
	}
}

// Shards merged: one report whose parallelism is the shards' count, its
// request count the merged run's.
func TestBenchmarkReportOfMergedShards(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	profile, path := fixedSim(t), scenarioFile(t, brSrc)
	const n = 2
	dir := t.TempDir()
	start := time.Now().Add(300 * time.Millisecond)
	shards := make([]results.Shard, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cfg := quiet(harness.Config{ScenarioPath: path, Profile: profile, Output: filepath.Join(dir, fmt.Sprintf("s%d.json", i)),
				Distributed: harness.Distributed{Shard: scenario.Shard{I: i, N: n}, StartAt: start, RunID: "br"}})
			o, err := harness.Run(context.Background(), context.Background(), cfg)
			if err != nil {
				t.Error(err)
				return
			}
			shards[i] = results.Shard{Name: o.Path, Run: o.Run}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	merged, err := results.Merge(shards, results.MergeOptions{StartTolerance: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r := export.BenchmarkReportOf(merged)
	doc := checkReport(t, "merged", schemas, encode(t, r))
	if r.Scenario.Load.Standardized.Parallelism != n {
		t.Errorf("parallelism %d, want %d", r.Scenario.Load.Standardized.Parallelism, n)
	}
	if got := get(doc, "results.request_performance.aggregate.requests.total"); got != float64(merged.Windows[results.WindowSteady].Requests) {
		t.Errorf("total %v, merged steady requests %d", got, merged.Windows[results.WindowSteady].Requests)
	}
	if c := r.Scenario.Load.Standardized.Concurrency; c == nil || *c != 2 {
		t.Errorf("merged concurrency %v, want the whole plan's 2", c)
	}
}

// A capacity search: one report per point, stages of one experiment,
// each naming its point's value and verdicts.
func TestBenchmarkReportsOfACapacitySearch(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	src := "name: cap\nseed: 5\npins:\n  model: {name: m}\n  prompt: {tokens: 40}\n  output: {tokens: 8, exact: true}\n" +
		"  concurrency: {mode: closed, streams: 1}\nduration: 30s\nwindows: {warmup: 1s, burst: 1s}\n"
	cc := harness.CapacityConfig{Config: quiet(harness.Config{ScenarioPath: scenarioFile(t, src), Profile: fixedSim(t), TimeScale: 0.2,
		Output: filepath.Join(t.TempDir(), "c.json"), Grace: time.Second}),
		Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, MaxRuns: 2, MinSteady: 2 * time.Second}
	o, err := harness.Capacity(context.Background(), context.Background(), cc)
	if err != nil {
		t.Fatalf("%v\n%s", err, cc.ErrOut)
	}
	reports := export.BenchmarkReportsOfCapacity(o.File)
	if len(reports) != len(o.File.Points) || len(reports) < 2 {
		t.Fatalf("%d reports of %d points", len(reports), len(o.File.Points))
	}
	for k, r := range reports {
		doc := checkReport(t, fmt.Sprintf("point %d", k+1), schemas, encode(t, r))
		p := o.File.Points[k]
		if r.Scenario.Load.Standardized.Stage != k || r.Run.EID != reports[0].Run.EID {
			t.Errorf("point %d: stage %d, eid %s", k+1, r.Scenario.Load.Standardized.Stage, r.Run.EID)
		}
		if c := r.Scenario.Load.Standardized.Concurrency; c == nil || float64(*c) != p.Value {
			t.Errorf("point %d: concurrency %v, value %v", k+1, c, p.Value)
		}
		if v := get(doc, "scenario.load.native.config.sixpin.capacity.value"); v != p.Value {
			t.Errorf("point %d: native capacity value %v", k+1, v)
		}
		if !strings.Contains(r.Run.Description, fmt.Sprintf("point %d: concurrency.streams %v", k+1, p.Value)) {
			t.Errorf("point %d: description %q", k+1, r.Run.Description)
		}
	}
}

// The validation is not vacuous: a report with a unit the schema does
// not know, or without its uid, is refused.
func TestSchemasRefuseABrokenReport(t *testing.T) {
	t.Parallel()
	schemas := compileSchemas(t)
	good := `{"version": "0.2", "run": {"uid": "x"}, "results": {"request_performance": {"aggregate": {"latency": {"time_to_first_token": {"units": "s", "mean": 0.1}}}}}}`
	for name, doc := range map[string]string{
		"unknown unit": strings.Replace(good, `"units": "s"`, `"units": "seconds"`, 1),
		"no uid":       strings.Replace(good, `"uid": "x"`, `"id": "x"`, 1),
		"no mean":      strings.Replace(good, `, "mean": 0.1`, ``, 1),
		"unknown key":  strings.Replace(good, `"latency"`, `"latencies"`, 1),
	} {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range schemas {
			if s.Validate(inst) == nil {
				t.Errorf("%s: %s accepts %s", name, schemaFiles[i], doc)
			}
		}
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(good))
	for i, s := range schemas {
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s refuses the good one: %v", schemaFiles[i], err)
		}
	}
}
