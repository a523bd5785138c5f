package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/export"
	"github.com/sixpin/sixpin/internal/brschema"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// readRows reads a records file, JSON Lines or CSV by its extension,
// into one map per row (column → text; absent and empty cells are left
// out), checking that every key is a column and every line parses.
func readRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	switch filepath.Ext(path) {
	case ".csv":
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(recs) == 0 || !slices.Equal(recs[0], export.Columns) {
			t.Fatalf("%s: header %v, want %v", path, recs[:min(len(recs), 1)], export.Columns)
		}
		for _, rec := range recs[1:] {
			row := map[string]string{}
			for i, v := range rec {
				if v != "" {
					row[export.Columns[i]] = v
				}
			}
			rows = append(rows, row)
		}
	default:
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			dec := json.NewDecoder(strings.NewReader(sc.Text()))
			dec.UseNumber()
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				t.Fatalf("%s:%d: %v", path, n, err)
			}
			row := map[string]string{}
			for k, v := range obj {
				if !slices.Contains(export.Columns, k) {
					t.Fatalf("%s:%d: key %q is not a column", path, n, k)
				}
				row[k] = fmt.Sprint(v)
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// sumRows sums a numeric column over rows, and counts the rows that have it.
func sumRows(t *testing.T, rows []map[string]string, col string) (sum int64, n int) {
	t.Helper()
	for _, r := range rows {
		v, ok := r[col]
		if !ok {
			continue
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s = %q: %v", col, v, err)
		}
		sum += x
		n++
	}
	return sum, n
}

// checkRowTotals checks that rows add up to what run counted: a row per
// request, the server's token counts summing to its totals, a failure per
// failed request with its class and message.
func checkRowTotals(t *testing.T, what string, rows []map[string]string, run *results.Run) {
	t.Helper()
	if len(rows) != run.Errors.Requests {
		t.Errorf("%s: %d rows, the results count %d requests", what, len(rows), run.Errors.Requests)
	}
	tok := run.Tokens
	for _, c := range []struct {
		col  string
		want int64
	}{{"input_tokens", tok.Input}, {"cached_tokens", tok.CachedInput}, {"cache_write_tokens", tok.CacheWriteInput},
		{"output_tokens", tok.Output}, {"reasoning_tokens", tok.Reasoning}} {
		sum, n := sumRows(t, rows, c.col)
		if sum != c.want || n != tok.Requests {
			t.Errorf("%s: Σ %s = %d over %d rows; the results' totals are %d over %d requests with usage", what, c.col, sum, n, c.want, tok.Requests)
		}
	}
	byClass := map[string]int{}
	for _, r := range rows {
		if r["error"] != "" {
			byClass[r["error"]]++
			if r["error_message"] == "" {
				t.Errorf("%s: a failure without its message: %v", what, r)
			}
		}
	}
	for class, n := range run.Errors.ByClass {
		if byClass[class] != n {
			t.Errorf("%s: %d rows of %s, the results count %d (%v)", what, byClass[class], class, n, byClass)
		}
	}
}

// countOf is a distribution's count (0: none).
func countOf(d *results.Dist) int64 {
	if d == nil {
		return 0
	}
	return d.Count
}

// checkBR validates a Benchmark Report against llm-d-benchmark's schemas
// and the units its classes allow (brschema.Check), and returns it.
func checkBR(t *testing.T, what string, br *export.BenchmarkReport) *export.BenchmarkReport {
	t.Helper()
	var b bytes.Buffer
	if err := export.WriteBenchmarkReports(&b, []*export.BenchmarkReport{br}); err != nil {
		t.Fatal(err)
	}
	if err := brschema.Check(b.Bytes(), results.WindowSteady); err != nil {
		t.Errorf("%s: the Benchmark Report:\n%v", what, err)
	}
	return br
}

// rowFloat reads a float column of a row (NaN when absent).
func rowFloat(t *testing.T, r map[string]string, col string) float64 {
	t.Helper()
	v, ok := r[col]
	if !ok {
		return math.NaN()
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s = %q: %v", col, v, err)
	}
	return x
}

// A run's per-request rows (--records, JSON Lines), against a server
// that fails every seventh request: a row per request the results
// count, the server's tokens summing to the results' totals, every
// failure with its class and message, every request's id, and each
// row's latencies within the run's distributions. Its results cannot be
// written, so its spill is kept: the rows `sixpin recover --records`
// writes from it are the run's own, row for row, and add up to the
// results recovered from it. Its Benchmark Report is valid, and says the
// run is not.
func TestExportsOfARun(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	fails := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") && n.Add(1)%7 == 0 {
				http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 15 * time.Millisecond, ITL: 2 * time.Millisecond}, Tokenizer: "words"}, fails)
	dir := t.TempDir()
	path, out := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "r.json")
	o := &Outcome{}
	cfg := quiet(t, Config{ScenarioPath: scenarioFile(t, shardedSrc), Endpoint: endpoint, Model: "m", Tokenizer: "words", Records: path,
		Output: out, FallbackDirs: []string{},
		WriteResults: func(p string, run *results.Run) error {
			o.Run = run
			return &os.PathError{Op: "write", Path: p, Err: syscall.ENOSPC}
		}})
	if _, err := Run(context.Background(), context.Background(), cfg); err == nil || o.Run == nil {
		t.Fatalf("err %v: want the results unwritable", err)
	}
	if o.Run.Errors.ByClass["http_5xx"] == 0 {
		t.Fatalf("no request failed: %+v", o.Run.Errors)
	}
	rows := readRows(t, path)
	checkRowTotals(t, "run", rows, o.Run)

	ids := map[string]bool{}
	all := o.Run.Windows[results.WindowAll]
	var maxTTFT, maxE2E float64
	var timed, decoded int64
	for _, r := range rows {
		id := r["request_id"]
		if !strings.HasPrefix(id, o.Run.RequestIDs.Prefix+"-") || ids[id] {
			t.Errorf("request id %q: want a unique %s-N", id, o.Run.RequestIDs.Prefix)
		}
		ids[id] = true
		if r["error"] != "" {
			if r["http_status"] != "500" || r["error"] != "http_5xx" || !strings.Contains(r["error_message"], "overloaded") {
				t.Errorf("failed row %v", r)
			}
			if _, ok := r["ttft_ms"]; ok {
				t.Errorf("a failed request's row has a TTFT: %v", r)
			}
			continue
		}
		ttft, e2e := rowFloat(t, r, "ttft_ms"), rowFloat(t, r, "e2e_ms")
		timed++
		if !(ttft > 0 && ttft < e2e) {
			t.Errorf("row figures out of order: %v", r)
		}
		// A decode the client observed has its TPOT and ITL summary; one
		// that came in one read (a loaded machine) has neither.
		if _, ok := r["tpot_ms"]; ok {
			decoded++
			tpot, p50, hi, mean := rowFloat(t, r, "tpot_ms"), rowFloat(t, r, "itl_p50_ms"), rowFloat(t, r, "itl_max_ms"), rowFloat(t, r, "itl_mean_ms")
			if !(tpot > 0 && p50 > 0 && p50 <= hi && mean > 0 && mean <= hi) {
				t.Errorf("decode figures out of order: %v", r)
			}
		} else if _, ok := r["itl_p50_ms"]; ok {
			t.Errorf("an ITL without a TPOT: %v", r)
		}
		if sent, sched := rowFloat(t, r, "sent_ms"), rowFloat(t, r, "scheduled_ms"); math.Abs(sent-sched-rowFloat(t, r, "lag_ms")) > 0.0015 {
			t.Errorf("lag is not sent − scheduled: %v", r)
		}
		if at, err := time.Parse(time.RFC3339Nano, r["sent_at"]); err != nil || at.Before(o.Run.StartedAt) {
			t.Errorf("sent_at %q (%v), start %s", r["sent_at"], err, o.Run.StartedAt)
		}
		if _, ok := r["session"]; ok {
			t.Errorf("an independent request has a session: %v", r)
		}
		maxTTFT, maxE2E = max(maxTTFT, ttft), max(maxE2E, e2e)
	}
	// The HDR histograms keep 3 significant figures: their max is the
	// rows' within 0.1%.
	if math.Abs(maxTTFT-all.TTFTMs.Max) > all.TTFTMs.Max/500 || math.Abs(maxE2E-all.E2EMs.Max) > all.E2EMs.Max/500 {
		t.Errorf("rows' max TTFT %v and E2E %v; the results' %v and %v", maxTTFT, maxE2E, all.TTFTMs.Max, all.E2EMs.Max)
	}
	// As many rows have a TTFT and a TPOT as the results counted.
	if timed != countOf(all.TTFTMs) || decoded != countOf(all.TPOTMs) {
		t.Errorf("%d rows with a TTFT and %d with a TPOT; the results count %d and %d", timed, decoded, countOf(all.TTFTMs), countOf(all.TPOTMs))
	}
	if got := o.Run.RequestIDs.Sent; got != len(ids) {
		t.Errorf("%d ids in the rows, %d sent", len(ids), got)
	}

	// The run broke its error budget: its report says so, and is valid.
	if br := checkBR(t, "an invalid run", export.BenchmarkReportOf(o.Run)); o.Run.Valid ||
		!strings.Contains(br.Scenario.Load.Metadata.Description, "INVALID: ") {
		t.Errorf("valid %v: the report's load says %q", o.Run.Valid, br.Scenario.Load.Metadata.Description)
	}

	spill := out + ".spill"
	rec, err := results.Recover(spill, "test")
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.jsonl")
	read, err := export.SpillRecords(spill, again)
	if err != nil {
		t.Fatal(err)
	}
	fromSpill := readRows(t, again)
	if read.Records != len(fromSpill) || !slices.EqualFunc(rows, fromSpill, maps.Equal) {
		t.Errorf("the spill's %d rows (%d read) are not the run's %d", len(fromSpill), read.Records, len(rows))
	}
	checkRowTotals(t, "recovered spill", fromSpill, rec.Run)
}

