package harness

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/report"
)

// twoSeqProfile is a simulator that runs at most two sequences: a third
// waits in its queue for a slot. Each decode step takes 40 ms, so an
// answer of 8 tokens holds its slot about 320 ms, and a request that
// finds one free has its first token within about 80 ms.
func twoSeqProfile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "two-seq.yaml")
	src := `name: two-seq
kind: simulator
output_control: ignore_eos
tokenizer: words
gpus: 2
sim:
  model: m
  timing: roofline
  tokenizer: words
  max_num_seqs: 2
  max_model_len: 4096
  roofline: {params_b: 1, bytes_per_param: 1, layers: 1, heads: 1, kv_heads: 1, head_dim: 64, kv_bytes: 1,
    peak_tflops: 100, compute_util: 1, mem_bandwidth_gbs: 100, mem_util: 1, step_overhead: 30ms}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCapacity(t *testing.T, cc CapacityConfig) (*CapacityOutcome, string, string, error) {
	t.Helper()
	if cc.Profile == "" {
		cc.Profile = twoSeqProfile(t)
	}
	if cc.ScenarioPath == "" {
		cc.ScenarioPath = "testdata/capacity.yaml"
	}
	if cc.Output == "" {
		cc.Output = filepath.Join(t.TempDir(), "c.json")
	}
	if cc.TimeScale == 0 {
		cc.TimeScale = 0.2
	}
	if cc.MinSteady == 0 {
		cc.MinSteady = 3 * time.Second
	}
	cc.Grace = time.Second
	cc.Config = quiet(t, cc.Config)
	o, err := Capacity(context.Background(), context.Background(), cc)
	out, errOut := cc.Out.(*bytes.Buffer).String(), cc.ErrOut.(*bytes.Buffer).String()
	if t.Failed() || err != nil {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	return o, out, errOut, err
}

// Against a server that queues beyond two sequences, over real HTTP: a
// tight TTFT tier finds N* = 2, confirmed (2 passes twice, 3 fails twice),
// and names the server's queue as what binds at 3; a loose tier passes
// at the largest value tried and says so with the bound. The plan comes
// first, a line per point, and the file reads back and renders.
func TestCapacityFindsTheQueue(t *testing.T) {
	t.Parallel()
	o, out, errOut, err := runCapacity(t, CapacityConfig{
		Tiers: []string{"tight: ttft_ms.p90 <= 150", "loose: ttft_ms.p90 <= 100000"}, Max: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	f := o.File
	if !strings.HasPrefix(out, "sixpin capacity: capacity (testdata/capacity.yaml) against profile two-seq") ||
		!strings.Contains(out, "budget:  none") || !strings.Contains(out, "tiers:   tight: ttft_ms.p90 <= 150") {
		t.Errorf("the plan does not come first:\n%s", out)
	}
	tight, loose := f.Answers[0], f.Answers[1]
	if tight.Kind != capacity.Found || tight.Lo != 2 || tight.Hi != 3 || tight.LoRuns < 2 || tight.HiRuns < 2 {
		t.Fatalf("tight: %+v", tight)
	}
	if b := tight.Binding; b == nil || b.Cause != capacity.CauseQueue || b.Condition == nil || b.Condition.Key() != "ttft_ms.p90" || b.Value <= 150 {
		t.Errorf("binding %+v", tight.Binding)
	}
	if loose.Kind != capacity.AtLeast || loose.Lo != 4 {
		t.Errorf("loose: %+v", loose)
	}
	line := report.CapacityAnswer(f, tight)
	if !strings.HasPrefix(line, "tight: 2 streams — at 3 the server queues (queue ") || !strings.Contains(line, "): TTFT p90 ") {
		t.Errorf("answer line %q", line)
	}
	if !strings.Contains(out, "loose: N* ≥ 4 streams: it passed at the largest value tried; raise --max") {
		t.Errorf("the loose tier's bound is not said:\n%s", out)
	}
	if tight.PerDeployment == nil || tight.PerDeployment.PerGPU != 1 {
		t.Errorf("per GPU: %+v", tight.PerDeployment)
	}
	for i, p := range f.Points {
		if !p.Valid || p.Run == nil || p.Run.Pins.Concurrency.Declared.Streams != int(p.Value) {
			t.Errorf("point %d at %v: valid %v %v", i, p.Value, p.Valid, p.Invalid)
		}
		// Every point stops once decided, long before its 60 s.
		if e := p.Run.StoppedEarly; e == nil || e.Aborted || e.AtS >= 60 {
			t.Errorf("point %d at %v did not stop once decided: %+v", i, p.Value, e)
		}
		if !strings.Contains(errOut, "point "+strconv.Itoa(i+1)+" (") {
			t.Errorf("no progress line for point %d", i+1)
		}
	}
	back, err := capacity.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := report.RenderCapacity(&md, report.FormatMarkdown, o.Path, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "- **tight: 2 streams — at 3 the server queues") || !strings.Contains(md.String(), "| # | value | role |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// --max-runs honoured: the answer is the interval the points reached,
// never a guess.
func TestCapacityBudget(t *testing.T) {
	t.Parallel()
	o, out, _, err := runCapacity(t, CapacityConfig{Tiers: []string{"tight: ttft_ms.p90 <= 150"}, MaxRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := o.File.Answers[0]
	if len(o.File.Points) != 2 || a.Kind != capacity.Interval || a.Lo != 2 || a.HasHi || o.File.Stop != capacity.StopMaxRuns {
		t.Fatalf("%d points, %+v, stop %s", len(o.File.Points), a, o.File.Stop)
	}
	if !strings.Contains(out, "tight: N* ≥ 2 streams (--max-runs ran out first)") {
		t.Errorf("output:\n%s", out)
	}
}

// Bad tiers are refused before any load, naming the tier and the metric.
func TestCapacityRefusesBeforeLoad(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cc   CapacityConfig
		want string
	}{
		{CapacityConfig{Tiers: []string{"long: lifetime_min.p50 >= 5"}}, "tier long: lifetime_min.p50: this run cannot measure it"},
		{CapacityConfig{Tiers: []string{"bad: ttft.p90 <= 5"}}, `--tier bad: condition 1: unknown metric "ttft"`},
		{CapacityConfig{}, "no tier: give --tiers FILE"},
		{CapacityConfig{Tiers: []string{"t: ttft_ms.p90 <= 5"}, Min: 8, Max: 4}, "--min 8 is above --max 4"},
	} {
		o, _, errOut, err := runCapacity(t, c.cc)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) || o != nil || strings.Contains(errOut, "capacity point") {
			t.Errorf("%v, want bad input %q", err, c.want)
		}
	}
}
