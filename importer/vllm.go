package importer

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/scenario"
)

// VLLMPeer is what VLLMBench follows: `vllm bench serve`'s arguments
// (vllm/benchmarks/serve.py add_cli_args, and add_dataset_parser in
// vllm/benchmarks/datasets/arg_utils.py), its random and
// prefix_repetition datasets, its arrival process (get_request) and its
// request bodies (vllm/benchmarks/lib/endpoint_request_func.py).
var VLLMPeer = Peer{
	Name:    "vllm-bench",
	Command: "vllm bench serve",
	Version: "main",
	Source: "github.com/vllm-project/vllm vllm/benchmarks/serve.py @009e6d4a, " +
		"vllm/benchmarks/datasets/{arg_utils,random,prefix_repetition}.py @237145ea, " +
		"vllm/benchmarks/lib/endpoint_request_func.py @02cfb534 (benchmarks/benchmark_serving.py takes the same flags)",
}

// vllmFlags are `vllm bench serve`'s flags at VLLMPeer's commits.
var vllmFlags = []flagDef{
	// add_dataset_parser (datasets/arg_utils.py)
	{names: []string{"--seed"}}, {names: []string{"--num-prompts"}}, {names: []string{"--dataset-name"}},
	{names: []string{"--no-stream"}, arity: none, ignored: "how a Hugging Face dataset is loaded"},
	{names: []string{"--dataset-path"}}, {names: []string{"--no-oversample"}, arity: none},
	{names: []string{"--skip-chat-template"}, arity: none}, {names: []string{"--disable-shuffle"}, arity: none},
	{names: []string{"--custom-output-len"}}, {names: []string{"--spec-bench-output-len"}}, {names: []string{"--spec-bench-category"}},
	{names: []string{"--sonnet-input-len"}}, {names: []string{"--sonnet-output-len"}}, {names: []string{"--sonnet-prefix-len"}},
	{names: []string{"--sharegpt-output-len"}}, {names: []string{"--blazedit-min-distance"}}, {names: []string{"--blazedit-max-distance"}},
	{names: []string{"--random-input-len"}}, {names: []string{"--random-output-len"}}, {names: []string{"--random-range-ratio"}},
	{names: []string{"--random-prefix-len"}}, {names: []string{"--random-batch-size"}}, {names: []string{"--no-reranker"}, arity: none},
	{names: []string{"--random-mm-base-items-per-request"}}, {names: []string{"--random-mm-num-mm-items-range-ratio"}},
	{names: []string{"--random-mm-limit-mm-per-prompt"}}, {names: []string{"--random-mm-bucket-config"}},
	{names: []string{"--hf-subset"}}, {names: []string{"--hf-split"}}, {names: []string{"--hf-name"}}, {names: []string{"--hf-output-len"}},
	{names: []string{"--prefix-repetition-prefix-len"}}, {names: []string{"--prefix-repetition-suffix-len"}},
	{names: []string{"--prefix-repetition-num-prefixes"}}, {names: []string{"--prefix-repetition-output-len"}},
	// add_cli_args (serve.py)
	{names: []string{"--label"}, ignored: "a label for the results file"},
	{names: []string{"--backend"}}, {names: []string{"--base-url"}}, {names: []string{"--host"}}, {names: []string{"--port"}},
	{names: []string{"--endpoint"}}, {names: []string{"--header"}, arity: many},
	{names: []string{"--max-concurrency"}}, {names: []string{"--model"}}, {names: []string{"--input-len"}}, {names: []string{"--output-len"}},
	{names: []string{"--tokenizer"}, ignored: "the client's tokenizer; sixpin builds prompts to the server's /tokenize (the profile's tokenizer: server)"},
	{names: []string{"--tokenizer-mode"}, ignored: "the client's tokenizer"},
	{names: []string{"--use-beam-search"}, arity: none}, {names: []string{"--logprobs"}},
	{names: []string{"--request-rate"}}, {names: []string{"--burstiness"}}, {names: []string{"--probe-request-rate"}},
	{names: []string{"--disable-tqdm"}, arity: none, ignored: "a progress bar"},
	{names: []string{"--num-warmups"}},
	{names: []string{"--profile"}, arity: none, ignored: "starts the server's profiler around the run"},
	{names: []string{"--save-result"}, arity: none, ignored: "where results go (sixpin run -o)"},
	{names: []string{"--save-detailed"}, arity: none, ignored: "what the results file holds"},
	{names: []string{"--append-result"}, arity: none, ignored: "where results go"},
	{names: []string{"--metadata"}, arity: many, ignored: "labels in the results file"},
	{names: []string{"--result-dir"}, ignored: "where results go"}, {names: []string{"--result-filename"}, ignored: "where results go"},
	{names: []string{"--ignore-eos"}, arity: none},
	{names: []string{"--self-timed"}, arity: none, neg: true},
	{names: []string{"--percentile-metrics"}, ignored: "which percentiles are printed (sixpin's results hold every one)"},
	{names: []string{"--metric-percentiles"}, ignored: "which percentiles are printed (sixpin's results hold every one)"},
	{names: []string{"--goodput"}, arity: many},
	{names: []string{"--request-id-prefix"}, ignored: "request ids (sixpin sends X-Request-Id sixpin-…-N)"},
	{names: []string{"--top-p"}}, {names: []string{"--top-k"}}, {names: []string{"--min-p"}}, {names: []string{"--temperature"}},
	{names: []string{"--frequency-penalty"}}, {names: []string{"--presence-penalty"}}, {names: []string{"--repetition-penalty"}},
	{names: []string{"--served-model-name"}}, {names: []string{"--lora-modules"}, arity: many}, {names: []string{"--lora-assignment"}},
	{names: []string{"--ramp-up-strategy"}}, {names: []string{"--ramp-up-start-rps"}}, {names: []string{"--ramp-up-end-rps"}},
	{names: []string{"--ready-check-timeout-sec"}, ignored: "the wait for the server (sixpin waits for readiness itself)"},
	{names: []string{"--chat-template-kwargs"}}, {names: []string{"--extra-body"}},
	{names: []string{"--skip-tokenizer-init"}, arity: none, ignored: "the client's tokenizer"},
	{names: []string{"--insecure"}, arity: none},
	{names: []string{"--plot-timeline"}, arity: none, ignored: "a plot"}, {names: []string{"--timeline-itl-thresholds"}, ignored: "a plot"},
	{names: []string{"--plot-dataset-stats"}, arity: none, ignored: "a plot"},
}