// A sweep's points write their own rows, numbered as their spills are,
// in CSV: each point's rows add up to its results. Their Benchmark
// Reports are stages 0 and 1 of one experiment.
func TestExportsOfASweep(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond}, Tokenizer: "words"}, nil)
	dir := t.TempDir()
	src := shardedSrc + "sweep: {pin: concurrency.streams, values: [1, 3]}\n"
	o, err := run(t, Config{ScenarioPath: scenarioFile(t, src), Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Output: filepath.Join(dir, "sweep.json"), Records: filepath.Join(dir, "rows.csv")})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Set.Runs) != 2 {
		t.Fatalf("%d points", len(o.Set.Runs))
	}
	brs := export.BenchmarkReportsOfSet(o.Set)
	for i, r := range o.Set.Runs {
		checkRowTotals(t, fmt.Sprintf("point %d", i+1), readRows(t, filepath.Join(dir, fmt.Sprintf("rows.%d.csv", i+1))), r)
		br := checkBR(t, fmt.Sprintf("point %d", i+1), brs[i])
		if std := br.Scenario.Load.Standardized; std.Stage != i || std.Concurrency == nil || float64(*std.Concurrency) != o.Set.Values[i] || br.Run.EID != brs[0].Run.EID {
			t.Errorf("point %d: stage %d, concurrency %v, eid %s (the first's %s)", i+1, std.Stage, std.Concurrency, br.Run.EID, brs[0].Run.EID)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "rows.csv")); err == nil {
		t.Error("rows.csv written beside the numbered points' files")
	}
}

