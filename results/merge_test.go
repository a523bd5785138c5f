package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

var mergeStart = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// shardRun is shard i of n of run "r": requests streams starting every
// 100 ms, started late after mergeStart.
func shardRun(t testing.TB, i, n, requests int, late time.Duration) *Run {
	t.Helper()
	var recs []*record.Record
	for k := range requests {
		recs = append(recs, stream(k*n+i, time.Duration(k)*100*ms, 20*ms, 5*ms, 10, 1))
	}
	spec := WindowSpec{Burst: time.Second, SteadyStart: 0}
	m := finish(t, spec, SLO{}, recs...)
	at := mergeStart
	h := &Header{SixpinVersion: "t", StartedAt: mergeStart.Add(late), Windows: spec,
		Scenario: ScenarioInfo{Name: "s", SHA256: "abc", Seed: 1, PromptSalt: "00000000000000aa"},
		Target:   TargetInfo{Endpoint: "http://e/v1", Model: "m", Profile: "p"},
		Declared: Declared{Declared: scenario.Declared{Concurrency: scenario.ConcurrencyDeclared{Mode: "closed", Streams: 1}}},
		Shard: &ShardInfo{Index: i, Count: n, RunID: "r", ScenarioSHA256: "abc", Seed: 1, Host: fmt.Sprint("h", i), StartAt: &at,
			Whole: scenario.ConcurrencyDeclared{Mode: "closed", Streams: n}}}
	return Assemble(h, m, Ending{})
}

func shards(runs ...*Run) []Shard {
	var out []Shard
	for i, r := range runs {
		out = append(out, Shard{Name: fmt.Sprintf("s%d.json", i), Run: r})
	}
	return out
}

// Merged counts are the shards' sums, the merged percentiles the added
// histograms', and the whole declares the whole plan's concurrency.
func TestMergeSums(t *testing.T) {
	t.Parallel()
	a, b := shardRun(t, 0, 2, 10, 0), shardRun(t, 1, 2, 6, 3*ms)
	m, err := Merge(shards(b, a), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	all := m.Windows[WindowAll]
	if all.Requests != 16 || m.Errors.Requests != 16 || m.Tokens.Output != 160 || all.OutputTokens != 160 {
		t.Errorf("requests %d (errors %d), output %d (%d): want 16 and 160", all.Requests, m.Errors.Requests, m.Tokens.Output, all.OutputTokens)
	}
	if m.Pins.Concurrency.Declared.Streams != 2 || !m.Valid || m.Merged.Shards[1].StartOffsetMs != 3 {
		t.Errorf("declared %+v, valid %v %v, attestation %+v", m.Pins.Concurrency.Declared, m.Valid, m.Invalid, m.Merged)
	}
	h, _ := m.Histograms[WindowAll][HistE2E.Name].Decode()
	if h.TotalCount() != 16 || all.E2EMs.P99 != float64(h.ValueAtQuantile(99))/1e3 {
		t.Errorf("E2E histogram counts %d, p99 %v", h.TotalCount(), all.E2EMs.P99)
	}
	if s := m.Series.Started; len(s) == 0 || sum(s) != 16 {
		t.Errorf("series started %v", s)
	}
	if _, err := Read("m.json", mustJSON(t, m)); err != nil {
		t.Errorf("the merged run does not read back: %v", err)
	}
}

func sum(s []int64) (n int64) {
	for _, v := range s {
		n += v
	}
	return n
}

// Shards that are not one whole distributed run are refused, saying why.
func TestMergeRefusals(t *testing.T) {
	t.Parallel()
	a, b := shardRun(t, 0, 2, 4, 0), shardRun(t, 1, 2, 4, 0)
	with := func(r *Run, f func(*Run)) *Run {
		c := *r
		s := *r.Shard
		c.Shard = &s
		f(&c)
		return &c
	}
	for _, c := range []struct {
		name string
		runs []*Run
		want string
	}{
		{"missing", []*Run{a}, "shard 1 of 2 missing"},
		{"duplicate", []*Run{a, a, b}, "given twice"},
		{"not a shard", []*Run{a, with(b, func(r *Run) { r.Shard = nil })}, "not a shard"},
		{"scenario", []*Run{a, with(b, func(r *Run) { r.Shard.ScenarioSHA256 = "def" })}, "different scenarios"},
		{"seed", []*Run{a, with(b, func(r *Run) { r.Shard.Seed = 2 })}, "different seeds"},
		{"run id", []*Run{a, with(b, func(r *Run) { r.Shard.RunID = "q" })}, "different run ids"},
		{"target", []*Run{a, with(b, func(r *Run) { r.Target.Endpoint = "http://other/v1" })}, "different targets"},
		{"windows", []*Run{a, with(b, func(r *Run) {
			w := *r.Windows[WindowSteady]
			w.StartS += 5
			r.Windows = map[string]*Window{WindowWarmup: r.Windows[WindowWarmup], WindowBurst: r.Windows[WindowBurst], WindowSteady: &w, WindowAll: r.Windows[WindowAll]}
		})}, "incompatible windows"},
	} {
		_, err := Merge(shards(c.runs...), MergeOptions{})
		if !errors.Is(err, ErrMergeRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.want)
		}
	}
}

