package harness

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/waterfall"
)

// runWaterfall runs wc quietly against a load-independent simulator
// profile (first token after 20 ms, one every 2 ms) with each step
// bounded to 16 requests. Every step must be a valid run, and an agentic
// step's sessions must be under way 0.9 of the time: its answers are slow
// enough that the client's own work between them hardly counts, and its
// run long enough (about 0.6 s) that a stall of a loaded machine does not
// tip it (8 requests of 4 ms answers, 0.15 s, were tipped to 1.6–1.8
// sessions of 2).
func runWaterfall(t *testing.T, wc WaterfallConfig) (*WaterfallOutcome, string, error) {
	t.Helper()
	if wc.Profile == "" {
		wc.Profile = fixedProfile(t, "fixed", "20ms", "2ms")
	}
	if wc.To == "" {
		wc.To = "testdata/waterfall-to.yaml"
	}
	if wc.Output == "" {
		wc.Output = filepath.Join(t.TempDir(), "w.json")
	}
	wc.Requests = 16
	wc.Config = quiet(t, wc.Config)
	o, err := Waterfall(context.Background(), context.Background(), wc)
	if t.Failed() || err != nil {
		t.Logf("stdout:\n%s\nstderr:\n%s", wc.Out, wc.ErrOut)
	}
	return o, wc.Out.(*bytes.Buffer).String(), err
}

// From the brochure to a small agentic scenario, over real HTTP against
// the simulator: the pins that differ move one at a time in the default
// order, the equal ones are skipped and said so, each scenario step is a
// full run, the steps multiply to the end, and the file reads back and
// renders with its chart. Its 16 runs fit the default budget, so the
// attribution is exact, and the plan says so before the first run.
func TestWaterfallEndToEnd(t *testing.T) {
	t.Parallel()
	o, out, err := runWaterfall(t, WaterfallConfig{From: waterfall.Brochure, Claim: 2000})
	if err != nil {
		t.Fatal(err)
	}
	f := o.File
	if want := []string{"output", "prompt", "concurrency", "workload", "window", "metric"}; !slices.Equal(f.Order, want) {
		t.Errorf("order %v, want %v", f.Order, want)
	}
	// The brochure's prose is what an agentic session's turns are.
	if len(f.Skipped) != 4 || f.Skipped[0].Reason != "equal in both" || f.Skipped[3] != (waterfall.Skipped{Pin: "content", Value: "prose, agentic turns", Reason: "equal in both"}) {
		t.Errorf("skipped %+v", f.Skipped)
	}
	if len(f.Runs) != 16 || len(f.Configs) != 16 || f.Attribution.Method != waterfall.MethodExact || !f.Attribution.Auto {
		t.Fatalf("%d runs, %d configs, attribution %s (auto %v)", len(f.Runs), len(f.Configs), f.Attribution.Method, f.Attribution.Auto)
	}
	start, end := f.Runs[f.Configs[0].Runs[0]], f.Runs[f.Configs[4].Runs[0]]
	if start.Pins.Concurrency.Declared.Streams != 1 || end.Pins.Concurrency.Declared.Streams != 2 || end.Scenario.Name != "waterfall-to" || !end.Target.Simulated {
		t.Errorf("start %+v end %+v", start.Pins.Concurrency.Declared, end.Pins.Concurrency.Declared)
	}
	for i, r := range f.Runs {
		if r.Errors.Requests == 0 || !r.Valid {
			t.Errorf("run %d: %d requests, valid %v %v", i, r.Errors.Requests, r.Valid, r.Invalid)
		}
	}
	prod := f.Start.Value
	for _, s := range f.Steps {
		prod *= s.Ratio
	}
	if math.Abs(prod/f.End.Value-1) > 1e-12 || f.Steps[len(f.Steps)-1].Value != f.End.Value {
		t.Errorf("start × Π ratios = %v, end %v", prod, f.End.Value)
	}
	if f.Start.Metric != waterfall.MetricDecode || f.End.Metric != waterfall.MetricEffective || f.Start.Window != "burst" || f.End.Window != "steady" {
		t.Errorf("views: start %s/%s end %s/%s", f.Start.Window, f.Start.Metric, f.End.Window, f.End.Metric)
	}
	// Prefill included, effective tok/s is below decode.
	if m := f.Steps[5]; m.Pin != "metric" || !(m.Ratio < 1) {
		t.Errorf("metric step %+v", m)
	}
	if f.Claim == nil || f.Claim.Measured != f.Start.Value {
		t.Errorf("claim %+v", f.Claim)
	}
	back, err := waterfall.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if err := report.RenderWaterfall(&html, report.FormatHTML, o.Path, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "<svg") || !strings.Contains(html.String(), "claimed 2,000") {
		t.Error("the page lacks its chart or the claim")
	}
	if p := f.Prefill; p == nil || !(p.Share > 0 && p.Share < 1) || !(p.TTFTMs > 0) {
		t.Errorf("prefill at production pins %+v", p)
	}
	for _, want := range []string{"6 steps, in order: output, prompt, concurrency, workload, window, metric", "skipped: model (equal in both",
		"attribution: exact Shapley values over every subset of the moved pins, which depend on no order — the default, as its 16 runs fit --max-runs 64",
		"Claimed 2,000; measured at the start's pins", "Results: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if spills, _ := filepath.Glob(o.Path + "*.spill"); len(spills) > 0 {
		t.Errorf("spills left: %v", spills)
	}
}