// runShards runs base as the n shards of one distributed run, at once
// and starting together, each writing its results to dir/shard-I.json
// (and with rows its records to dir/shard-I.jsonl); it returns them as
// results.Merge takes them.
func runShards(t *testing.T, base Config, n int, runID, dir string, rows bool) []results.Shard {
	t.Helper()
	start := time.Now().Add(500 * time.Millisecond)
	shards := make([]results.Shard, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cfg := base
			cfg.Output = filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
			if rows {
				cfg.Records = filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))
			}
			cfg.Distributed = Distributed{Shard: scenario.Shard{I: i, N: n}, StartAt: start, RunID: runID}
			o, err := run(t, cfg)
			if err != nil {
				t.Error(err)
				return
			}
			shards[i] = results.Shard{Name: o.Path, Run: o.Run}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return shards
}

// Shards of one distributed run each write their rows, marked with the
// shard; together they add up to the merged results. The merged run's
// Benchmark Report counts its shards as its load generators.
func TestExportsOfShardsAddUpToTheMerge(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 10 * time.Millisecond, ITL: 2 * time.Millisecond}}, nil)
	const n = 2
	dir := t.TempDir()
	shards := runShards(t, Config{ScenarioPath: scenarioFile(t, shardedSrc), Endpoint: endpoint, Model: "m", Tokenizer: "words"}, n, "rows", dir, true)
	merged, err := results.Merge(shards, results.MergeOptions{StartTolerance: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for i := range n {
		part := readRows(t, filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))
		for _, r := range part {
			if r["shard"] != strconv.Itoa(i) {
				t.Fatalf("shard %d's row says shard %q", i, r["shard"])
			}
		}
		rows = append(rows, part...)
	}
	checkRowTotals(t, "merged shards", rows, merged)

	br := checkBR(t, "merged", export.BenchmarkReportOf(merged))
	if std := br.Scenario.Load.Standardized; std.Parallelism != n || std.Concurrency == nil || *std.Concurrency != 8 {
		t.Errorf("merged: parallelism %d, concurrency %v; want %d shards of the whole plan's 8 streams", std.Parallelism, std.Concurrency, n)
	}
	if a := br.Results.RequestPerformance.Aggregate; a.Requests.Total != merged.Windows[results.WindowSteady].Requests {
		t.Errorf("merged: %d requests, the merged steady window %d", a.Requests.Total, merged.Windows[results.WindowSteady].Requests)
	}
	if br.Results.Observability == nil {
		t.Error("merged: no server metrics, though shard 0 scraped the simulator's")
	}
}