// vllmDatasets says why each of vLLM's datasets that sixpin cannot
// generate is refused.
var vllmDatasets = map[string]string{
	"sharegpt":      "ShareGPT's recorded conversations (a JSON file of real chats): sixpin synthesises prompts of pinned lengths and replays traces in its own, Mooncake's or Azure's format, not ShareGPT's",
	"burstgpt":      "BurstGPT's trace (a CSV of request and response lengths from Azure OpenAI): convert it to sixpin's trace format and use workload kind trace",
	"sonnet":        "Shakespeare's sonnets sliced into prompts with a chat template applied client-side: sixpin does not read that text",
	"random-mm":     "multimodal requests (synthetic images and video): sixpin sends text",
	"random-rerank": "reranking requests (/v1/rerank): sixpin measures generation",
	"hf":            "a Hugging Face dataset, downloaded at run time: sixpin reads no Hugging Face datasets",
	"custom":        "a JSON Lines file of prompts (--dataset-path): sixpin synthesises prompts of pinned lengths; turn the file's lengths into a sixpin trace to replay them",
	"spec_bench":    "Spec-Bench's prompts (downloaded): sixpin does not read them",
	"txt-slices":    "slices of a text file: sixpin synthesises its own text",
}

// VLLMBench translates `vllm bench serve ARGS…` (or
// `benchmark_serving.py ARGS…`). Its random dataset draws each request's
// input length uniformly from the integers [⌊L(1−r)⌋, ⌈L(1+r)⌉] with L =
// --random-input-len − the tokenizer's special tokens and r =
// --random-range-ratio, and its output length likewise from
// --random-output-len (at least 1), both from numpy's default_rng(seed);
// sixpin pins the same distributions and draws its own values for the
// seed. --request-rate inf (the default) sends every request at once,
// --max-concurrency C then lets C run at a time: a closed loop of C
// streams; a finite rate is an open loop whose gaps are Gamma(shape =
// burstiness, mean 1/rate) (Poisson at burstiness 1).
func VLLMBench(argv []string, o Options) (*Result, error) {
	p := &problems{peer: VLLMPeer.Name}
	a, bad := parse(argv, vllmFlags, func(s string) string {
		return "--" + strings.ReplaceAll(strings.TrimPrefix(s, "--"), "_", "-") // FlexibleArgumentParser accepts --max_concurrency
	})
	p.refused = append(p.refused, bad...)
	r := reader{a: a, p: p}
	ignoredNotes(a, vllmFlags, p)
	w := &workload{command: "vllm bench serve " + strings.Join(argv, " ")}

	// The target: base URL, endpoint, backend, model.
	backend := r.str("--backend", "openai")
	endpointPath := r.str("--endpoint", "/v1/completions")
	protocol, field := "", "max_tokens"
	switch backend {
	case "openai", "vllm":
		protocol = "completions"
	case "openai-chat":
		protocol, field = "chat", "max_completion_tokens"
	default:
		p.refuse(a.name("--backend"), "%q is not a text-generation backend sixpin speaks (openai, vllm and openai-chat are: /v1/completions and /v1/chat/completions)", backend)
	}
	switch {
	case protocol == "completions" && !strings.HasSuffix(endpointPath, "/completions"),
		protocol == "chat" && !strings.HasSuffix(endpointPath, "/chat/completions"):
		p.refuse(a.name("--endpoint"), "%q does not end as backend %s's API does", endpointPath, backend)
	case !strings.HasPrefix(endpointPath, "/v1/"):
		p.refuse(a.name("--endpoint"), "%q: sixpin addresses OpenAI-compatible endpoints under /v1", endpointPath)
	}
	base := r.str("--base-url", "")
	if base == "" {
		base = fmt.Sprintf("http://%s:%d", r.str("--host", "127.0.0.1"), r.int("--port", 8000))
	}
	model := r.str("--model", "")
	w.model, w.modelFrom = model, a.given("--model")
	if model == "" {
		w.model = "model"
		p.note("--model", "not given: vLLM asks the server's /v1/models for its first model; name it in the scenario, or run with --model NAME")
	}
	prof := &profile{name: "vllm-bench-target", kind: "vllm", baseURL: strings.TrimSuffix(base, "/") + "/v1", protocol: protocol,
		maxTokensField: field, outputControl: "ignore_eos",
		description: "the server `vllm bench serve` addressed (" + base + endpointPath + ")"}
	if n := r.str("--served-model-name", ""); n != "" {
		prof.model = n
		prof.from = append(prof.from, a.given("--served-model-name"))
	}
	prof.from = append(prof.from, "from "+or(a.given("--base-url", "--host", "--port", "--endpoint", "--backend"), "vLLM's defaults")+
		" (--host 127.0.0.1 --port 8000 --endpoint /v1/completions --backend openai unless given)")
	if protocol == "completions" {
		// async_request_openai_completions sends it in every body.
		prof.extraBody = map[string]any{"repetition_penalty": 1.0}
	}
	vllmSampling(a, r, p, prof)
	w.profile = prof
	if a.has("--header") {
		prof.headers = map[string]string{}
		for _, kv := range a.vals["--header"] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				p.refuse(a.name("--header"), "%q: want KEY=VALUE", kv)
				continue
			}
			prof.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if a.has("--insecure") {
		p.refuse(a.name("--insecure"), "sixpin does not turn off TLS certificate checks; trust the server's certificate instead")
	}

	// The dataset: lengths.
	w.seed = int64(r.int("--seed", 0))
	w.seedFrom = fmt.Sprintf("--seed %d%s: vLLM draws with numpy's default_rng(seed); sixpin's plan draws its own values for this seed from the same distributions", w.seed, dflt(a, "--seed"))
	n := r.int("--num-prompts", 1000)
	if n < 1 {
		p.refuse(a.name("--num-prompts"), "must be ≥ 1 (got %d)", n)
	}
	w.requests, w.requestsFrom = n, "--num-prompts "+fmt.Sprint(n)+dflt(a, "--num-prompts")
	dataset := r.str("--dataset-name", "random")
	switch dataset {
	case "random":
		vllmRandom(a, r, p, w, o)
	case "prefix_repetition":
		vllmPrefixRepetition(a, r, p, w, o)
	default:
		why, ok := vllmDatasets[dataset]
		if !ok {
			why = "not one of vLLM's datasets"
		}
		p.refuse(a.name("--dataset-name"), "dataset %q is %s", dataset, why)
	}
	for _, f := range []string{"--dataset-path", "--no-oversample", "--skip-chat-template", "--disable-shuffle", "--custom-output-len",
		"--spec-bench-output-len", "--spec-bench-category", "--sonnet-input-len", "--sonnet-output-len", "--sonnet-prefix-len",
		"--sharegpt-output-len", "--blazedit-min-distance", "--blazedit-max-distance", "--random-batch-size", "--no-reranker",
		"--random-mm-base-items-per-request", "--random-mm-num-mm-items-range-ratio", "--random-mm-limit-mm-per-prompt",
		"--random-mm-bucket-config", "--hf-subset", "--hf-split", "--hf-name", "--hf-output-len"} {
		if a.has(f) {
			p.note(a.name(f), "left out: it applies to another dataset than %s", dataset)
		}
	}

	// Output: don't stop early.
	w.exact = a.has("--ignore-eos")
	if w.exact {
		w.exactFrom = "--ignore-eos: vLLM sends ignore_eos: true; sixpin sends it too (the profile's output_control) and checks every request got its full length"
	} else {
		w.exactFrom = "--ignore-eos not given: vLLM lets the model stop early (max_tokens is a ceiling), and so does sixpin"
		p.note("--ignore-eos", "not given: a real model may stop before its max_tokens, in either tool, so the output totals are ceilings; sixpin judges the mean output against the pin (10%% tolerance)")
	}

	// Load: arrivals and concurrency.
	vllmLoad(a, r, p, w)

	// Warm-up requests: copies of the first request, before the run.
	if k := r.int("--num-warmups", 0); k > 0 {
		w.warm = Warmup{Requests: k, Input: float64(k) * w.prompt.mean, Output: float64(k) * w.output.mean, Setting: a.name("--num-warmups")}
		p.note(a.name("--num-warmups"), "vLLM sends %d warm-up copies of its first request before it measures; sixpin has no count-based warm-up (its windows.warmup is a time), so the scenario leaves them out: a server counting both tools sees vLLM's %d more requests", k, k)
	}
	for _, f := range []string{"--use-beam-search", "--lora-modules", "--lora-assignment", "--ramp-up-strategy", "--ramp-up-start-rps", "--ramp-up-end-rps"} {
		if a.has(f) {
			switch f {
			case "--use-beam-search":
				p.refuse(a.name(f), "beam search: sixpin samples one sequence per request")
			case "--lora-modules", "--lora-assignment":
				p.refuse(a.name(f), "spreads requests over LoRA adapters (one model name each): a sixpin scenario targets one model")
			default:
				p.refuse(a.name(f), "a ramp of the request rate during the run: sixpin's open loop keeps one rate (a sweep over concurrency.rate runs one rate per point)")
			}
		}
	}
	if v := r.float("--probe-request-rate", 0); v > 0 {
		p.refuse(a.name("--probe-request-rate"), "one-token probe requests beside the workload: sixpin sends one workload")
	}
	if a.has("--self-timed") && r.bool("--self-timed") {
		p.refuse(a.name("--self-timed"), "replays a trace's own timestamps: give sixpin the trace (workload kind trace)")
	}
	if a.has("--goodput") {
		vllmGoodput(a, p, w)
	}
	if a.has("--chat-template-kwargs") {
		p.note(a.name("--chat-template-kwargs"), "left out: vLLM applies it when a dataset renders chat prompts client-side, which the random dataset does not")
	}

	w.name = o.Name
	if w.name == "" {
		w.name = "vllm-bench-" + dataset
	}
	w.description = fmt.Sprintf("`vllm bench serve` with the %s dataset, translated: %d requests", dataset, n)
	return finish(VLLMPeer, w, p, o)
}

