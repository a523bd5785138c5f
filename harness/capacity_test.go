package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
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
	return twoSeqProfileStep(t, "30ms")
}

// twoSeqProfileStep is twoSeqProfile with each engine step taking
// 10 ms (its weights read at 100 GB/s) plus overhead.
func twoSeqProfileStep(t *testing.T, overhead string) string {
	t.Helper()
	return seqProfile(t, "two-seq", 2, 100, overhead)
}

// seqProfile writes a simulator profile named name: a server of at most
// seqs sequences, peakTFLOPS for its prefill, each step taking 10 ms
// plus overhead (seqSim).
func seqProfile(t *testing.T, name string, seqs, peakTFLOPS int, overhead string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	src := "name: " + name + "\noutput_control: ignore_eos\ntokenizer: words\ngpus: 2\n" + seqSim(seqs, peakTFLOPS, 100, overhead)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// twoSeqSim is a simulator profile's kind and sim: section: a server of
// at most two sequences, its decode steps memory-bound at bandwidthGBs
// plus overhead.
func twoSeqSim(bandwidthGBs int, overhead string) string {
	return seqSim(2, 100, bandwidthGBs, overhead)
}

// seqSim is a simulator profile's kind and sim: section: a server of at
// most seqs sequences, its decode steps memory-bound at bandwidthGBs
// plus overhead, its prefill compute-bound at peakTFLOPS.
func seqSim(seqs, peakTFLOPS, bandwidthGBs int, overhead string) string {
	return fmt.Sprintf(`kind: simulator
sim:
  model: m
  timing: roofline
  tokenizer: words
  max_num_seqs: %d
  max_model_len: 4096
  roofline: {params_b: 1, bytes_per_param: 1, layers: 1, heads: 1, kv_heads: 1, head_dim: 64, kv_bytes: 1,
    peak_tflops: %d, compute_util: 1, mem_bandwidth_gbs: %d, mem_util: 1, step_overhead: %s}
`, seqs, peakTFLOPS, bandwidthGBs, overhead)
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
	switch cc.TimeScale {
	case 0:
		cc.TimeScale = 0.2
	case 1:
		cc.TimeScale = 0 // real time: an endpoint of the test's own
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

// fixtureWith writes a copy of the scenario at path with each old text
// of pairs (old, new, old, new, …) replaced by its new one, and returns
// the copy's path; an old text the file lacks fails the test.
func fixtureWith(t *testing.T, path string, pairs ...string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(src, pairs[i]) {
			t.Fatalf("%s has no %q", path, pairs[i])
		}
		src = strings.Replace(src, pairs[i], pairs[i+1], 1)
	}
	return scenarioFile(t, src)
}

// Against a server that queues beyond two sequences, over real HTTP: a
// tight TTFT tier finds N* = 2, confirmed (2 passes twice, 3 fails twice),
// and names the server's queue as what binds at 3; a loose tier passes
// at the largest value tried and says so with the bound. The plan comes
// first, a line per point, and the file reads back and renders.
//
// The server's knee lies far from the tight bound in wall time, where
// a busy machine's scheduling delays are: each step takes 100 ms (20 ms
// of wall time at a fifth), so that two streams have their first token
// within two steps (200 ms) while a third waits most of an answer of 8
// tokens for a slot (about 800 ms); the bound, 500 ms, is 300 ms of run
// time (60 ms of wall time) from either. The search starts at two
// streams: a point of one would take 36 answers in a row to judge a p90.
func TestCapacityFindsTheQueue(t *testing.T) {
	t.Parallel()
	o, out, errOut, err := runCapacity(t, CapacityConfig{Config: Config{Profile: twoSeqProfileStep(t, "90ms")},
		Tiers: []string{"tight: ttft_ms.p90 <= 500", "loose: ttft_ms.p90 <= 100000"}, Min: 2, Max: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", out, errOut)
	f := o.File
	if !strings.HasPrefix(out, "sixpin capacity: capacity (testdata/capacity.yaml) against profile two-seq") ||
		!strings.Contains(out, "budget:  none") || !strings.Contains(out, "tiers:   tight: ttft_ms.p90 <= 500") {
		t.Errorf("the plan does not come first:\n%s", out)
	}
	tight, loose := f.Answers[0], f.Answers[1]
	if tight.Kind != capacity.Found || tight.Lo != 2 || tight.Hi != 3 || tight.LoRuns < 2 || tight.HiRuns < 2 {
		t.Fatalf("tight: %+v", tight)
	}
	if b := tight.Binding; b == nil || b.Cause != capacity.CauseQueue || b.Condition == nil || b.Condition.Key() != "ttft_ms.p90" || b.Value <= 500 {
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

// In open loop the search varies the rate, in req/s, from the scenario's
// own: its first point runs at 1 req/s and is said so.
func TestCapacityRate(t *testing.T) {
	t.Parallel()
	o, out, _, err := runCapacity(t, CapacityConfig{Config: Config{ScenarioPath: "testdata/capacity-open.yaml"},
		Tiers: []string{"tight: ttft_ms.p90 <= 150"}, MaxRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := o.File
	if a := f.Plan.Axis; a.Kind != capacity.AxisRate || a.Pin != "concurrency.rate" || a.Min != 1.0/64 || a.Max != 64 || a.Resolution != 0.1 {
		t.Errorf("axis %+v", a)
	}
	if len(f.Points) != 1 || f.Points[0].Value != 1 || f.Points[0].Run.Pins.Concurrency.Declared.RateRPS != 1 {
		t.Fatalf("points %+v", f.Points)
	}
	if !strings.Contains(out, "varies:  the open-loop arrival rate in req/s (concurrency.rate) from 1 req/s") {
		t.Errorf("output:\n%s", out)
	}
}

// --max-runs honoured: the answer is the interval the points reached,
// never a guess. (The tier passes at every point, as in
// TestCapacityInterrupted: the test is about the budget.)
func TestCapacityBudget(t *testing.T) {
	t.Parallel()
	o, out, _, err := runCapacity(t, CapacityConfig{Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, MaxRuns: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := o.File.Answers[0]
	if len(o.File.Points) != 2 || a.Kind != capacity.Interval || a.Lo != 2 || a.HasHi || o.File.Stop != capacity.StopMaxRuns {
		t.Fatalf("%d points, %+v, stop %s", len(o.File.Points), a, o.File.Stop)
	}
	if !strings.Contains(out, "loose: N* ≥ 2 streams (--max-runs ran out first)") {
		t.Errorf("output:\n%s", out)
	}
}

// A budget too small for a point to earn a pass (its warmup and steady
// stretch) runs none, and the answer says so: not measured.
func TestCapacityBudgetTooSmall(t *testing.T) {
	t.Parallel()
	// The warmup and the 3 s steady stretch are 4 s of run time, 0.8 s of
	// wall time at a fifth: more than the budget.
	o, out, _, err := runCapacity(t, CapacityConfig{Tiers: []string{"tight: ttft_ms.p90 <= 150"}, Budget: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if f := o.File; len(f.Points) != 0 || f.Stop != capacity.StopBudget || f.Answers[0].Kind != capacity.Unmeasured {
		t.Fatalf("%d points, stop %s, %+v", len(f.Points), f.Stop, f.Answers)
	}
	if !strings.Contains(out, "tight: not measured: no point was judged for it") {
		t.Errorf("output:\n%s", out)
	}
}

// A point that cannot run (here the KV-fit preflight refuses 4 streams
// on a server of two sequences) stops the search with its error, and the
// points before it are kept in the file, marked incomplete. (The tier
// passes at every point: the test is about the error.)
func TestCapacityErrorKeepsPoints(t *testing.T) {
	t.Parallel()
	o, _, _, err := runCapacity(t, CapacityConfig{Config: Config{KVFit: KVFitStrict}, Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, Max: 4})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "capacity point 3 (4 streams)") || o == nil {
		t.Fatalf("%v", err)
	}
	f, err := capacity.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Points) != 2 || !f.Incomplete || f.Stop != capacity.StopError || f.Answers[0].Lo != 2 {
		t.Errorf("%d points, incomplete %v (%s), stop %s, %+v", len(f.Points), f.Incomplete, f.IncompleteReason, f.Stop, f.Answers[0])
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

// slotServer is a llama-server-like endpoint with two slots (llama-server
// -np 2): a request that finds both busy waits, counted as deferred in
// its /metrics, its wait timed by nobody (its timings carry the prompt's
// processing, never a queue). Each answer's first token comes 10 ms
// after its slot is free, then one every 20 ms.
func slotServer(t *testing.T) string {
	t.Helper()
	slots := make(chan struct{}, 2)
	var processing, deferred atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp"}]}`)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "llamacpp:requests_processing %d\nllamacpp:requests_deferred %d\nllamacpp:kv_cache_usage_ratio 0.05\n", processing.Load(), deferred.Load())
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			MaxTokens int  `json:"max_tokens"`
			Stream    bool `json:"stream"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
			http.Error(w, `{"error":{"message":"want a streamed chat request"}}`, http.StatusBadRequest)
			return
		}
		prompt := 0
		for _, m := range req.Messages {
			prompt += len(strings.Fields(m.Content))
		}
		out := max(req.MaxTokens, 1)
		deferred.Add(1)
		select {
		case slots <- struct{}{}:
		case <-r.Context().Done():
			deferred.Add(-1)
			return
		}
		deferred.Add(-1)
		processing.Add(1)
		defer func() { processing.Add(-1); <-slots }()
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		wait := func(d time.Duration) bool {
			select {
			case <-time.After(d):
				return true
			case <-r.Context().Done():
				return false
			}
		}
		for i := range out {
			if !wait(map[bool]time.Duration{true: 10 * time.Millisecond, false: 20 * time.Millisecond}[i == 0]) {
				return
			}
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
			fl.Flush()
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],"+
			"\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d},"+
			"\"timings\":{\"prompt_n\":%d,\"prompt_ms\":5,\"predicted_n\":%d,\"predicted_ms\":%d}}\n\ndata: [DONE]\n\n",
			prompt, out, prompt+out, prompt, out, 20*(out-1))
		fl.Flush()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	profile := filepath.Join(t.TempDir(), "slots.yaml")
	src := "name: slots\nkind: openai-compatible\ntokenizer: words\noutput_control: ignore_eos\nbase_url: " + srv.URL + "/v1\n"
	if err := os.WriteFile(profile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return profile
}

// Against a server built to contradict the client — two slots, the
// third request deferred, its wait timed by nobody — a tight TTFT tier
// finds N* ≤ 2 and names the server's queue from what the server says
// (its deferred requests), not from a queue time it never reports.
func TestCapacityNamesAnUntimedQueue(t *testing.T) {
	t.Parallel()
	o, _, _, err := runCapacity(t, CapacityConfig{Config: Config{Profile: slotServer(t), TimeScale: 1},
		Tiers: []string{"tight: ttft_ms.p90 <= 60"}, Max: 4, MinSteady: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a := o.File.Answers[0]
	if a.Kind != capacity.Found || a.Lo > 2 {
		t.Fatalf("%+v", a)
	}
	b := a.Binding
	if b == nil || b.Cause != capacity.CauseQueue || b.Evidence.QueueMeanMs != nil || b.Evidence.WaitingPeak == nil || *b.Evidence.WaitingPeak < 1 {
		t.Fatalf("binding %+v", b)
	}
	line := report.CapacityAnswer(o.File, a)
	t.Log(line)
	if !strings.Contains(line, "the server queues (waiting peak ") {
		t.Errorf("%q", line)
	}
}

// cancelOn is a writer that cancels when what was written holds marker.
type cancelOn struct {
	bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Buffer.Write(p)
	if strings.Contains(c.String(), c.marker) {
		c.cancel()
	}
	return n, err
}

// Ctrl-C during a point: the search stops, the file is written with what
// was measured, marked incomplete, the point cut short counting for
// nothing, and the command ends interrupted. The tier is one every point
// passes, so that the search always reaches point 2, where the test
// interrupts it: with a bound a loaded machine can miss (TTFT p90 ≤
// 150 ms, once in CI under -race), point 1 could fail, the search end
// answered, and nothing be left to interrupt.
func TestCapacityInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc := CapacityConfig{Config: Config{ScenarioPath: "testdata/capacity.yaml", Profile: twoSeqProfile(t), TimeScale: 0.2,
		Output: filepath.Join(t.TempDir(), "c.json"), Grace: time.Second},
		Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, MinSteady: 3 * time.Second}
	cc.Config = quiet(t, cc.Config)
	errOut := &cancelOn{marker: "capacity point 2 (", cancel: cancel}
	cc.ErrOut = errOut
	o, err := Capacity(ctx, context.Background(), cc)
	if !errors.Is(err, ErrInterrupted) || o == nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	f, err := capacity.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || f.Stop != capacity.StopInterrupted || len(f.Points) == 0 || len(f.Points) > 2 {
		t.Fatalf("incomplete %v stop %s, %d points", f.Incomplete, f.Stop, len(f.Points))
	}
	if a := f.Answers[0]; a.Kind != capacity.Interval || a.Lo != 1 || a.HasHi {
		t.Errorf("the answer counts only the whole point: %+v", a)
	}
}

// --points adds log-spaced points for the curve after the search, run
// for the tiers whose bracket they fall in (none here: every tier is
// answered).
func TestCapacityCurvePoints(t *testing.T) {
	t.Parallel()
	o, _, _, err := runCapacity(t, CapacityConfig{Tiers: []string{"loose: ttft_ms.p90 <= 100000"}, Max: 4, Points: 4})
	if err != nil {
		t.Fatal(err)
	}
	var vs []float64
	for _, p := range o.File.Points {
		vs = append(vs, p.Value)
	}
	last := o.File.Points[len(o.File.Points)-1]
	if len(vs) != 4 || last.Value != 3 || last.Role != capacity.RoleCurve || len(last.Judged) != 0 || last.Curve.AggregateTokS <= 0 {
		t.Errorf("points %v, the last %+v", vs, last.Curve)
	}
}

// The open-loop search end to end: the rate varies in req/s, N* is
// confirmed with N*+1 one resolution step above it (here within 25%),
// and what binds beyond a server of two sequences is its queue — or, on
// a machine too busy for the open loop to keep its schedule, sixpin
// itself, said as such; an open loop behind its schedule is no
// measurement and never a pass. It does not run in parallel with the
// package's other tests: an open loop on a machine loaded several times
// over its cores falls behind, honestly.
//
// The requests arrive evenly spaced, so that the server's capacity is a
// sharp knee rather than wherever a seed's bursts put it: each answer
// holds a slot for 8 steps of 48 ms, and two slots serve 5.2 req/s.
// Below that no request waits (its first token within two steps, about
// 100 ms); above it the queue grows without end. The knee lies between
// two values the search tries, 4.76 and 5.66 req/s, 9% from each, and
// the bound, 500 ms, is 400 ms of run time (80 ms of wall time) above a
// passing point's TTFT. A pass needs 14 s of steady state, so that a
// passing point holds over 50 requests and its p99 send lag is not the
// one request a busy machine's scheduler delayed.
func TestCapacityRateSearch(t *testing.T) {
	sc := fixtureWith(t, "testdata/capacity-open-fast.yaml", "arrival: poisson", "arrival: constant")
	o, out, _, err := runCapacity(t, CapacityConfig{Config: Config{ScenarioPath: sc, Profile: twoSeqProfileStep(t, "38ms")},
		Tiers: []string{"tight: ttft_ms.p90 <= 500"}, Min: 1, Max: 256, Resolution: 0.25, MinSteady: 14 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f := o.File
	a := f.Answers[0]
	if a.Kind != capacity.Found || !a.HasHi || a.LoRuns < 2 || a.HiRuns < 2 {
		t.Fatalf("answer %+v\n%s", a, out)
	}
	if r := a.Hi / a.Lo; r > 1+f.Plan.Axis.Resolution+1e-9 {
		t.Errorf("N* %v and the failure above it %v: %.3f apart, more than the resolution %v", a.Lo, a.Hi, r-1, f.Plan.Axis.Resolution)
	}
	if b := a.Binding; b == nil || b.Cause != capacity.CauseQueue && (b.Cause != capacity.CauseClient || !strings.Contains(strings.Join(b.Evidence.Invalid, " "), "fell behind its schedule")) {
		t.Errorf("binding %+v", b)
	}
	for _, p := range f.Points {
		if p.Value <= a.Lo && p.Passed("tight") && !p.Valid {
			t.Errorf("an invalid point passed: %v req/s %v", p.Value, p.Invalid)
		}
	}
	t.Log(report.CapacityAnswer(f, a))
}

// On agentic sessions that start fresh (workload.start: fresh) a point
// stops early only on a failure: a pass is read when it ends, since its
// contexts deepen as it runs. The plan says so; a passing point runs its
// whole duration, a failing one stops. By default a capacity search
// starts the sessions mid-life (stationary): their contexts are as deep
// from the start, and a pass stops the point as early as a failure.
//
// The server runs one sequence in steps of 80 ms, its prefill of the
// deepest context (4,000 tokens) within a step: one session has its
// first token in about a step (100 ms), while two wait each other's
// whole turn (an answer of 12 tokens, 960 ms). The bound, 550 ms, is
// some 450 ms of run time (90 ms of wall time) from either. Points run
// 50 s, so that one session answers the 36 turns a p90 needs.
func TestCapacityAgenticPassesAtEnd(t *testing.T) {
	t.Parallel()
	const duration = 50
	deep := []string{"output: {tokens: 8,", "output: {tokens: 12,", "duration: 20s", "duration: " + strconv.Itoa(duration) + "s"}
	for _, c := range []struct {
		name, says string
		atEnd      bool
		path       string
	}{
		{"fresh", "a pass is read when the point ends", true,
			fixtureWith(t, "testdata/capacity-agentic.yaml", append([]string{"kind: agentic", "kind: agentic\n  start: fresh"}, deep...)...)},
		{"stationary", "its sessions start mid-life", false, fixtureWith(t, "testdata/capacity-agentic.yaml", deep...)},
	} {
		o, out, _, err := runCapacity(t, CapacityConfig{Config: Config{ScenarioPath: c.path, Profile: seqProfile(t, "one-seq", 1, 1000, "70ms")},
			Tiers: []string{"tight: ttft_ms.p90 <= 550"}, Max: 4})
		if err != nil {
			t.Fatal(err)
		}
		f := o.File
		if f.Plan.PassAtEnd != c.atEnd || !strings.Contains(out, c.says) {
			t.Errorf("%s: plan: %+v\n%s", c.name, f.Plan, out)
		}
		var passed, early, failed int
		for _, p := range f.Points {
			all := p.Run.Windows["all"]
			switch {
			case p.Passed("tight"):
				passed++
				if p.Run.StoppedEarly != nil || all.DurationS < duration-1 {
					early++
				}
			case p.Run.StoppedEarly != nil:
				failed++
			}
		}
		if passed == 0 || failed == 0 || (early == 0) == !c.atEnd {
			t.Errorf("%s: want passes that ran to their end (fresh) or stopped early (stationary), and a failure that stopped early: %d passes, %d early; %d failures\n%s", c.name, passed, early, failed, out)
		}
	}
}
