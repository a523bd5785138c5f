package main

import (
	"bufio"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// counted is what the server counted of a run: its requests (the probe's
// left out, by their PREFIX-probe-N ids) and their tokens.
type counted struct {
	requests, probes      int
	input, cached, output int64
}

// imported is one peer invocation imported and run against the simulator.
type imported struct {
	summary string
	run     *results.Run
	server  counted
}

// importAndServe imports a peer's invocation (peerArgs after --, or an
// inference-perf config) into a temporary directory, runs the scenario
// against a simulator serving over HTTP that logs every request it
// serves, and returns what import printed, the results file and what the
// server counted.
func importAndServe(t *testing.T, peer string, peerArgs ...string) imported {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "imported.yaml")
	args := []string{"import", peer, "-o", path}
	if peer == "inference-perf" {
		args = append(args, peerArgs...)
	} else {
		args = append(append(args, "--"), peerArgs...)
	}
	code, summary, errOut := sixpin(t, nil, args...)
	if code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, summary, errOut)
	}
	var log testserve.Buffer
	s, err := sim.New(sim.Config{Timing: sim.TimingNone, RequestLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	out := filepath.Join(dir, "out.json")
	// What is tested is what the server counted. A run this short (a
	// few dozen requests of tens of ms) on a machine busy with the race
	// detector and other tests can fail to keep its streams busy, which
	// makes it invalid (exit 1) though every count stands.
	code, runOut, errOut := sixpin(t, nil, "run", path, "--endpoint", srv.URL+"/v1", "--no-progress", "-o", out, "--allow-pin-mismatch", "concurrency")
	srv.Close() // waits for every handler: the log is whole
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, runOut, errOut)
	}
	run, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var c counted
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	for sc.Scan() {
		var e sim.RequestLogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.ID, "-probe-") {
			c.probes++
			continue
		}
		c.requests++
		c.input += int64(e.PromptTokens)
		c.cached += int64(e.CachedTokens)
		c.output += int64(e.CompletionTokens)
	}
	if c.probes == 0 {
		t.Error("the server's log marks no probe request: the run's count could include them")
	}
	return imported{summary: summary, run: run, server: c}
}