// dflt is " (default)" when flag was not given.
func dflt(a *args, flag string) string {
	if a.has(flag) {
		return ""
	}
	return " (default)"
}

// vllmRandom reads the random dataset's lengths.
func vllmRandom(a *args, r reader, p *problems, w *workload, o Options) {
	in := r.int("--random-input-len", 1024)
	out := r.int("--random-output-len", 128)
	inFlag, outFlag := "--random-input-len", "--random-output-len"
	if a.has("--input-len") {
		in, inFlag = r.int("--input-len", in), "--input-len"
	}
	if a.has("--output-len") {
		out, outFlag = r.int("--output-len", out), "--output-len"
	}
	ratio := r.float("--random-range-ratio", 0)
	prefix := r.int("--random-prefix-len", 0)
	if ratio < 0 || ratio >= 1 {
		p.refuse(a.name("--random-range-ratio"), "must be in [0, 1) at the vLLM this follows (got %s); before vLLM PR #16126 (April 2025) it was the lower bound's share, [L·r, L] with default 1, and SGLang's bench_serving still means that — translate an old invocation with the range it meant: --random-range-ratio (1−r_old)/(1+r_old) keeps its width only approximately, so give its bounds explicitly", num(ratio))
		return
	}
	if a.has("--random-range-ratio") && ratio > 0 {
		p.note(a.name("--random-range-ratio"), "followed as vLLM means it since PR #16126 (April 2025): lengths uniform in [⌊L(1−r)⌋, ⌈L(1+r)⌉]; before that, and in SGLang's bench_serving today, the same flag meant [L·r, L] with default 1 — an invocation written for the old meaning asks for other lengths")
	}
	special := o.SpecialTokens
	real := max(0, in-special)
	lo, hi := int(math.Floor(float64(real)*(1-ratio))), int(math.Ceil(float64(real)*(1+ratio)))
	olo, ohi := max(int(math.Floor(float64(out)*(1-ratio))), 1), max(int(math.Ceil(float64(out)*(1+ratio))), 1)
	if prefix+lo < 1 {
		p.refuse(a.name(inFlag), "too small: vLLM refuses a minimum total input below 1 token (prefix %d + ⌊%d·(1−%s)⌋)", prefix, real, num(ratio))
		return
	}
	// The server counts the prefix, the sampled tokens and the special
	// tokens its own tokenizer adds back (BOS on /v1/completions).
	w.prompt = uniformInt(lo, hi).plus(prefix + special + o.TemplateOverhead)
	w.promptFrom = fmt.Sprintf("%s %d%s, --random-range-ratio %s%s, --random-prefix-len %d%s: vLLM draws %s%d−%d special tokens, %s",
		inFlag, in, dflt(a, inFlag), num(ratio), dflt(a, "--random-range-ratio"), prefix, dflt(a, "--random-prefix-len"),
		"uniformly from [⌊L(1−r)⌋, ⌈L(1+r)⌉] with L = ", in, special,
		"then the server adds the special tokens back; sixpin pins the server's count")
	if o.TemplateOverhead > 0 {
		w.promptFrom += fmt.Sprintf(" (+%d tokens of chat template, --template-overhead)", o.TemplateOverhead)
	}
	w.output = uniformInt(olo, ohi)
	w.outputFrom = fmt.Sprintf("%s %d%s, --random-range-ratio %s: uniform in [max(⌊O(1−r)⌋, 1), max(⌈O(1+r)⌉, 1)] = [%d, %d]", outFlag, out, dflt(a, outFlag), num(ratio), olo, ohi)
	if prefix > 0 {
		w.prefix, w.groups = prefix, 1
		w.prefixFrom = fmt.Sprintf("--random-prefix-len %d: one random prefix of that many tokens, drawn once, heads every prompt", prefix)
		p.note(a.name("--random-prefix-len"), "one prefix shared by every request: the server's prefix cache can serve it after the first request, in both tools")
	}
	if special == 0 {
		p.note("", "vLLM subtracts its tokenizer's num_special_tokens_to_add() (1 where it adds BOS) from --random-input-len before drawing, and the server adds it back; the range's bounds follow L − that count: sixpin import --special-tokens N says how many (0 here)")
	}
}

