package importer

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/scenario"
)

// GuideLLMPeer is what GuideLLM follows: `guidellm benchmark [run]`'s
// options (src/guidellm/__main__.py), its synthetic data config
// (data/schemas.py SyntheticTextDatasetConfig, read by data/config.py)
// and sampler (data/deserializers/synthetic.py with
// utils/random.py IntegerRangeSampler), its profiles
// (benchmark/profiles.py) and request bodies
// (data/preprocessors/formatters.py).
var GuideLLMPeer = Peer{
	Name:    "guidellm",
	Command: "guidellm benchmark",
	Version: "v0.5.4",
	Source:  "github.com/vllm-project/guidellm v0.5.4 @fc31a9eb (src/guidellm/__main__.py, data/, benchmark/profiles.py, scheduler/strategies.py)",
}

// guidellmFlags are `guidellm benchmark run`'s options at v0.5.4.
var guidellmFlags = []flagDef{
	{names: []string{"--scenario", "-c"}}, {names: []string{"--target"}}, {names: []string{"--data"}},
	{names: []string{"--profile", "--rate-type"}}, {names: []string{"--rate"}},
	{names: []string{"--backend", "--backend-type"}}, {names: []string{"--backend-kwargs", "--backend-args"}}, {names: []string{"--model"}},
	{names: []string{"--request-type"}}, {names: []string{"--request-formatter-kwargs"}},
	{names: []string{"--processor"}, ignored: "the client's tokenizer; sixpin builds prompts to the server's /tokenize (the profile's tokenizer: server)"},
	{names: []string{"--processor-args"}, ignored: "the client's tokenizer"},
	{names: []string{"--data-args"}}, {names: []string{"--data-samples"}}, {names: []string{"--data-column-mapper"}},
	{names: []string{"--data-sampler"}}, {names: []string{"--data-num-workers"}, ignored: "GuideLLM's data loading"},
	{names: []string{"--dataloader-kwargs"}, ignored: "GuideLLM's data loading"}, {names: []string{"--random-seed"}},
	{names: []string{"--output-dir"}, ignored: "where results go"}, {names: []string{"--outputs"}, ignored: "where results go"},
	{names: []string{"--output-path"}, ignored: "where results go"},
	{names: []string{"--disable-console", "--disable-console-outputs"}, arity: none, ignored: "the console"},
	{names: []string{"--disable-console-interactive", "--disable-progress"}, arity: none, ignored: "the console"},
	{names: []string{"--warmup", "--warmup-percent"}}, {names: []string{"--cooldown", "--cooldown-percent"}},
	{names: []string{"--rampup"}}, {names: []string{"--sample-requests", "--output-sampling"}, ignored: "how many requests the report keeps"},
	{names: []string{"--max-seconds"}}, {names: []string{"--max-requests"}}, {names: []string{"--max-errors"}},
	{names: []string{"--max-error-rate"}}, {names: []string{"--max-global-error-rate"}},
	{names: []string{"--over-saturation"}}, {names: []string{"--detect-saturation", "--default-over-saturation"}, arity: none},
}

// guidellmKeys are SyntheticTextDatasetConfig's fields.
var guidellmKeys = []string{"prompt_tokens", "prompt_tokens_stdev", "prompt_tokens_min", "prompt_tokens_max",
	"output_tokens", "output_tokens_stdev", "output_tokens_min", "output_tokens_max", "prefix_tokens", "prefix_count", "prefix_buckets", "source"}

