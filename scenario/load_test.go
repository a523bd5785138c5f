package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// errStrings returns each FieldError of err formatted, or fails.
func errStrings(t *testing.T, err error) []string {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v (%T) is not an ErrorList", err, err)
	}
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = e.Error()
	}
	return out
}

func TestLoadValid(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, s *Scenario)
	}{
		{"chat-8k-c16.yaml", func(t *testing.T, s *Scenario) {
			want := Pins{
				Model:       ModelPin{Name: "qwen3.8-27b", ParamsB: 27, Dtype: "bf16"},
				Prompt:      PromptPin{Tokens: Fixed(8000)},
				Output:      OutputPin{Tokens: Fixed(4000), Exact: true},
				Concurrency: ConcurrencyPin{Mode: ModeClosed, Streams: 16},
				KVCache: KVCachePin{MaxModelLen: 32768, GPUMemoryUtilization: 0.9, MaxNumSeqs: 32,
					Batching: "continuous", PrefixCaching: ptr(true)},
				Mix: MixPin{InputOutputRatio: 2},
			}
			if !reflect.DeepEqual(s.Pins, want) {
				t.Errorf("pins = %+v\nwant %+v", s.Pins, want)
			}
			if s.Name != "chat-8k-c16" || s.Seed != 42 || s.Duration.D() != 5*time.Minute || s.Requests != 0 {
				t.Errorf("name %q seed %d duration %v requests %d", s.Name, s.Seed, s.Duration, s.Requests)
			}
			wantWin := Windows{Warmup: Duration(30 * time.Second), Burst: Duration(10 * time.Second), Steady: Steady{Auto: true}}
			if s.Windows != wantWin {
				t.Errorf("windows = %+v, want %+v", s.Windows, wantWin)
			}
			if s.SLO != (SLO{TTFTMs: 2000, TPOTMs: 50}) {
				t.Errorf("slo = %+v", s.SLO)
			}
			if len(s.Warnings) != 0 {
				t.Errorf("warnings = %v", s.Warnings)
			}
		}},
		{"agentic-open.yaml", func(t *testing.T, s *Scenario) {
			if s.Name != "agentic-open" {
				t.Errorf("name = %q, want the file's base name", s.Name)
			}
			want := Dist{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 11000, Max: 120000}
			if !reflect.DeepEqual(s.Pins.Prompt.Tokens, want) {
				t.Errorf("prompt = %+v, want %+v", s.Pins.Prompt.Tokens, want)
			}
			c := s.Pins.Concurrency
			if c != (ConcurrencyPin{Mode: ModeOpen, Rate: 2.5, Arrival: ArrivalGamma, Burstiness: 0.5, MaxInFlight: 64}) {
				t.Errorf("concurrency = %+v", c)
			}
			if s.Windows.Steady != (Steady{Start: 2 * time.Minute, End: 9 * time.Minute}) {
				t.Errorf("steady = %+v", s.Windows.Steady)
			}
			if s.RequestTimeout.D() != DefaultRequestTimeout || s.Windows.Burst.D() != DefaultBurst {
				t.Errorf("defaults: request_timeout %v burst %v", s.RequestTimeout, s.Windows.Burst)
			}
			if s.Target.Endpoint != "http://127.0.0.1:8000/v1" {
				t.Errorf("endpoint = %q", s.Target.Endpoint)
			}
		}},
		{"mix-classes.yaml", func(t *testing.T, s *Scenario) {
			if s.Seed != DefaultSeed {
				t.Errorf("seed = %d, want the default %d", s.Seed, DefaultSeed)
			}
			cs := s.Pins.Mix.Classes
			if len(cs) != 2 || cs[0].Name != "chat" || cs[0].Output != nil || cs[1].Output == nil || !cs[1].Output.Exact {
				t.Fatalf("classes = %+v", cs)
			}
			want := []string{"testdata/mix-classes.yaml:5:40: pins.concurrency.streams: exceeds pins.kv_cache.max_num_seqs (4 > 2): the server runs at most 2 at once and queues the rest"}
			if got := errStrings(t, ErrorList(s.Warnings)); !reflect.DeepEqual(got, want) {
				t.Errorf("warnings = %q\nwant %q", got, want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			s, err := Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			data, _ := os.ReadFile(path)
			sum := sha256.Sum256(data)
			if s.Path != path || s.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("path %q sha256 %q", s.Path, s.SHA256)
			}
			tt.check(t, s)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"unknown-key.yaml", []string{
			"testdata/invalid/unknown-key.yaml:2:1: pins.prompt.tokens: required",
			`testdata/invalid/unknown-key.yaml:4:3: pins.promt: unknown field (did you mean "prompt"?)`,
		}},
		{"type-error.yaml", []string{
			`testdata/invalid/type-error.yaml:7:14: pins.concurrency.streams: must be an integer (got "eight")`,
		}},
		{"max-lt-min.yaml", []string{
			"testdata/invalid/max-lt-min.yaml:5:43: pins.output.tokens.max: must be ≥ min (got 10 < 50)",
		}},
		{"missing-name.yaml", []string{
			"testdata/invalid/missing-name.yaml:2:3: pins.model.name: required",
		}},
		{"kv-overflow.yaml", []string{
			"testdata/invalid/kv-overflow.yaml:8:20: pins.kv_cache.max_model_len: prompt max + output max exceeds it (120000 + 500 > 65536)",
		}},
		{"closed-no-streams.yaml", []string{
			"testdata/invalid/closed-no-streams.yaml:5:3: pins.concurrency.streams: required when mode is closed",
		}},
		{"open-no-rate.yaml", []string{
			"testdata/invalid/open-no-rate.yaml:5:3: pins.concurrency.rate: required when mode is open (requests per second)",
		}},
		{"lognormal-no-max.yaml", []string{
			"testdata/invalid/lognormal-no-max.yaml:4:5: pins.prompt.tokens.max: required for dist lognormal (bounds are explicit)",
		}},
		{"bare-duration.yaml", []string{
			`testdata/invalid/bare-duration.yaml:6:11: duration: must be a duration with a unit, e.g. "300s" or "300m" (got bare number 300)`,
		}},
		{"ratio.yaml", []string{
			"testdata/invalid/ratio.yaml:6:29: pins.mix.input_output_ratio: declared 2 but the pins give 40 (mean prompt 8,000 / mean output 200 tokens): more than 25% apart",
		}},
		{"two-docs.yaml", []string{
			"testdata/invalid/two-docs.yaml:7:1: a second YAML document: a scenario file holds exactly one",
		}},
		{"syntax.yaml", []string{
			"testdata/invalid/syntax.yaml:3: invalid YAML: did not find expected key",
		}},
		{"many.yaml", []string{
			"testdata/invalid/many.yaml:4:50: pins.model.active_params_b: must be ≤ params_b (got 9 > 8)",
			`testdata/invalid/many.yaml:6:20: pins.prompt.tokens.dist: unknown distribution "gauss" (want fixed, uniform, normal, lognormal, empirical)`,
			"testdata/invalid/many.yaml:8:34: pins.output.tokens.min: must be ≥ 1 (got 0)",
			"testdata/invalid/many.yaml:8:54: pins.output.tokens.sigma: not used by dist uniform",
			"testdata/invalid/many.yaml:9:49: pins.concurrency.rate: not allowed when mode is closed (open loop only)",
			"testdata/invalid/many.yaml:10:38: pins.kv_cache.gpu_memory_utilization: must be in (0, 1] (got 1.5)",
			`testdata/invalid/many.yaml:10:53: pins.kv_cache.batching: must be continuous or static (got "dynamic")`,
			"testdata/invalid/many.yaml:10:76: pins.kv_cache.max_num_seqs: must be ≥ 0 (got -1)",
			"testdata/invalid/many.yaml:12:25: pins.mix.input_output_ratio: must be ≥ 0 (got -1)",
			`testdata/invalid/many.yaml:15:16: pins.mix.classes[1].name: duplicate class name "a" (first at classes[0])`,
			"testdata/invalid/many.yaml:15:27: pins.mix.classes[1].weight: must be > 0 (got 0)",
			"testdata/invalid/many.yaml:16:9: pins.mix.classes[2].name: required",
			"testdata/invalid/many.yaml:19:11: windows.warmup: must be < duration (got 1m ≥ 1m)",
			"testdata/invalid/many.yaml:20:10: windows.burst: must be > 0 (got 0s)",
			"testdata/invalid/many.yaml:21:29: windows.steady.end: must be > start (got 20s ≤ 30s)",
			"testdata/invalid/many.yaml:22:16: slo.ttft_ms: must be ≥ 0 (got -1)",
			"testdata/invalid/many.yaml:22:36: slo.max_error_rate: must be in [0, 1], a fraction: 0.01 = 1% (got 5)",
			`testdata/invalid/many.yaml:23:20: target.endpoint: must be an http(s) URL (got "localhost:8000")`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "invalid", tt.file))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", s)
			}
			if s != nil {
				t.Errorf("Load returned a scenario with its error")
			}
			if got := errStrings(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// valid is a minimal valid scenario; inline cases edit it.
const valid = `pins:
  model: {name: m}
  prompt: {tokens: 100}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
requests: 10
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // formatted errors, file "t.yaml"
	}{
		{"shared prefix as long as the prompt", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, shared_prefix_tokens: 100}", 1), []string{
			"t.yaml:3:47: pins.prompt.shared_prefix_tokens: must be shorter than every prompt (got 100 ≥ prompt min 100)",
		}},
		{"prefix groups without a shared prefix", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, prefix_groups: 4}", 1), []string{
			"t.yaml:3:40: pins.prompt.prefix_groups: only with shared_prefix_tokens",
		}},
		{"tolerance out of range", strings.Replace(valid, "{tokens: 100}", "{tokens: 100, tolerance_pct: 150}", 1), []string{
			"t.yaml:3:40: pins.prompt.tolerance_pct: must be in [0, 100] (got 150)",
		}},
		{"output tolerance with exact", strings.Replace(valid, "{tokens: 10}", "{tokens: 10, exact: true, tolerance_pct: 5}", 1), []string{
			"t.yaml:4:52: pins.output.tolerance_pct: not used with exact: true (exact means no drift)",
		}},
		{"duplicate key", valid + "requests: 20\n", []string{
			"t.yaml:7:1: requests: duplicate key (first at line 6)",
		}},
		{"unknown key without a close match", valid + "colour: blue\n", []string{
			"t.yaml:7:1: colour: unknown field (want one of name, description, seed, pins, duration, requests, request_timeout, workload, windows, slo, abort_on, target, sweep)",
		}},
		{"key differing in case", strings.Replace(valid, "{name: m}", "{Name: m}", 1), []string{
			"t.yaml:2:3: pins.model.name: required",
			`t.yaml:2:11: pins.model.Name: unknown field (did you mean "name"?)`,
		}},
		{"bool", strings.Replace(valid, "{tokens: 10}", "{tokens: 10, exact: yes}", 1), []string{
			`t.yaml:4:31: pins.output.exact: must be true or false (got "yes")`,
		}},
		{"fractional integer", strings.Replace(valid, "streams: 1}", "streams: 8.5}", 1), []string{
			`t.yaml:5:40: pins.concurrency.streams: must be an integer (got "8.5")`,
		}},
		{"mapping expected", strings.Replace(valid, "{name: m}", "qwen", 1), []string{
			`t.yaml:2:10: pins.model: must be a mapping (got "qwen")`,
		}},
		{"list expected", strings.Replace(valid, "pins:\n", "pins:\n  mix: {classes: {name: a}}\n", 1), []string{
			"t.yaml:2:18: pins.mix.classes: must be a list (got a mapping)",
		}},
		{"typo at the top level", valid + "pins2: 1\n", []string{
			`t.yaml:7:1: pins2: unknown field (did you mean "pins"?)`,
		}},
		{"dist not a number", strings.Replace(valid, "{tokens: 100}", "{tokens: lots}", 1), []string{
			`t.yaml:3:20: pins.prompt.tokens: must be a number or a mapping with "dist" (got "lots")`,
		}},
		{"dist a list", strings.Replace(valid, "{tokens: 100}", "{tokens: [1, 2]}", 1), []string{
			`t.yaml:3:20: pins.prompt.tokens: must be a number or a mapping with "dist" (got a list)`,
		}},
		{"dist without kind", strings.Replace(valid, "{tokens: 100}", "{tokens: {min: 1, max: 2}}", 1), []string{
			"t.yaml:3:12: pins.prompt.tokens.dist: required (want fixed, uniform, normal, lognormal, empirical)",
		}},
		{"fixed without value", strings.Replace(valid, "{tokens: 100}", "{tokens: {dist: fixed}}", 1), []string{
			"t.yaml:3:12: pins.prompt.tokens.value: required for dist fixed",
		}},
		{"bare zero tokens", strings.Replace(valid, "{tokens: 100}", "{tokens: 0}", 1), []string{
			"t.yaml:3:20: pins.prompt.tokens: must be ≥ 1 (got 0)",
		}},
		{"fixed value zero", strings.Replace(valid, "{tokens: 10}", "{tokens: {dist: fixed, value: 0}}", 1), []string{
			"t.yaml:4:41: pins.output.tokens.value: must be ≥ 1 (got 0)",
		}},
		{"empirical token values", strings.Replace(valid, "{tokens: 10}", "{tokens: {dist: empirical, values: [5, 0.2]}}", 1), []string{
			"t.yaml:4:50: pins.output.tokens.values[1]: must be ≥ 1 (got 0.2)",
		}},
		{"normal stddev and mean", strings.Replace(valid, "{tokens: 100}",
			"{tokens: {dist: normal, mean: 50, stddev: 0, min: 100, max: 200}}", 1), []string{
			"t.yaml:3:41: pins.prompt.tokens.mean: must be within [min, max] (got 50 outside [100, 200])",
			"t.yaml:3:53: pins.prompt.tokens.stddev: must be > 0 (got 0)",
		}},
		{"empirical", strings.Replace(valid, "{tokens: 100}",
			"{tokens: {dist: empirical, values: [1, 2, 3], weights: [1, 2], max: 3}}", 1), []string{
			"t.yaml:3:57: pins.prompt.tokens.weights: must have one weight per value (got 2 weights for 3 values)",
			"t.yaml:3:79: pins.prompt.tokens.max: not used by dist empirical",
		}},
		{"steady", valid + "windows: {steady: sometimes}\n", []string{
			`t.yaml:7:19: windows.steady: must be "auto" or a mapping {start, end} (got "sometimes")`,
		}},
		{"duration words", valid + "duration: 5 minutes\n", []string{
			`t.yaml:7:11: duration: must be a duration like "30s" or "5m" (got "5 minutes")`,
		}},
		{"quoted bare duration", valid + "request_timeout: \"90\"\n", []string{
			`t.yaml:7:18: request_timeout: must be a duration with a unit, e.g. "90s" or "90m" (got bare number 90)`,
		}},
		{"duration as mapping", valid + "duration: {m: 5}\n", []string{
			`t.yaml:7:11: duration: must be a duration like "30s" or "5m" (got a mapping)`,
		}},
		{"zero request timeout", valid + "request_timeout: 0s\n", []string{
			"t.yaml:7:18: request_timeout: must be > 0 (got 0s)",
		}},
		{"no run bound", strings.Replace(valid, "requests: 10\n", "", 1), []string{
			"t.yaml:1:1: duration: required unless requests is set (at least one must be > 0)",
		}},
		{"steady end after duration", valid + "duration: 5m\nwindows: {steady: {start: 1m, end: 6m}}\n", []string{
			"t.yaml:8:36: windows.steady.end: must be ≤ duration (got 6m > 5m)",
		}},
		{"mode missing", strings.Replace(valid, "{mode: closed, streams: 1}", "{streams: 1}", 1), []string{
			"t.yaml:5:3: pins.concurrency.mode: required (closed or open)",
		}},
		{"mode unknown", strings.Replace(valid, "mode: closed", "mode: batch", 1), []string{
			`t.yaml:5:23: pins.concurrency.mode: must be closed or open (got "batch")`,
		}},
		{"open with streams and burstiness without gamma", strings.Replace(valid, "{mode: closed, streams: 1}",
			"{mode: open, rate: 2, burstiness: 2, streams: 4}", 1), []string{
			"t.yaml:5:50: pins.concurrency.burstiness: only for arrival gamma",
			"t.yaml:5:62: pins.concurrency.streams: not allowed when mode is open (max_in_flight caps requests in flight)",
		}},
		{"open arrival and rate", strings.Replace(valid, "{mode: closed, streams: 1}",
			"{mode: open, rate: -1, arrival: burst, max_in_flight: -2}", 1), []string{
			"t.yaml:5:35: pins.concurrency.rate: must be > 0 (got -1)",
			`t.yaml:5:48: pins.concurrency.arrival: must be constant, poisson or gamma (got "burst")`,
			"t.yaml:5:70: pins.concurrency.max_in_flight: must be ≥ 0 (got -2)",
		}},
		{"active params without params", strings.Replace(valid, "{name: m}", "{name: m, active_params_b: 3}", 1), []string{
			"t.yaml:2:3: pins.model.params_b: required when active_params_b is set",
		}},
		{"gpu memory utilization zero", strings.Replace(valid, "pins:\n", "pins:\n  kv_cache: {gpu_memory_utilization: 0}\n", 1), []string{
			"t.yaml:2:38: pins.kv_cache.gpu_memory_utilization: must be in (0, 1] (got 0)",
		}},
		{"integral float for an integer", strings.Replace(valid, "streams: 1}", "streams: 1e1}", 1), nil},
		{"bare zero duration", valid + "windows: {warmup: 0}\n", nil},
		{"merge keys", `pins:
  model: {name: m}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
  mix:
    classes:
      - &base {name: a, weight: 1, prompt: {tokens: 100}}
      - <<: *base
        name: b
requests: 10
`, nil},
		{"class without its own prompt", `pins:
  model: {name: m}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
  mix:
    classes:
      - {name: a, weight: 1, prompt: {tokens: 100}}
      - {name: b}
requests: 10
`, []string{
			`t.yaml:1:1: pins.prompt.tokens: required: mix class "b" has no prompt pin of its own`,
			"t.yaml:8:9: pins.mix.classes[1].weight: required (> 0)",
		}},
		{"kv overflow names the class", `pins:
  model: {name: m}
  prompt: {tokens: 1000}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
  kv_cache: {max_model_len: 4096}
  mix:
    classes:
      - {name: short, weight: 1}
      - {name: long, weight: 1, prompt: {tokens: {dist: uniform, min: 1000, max: 4090}}}
requests: 10
`, []string{
			`t.yaml:6:29: pins.kv_cache.max_model_len: prompt max + output max of class "long" exceeds it (4090 + 10 > 4096)`,
		}},
		{"root is a list", "- a\n- b\n", []string{
			"t.yaml:1:1: not a scenario file: want a mapping (name, pins, ...), got a list",
		}},
		{"empty file", "# nothing\n", []string{
			"t.yaml: empty file: want a scenario mapping (name, pins, ...)",
		}},
		{"null document", "~\n", []string{
			"t.yaml:1:1: empty document: want a scenario mapping (name, pins, ...)",
		}},
		{"unknown anchor", valid + "name: *x\n", []string{
			"t.yaml:7: invalid YAML: unknown anchor 'x' referenced",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tt.src))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", s)
			}
			if got := errStrings(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParseMergeKeys(t *testing.T) {
	s, err := Parse("t.yaml", []byte(`pins:
  model: {name: m}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
  mix:
    classes:
      - &base {name: a, weight: 2, prompt: {tokens: 100}}
      - <<: *base
        name: b
requests: 10
`))
	if err != nil {
		t.Fatal(err)
	}
	c := s.Pins.Mix.Classes[1]
	if c.Name != "b" || c.Weight != 2 || c.Prompt == nil || !reflect.DeepEqual(c.Prompt.Tokens, Fixed(100)) {
		t.Errorf("merged class = %+v (prompt %+v), want name b, weight 2, prompt 100", c, c.Prompt)
	}
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(t *testing.T, s *Scenario)
	}{
		{"absent seed is 1", valid, func(t *testing.T, s *Scenario) {
			if s.Seed != 1 {
				t.Errorf("seed = %d, want 1", s.Seed)
			}
		}},
		{"empty seed is absent", valid + "seed:\n", func(t *testing.T, s *Scenario) {
			if s.Seed != 1 {
				t.Errorf("seed = %d, want 1", s.Seed)
			}
		}},
		{"written seed 0 is kept", valid + "seed: 0\n", func(t *testing.T, s *Scenario) {
			if s.Seed != 0 {
				t.Errorf("seed = %d, want 0", s.Seed)
			}
		}},
		{"name, timeout and windows", valid, func(t *testing.T, s *Scenario) {
			if s.Name != "t" || s.RequestTimeout.D() != 10*time.Minute || s.Windows.Burst.D() != 10*time.Second ||
				s.Windows.Steady != (Steady{Auto: true}) || s.Windows.Warmup != 0 {
				t.Errorf("name %q request_timeout %v windows %+v", s.Name, s.RequestTimeout, s.Windows)
			}
		}},
		{"open loop arrival is poisson", strings.Replace(valid, "{mode: closed, streams: 1}", "{mode: open, rate: 3}", 1),
			func(t *testing.T, s *Scenario) {
				if c := s.Pins.Concurrency; c.Arrival != ArrivalPoisson || c.Burstiness != 0 {
					t.Errorf("concurrency = %+v, want poisson arrivals", c)
				}
			}},
		{"gamma burstiness is 1", strings.Replace(valid, "{mode: closed, streams: 1}", "{mode: open, rate: 3, arrival: gamma}", 1),
			func(t *testing.T, s *Scenario) {
				if c := s.Pins.Concurrency; c.Burstiness != 1 {
					t.Errorf("burstiness = %v, want 1", c.Burstiness)
				}
			}},
		{"closed loop gets no arrival", valid, func(t *testing.T, s *Scenario) {
			if c := s.Pins.Concurrency; c.Arrival != "" || c.Burstiness != 0 {
				t.Errorf("concurrency = %+v", c)
			}
		}},
		{"explicit steady from start", valid + "windows: {steady: {start: 30s}}\n", func(t *testing.T, s *Scenario) {
			if s.Windows.Steady != (Steady{Start: 30 * time.Second}) {
				t.Errorf("steady = %+v", s.Windows.Steady)
			}
		}},
		{"name kept when written", "name: chat\n" + valid, func(t *testing.T, s *Scenario) {
			if s.Name != "chat" {
				t.Errorf("name = %q", s.Name)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("dir/t.yaml", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}

func TestValidateWithoutPositions(t *testing.T) {
	s := &Scenario{
		Pins: Pins{
			Model:       ModelPin{Name: "m"},
			Prompt:      PromptPin{Tokens: Dist{Kind: DistUniform, Min: 50, Max: 10}},
			Output:      OutputPin{Tokens: Fixed(100)},
			Concurrency: ConcurrencyPin{Mode: ModeOpen, Rate: 2},
		},
		Requests: 10,
	}
	s.SetDefaults()
	if s.Pins.Concurrency.Arrival != ArrivalPoisson || !s.Windows.Steady.Auto || s.Windows.Burst.D() != DefaultBurst {
		t.Errorf("SetDefaults left %+v %+v", s.Pins.Concurrency, s.Windows)
	}
	err := s.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("Validate = %v, want a *FieldError inside", err)
	}
	want := &FieldError{Field: "pins.prompt.tokens.max", Msg: "must be ≥ min (got 10 < 50)"}
	if !reflect.DeepEqual(fe, want) {
		t.Errorf("error = %#v, want %#v", fe, want)
	}
	if got := err.Error(); got != "pins.prompt.tokens.max: must be ≥ min (got 10 < 50)" {
		t.Errorf("Error() = %q", got)
	}

	s.Pins.Prompt.Tokens.Max = 500
	if err := s.Validate(); err != nil {
		t.Errorf("fixed scenario: %v", err)
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		e    FieldError
		want string
	}{
		{FieldError{File: "scenarios/x.yaml", Line: 12, Col: 5, Field: "pins.output.tokens.max", Msg: "must be ≥ min (got 10 < 50)"},
			"scenarios/x.yaml:12:5: pins.output.tokens.max: must be ≥ min (got 10 < 50)"},
		{FieldError{File: "x.yaml", Line: 3, Col: 0, Field: "", Msg: "invalid YAML: oops"}, "x.yaml:3: invalid YAML: oops"},
		{FieldError{File: "x.yaml", Line: 0, Col: 0, Field: "", Msg: "empty"}, "x.yaml: empty"},
		{FieldError{File: "", Line: 0, Col: 0, Field: "seed", Msg: "bad"}, "seed: bad"},
		{FieldError{File: "", Line: 4, Col: 2, Field: "seed", Msg: "bad"}, "4:2: seed: bad"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.e.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
	list := ErrorList{&tests[0].e, &tests[1].e}
	if got, want := list.Error(), tests[0].want+"\n"+tests[1].want; got != want {
		t.Errorf("ErrorList.Error() = %q, want %q", got, want)
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "no-such.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load = %v, want a wrapped ErrNotExist", err)
	}
}

func TestYAMLRoundTrip(t *testing.T) {
	type doc struct {
		A Dist     `yaml:"a"`
		B Dist     `yaml:"b"`
		C Dist     `yaml:"c"`
		S Steady   `yaml:"s"`
		T Steady   `yaml:"t"`
		D Duration `yaml:"d"`
	}
	in := doc{
		A: Fixed(8000),
		B: Dist{Kind: DistLognormal, Median: 50000, Sigma: 0.6, Min: 11000, Max: 120000},
		C: Dist{Kind: DistEmpirical, Values: []float64{1, 2}, Weights: []float64{3, 1}},
		S: Steady{Auto: true},
		T: Steady{Start: 30 * time.Second, End: 5 * time.Minute},
		D: Duration(90 * time.Second),
	}
	out, err := yaml.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `a: 8000
b: {dist: lognormal, median: 50000, sigma: 0.6, min: 11000, max: 120000}
c: {dist: empirical, values: [1, 2], weights: [3, 1]}
s: auto
t:
    start: 30s
    end: 5m
d: 1m30s
`
	if string(out) != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", out, want)
	}
	var back doc
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, in) {
		t.Errorf("round trip = %+v, want %+v", back, in)
	}
}

func TestValidateClassesWithoutPositions(t *testing.T) {
	s := &Scenario{
		Pins: Pins{
			Model:       ModelPin{Name: "m", ParamsB: 8, ActiveParamsB: 1},
			Output:      OutputPin{Tokens: Fixed(100)},
			Concurrency: ConcurrencyPin{Mode: ModeClosed, Streams: 2},
			Mix: MixPin{Classes: []Class{
				{Name: "a", Weight: 1, Prompt: &PromptPin{Tokens: Fixed(10)}},
				{Name: "b", Prompt: &PromptPin{}},
			}},
		},
		Duration: Duration(time.Minute),
	}
	s.SetDefaults()
	got := errStrings(t, s.Validate())
	want := []string{
		"pins.mix.classes[1].prompt.tokens: required",
		"pins.mix.classes[1].weight: required (> 0)",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors = %q, want %q", got, want)
	}
	if !s.present("pins.mix.classes[0].prompt.tokens.value") || s.present("pins.mix.classes[1].prompt.tokens") ||
		s.present("pins.mix.classes[2].name") || s.present("pins.nope") {
		t.Error("present() disagrees with the struct")
	}
}

func TestParseScalars(t *testing.T) {
	tests := []struct {
		name string
		line string // appended to valid
		want string // the error, or "" for none
	}{
		{"integer out of range", "seed: 99999999999999999999", `t.yaml:7:7: seed: out of range (got "99999999999999999999")`},
		{"hex integer", "seed: 0x10", ""},
		{"number as a name", "name: 2024", ""},
		{"list as a name", "name: [a]", `t.yaml:7:7: name: must be a string (got a list)`},
		{"infinite number", "slo: {ttft_ms: .inf}", `t.yaml:7:16: slo.ttft_ms: must be a number (got ".inf")`},
		{"quoted number", `slo: {ttft_ms: "200"}`, `t.yaml:7:16: slo.ttft_ms: must be a number (got "200")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(valid+tt.line+"\n"))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Parse: %v", err)
			case tt.want == "":
			case err == nil:
				t.Fatalf("Parse succeeded, want %s", tt.want)
			case err.Error() != tt.want:
				t.Errorf("error = %s\nwant    %s", err, tt.want)
			}
		})
	}
}