// Two orders with repeats, chosen because exact attribution's 8 runs do
// not fit a budget of 7: the plan says the attribution depends on the
// order; the reverse order's configurations run too (shared ones once),
// every pin has a ratio per order and a mean, each step an interval
// paired by seed, and a step is noise exactly when its interval holds
// zero.
func TestWaterfallTwoOrdersRepeats(t *testing.T) {
	t.Parallel()
	start := filepath.Join(t.TempDir(), "start.yaml")
	src, err := os.ReadFile("testdata/waterfall-to.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The start differs in the concurrency and the KV-cache declaration
	// (declared only: the server is the same, and runs 256 sequences — a
	// declaration it contradicts would make every run of the start
	// invalid).
	s := strings.Replace(string(src), "streams: 2}", "streams: 1}\n  kv_cache: {max_num_seqs: 256}", 1)
	if err := os.WriteFile(start, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	o, out, err := runWaterfall(t, WaterfallConfig{Config: Config{Repeat: 2}, From: start, MaxRuns: 7})
	if err != nil {
		t.Fatal(err)
	}
	if want := "attribution: the order and its reverse — exact Shapley values would need 8 runs, more than --max-runs 7 — so the attribution DEPENDS ON THE ORDER"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	f := o.File
	if want := []string{"kv_cache", "concurrency", "window", "metric"}; !slices.Equal(f.Order, want) {
		t.Fatalf("order %v", f.Order)
	}
	// Forward prefixes {}, {kv}, {kv,c}; reverse adds {c}.
	if len(f.Configs) != 4 || len(f.Runs) != 8 {
		t.Fatalf("%d configs, %d runs", len(f.Configs), len(f.Runs))
	}
	if f.Attribution.Method != waterfall.MethodTwoOrder {
		t.Fatalf("method %s", f.Attribution.Method)
	}
	for _, pc := range f.Attribution.Pins {
		if len(pc.Ratios) != 2 || math.Abs(pc.Shapley-math.Sqrt(pc.Ratios[0]*pc.Ratios[1])) > 1e-9 {
			t.Errorf("pin %+v", pc)
		}
	}
	for _, st := range f.Steps {
		if st.CI == nil || st.Noise != st.CI.Contains(0) || !st.CI.Contains(st.Delta) {
			t.Errorf("step %s: CI %+v noise %v delta %v", st.Pin, st.CI, st.Noise, st.Delta)
		}
	}
	for _, c := range f.Configs {
		if !slices.Equal(c.Seeds, []int64{3, 4}) {
			t.Errorf("config %q seeds %v", c.Key, c.Seeds)
		}
	}
}

// Bad input is refused before the first request: an unknown pin in
// --order, an exact waterfall over its budget, a missing --from.
func TestWaterfallRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		wc   WaterfallConfig
		want string
	}{
		{WaterfallConfig{From: waterfall.Brochure, Order: []string{"speed"}}, `--order: unknown pin "speed"`},
		{WaterfallConfig{From: waterfall.Brochure, Exact: true, MaxRuns: 8}, "--exact needs 16 runs"},
		{WaterfallConfig{}, "needs --from"},
		{WaterfallConfig{From: "testdata/sweep.yaml"}, "not a sweep"},
	} {
		_, _, err := runWaterfall(t, c.wc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.wc, err, c.want)
		}
	}
}

// contentWaterfall runs a waterfall on the built-in simulator profile,
// scale times faster, from one stream of independent requests in prose
// (a 200-token prompt, 64 tokens out) to the same requests of content,
// decode tok/s held: the content and the window move, and exact
// attribution's two configurations run.
func contentWaterfall(t *testing.T, profile, content string, scale float64) *waterfall.File {
	t.Helper()
	src := `name: %s
seed: 1
pins:
  model: {name: ` + profile + `}
  prompt: {tokens: 200%s}
  output: {tokens: 64, exact: true}
  concurrency: {mode: closed, streams: 1}
requests: 16
windows: {warmup: 0s, burst: 2s, steady: {start: 0s}}
`
	from := scenarioFile(t, fmt.Sprintf(src, "prose", ""))
	to := scenarioFile(t, fmt.Sprintf(src, content, ", content: "+content))
	o, _, err := runWaterfall(t, WaterfallConfig{Config: Config{Profile: profile, TimeScale: scale}, From: from, To: to, Metric: waterfall.MetricDecode})
	if err != nil {
		t.Fatal(err)
	}
	f := o.File
	if want := []string{waterfall.PinContent, waterfall.PinWindow}; !slices.Equal(f.Order, want) || len(f.Configs) != 2 || f.Attribution.Method != waterfall.MethodExact {
		t.Fatalf("order %v, %d configurations, attribution %s", f.Order, len(f.Configs), f.Attribution.Method)
	}
	if s := f.Steps[0]; s.From != "prose" || s.To != content || !s.Runs || s.Metric != waterfall.MetricDecode {
		t.Errorf("content step %+v", s)
	}
	for i, r := range f.Runs {
		if !r.Valid {
			t.Errorf("run %d invalid: %v", i, r.Invalid)
		}
	}
	if start, moved := f.Runs[f.Configs[0].Runs[0]], f.Runs[f.Configs[1].Runs[0]]; start.Pins.Prompt.Declared.Content != "prose" || moved.Pins.Prompt.Declared.Content != content {
		t.Errorf("the runs' prompts: %q, then %q", start.Pins.Prompt.Declared.Content, moved.Pins.Prompt.Declared.Content)
	}
	return f
}