// GuideLLM translates `guidellm benchmark ARGS…`. Its synthetic data
// ("prompt_tokens=N,output_tokens=M[,…_stdev,…_min,…_max]") draws each
// length from IntegerRangeSampler: fixed without a stdev and bounds,
// uniform on [min, max] without a stdev, else round(clamp(N(avg,
// stdev²), min, max)) with min and max defaulting to avg ∓ 5·stdev
// (min at least 1); output_tokens set means max_tokens with ignore_eos
// true. Profiles: synchronous is one stream, concurrent N streams,
// throughput N requests in flight, constant and poisson an open loop
// at the rate.
func GuideLLM(argv []string, o Options) (*Result, error) {
	p := &problems{peer: GuideLLMPeer.Name}
	// `guidellm benchmark run` and `guidellm benchmark` are one command.
	if len(argv) > 0 && argv[0] == "run" {
		argv = argv[1:]
	}
	a, bad := parse(argv, guidellmFlags, nil)
	p.refused = append(p.refused, bad...)
	r := reader{a: a, p: p}
	ignoredNotes(a, guidellmFlags, p)
	w := &workload{command: "guidellm benchmark " + strings.Join(argv, " ")}

	if a.has("--scenario") {
		p.refuse(a.name("--scenario"), "a GuideLLM scenario file or built-in scenario: give its settings as flags")
	}
	target := r.str("--target", "")
	if target == "" {
		p.refuse("--target", "required: the server's URL")
	}
	backend := r.str("--backend", "openai_http")
	if backend != "openai_http" {
		p.refuse(a.name("--backend"), "%q: sixpin speaks to an OpenAI-compatible HTTP server (openai_http)", backend)
	}
	rt := r.str("--request-type", "chat_completions")
	protocol, field := "", ""
	switch rt {
	case "chat_completions":
		protocol, field = "chat", "max_completion_tokens"
	case "text_completions":
		protocol, field = "completions", "max_tokens"
	default:
		p.refuse(a.name("--request-type"), "%q: sixpin measures chat or text completions", rt)
	}
	w.model, w.modelFrom = r.str("--model", ""), a.given("--model")
	if w.model == "" {
		w.model = "model"
		p.note("--model", "not given: GuideLLM asks the server for its first model; name it in the scenario, or run with --model NAME")
	}
	base := strings.TrimSuffix(target, "/")
	base = strings.TrimSuffix(base, "/v1") + "/v1"
	prof := &profile{name: "guidellm-target", kind: "openai-compatible", baseURL: base, protocol: protocol, maxTokensField: field,
		outputControl: "ignore_eos", description: "the server `guidellm benchmark` addressed (" + target + ")"}
	prof.from = append(prof.from, "from "+a.given("--target", "--request-type")+" (request type chat_completions unless given)")
	w.profile = prof
	for _, f := range []string{"--backend-kwargs", "--request-formatter-kwargs", "--data-args", "--data-column-mapper", "--data-samples"} {
		if a.has(f) {
			p.refuse(a.name(f), "changes how GuideLLM builds or sends requests in ways sixpin does not follow: translate the invocation without it")
		}
	}
	if a.has("--data-sampler") {
		p.note(a.name("--data-sampler"), "left out: shuffling synthetic samples changes no length distribution")
	}

	// Data.
	w.seed = int64(r.int("--random-seed", 42))
	w.seedFrom = fmt.Sprintf("--random-seed %d%s: GuideLLM seeds Python's random.Random with it; sixpin's plan draws its own values for this seed", w.seed, dflt(a, "--random-seed"))
	data := a.vals["--data"]
	switch {
	case len(data) == 0:
		p.refuse("--data", "required: give synthetic data, \"prompt_tokens=N,output_tokens=M\"")
	case len(data) > 1:
		p.refuse(a.name("--data"), "several data sources: sixpin pins one length distribution (a mix is pins.mix.classes, by hand)")
	default:
		guidellmData(a, p, w, data[0], o)
	}

	// Profile and constraints.
	guidellmProfile(a, r, p, w)
	w.name = o.Name
	if w.name == "" {
		w.name = "guidellm-synthetic"
	}
	w.description = "`guidellm benchmark` with synthetic data, translated"
	p.note("", "GuideLLM reports tpot_ms as the mean time per output token after the first — what sixpin calls ITL (itl_ms); sixpin's TPOT is (E2E − TTFT)/(output − 1) per request. Compare GuideLLM's tpot with sixpin's itl")
	return finish(GuideLLMPeer, w, p, o)
}