// A shard that started late or fell behind makes the merged run invalid.
func TestMergeAttestation(t *testing.T) {
	t.Parallel()
	late, err := Merge(shards(shardRun(t, 0, 2, 4, 0), shardRun(t, 1, 2, 4, 2*time.Second)), MergeOptions{StartTolerance: 5 * time.Second})
	if err != nil || strings.Contains(strings.Join(late.Invalid, ";"), "late") {
		t.Fatalf("2 s late within a 5 s tolerance: %v, %v", err, late.Invalid)
	}
	late, _ = Merge(shards(shardRun(t, 0, 2, 4, 0), shardRun(t, 1, 2, 4, 2*time.Second)), MergeOptions{})
	if late.Valid || !strings.Contains(strings.Join(late.Invalid, ";"), "shard 1/2 started 2,000 ms late") {
		t.Errorf("2 s late: valid %v, %v", late.Valid, late.Invalid)
	}
	b := shardRun(t, 1, 2, 4, 0)
	b.Shard.Behind = true
	behind, _ := Merge(shards(shardRun(t, 0, 2, 4, 0), b), MergeOptions{})
	if behind.Valid || !strings.Contains(strings.Join(behind.Invalid, ";"), "fell behind") {
		t.Errorf("behind: valid %v, %v", behind.Valid, behind.Invalid)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A merge adds each shard's histogram bucket to bucket from its sparse
// decoding: the sum is the one dense decoding and merging gives, bucket
// for bucket — values across the whole range, and a histogram whose
// values lie beyond the destination's range drops them.
func TestAddHistSparseEqualsDense(t *testing.T) {
	t.Parallel()
	m := HistTTFT
	r := rand.New(rand.NewPCG(1, 2))
	var sparse, dense *hdrhistogram.Histogram
	for shard := range 5 {
		h := m.new()
		for range 2000 {
			_ = h.RecordValue(min(int64(math.Exp(r.Float64()*20)), m.hi))
		}
		e, err := encode(m, h)
		if err != nil {
			t.Fatal(err)
		}
		if err := addHist(&sparse, m, e, "shard"); err != nil {
			t.Fatal(err)
		}
		d, _ := e.Decode()
		if dense == nil {
			dense = m.new()
		}
		dense.Merge(d)
		if !dense.Equals(sparse) {
			t.Fatalf("after shard %d the sparse sum differs from the dense one", shard)
		}
	}
	if sparse.TotalCount() != 5*2000 {
		t.Errorf("total %d", sparse.TotalCount())
	}
	wide := hdrhistogram.New(1, m.hi*1000, 3)
	_ = wide.RecordValue(m.hi * 100)
	b, err := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if err := addHist(&sparse, m, EncodedHistogram{Unit: m.Unit, Scale: m.Scale, HDR: string(b)}, "wide"); err == nil || !strings.Contains(err.Error(), "1 values out of range") {
		t.Errorf("a value beyond the range: %v", err)
	}
}

// MergeFiles, which holds one shard at a time, writes the very results
// Merge does from the same shards held at once; a file that does not
// read is refused at its line and column.
func TestMergeFilesEqualsMerge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	var runs []Shard
	for i := range 5 {
		r := shardRun(t, i, 5, 20+i, time.Duration(i)*700*ms)
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := WriteFile(p, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		runs = append(runs, Shard{Name: p, Run: back})
	}
	opts := MergeOptions{StartTolerance: 5 * time.Second}
	want, err := Merge(runs, opts)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(paths)
	got, err := MergeFiles(paths, opts)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(g, w) {
		t.Errorf("MergeFiles and Merge differ:\n%s\n%s", g, w)
	}
	if got.Windows[WindowAll].Requests != 20+21+22+23+24 || len(got.Merged.Shards) != 5 {
		t.Errorf("requests %d, shards %d", got.Windows[WindowAll].Requests, len(got.Merged.Shards))
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"schema\": \"sixpin.results/v1\",\n  \"shard\": 3\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeFiles(append(paths, bad), opts); err == nil || !strings.Contains(err.Error(), "bad.json:3:") {
		t.Errorf("a malformed shard: %v, want its file and line", err)
	}
}

// The token lengths' count, mean, spread and extremes pooled from the
// shards' summaries are those of all the shards' values.
func TestPooledMomentsExact(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var all []float64
	var p pooled
	for _, n := range []int{1, 7, 300, 40} {
		vals := make([]float64, n)
		for i := range vals {
			vals[i] = float64(r.IntN(200_000))
		}
		all = append(all, vals...)
		p.add(moments(vals))
	}
	got, want := p.onto(&Dist{}), moments(all)
	if got.Count != want.Count || got.Min != want.Min || got.Max != want.Max ||
		math.Abs(got.Mean-want.Mean) > 1e-9*want.Mean || math.Abs(got.Stddev-want.Stddev) > 1e-9*want.Stddev {
		t.Errorf("pooled %+v, want %+v", got, want)
	}
}

// moments is the exact summary of vals (population standard deviation).
func moments(vals []float64) *Dist {
	d := &Dist{Count: int64(len(vals)), Min: slices.Min(vals), Max: slices.Max(vals)}
	for _, v := range vals {
		d.Mean += v / float64(len(vals))
	}
	var sq float64
	for _, v := range vals {
		sq += (v - d.Mean) * (v - d.Mean)
	}
	d.Stddev = math.Sqrt(sq / float64(len(vals)))
	return d
}