// printed reads a total import printed: the peer's ("input tokens
// 102,400") or sixpin's plan's ("input 102,400").
func printed(t *testing.T, summary, pattern string) int64 {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(summary)
	if m == nil {
		t.Fatalf("import printed no %q:\n%s", pattern, summary)
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkPlan checks that the server counted exactly what import said
// sixpin's plan sends, that the results file's parity evidence says the
// same on both sides, and that its digest is the one import printed.
func checkPlan(t *testing.T, im imported) {
	t.Helper()
	planRe := `requests ([\d,]+), input ([\d,]+), cached input ([\d,]+), output ([\d,]+) tokens`
	want := counted{
		requests: int(printed(t, im.summary, strings.Replace(planRe, `input ([\d,]+)`, `input [\d,]+`, 1))),
		input:    printed(t, im.summary, `requests [\d,]+, input ([\d,]+),`),
		output:   printed(t, im.summary, `cached input [\d,]+, output ([\d,]+) tokens`),
	}
	got := im.server
	if got.requests != want.requests || got.input != want.input || got.output != want.output {
		t.Errorf("the server counted %d requests, %d input and %d output tokens; import said sixpin sends %d, %d and %d",
			got.requests, got.input, got.output, want.requests, want.input, want.output)
	}
	p := im.run.Parity
	if p == nil || p.Planned == nil {
		t.Fatal("the results file carries no planned parity evidence")
	}
	if p.Planned.Requests != want.requests || p.Planned.InputTokens != want.input || p.Planned.OutputTokens != want.output {
		t.Errorf("parity.planned %+v, import said %+v", p.Planned, want)
	}
	if p.Served.Requests != got.requests || p.Served.InputTokens != got.input || p.Served.OutputTokens != got.output {
		t.Errorf("parity.served %+v, the server counted %+v", p.Served, got)
	}
	if sha := regexp.MustCompile(`sequence sha256 ([0-9a-f]{64})`).FindStringSubmatch(im.summary); sha == nil || sha[1] != p.Planned.SequenceSHA256 {
		t.Errorf("import printed digest %v, the results file has %s", sha, p.Planned.SequenceSHA256)
	}
}

// The invocation of vLLM's benchmark: its random dataset at the
// default range ratio 0 gives every request 512 input tokens (the server
// adds back the special tokens vLLM subtracts) and 128 output tokens with
// ignore_eos (vllm/benchmarks/datasets/random.py, serve.py): the server
// must count exactly 200 requests, 102,400 and 25,600 tokens — the
// totals import printed, counted server-side.
func TestImportVLLMBenchIsCountedServerSide(t *testing.T) {
	t.Parallel()
	im := importAndServe(t, "vllm-bench", strings.Fields("--dataset-name random --random-input-len 512 --random-output-len 128 --num-prompts 200 --max-concurrency 8 --ignore-eos --seed 1 --model sim-model")...)
	if printed(t, im.summary, `requests\s+([\d,]+)\n`) != 200 || printed(t, im.summary, `input tokens\s+([\d,]+)`) != 102400 ||
		printed(t, im.summary, `output tokens\s+([\d,]+)`) != 25600 || !strings.Contains(im.summary, "(exact;") {
		t.Errorf("import did not print vLLM's exact totals:\n%s", im.summary)
	}
	if c := im.server; c.requests != 200 || c.input != 102400 || c.output != 25600 {
		t.Errorf("the server counted %+v, want 200 requests, 102400 input and 25600 output tokens", c)
	}
	checkPlan(t, im)
	if im.run.Target.Protocol != "completions" {
		t.Errorf("protocol %q: vLLM's default backend speaks /v1/completions", im.run.Target.Protocol)
	}
}

// AIPerf at fixed lengths (--isl and --osl without a stddev), a
// concurrency burst of 4, ignore_eos from --extra-inputs, over chat
// completions (its default endpoint type): 24 × 64 input and 24 × 16
// output tokens, the chat template included in what the server counts
// (sixpin builds its prompts shorter by the overhead its probe measures).
func TestImportAIPerfIsCountedServerSide(t *testing.T) {
	t.Parallel()
	im := importAndServe(t, "aiperf", strings.Fields("-m sim-model --isl 64 --osl 16 --concurrency 4 --request-count 24 --extra-inputs ignore_eos:true --streaming --random-seed 3")...)
	if c := im.server; c.requests != 24 || c.input != 24*64 || c.output != 24*16 {
		t.Errorf("the server counted %+v, want 24 requests, 1536 input and 384 output tokens", c)
	}
	if printed(t, im.summary, `input tokens\s+([\d,]+)`) != 24*64 {
		t.Errorf("import printed:\n%s", im.summary)
	}
	checkPlan(t, im)
}

// GuideLLM's synthetic data with a stdev and bounds (round(clamp(N)) on
// [30, 70]) under its throughput profile at --rate 4 (at most 4 requests
// in flight: a closed loop of 4) for 30 requests: the server counts
// exactly what sixpin's plan draws for the seed, and the peer's expected
// totals are within sampling error of it. (An open loop here would judge
// this machine's timer as much as the translation: the importer's tests
// check the arrival processes.)
func TestImportGuideLLMIsCountedServerSide(t *testing.T) {
	t.Parallel()
	im := importAndServe(t, "guidellm", strings.Fields("--target http://127.0.0.1:8000 --model sim-model --profile throughput --rate 4 --max-requests 30 --data prompt_tokens=50,prompt_tokens_stdev=10,prompt_tokens_min=30,prompt_tokens_max=70,output_tokens=12")...)
	checkPlan(t, im)
	if c := im.server; c.requests != 30 || c.output != 30*12 {
		t.Errorf("the server counted %+v, want 30 requests and 360 output tokens", c)
	}
	// 30 draws of a stddev of about 10: the plan's total is within 4
	// standard errors (4 · 10 · √30 ≈ 220) of the peer's expectation.
	want := printed(t, im.summary, `input tokens\s+≈ ([\d,]+)`)
	if d := im.server.input - want; d < -220 || d > 220 {
		t.Errorf("the server counted %d input tokens, GuideLLM's expectation is %d", im.server.input, want)
	}
	if c := im.run.Pins.Concurrency.Declared; c.Mode != "closed" || c.Streams != 4 {
		t.Errorf("concurrency declared %+v, want a closed loop of 4", c)
	}
}

// inference-perf's random data (a normal input length clamped to [20,
// 60], a fixed output) in one concurrent stage, ignore_eos by its default:
// 20 requests, counted server-side as sixpin's plan said.
func TestImportInferencePerfIsCountedServerSide(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(cfg, []byte(`data:
  type: random
  input_distribution: {min: 20, max: 60, mean: 40, std_dev: 8, total_count: 100}
  output_distribution: {type: fixed, mean: 10, total_count: 100}
load:
  type: concurrent
  stages:
    - {num_requests: 20, concurrency_level: 4}
  base_seed: 5
server:
  type: vllm
  model_name: sim-model
  base_url: http://127.0.0.1:8000
`), 0o644); err != nil {
		t.Fatal(err)
	}
	im := importAndServe(t, "inference-perf", cfg)
	checkPlan(t, im)
	if c := im.server; c.requests != 20 || c.output != 200 {
		t.Errorf("the server counted %+v, want 20 requests and 200 output tokens", c)
	}
}

// A refused import names every setting it cannot translate and exits 2,
// writing nothing; the peer's arguments must come after --.
func TestImportRefusesAndWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "x.yaml")
	code, _, errOut := sixpin(t, nil, "import", "vllm-bench", "-o", path, "--", "--dataset-name", "sharegpt", "--bogus-flag")
	if code != ExitBadInput || !strings.Contains(errOut, "--bogus-flag: unknown flag") || !strings.Contains(errOut, `--dataset-name: dataset "sharegpt"`) {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a refused import wrote its scenario")
	}
	if code, _, errOut := sixpin(t, nil, "import", "vllm-bench", "--num-prompts", "3"); code != ExitBadInput {
		t.Errorf("peer flags before --: exit %d %s", code, errOut)
	}
	if code, _, _ := sixpin(t, nil, "import", "locust", "--", "-u", "3"); code != ExitBadInput {
		t.Errorf("an unknown peer: exit %d", code)
	}
}