// guidellmData reads a synthetic data config.
func guidellmData(a *args, p *problems, w *workload, data string, o Options) {
	cfg, err := guidellmConfig(data)
	if err != nil {
		p.refuse(a.name("--data"), "%s", err)
		return
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if math.IsNaN(cfg[k]) && k != "prefix_buckets" && k != "source" {
			p.refuse(a.name("--data"), "%s: want a number", k)
		}
		if !slices.Contains(guidellmKeys, k) {
			p.refuse(a.name("--data"), "unknown key %q (synthetic data takes %s)", k, strings.Join(guidellmKeys, ", "))
		}
	}
	if _, ok := cfg["source"]; ok {
		p.refuse(a.name("--data"), "source: GuideLLM's synthetic text source changes the words, not the lengths, and sixpin writes its own text — leave it out")
	}
	if _, ok := cfg["prefix_buckets"]; ok {
		p.refuse(a.name("--data"), "prefix_buckets: several prefix lengths with weights; sixpin shares one prefix length (prefix_tokens, prefix_count)")
	}
	in, ok1 := cfg["prompt_tokens"]
	out, ok2 := cfg["output_tokens"]
	if !ok1 || !ok2 {
		p.refuse(a.name("--data"), "%q is not synthetic data (prompt_tokens and output_tokens): GuideLLM reads it as a dataset file, a Hugging Face dataset or a directory, which sixpin does not read", data)
		return
	}
	length := func(key string, avg float64) (length, string) {
		sd, hasSD := cfg[key+"_stdev"]
		lo, hasLo := cfg[key+"_min"]
		hi, hasHi := cfg[key+"_max"]
		if !hasLo {
			lo = avg
			if hasSD && sd > 0 {
				lo = max(1, avg-5*sd)
			}
		}
		if !hasHi {
			hi = avg
			if hasSD && sd > 0 {
				hi = avg + 5*sd
			}
		}
		switch {
		case lo == hi:
			return fixed(int(lo)), fmt.Sprintf("%s=%s: every request", key, num(avg))
		case !hasSD || sd == 0:
			return uniformInt(int(lo), int(hi)), fmt.Sprintf("%s_min=%s, %s_max=%s, no stdev: uniform on the integers between (random.randint)", key, num(lo), key, num(hi))
		}
		return clampedNormal(avg, sd, int(lo), int(hi)),
			fmt.Sprintf("%s=%s, %s_stdev=%s, in [%s, %s]: round(clamp(N(avg, stdev²), min, max)) (IntegerRangeSampler)", key, num(avg), key, num(sd), num(lo), num(hi))
	}
	var from string
	w.prompt, from = length("prompt_tokens", in)
	w.promptFrom = "--data " + from
	if w.prompt.approx != "" {
		p.note(a.name("--data"), "prompt_tokens: %s", w.prompt.approx)
	}
	w.output, from = length("output_tokens", out)
	w.outputFrom = "--data " + from
	if w.output.approx != "" {
		p.note(a.name("--data"), "output_tokens: %s", w.output.approx)
	}
	w.exact = true
	w.exactFrom = "--data output_tokens: GuideLLM sends max_tokens with ignore_eos: true and stop: null for synthetic outputs; sixpin sends ignore_eos (the profile's output_control) and checks each request got its full length"
	if pt, ok := cfg["prefix_tokens"]; ok && pt > 0 {
		pc := max(int(cfg["prefix_count"]), 1)
		w.prefix, w.groups = int(pt), pc
		w.prompt = w.prompt.plus(int(pt))
		w.prefixFrom = fmt.Sprintf("--data prefix_tokens=%s, prefix_count=%d: a random one of %d prefixes heads every prompt", num(pt), pc, pc)
	}
	if w.profile != nil && w.profile.protocol == "chat" && o.TemplateOverhead == 0 {
		p.note("--data", "prompt_tokens counts the text GuideLLM's processor encoded (with its special tokens, which it then strips); the server adds its chat template, which sixpin's prompt pin counts: for the server to count the same, give sixpin import --template-overhead N")
	}
	w.prompt = w.prompt.plus(o.TemplateOverhead)
}

// guidellmConfig reads synthetic data as data/config.py's
// _load_config_str does: a JSON object, or key=value pairs (more than
// one) separated by commas, each value a number.
func guidellmConfig(s string) (map[string]float64, error) {
	s = strings.TrimSpace(s)
	out := map[string]float64{}
	if strings.HasPrefix(s, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("not a JSON object: %v", err)
		}
		for k, v := range m {
			f, ok := v.(float64)
			if !ok {
				out[k] = math.NaN()
				continue
			}
			out[k] = f
		}
		return out, nil
	}
	if strings.Count(s, "=") < 2 {
		return nil, fmt.Errorf("%q is not synthetic data (\"prompt_tokens=N,output_tokens=M\"): GuideLLM reads it as a dataset file, a Hugging Face dataset or a directory, which sixpin does not read", s)
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(item, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%q: want key=number", item)
		}
		out[strings.TrimSpace(k)] = f
	}
	return out, nil
}