// A records file named neither .jsonl nor .csv is refused before load.
func TestRecordsNeedsAKnownExtension(t *testing.T) {
	t.Parallel()
	_, err := run(t, Config{Records: filepath.Join(t.TempDir(), "rows.txt")})
	if err == nil || !strings.Contains(err.Error(), ".jsonl (JSON Lines) or .csv") {
		t.Fatalf("err %v", err)
	}
}

// A capacity search's Benchmark Reports: one per point, stages of one
// experiment, each with its point's value as its concurrency and its
// value and verdicts in its native config.
func TestBenchmarkReportsOfACapacitySearch(t *testing.T) {
	t.Parallel()
	o, _, _, err := runCapacity(t, CapacityConfig{Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, MaxRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	brs := export.BenchmarkReportsOfCapacity(o.File)
	if len(brs) != 2 || len(o.File.Points) != 2 {
		t.Fatalf("%d reports of %d points", len(brs), len(o.File.Points))
	}
	for k, br := range brs {
		checkBR(t, fmt.Sprintf("point %d", k+1), br)
		p := o.File.Points[k]
		std := br.Scenario.Load.Standardized
		if std.Stage != k || br.Run.EID != brs[0].Run.EID || std.Concurrency == nil || float64(*std.Concurrency) != p.Value {
			t.Errorf("point %d: stage %d, eid %s, concurrency %v; want value %v", k+1, std.Stage, br.Run.EID, std.Concurrency, p.Value)
		}
		capa := br.Scenario.Load.Native.Config.(map[string]any)["sixpin"].(map[string]any)["capacity"].(map[string]any)
		if capa["value"] != p.Value || capa["role"] != p.Role || len(capa["verdicts"].([]map[string]any)) != len(p.Verdicts) {
			t.Errorf("point %d: native %v, point %+v", k+1, capa, p)
		}
		if !strings.Contains(br.Run.Description, fmt.Sprintf("point %d: concurrency.streams %v", k+1, p.Value)) {
			t.Errorf("point %d: description %q", k+1, br.Run.Description)
		}
	}
}

// Each row names its prompt's content class, as the plan drew it: a
// scenario drawing code and json by weight writes both, and nothing else.
func TestRecordsNameContent(t *testing.T) {
	t.Parallel()
	path := scenarioFile(t, `name: content-rows
seed: 5
pins:
  model: {name: m}
  prompt: {tokens: 100, content: {code: 1, json: 1}}
  output: {tokens: 8, exact: true}
  concurrency: {mode: closed, streams: 2}
duration: 10m
`)
	rowsPath := filepath.Join(t.TempDir(), "rows.csv")
	simCfg := sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}
	if _, err := run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: simServer(t, simCfg, nil), Model: "m", Tokenizer: "words",
		Requests: 40, Records: rowsPath}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range readRows(t, rowsPath) {
		seen[r["content"]]++
	}
	if len(seen) != 2 || seen[scenario.ContentCode] == 0 || seen[scenario.ContentJSON] == 0 || seen[scenario.ContentCode]+seen[scenario.ContentJSON] != 40 {
		t.Errorf("rows by content: %v, want code and json, 40 in all", seen)
	}
}