// vllmPrefixRepetition reads the prefix_repetition dataset.
func vllmPrefixRepetition(a *args, r reader, p *problems, w *workload, o Options) {
	pre := r.int("--prefix-repetition-prefix-len", 256)
	suf := r.int("--prefix-repetition-suffix-len", 256)
	k := r.int("--prefix-repetition-num-prefixes", 10)
	out := r.int("--prefix-repetition-output-len", 128)
	if k < 1 || pre < 0 || suf < 1 || out < 1 {
		p.refuse(a.name("--prefix-repetition-num-prefixes"), "want at least one prefix, a suffix and an output of at least one token")
		return
	}
	w.prompt = fixed(pre + suf + o.SpecialTokens + o.TemplateOverhead)
	w.promptFrom = fmt.Sprintf("--prefix-repetition-prefix-len %d + --prefix-repetition-suffix-len %d (+ the special tokens the server adds)", pre, suf)
	w.prefix, w.groups = pre, k
	w.prefixFrom = fmt.Sprintf("--prefix-repetition-num-prefixes %d: that many random prefixes", k)
	w.output = fixed(out)
	w.outputFrom = fmt.Sprintf("--prefix-repetition-output-len %d", out)
	p.note(a.name("--prefix-repetition-num-prefixes"), "vLLM gives each prefix exactly ⌊N/%d⌋ requests and shuffles them (with --seed); sixpin draws each request's prefix uniformly, so its groups hold about, not exactly, N/%d requests each", k, k)
}

