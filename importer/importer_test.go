package importer

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/scenario"
)

// load parses a translation's scenario, failing the test if it does not
// load.
func load(t *testing.T, r *Result) *scenario.Scenario {
	t.Helper()
	s, err := scenario.Parse(r.Name+".yaml", r.Scenario)
	if err != nil {
		t.Fatalf("the scenario does not load: %v\n%s", err, r.Scenario)
	}
	return s
}

// refusals runs an import that must fail and returns its refusals.
func refusals(t *testing.T, err error) []Refusal {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a refusal, got %v", err)
	}
	return e.Refusals
}

// refused reports whether rs refuses setting with a reason containing
// want.
func refused(rs []Refusal, setting, want string) bool {
	for _, r := range rs {
		if r.Setting == setting && strings.Contains(r.Reason, want) {
			return true
		}
	}
	return false
}

func noted(notes []Note, setting, want string) bool {
	for _, n := range notes {
		if n.Setting == setting && strings.Contains(n.Text, want) {
			return true
		}
	}
	return false
}

// The invocation: vLLM's random dataset at fixed lengths (range
// ratio 0, its default), a closed loop of --max-concurrency streams (the
// default --request-rate inf sends everything at once), ignore_eos; the
// totals are exact: 200 × 512 and 200 × 128 (serve.py, datasets/random.py).
func TestVLLMBenchFixedClosedLoop(t *testing.T) {
	t.Parallel()
	r, err := VLLMBench(strings.Fields("--dataset-name random --random-input-len 512 --random-output-len 128 --num-prompts 200 --max-concurrency 8 --ignore-eos --seed 1"), Options{Profile: "t.profile.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	c := s.Pins.Concurrency
	if s.Requests != 200 || c.Mode != scenario.ModeClosed || c.Streams != 8 || !s.Pins.Output.Exact || s.Seed != 1 ||
		!isFixed(s.Pins.Prompt.Tokens, 512) || !isFixed(s.Pins.Output.Tokens, 128) || s.Target.Profile != "t.profile.yaml" {
		t.Errorf("scenario %+v\n%s", s, r.Scenario)
	}
	tot := r.Totals
	if !tot.Exact || tot.Requests != 200 || tot.Input != 102400 || tot.Output != 25600 || tot.Cached != 0 {
		t.Errorf("totals %+v, want exactly 200 requests, 102400 in, 25600 out", tot)
	}
	if tot.Plan.Requests != 200 || tot.Plan.InputTokens != 102400 || tot.Plan.OutputTokens != 25600 || len(tot.Plan.SHA256) != 64 {
		t.Errorf("plan %+v", tot.Plan)
	}
	for _, want := range []string{"# --num-prompts 200\nrequests: 200", "--random-input-len 512", "--max-concurrency 8", "--ignore-eos", "--seed 1",
		"following vllm bench serve main: github.com/vllm-project/vllm vllm/benchmarks/serve.py @009e6d4a"} {
		if !strings.Contains(string(r.Scenario), want) {
			t.Errorf("scenario lacks %q:\n%s", want, r.Scenario)
		}
	}
	if !noted(r.Notes, "--request-rate", "default is inf") {
		t.Errorf("no note on --request-rate inf as a default: %v", r.Notes)
	}
	for _, want := range []string{"protocol: completions", "output_control: ignore_eos", `"repetition_penalty": 1`, `base_url: "http://127.0.0.1:8000/v1"`} {
		if !strings.Contains(string(r.Profile), want) {
			t.Errorf("profile lacks %q:\n%s", want, r.Profile)
		}
	}
}

// A range ratio draws from [⌊L(1−r)⌋, ⌈L(1+r)⌉] with L = input − special
// tokens, which the server adds back (datasets/random.py
// get_sampling_params); the output likewise, at least 1. The old meaning
// of the flag ([L·r, L], before vLLM PR #16126) is noted.
func TestVLLMBenchRangeRatio(t *testing.T) {
	t.Parallel()
	r, err := VLLMBench(strings.Fields("--random-input-len 512 --random-output-len 128 --random-range-ratio 0.25 --num-prompts 10 --model m --max_concurrency 2"), Options{SpecialTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	// L = 511: ⌊383.25⌋ = 383 … ⌈638.75⌉ = 639, + 1 special token.
	if p := s.Pins.Prompt.Tokens; p.Kind != scenario.DistUniform || p.Min != 384 || p.Max != 640 {
		t.Errorf("prompt %+v, want uniform [384, 640]", p)
	}
	if o := s.Pins.Output.Tokens; o.Kind != scenario.DistUniform || o.Min != 96 || o.Max != 160 || s.Pins.Output.Exact {
		t.Errorf("output %+v exact %v, want uniform [96, 160], not exact", o, s.Pins.Output.Exact)
	}
	if r.Totals.Exact || r.Totals.Input != 10*512 || r.Totals.Output != 10*128 {
		t.Errorf("totals %+v, want expected 5120 and 1280", r.Totals)
	}
	if !noted(r.Notes, "--random-range-ratio", "PR #16126") {
		t.Errorf("the inverted meaning is not noted: %v", r.Notes)
	}
	if s.Pins.Concurrency.Streams != 2 {
		t.Errorf("--max_concurrency (underscores, as vLLM's parser accepts) read as %d streams", s.Pins.Concurrency.Streams)
	}
	_, err = VLLMBench(strings.Fields("--random-range-ratio 1.0"), Options{})
	if rs := refusals(t, err); !refused(rs, "--random-range-ratio", "[L·r, L] with default 1") {
		t.Errorf("a ratio of 1 (the old default) is not refused with the old meaning: %v", rs)
	}
}

// A finite rate is an open loop: Gamma gaps at a burstiness, Poisson at
// 1, even at inf (serve.py get_request); --max-concurrency caps it.
func TestVLLMBenchArrivals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args    string
		arrival string
		burst   float64
	}{
		{"--request-rate 4", scenario.ArrivalPoisson, 0},
		{"--request-rate 4 --burstiness 0.5", scenario.ArrivalGamma, 0.5},
		{"--request-rate 4 --burstiness inf", scenario.ArrivalConstant, 0},
	} {
		r, err := VLLMBench(strings.Fields(c.args+" --num-prompts 20 --model m --max-concurrency 3"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		cp := load(t, r).Pins.Concurrency
		if cp.Mode != scenario.ModeOpen || cp.Rate != 4 || cp.Arrival != c.arrival || (c.burst > 0 && cp.Burstiness != c.burst) || cp.MaxInFlight != 3 {
			t.Errorf("%s: concurrency %+v", c.args, cp)
		}
	}
}

// Every setting that cannot be translated is refused by name, all at
// once; an unknown flag is an error naming it; datasets sixpin cannot
// read are named.
func TestVLLMBenchRefusals(t *testing.T) {
	t.Parallel()
	_, err := VLLMBench(strings.Fields("--dataset-name sharegpt --dataset-path x.json --frobnicate 3 --lora-modules a b --ramp-up-strategy linear --use-beam-search --backend tgi"), Options{})
	rs := refusals(t, err)
	for _, want := range [][2]string{{"--frobnicate", "unknown flag"}, {"--dataset-name", `"sharegpt" is ShareGPT's`}, {"--lora-modules", "LoRA"},
		{"--ramp-up-strategy", "ramp"}, {"--use-beam-search", "beam search"}, {"--backend", `"tgi"`}, {"3", "stray value"}} {
		if !refused(rs, want[0], want[1]) {
			t.Errorf("no refusal of %s (%q): %v", want[0], want[1], rs)
		}
	}
	if !strings.Contains(err.Error(), "import vllm-bench: cannot translate faithfully:\n  --frobnicate: unknown flag") {
		t.Errorf("error words: %v", err)
	}
}

// Warm-up requests are left out of the scenario and counted apart;
// goodput SLOs map onto the scenario's slo.
func TestVLLMBenchWarmupsAndGoodput(t *testing.T) {
	t.Parallel()
	r, err := VLLMBench(strings.Fields("--num-prompts 10 --random-input-len 100 --random-output-len 10 --num-warmups 3 --model m --goodput ttft:500 tpot:40"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	if w := r.Totals.Warmup; w.Requests != 3 || w.Input != 300 || w.Output != 30 || s.Requests != 10 {
		t.Errorf("warm-up %+v, requests %d", w, s.Requests)
	}
	if s.SLO.TTFTMs != 500 || s.SLO.TPOTMs != 40 {
		t.Errorf("slo %+v", s.SLO)
	}
}

// AIPerf: --concurrency alone is a closed loop; lengths are ⌈N(mean,
// sd²)⌉ ≥ 1 (pinned as a normal of mean + ½); ignore_eos comes from
// --extra-inputs; no --osl is refused (AIPerf then sends no max_tokens).
func TestAIPerf(t *testing.T) {
	t.Parallel()
	r, err := AIPerf(strings.Fields("-m m --isl 100 --osl 20 --concurrency 4 --request-count 40 --extra-inputs ignore_eos:true --streaming --random-seed 7 --warmup-request-count 2"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	if c := s.Pins.Concurrency; c.Mode != scenario.ModeClosed || c.Streams != 4 || s.Requests != 40 || !s.Pins.Output.Exact || s.Seed != 7 ||
		!isFixed(s.Pins.Prompt.Tokens, 100) || !isFixed(s.Pins.Output.Tokens, 20) {
		t.Errorf("scenario:\n%s", r.Scenario)
	}
	if r.Totals.Input != 4000 || r.Totals.Output != 800 || !r.Totals.Exact || r.Totals.Warmup.Requests != 2 {
		t.Errorf("totals %+v", r.Totals)
	}
	r, err = AIPerf(strings.Fields("-m m --isl 1000 --isl-stddev 50 --osl 200 --request-rate 5 --concurrency 8 --request-rate-mode constant"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = load(t, r)
	if p := s.Pins.Prompt.Tokens; p.Kind != scenario.DistNormal || p.Mean != 1000.5 || p.Stddev != 50 {
		t.Errorf("prompt %+v, want normal mean 1000.5 (⌈X⌉ is round(X + ½))", p)
	}
	if c := s.Pins.Concurrency; c.Mode != scenario.ModeOpen || c.Arrival != scenario.ArrivalConstant || c.MaxInFlight != 8 || c.Rate != 5 {
		t.Errorf("concurrency %+v", c)
	}
	if !noted(r.Notes, "--streaming", "stream: false") {
		t.Errorf("no note that AIPerf does not stream by default: %v", r.Notes)
	}
	_, err = AIPerf(strings.Fields("-m m --isl 100 --input-file x.jsonl --bogus"), Options{})
	rs := refusals(t, err)
	if !refused(rs, "--osl", "no max_tokens") || !refused(rs, "--bogus", "unknown flag") || !refused(rs, "--input-file", "does not read") {
		t.Errorf("refusals %v", rs)
	}
}

// GuideLLM: synthetic data with a stdev and bounds is round(clamp(N)),
// written out exactly when the clamp matters; outputs are exact
// (ignore_eos: true); profiles map to closed or open loops; its default
// profile sweep is refused, as are several rates.
func TestGuideLLM(t *testing.T) {
	t.Parallel()
	r, err := GuideLLM(strings.Fields("--target http://h:8000 --model m --profile concurrent --rate 4 --max-requests 40 --data prompt_tokens=100,output_tokens=20"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	if c := s.Pins.Concurrency; c.Mode != scenario.ModeClosed || c.Streams != 4 || s.Requests != 40 || !s.Pins.Output.Exact || s.Seed != 42 {
		t.Errorf("scenario:\n%s", r.Scenario)
	}
	if !noted(r.Notes, "", "tpot_ms") {
		t.Errorf("no note on GuideLLM's tpot being sixpin's ITL: %v", r.Notes)
	}
	r, err = GuideLLM(strings.Fields("--target http://h:8000/v1 --model m --profile poisson --rate 2 --max-seconds 30 --warmup 0.1 --data prompt_tokens=200,prompt_tokens_stdev=50,prompt_tokens_min=180,prompt_tokens_max=260,output_tokens=20"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = load(t, r)
	p := s.Pins.Prompt.Tokens
	if p.Kind != scenario.DistEmpirical || p.Values[0] != 180 || p.Values[len(p.Values)-1] != 260 {
		t.Fatalf("prompt %+v, want the clamped normal written out on [180, 260]", p)
	}
	// The lower bound takes the tail below 180.5: Φ((180.5−200)/50).
	if w := p.Weights[0] / sum(p.Weights); math.Abs(w-normalCDF(200, 50)(180.5)) > 1e-5 {
		t.Errorf("P(180) = %v, want %v", w, normalCDF(200, 50)(180.5))
	}
	if s.Windows.Warmup.D().Seconds() != 3 || s.Pins.Concurrency.Arrival != scenario.ArrivalPoisson || s.Duration.D().Seconds() != 30 {
		t.Errorf("warm-up %v, arrival %s, duration %v", s.Windows.Warmup, s.Pins.Concurrency.Arrival, s.Duration)
	}
	_, err = GuideLLM(strings.Fields("--target http://h --data prompt_tokens=1,output_tokens=1"), Options{})
	if rs := refusals(t, err); !refused(rs, "--profile", "sweep") || !refused(rs, "--max-requests", "never does") {
		t.Errorf("refusals %v", rs)
	}
	_, err = GuideLLM(strings.Fields("--target http://h --profile constant --rate 1,2 --max-requests 5 --data data.jsonl"), Options{})
	if rs := refusals(t, err); !refused(rs, "--rate", "2 rates") || !refused(rs, "--data", `"data.jsonl" is not synthetic data`) {
		t.Errorf("refusals %v", rs)
	}
}

const ipConfigSrc = `api:
  type: completion
  streaming: true
data:
  type: random
  input_distribution: {min: 100, max: 300, mean: 200, std_dev: 40, total_count: 500}
  output_distribution: {type: fixed, mean: 32, total_count: 500}
load:
  type: concurrent
  stages:
    - {num_requests: 60, concurrency_level: 6}
  base_seed: 9
server:
  type: vllm
  model_name: m
  base_url: http://localhost:8000
`

// inference-perf: random data draws round(clamp(N(mean, sd²), min, max))
// (generate_distribution), a concurrent stage is a closed loop, ignore_eos
// is on by default; an unknown key is an error at file:line:col, a
// dataset sixpin cannot read is named, a constant stage is rate ×
// duration requests with exponential gaps.
func TestInferencePerf(t *testing.T) {
	t.Parallel()
	r, err := InferencePerf("c.yml", []byte(ipConfigSrc), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, r)
	if c := s.Pins.Concurrency; c.Mode != scenario.ModeClosed || c.Streams != 6 || s.Requests != 60 || !s.Pins.Output.Exact || s.Seed != 9 ||
		!isFixed(s.Pins.Output.Tokens, 32) {
		t.Errorf("scenario:\n%s", r.Scenario)
	}
	// ±2.5σ: the clamp puts 1.2% of the mass on the bounds, so the
	// distribution is written out, not pinned as sixpin's truncated normal.
	if p := s.Pins.Prompt.Tokens; p.Kind != scenario.DistEmpirical || len(p.Values) != 201 || p.Values[0] != 100 {
		t.Errorf("prompt %s, want the clamped normal on [100, 300] written out", p)
	}
	_, err = InferencePerf("c.yml", []byte(strings.Replace(ipConfigSrc, "  streaming: true", "  streaming: true\n  stream_mode: fast", 1)), Options{})
	if err == nil || !strings.Contains(err.Error(), "c.yml:4:3: api.stream_mode") {
		t.Errorf("an unknown key: %v", err)
	}
	_, err = InferencePerf("c.yml", []byte(strings.Replace(ipConfigSrc, "type: random", "type: shareGPT", 1)), Options{})
	if rs := refusals(t, err); !refused(rs, "data.type", `"shareGPT" is ShareGPT's`) {
		t.Errorf("refusals %v", rs)
	}
	constant := strings.Replace(ipConfigSrc, "  type: concurrent\n  stages:\n    - {num_requests: 60, concurrency_level: 6}", "  type: constant\n  stages:\n    - {rate: 5, duration: 12}", 1)
	r, err = InferencePerf("c.yml", []byte(constant), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = load(t, r)
	if c := s.Pins.Concurrency; c.Mode != scenario.ModeOpen || c.Rate != 5 || c.Arrival != scenario.ArrivalPoisson || s.Requests != 60 {
		t.Errorf("constant stage: %+v, %d requests", c, s.Requests)
	}
	if !noted(r.Notes, "load.type", "not even spacing") {
		t.Errorf("no note on constant's exponential gaps: %v", r.Notes)
	}
}

func sum(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func isFixed(d scenario.Dist, v float64) bool { return d.Kind == scenario.DistFixed && d.Value == v }