// guidellmProfile reads the profile, rate and constraints.
func guidellmProfile(a *args, r reader, p *problems, w *workload) {
	prof := r.str("--profile", "sweep")
	var rates []float64
	for _, v := range a.vals["--rate"] {
		for _, s := range strings.Split(v, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || f <= 0 {
				p.refuse(a.name("--rate"), "%q: want positive numbers", s)
				continue
			}
			rates = append(rates, f)
		}
	}
	if len(rates) > 1 {
		p.refuse(a.name("--rate"), "%d rates run %d benchmarks one after another: import one rate at a time (or write a sixpin sweep over concurrency.streams or concurrency.rate)", len(rates), len(rates))
		return
	}
	rate := 0.0
	if len(rates) == 1 {
		rate = rates[0]
	}
	needRate := func() bool {
		if rate == 0 {
			p.refuse("--rate", "required by profile %s", prof)
			return false
		}
		return true
	}
	switch prof {
	case "synchronous":
		w.mode, w.streams = scenario.ModeClosed, 1
		w.concFrom = "--profile synchronous: one request at a time — a closed loop of 1 stream"
	case "concurrent":
		if needRate() {
			w.mode, w.streams = scenario.ModeClosed, int(rate)
			w.concFrom = fmt.Sprintf("--profile concurrent, --rate %s: that many streams, each sending its next request when its last one returns", num(rate))
		}
	case "throughput":
		if needRate() {
			w.mode, w.streams = scenario.ModeClosed, int(rate)
			w.concFrom = fmt.Sprintf("--profile throughput, --rate %s: as many requests as possible, at most %d in flight — a closed loop of %d streams", num(rate), int(rate), int(rate))
		}
	case "constant", "async", "poisson":
		if needRate() {
			w.mode, w.rate = scenario.ModeOpen, rate
			w.arrival = scenario.ArrivalConstant
			if prof == "poisson" {
				w.arrival = scenario.ArrivalPoisson
			}
			w.concFrom = fmt.Sprintf("--profile %s, --rate %s: requests at %s/s, %s gaps, the first at 0", prof, num(rate), num(rate), map[bool]string{true: "exponential", false: "even"}[prof == "poisson"])
		}
	case "sweep":
		p.refuse(a.name("--profile"), "sweep%s: GuideLLM measures synchronous and throughput first and picks its rates from what it measured, so the workload depends on the server; import one of its benchmarks (--profile constant --rate R) at a time", dflt(a, "--profile"))
	case "replay":
		p.refuse(a.name("--profile"), "replay: a trace's own timing; give sixpin the trace (workload kind trace)")
	default:
		p.refuse(a.name("--profile"), "%q is not a GuideLLM profile", prof)
	}
	if v := r.float("--rampup", 0); v > 0 {
		p.refuse(a.name("--rampup"), "ramps the rate or the streams up over %ss: sixpin starts at its full load", num(v))
	}
	if a.has("--over-saturation") || a.has("--detect-saturation") {
		p.refuse(a.name("--detect-saturation"), "stops the benchmark when GuideLLM judges the server saturated: sixpin's early stop is abort_on (a tier), a different rule")
	}
	n := r.int("--max-requests", 0)
	secsMax := r.float("--max-seconds", 0)
	switch {
	case n <= 0 && secsMax <= 0:
		p.refuse("--max-requests", "neither --max-requests nor --max-seconds given: GuideLLM then runs until its synthetic data runs out, which it never does")
	default:
		if n > 0 {
			w.requests, w.requestsFrom = n, a.given("--max-requests")
		}
		if secsMax > 0 {
			w.duration, w.durationFrom = secs(secsMax), a.given("--max-seconds")+": issuing stops after it"
		}
	}
	for _, f := range []string{"--max-errors", "--max-error-rate", "--max-global-error-rate"} {
		if a.has(f) {
			p.note(a.name(f), "left out: GuideLLM stops early on errors; sixpin runs to the end and judges its error rate against slo.max_error_rate")
		}
	}
	guidellmTransient(a, p, w, "--warmup", n, secsMax)
	guidellmTransient(a, p, w, "--cooldown", n, secsMax)
}

// guidellmTransient maps --warmup (or --cooldown): a number in (0, 1) is
// a share of the run, ≥ 1 seconds or requests.
func guidellmTransient(a *args, p *problems, w *workload, flag string, requests int, seconds float64) {
	if !a.has(flag) {
		return
	}
	v, err := strconv.ParseFloat(a.last(flag, ""), 64)
	if err != nil || v < 0 {
		p.refuse(a.name(flag), "%q: sixpin follows a number (a share in (0, 1), or seconds or requests ≥ 1), not a phase config", a.last(flag, ""))
		return
	}
	if flag == "--cooldown" {
		if v > 0 {
			p.note(a.name(flag), "left out of the measurement by GuideLLM, sent all the same: sixpin's steady window ends at the last scheduled arrival and its figures include the tail (the server sees the same requests)")
		}
		return
	}
	switch {
	case v == 0:
	case seconds > 0 && requests <= 0:
		d := v
		if v < 1 {
			d = v * seconds
		}
		w.warmup = secs(d)
		w.warmupFrom = a.given(flag) + ": GuideLLM leaves the first seconds out of its figures; sixpin's warmup window does the same"
	default:
		k := v
		if v < 1 {
			k = math.Round(v * float64(requests))
		}
		p.note(a.name(flag), "GuideLLM leaves its first %s requests out of its figures (it sends them, as part of --max-requests); sixpin's warm-up is a time (windows.warmup), so its figures include them — the server sees the same requests", num(k))
	}
}