// vllmLoad reads the arrival process and the concurrency cap.
func vllmLoad(a *args, r reader, p *problems, w *workload) {
	rate := r.float("--request-rate", math.Inf(1))
	burst := r.float("--burstiness", 1)
	c := 0
	if a.has("--max-concurrency") {
		if c = r.int("--max-concurrency", 0); c <= 0 {
			p.refuse(a.name("--max-concurrency"), "must be greater than 0 (got %d)", c)
		}
	}
	if rate <= 0 {
		p.refuse(a.name("--request-rate"), "must be > 0 (got %s)", num(rate))
		return
	}
	if burst <= 0 {
		p.refuse(a.name("--burstiness"), "must be > 0 (got %s)", num(burst))
		return
	}
	if math.IsInf(rate, 1) {
		w.mode, w.streams = scenario.ModeClosed, c
		if c == 0 {
			w.streams = w.requests
		}
		w.concFrom = fmt.Sprintf("--request-rate inf%s, %s: vLLM creates every request at time 0 and its client semaphore lets %d run at a time — a closed loop of %d streams",
			dflt(a, "--request-rate"), orNot(a, "--max-concurrency", fmt.Sprintf("--max-concurrency %d", c), "no --max-concurrency"), w.streams, w.streams)
		if !a.has("--request-rate") {
			p.note("--request-rate", "not given: its default is inf, which sends every request at once — not a rate; with --max-concurrency it is a closed loop, which sixpin runs as one")
		}
		if a.has("--burstiness") {
			p.note(a.name("--burstiness"), "left out: vLLM applies it only to a finite --request-rate")
		}
		if c == 0 {
			p.note("--max-concurrency", "not given: all %d requests are in flight at once", w.requests)
		}
		return
	}
	w.mode, w.rate, w.maxInFlight = scenario.ModeOpen, rate, c
	switch {
	case math.IsInf(burst, 1):
		w.arrival = scenario.ArrivalConstant
	case burst == 1:
		w.arrival = scenario.ArrivalPoisson
	default:
		w.arrival, w.burstiness = scenario.ArrivalGamma, burst
	}
	w.concFrom = fmt.Sprintf("--request-rate %s, --burstiness %s%s: gaps Gamma(shape = burstiness, scale = 1/(rate·burstiness)), Poisson at 1, even at inf; %s",
		num(rate), num(burst), dflt(a, "--burstiness"), orNot(a, "--max-concurrency", fmt.Sprintf("--max-concurrency %d: at most %d in flight", c, c), "no --max-concurrency: no cap"))
	p.note(a.name("--request-rate"), "vLLM draws a gap before its first request too and rescales all gaps so the last request is sent at exactly N/rate; sixpin's first request is at 0 and its gaps are not rescaled (the same process, not the same instants)")
	if c > 0 {
		p.note(a.name("--max-concurrency"), "an arrival that finds %d in flight waits: vLLM measures its latency from when it is sent (and reports the wait as client queue time), sixpin from its scheduled arrival (no coordinated omission)", c)
	}
}