// contentFactor is the content pin's exact Shapley factor in f.
func contentFactor(t *testing.T, f *waterfall.File) float64 {
	t.Helper()
	i := slices.IndexFunc(f.Attribution.Pins, func(pc waterfall.PinCost) bool { return pc.Pin == waterfall.PinContent })
	if i < 0 {
		t.Fatalf("no content among %+v", f.Attribution.Pins)
	}
	t.Logf("content: steps %+v; attributed ×%.3f (×%.3f to ×%.3f)", f.Steps, f.Attribution.Pins[i].Shapley, f.Attribution.Pins[i].Lo, f.Attribution.Pins[i].Hi)
	return f.Attribution.Pins[i].Shapley
}

// Where did my 15x go, the drafter's share: on a simulator that
// speculates (sim-spec-healthy: acceptance 0.55 on prose, 0.8 on JSON,
// about 2.1 and 3.4 tokens per step), moving the prompts' content from
// prose to JSON is a step measured by runs of its own, and its
// attributed factor in decode tok/s is a gain (the model says about
// ×1.6; ×1.8 measured). On one that does not speculate (sim-local-27b)
// the same move costs about nothing (×1.00 measured; ×1.17 once, in a
// `.ci/run` under -race, so the bound is ×1.25 — still far from the
// speculating simulator's ×1.6). Not repetitive
// content: its answers repeat themselves, and the runs are rightly
// invalid (degenerate answers measure the drafter).
func TestWaterfallContent(t *testing.T) {
	t.Parallel()
	t.Run("speculating", func(t *testing.T) {
		t.Parallel()
		f := contentWaterfall(t, "sim-spec-healthy", scenario.ContentJSON, 0.2)
		if x := contentFactor(t, f); !(x > 1.3) {
			t.Errorf("content prose → json attributed ×%.3f, want a gain", x)
		}
	})
	t.Run("not speculating", func(t *testing.T) {
		t.Parallel()
		f := contentWaterfall(t, "sim-local-27b", scenario.ContentJSON, 0.1)
		if x := contentFactor(t, f); math.Abs(math.Log(x)) > math.Log(1.25) {
			t.Errorf("content prose → json attributed ×%.3f without a drafter, want about ×1", x)
		}
	})
}

// Only independent requests have a content class: from requests of code
// to the agentic waterfall-to, the content moves with the workload (the
// plan says so), and every configuration runs — none pairs the agentic
// sessions with code, which the scenario's validation refuses.
func TestWaterfallContentMovesWithTheWorkload(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("testdata/waterfall-to.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(src), "{tokens: {dist: uniform, min: 300, max: 500}}", "{tokens: {dist: uniform, min: 300, max: 500}, content: code}", 1)
	s = s[:strings.Index(s, "workload:")] + "requests: 24\n"
	start := scenarioFile(t, s)
	o, out, err := runWaterfall(t, WaterfallConfig{From: start})
	if err != nil {
		t.Fatal(err)
	}
	f := o.File
	if want := []string{"workload", "window", "metric"}; !slices.Equal(f.Order, want) || len(f.Runs) != 2 {
		t.Fatalf("order %v, %d runs", f.Order, len(f.Runs))
	}
	if want := "skipped: content (only independent requests have a content class: it moves with the workload: prose, agentic turns)"; !strings.Contains(out, want) {
		t.Errorf("the plan lacks %q:\n%s", want, out)
	}
	if start, end := f.Runs[f.Configs[0].Runs[0]], f.Runs[f.Configs[1].Runs[0]]; start.Pins.Prompt.Declared.Content != "code" || end.Pins.Prompt.Declared.Content != "" || !end.Valid {
		t.Errorf("start's prompts %q, end's %q (valid %v %v)", start.Pins.Prompt.Declared.Content, end.Pins.Prompt.Declared.Content, end.Valid, end.Invalid)
	}
}
