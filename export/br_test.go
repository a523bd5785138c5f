package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/internal/brschema"
	"github.com/sixpin/sixpin/results"
)

// The fixtures are results and set files of real runs against the
// simulator (report/testdata/gen/README.md says how each was made).
const fixtures = "../report/testdata/"

// encode writes reports as `sixpin report --format br0.2` writes them to
// standard output.
func encode(t *testing.T, reports ...*export.BenchmarkReport) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := export.WriteBenchmarkReports(&b, reports); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// check validates one report as brschema does and returns it decoded.
func check(t *testing.T, what string, r *export.BenchmarkReport) map[string]any {
	t.Helper()
	data := encode(t, r)
	if err := brschema.Check(data, results.WindowSteady); err != nil {
		t.Errorf("%s:\n%v", what, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
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

const agg = "results.request_performance.aggregate."

// checkFigures checks a report's figures against the steady window of
// the run it was made of: latencies in s and s/token (the results' ms
// divided by 1,000), lengths in count, the aggregate output rate and the
// request count as they are; and what sixpin does not measure left out.
func checkFigures(t *testing.T, what string, doc map[string]any, run *results.Run) {
	t.Helper()
	w := run.Windows[results.WindowSteady]
	for _, c := range []struct {
		path string
		want float64
	}{
		{agg + "latency.time_to_first_token.mean", w.TTFTMs.Mean / 1000},
		{agg + "latency.time_to_first_token.p50", w.TTFTMs.P50 / 1000},
		{agg + "latency.time_to_first_token.p99", w.TTFTMs.P99 / 1000},
		{agg + "latency.time_to_first_token.max", w.TTFTMs.Max / 1000},
		{agg + "latency.request_latency.p90", w.E2EMs.P90 / 1000},
		{agg + "latency.time_per_output_token.p50", w.TPOTMs.P50 / 1000},
		{agg + "latency.inter_token_latency.p95", w.ITLMs.P95 / 1000},
		{agg + "requests.input_length.max", w.PromptTokens.Max},
		{agg + "requests.output_length.p50", w.OutputPerReq.P50},
		{agg + "requests.total", float64(w.Requests)},
		{agg + "throughput.output_token_rate.mean", w.AggregateOutputTokS},
		{agg + "throughput.request_rate.mean", float64(w.Completed) / w.DurationS},
	} {
		got, ok := get(doc, c.path).(float64)
		if !ok || math.Abs(got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s: %s = %v, want %v", what, c.path, get(doc, c.path), c.want)
		}
	}
	for path, want := range map[string]string{agg + "latency.time_to_first_token.units": "s", agg + "latency.inter_token_latency.units": "s/token",
		agg + "requests.input_length.units": "count", agg + "throughput.output_token_rate.units": "tokens/s", agg + "throughput.request_rate.units": "queries/s"} {
		if got := get(doc, path); got != want {
			t.Errorf("%s: %s = %v, want %s", what, path, got, want)
		}
	}
	for _, absent := range []string{agg + "latency.normalized_time_per_output_token", agg + "throughput.input_token_rate", agg + "throughput.total_token_rate"} {
		if v := get(doc, absent); v != nil {
			t.Errorf("%s: %s = %v: sixpin has no such figure", what, absent, v)
		}
	}
	if d, _ := get(doc, "scenario.load.metadata.description").(string); !strings.Contains(d, "steady window") {
		t.Errorf("%s: the load's description names no window: %q", what, d)
	}
}

// A run's report: valid against the schemas, its figures the steady
// window's in the report's units, its declared load, and the same ids
// when exported again.
func TestBenchmarkReportOfARun(t *testing.T) {
	t.Parallel()
	run, err := results.ReadFile(fixtures + "base.json")
	if err != nil {
		t.Fatal(err)
	}
	r := export.BenchmarkReportOf(run)
	doc := check(t, "base.json", r)
	checkFigures(t, "base.json", doc, run)
	std := r.Scenario.Load.Standardized
	d := run.Pins.Declared()
	if std.Stage != 0 || std.Parallelism != 1 || std.Tool != "sixpin" || std.Concurrency == nil || *std.Concurrency != d.Concurrency.Streams ||
		std.InputSeqLen.Value != d.Prompt.Mean || std.OutputSeqLen == nil || std.OutputSeqLen.Value != d.Output.Mean {
		t.Errorf("load %+v, declared %+v", std, d)
	}
	if again := export.BenchmarkReportOf(run); again.Run.UID != r.Run.UID || again.Run.EID != r.Run.EID || *again.Run.Time != *r.Run.Time {
		t.Errorf("exported again: %+v, first %+v", again.Run, r.Run)
	}
	if !strings.Contains(r.Run.Description, run.Scenario.Name) || !strings.Contains(r.Scenario.Stack[0].Metadata.Description, "simulator") {
		t.Errorf("description %q, stack %+v", r.Run.Description, r.Scenario.Stack[0].Metadata)
	}
}

// A results file from before histograms were kept: the percentiles the
// results summarise, the rest left out.
func TestBenchmarkReportWithoutHistograms(t *testing.T) {
	t.Parallel()
	run, err := results.ReadFile("../results/testdata/no-histograms.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := check(t, "no-histograms.json", export.BenchmarkReportOf(run))
	ttft := run.Windows[results.WindowSteady].TTFTMs
	if ttft == nil || len(run.Histograms) > 0 {
		t.Fatalf("the fixture has histograms (%d windows), or no steady TTFT (%v)", len(run.Histograms), ttft)
	}
	if got, _ := get(doc, agg+"latency.time_to_first_token.p90").(float64); math.Abs(got-ttft.P90/1000) > 1e-12 || get(doc, agg+"latency.time_to_first_token.p25") != nil {
		t.Errorf("p90 %v (want %v), p25 %v (want none)", got, ttft.P90/1000, get(doc, agg+"latency.time_to_first_token.p25"))
	}
}

// A set's reports: a sweep's points and repeats are stages 0, 1, … of
// one experiment (one eid, a uid each); a bake-off's vendors are
// experiments of their own. Each point's figures are its own.
func TestBenchmarkReportsOfSets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		shared bool
		label  string
	}{{"sweep.json", true, "concurrency.streams = "}, {"repeat.json", true, "(seed "}, {"bakeoff.json", false, "profile "}} {
		set, err := results.ReadSetFile(fixtures + c.file)
		if err != nil {
			t.Fatal(err)
		}
		reports := export.BenchmarkReportsOfSet(set)
		if len(reports) != len(set.Runs) {
			t.Fatalf("%s: %d reports of %d runs", c.file, len(reports), len(set.Runs))
		}
		uids := map[string]bool{}
		for i, r := range reports {
			what := fmt.Sprintf("%s #%d", c.file, i)
			checkFigures(t, what, check(t, what, r), set.Runs[i])
			stage := r.Scenario.Load.Standardized.Stage
			if c.shared && (stage != i || r.Run.EID != reports[0].Run.EID) || !c.shared && (stage != 0 || i > 0 && r.Run.EID == reports[0].Run.EID) {
				t.Errorf("%s: stage %d, eid %s (the first's %s)", what, stage, r.Run.EID, reports[0].Run.EID)
			}
			if uids[r.Run.UID] || !strings.Contains(r.Run.Description, c.label) {
				t.Errorf("%s: uid %s (seen %v), description %q", what, r.Run.UID, uids[r.Run.UID], r.Run.Description)
			}
			uids[r.Run.UID] = true
		}
	}
}

// Several reports go to standard output as JSON Lines, and to files as
// llm-d-benchmark names them, FILE_0.json, FILE_1.json; one to FILE.
func TestBenchmarkReportsWritten(t *testing.T) {
	t.Parallel()
	set, err := results.ReadSetFile(fixtures + "sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	reports := export.BenchmarkReportsOfSet(set)
	lines := strings.Split(strings.TrimSpace(string(encode(t, reports...))), "\n")
	if len(lines) != len(reports) {
		t.Fatalf("%d lines for %d reports", len(lines), len(reports))
	}
	for i, l := range lines {
		if err := brschema.Check([]byte(l), results.WindowSteady); err != nil {
			t.Errorf("line %d: %v", i+1, err)
		}
	}
	base := filepath.Join(t.TempDir(), "br.json")
	paths, err := export.WriteBenchmarkReportFiles(base, reports)
	if err != nil {
		t.Fatal(err)
	}
	stem := strings.TrimSuffix(base, ".json")
	if want := []string{stem + "_0.json", stem + "_1.json"}; !slices.Equal(paths, want) {
		t.Fatalf("files %v, want %v", paths, want)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := brschema.Check(data, results.WindowSteady); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if one := export.BenchmarkReportPaths(base, 1); !slices.Equal(one, []string{base}) {
		t.Errorf("one report goes to %v", one)
	}
}