// or is s, or alt when s is empty.
func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// orNot is text when flag was given, else alt.
func orNot(a *args, flag, text, alt string) string {
	if a.has(flag) {
		return text
	}
	return alt
}

// vllmSampling puts the sampling flags into the profile's extra body.
func vllmSampling(a *args, r reader, p *problems, prof *profile) {
	for _, f := range []struct{ flag, key string }{{"--top-p", "top_p"}, {"--top-k", "top_k"}, {"--min-p", "min_p"}, {"--temperature", "temperature"},
		{"--frequency-penalty", "frequency_penalty"}, {"--presence-penalty", "presence_penalty"}, {"--repetition-penalty", "repetition_penalty"}, {"--logprobs", "logprobs"}} {
		if !a.has(f.flag) {
			continue
		}
		if prof.extraBody == nil {
			prof.extraBody = map[string]any{}
		}
		prof.extraBody[f.key] = r.float(f.flag, 0)
		prof.from = append(prof.from, a.given(f.flag)+" → extra_body."+f.key)
	}
	if !a.has("--temperature") {
		p.note("--temperature", "not given: vLLM's client sends no temperature, so the server's default applies (vLLM: the model's generation config, else 1.0); sixpin sends none either")
	}
	if s := r.str("--extra-body", ""); s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			p.refuse(a.name("--extra-body"), "not a JSON object: %v", err)
			return
		}
		if prof.extraBody == nil {
			prof.extraBody = map[string]any{}
		}
		for k, v := range m {
			prof.extraBody[k] = v
		}
		prof.from = append(prof.from, a.name("--extra-body")+" → extra_body")
	}
}

// vllmGoodput maps --goodput KEY:MS pairs onto the scenario's SLO.
func vllmGoodput(a *args, p *problems, w *workload) {
	for _, kv := range a.vals["--goodput"] {
		k, v, ok := strings.Cut(kv, ":")
		ms, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || ms < 0 {
			p.refuse(a.name("--goodput"), "%q: want KEY:VALUE with a value in milliseconds", kv)
			continue
		}
		switch k {
		case "ttft":
			w.sloTTFT = ms
		case "tpot":
			w.sloTPOT = ms
		case "e2el":
			w.sloE2E = ms
		default:
			p.refuse(a.name("--goodput"), "%q: the metric is one of ttft, tpot, e2el", k)
		}
	}
	w.sloFrom = a.given("--goodput") + ": vLLM's goodput bounds (TPOT alike in both: (E2E − TTFT)/(output − 1))"
	p.note(a.name("--goodput"), "vLLM counts a request good over every request of the run; sixpin's goodput is over its steady window")
}
