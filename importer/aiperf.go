package importer

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/scenario"
)

// AIPerfPeer is what AIPerf follows: `aiperf profile`'s parameters
// (aiperf/common/config/*_config.py and their defaults in
// config_defaults.py), its timing modes (user_config.py
// validate_timing_mode, timing/request_rate_strategy.py), its synthetic
// lengths (dataset/utils.py sample_positive_normal_integer, used by
// dataset/generator/prompt.py and dataset/composer/base.py) and its
// request bodies (clients/openai/openai_{chat,completions}.py).
var AIPerfPeer = Peer{
	Name:    "aiperf",
	Command: "aiperf profile",
	Version: "0.1.1",
	Source:  "github.com/ai-dynamo/aiperf @db4f6397 (aiperf/common/config, aiperf/timing, aiperf/dataset, aiperf/clients/openai)",
}

// aiperfFlags are `aiperf profile`'s parameters at AIPerfPeer's commit.
var aiperfFlags = []flagDef{
	// endpoint_config.py
	{names: []string{"--model-names", "--model", "-m"}, arity: many}, {names: []string{"--model-selection-strategy"}},
	{names: []string{"--custom-endpoint", "--endpoint"}}, {names: []string{"--endpoint-type"}},
	{names: []string{"--streaming"}, arity: none, neg: true}, {names: []string{"--url", "-u"}},
	{names: []string{"--request-timeout-seconds"}}, {names: []string{"--api-key"}},
	// input_config.py
	{names: []string{"--extra-inputs"}, arity: many}, {names: []string{"--header", "-H"}, arity: many},
	{names: []string{"--input-file"}}, {names: []string{"--fixed-schedule"}, arity: none, neg: true},
	{names: []string{"--fixed-schedule-auto-offset"}, arity: none, neg: true},
	{names: []string{"--fixed-schedule-start-offset"}}, {names: []string{"--fixed-schedule-end-offset"}},
	{names: []string{"--public-dataset"}}, {names: []string{"--custom-dataset-type"}}, {names: []string{"--random-seed"}},
	{names: []string{"--goodput"}, arity: many},
	// prompt_config.py
	{names: []string{"--prompt-input-tokens-mean", "--synthetic-input-tokens-mean", "--isl"}},
	{names: []string{"--prompt-input-tokens-stddev", "--synthetic-input-tokens-stddev", "--isl-stddev"}},
	{names: []string{"--prompt-input-tokens-block-size", "--synthetic-input-tokens-block-size", "--isl-block-size"}, ignored: "the block size of hash-id (trace) prompts, unused by synthetic ones"},
	{names: []string{"--prompt-output-tokens-mean", "--output-tokens-mean", "--osl"}},
	{names: []string{"--prompt-output-tokens-stddev", "--output-tokens-stddev", "--osl-stddev"}},
	{names: []string{"--prompt-prefix-pool-size", "--prefix-prompt-pool-size", "--num-prefix-prompts"}},
	{names: []string{"--prompt-prefix-length", "--prefix-prompt-length"}},
	{names: []string{"--prompt-batch-size", "--batch-size-text", "--batch-size", "-b"}},
	{names: []string{"--seq-dist", "--sequence-distribution"}},
	// conversation_config.py
	{names: []string{"--conversation-num", "--num-conversations", "--num-sessions", "--num-dataset-entries", "--num-prompts"}},
	{names: []string{"--conversation-turn-mean", "--session-turns-mean"}}, {names: []string{"--conversation-turn-stddev", "--session-turns-stddev"}},
	{names: []string{"--conversation-turn-delay-mean", "--session-turn-delay-mean"}},
	{names: []string{"--conversation-turn-delay-stddev", "--session-turn-delay-stddev"}},
	{names: []string{"--conversation-turn-delay-ratio", "--session-delay-ratio"}},
	// audio_config.py, image_config.py
	{names: []string{"--audio-length-mean"}}, {names: []string{"--audio-length-stddev"}}, {names: []string{"--audio-batch-size", "--batch-size-audio"}},
	{names: []string{"--audio-format"}}, {names: []string{"--audio-depths"}, arity: many}, {names: []string{"--audio-sample-rates"}, arity: many},
	{names: []string{"--audio-num-channels"}},
	{names: []string{"--image-height-mean"}}, {names: []string{"--image-height-stddev"}}, {names: []string{"--image-width-mean"}},
	{names: []string{"--image-width-stddev"}}, {names: []string{"--image-batch-size", "--batch-size-image"}}, {names: []string{"--image-format"}},
	// loadgen_config.py
	{names: []string{"--benchmark-duration"}}, {names: []string{"--benchmark-grace-period"}},
	{names: []string{"--concurrency"}}, {names: []string{"--request-rate"}}, {names: []string{"--request-rate-mode"}},
	{names: []string{"--request-count", "--num-requests"}}, {names: []string{"--warmup-request-count", "--num-warmup-requests"}},
	{names: []string{"--request-cancellation-rate"}}, {names: []string{"--request-cancellation-delay"}},
	// output, tokenizer, service, workers, zmq
	{names: []string{"--output-artifact-dir", "--artifact-dir"}, ignored: "where results go"},
	{names: []string{"--profile-export-file"}, ignored: "where results go"},
	{names: []string{"--tokenizer"}, ignored: "the client's tokenizer; sixpin builds prompts to the server's /tokenize (the profile's tokenizer: server)"},
	{names: []string{"--tokenizer-revision"}, ignored: "the client's tokenizer"},
	{names: []string{"--tokenizer-trust-remote-code"}, arity: none, neg: true, ignored: "the client's tokenizer"},
	{names: []string{"--log-level"}, ignored: "logging"}, {names: []string{"--verbose", "-v"}, arity: none, ignored: "logging"},
	{names: []string{"--extra-verbose", "-vv"}, arity: none, ignored: "logging"},
	{names: []string{"--record-processor-service-count", "--record-processors"}, ignored: "AIPerf's own processes"},
	{names: []string{"--ui-type", "--ui"}, ignored: "the console"}, {names: []string{"--workers-max", "--max-workers"}, ignored: "AIPerf's own processes"},
	{names: []string{"--zmq-host"}, ignored: "AIPerf's own processes"}, {names: []string{"--zmq-ipc-path"}, ignored: "AIPerf's own processes"},
}

// AIPerf translates `aiperf profile ARGS…`. Its synthetic prompts are
// ⌈X⌉ tokens for X ~ N(--isl, --isl-stddev²) drawn again until X ≥ 0,
// its max_tokens likewise from --osl (no max_tokens at all without it);
// --concurrency alone is a closed loop (concurrency burst), a
// --request-rate an open loop, Poisson (default) or constant, capped by
// --concurrency when both are given; --request-count requests are
// measured after --warmup-request-count warm-up ones.
func AIPerf(argv []string, o Options) (*Result, error) {
	p := &problems{peer: AIPerfPeer.Name}
	a, bad := parse(argv, aiperfFlags, nil)
	p.refused = append(p.refused, bad...)
	r := reader{a: a, p: p}
	ignoredNotes(a, aiperfFlags, p)
	w := &workload{command: "aiperf profile " + strings.Join(argv, " ")}

	// Target.
	models := a.vals["--model-names"]
	switch {
	case len(models) == 0 || models[0] == "":
		w.model = "model"
		p.refuse("--model", "required by AIPerf (there is no default model)")
	case len(models) > 1 || strings.Contains(models[0], ","):
		p.refuse(a.name("--model-names"), "several models, taken in turn: a sixpin scenario targets one model")
	default:
		w.model = models[0]
	}
	w.modelFrom = a.given("--model-names")
	etype := r.str("--endpoint-type", "chat")
	protocol, field := "", ""
	switch etype {
	case "chat":
		protocol, field = "chat", "max_completion_tokens"
	case "completions":
		protocol, field = "completions", "max_tokens"
	default:
		p.refuse(a.name("--endpoint-type"), "%q: sixpin measures generation over chat or completions", etype)
	}
	url := r.str("--url", "localhost:8000")
	if !strings.Contains(url, "://") {
		url = "http://" + url
	}
	path := "/v1/" + protocol
	if protocol == "chat" {
		path = "/v1/chat/completions"
	}
	if ce := r.str("--custom-endpoint", ""); ce != "" {
		if !strings.HasSuffix(ce, strings.TrimPrefix(path, "/v1")) || !strings.HasPrefix(ce, "/v1/") && !strings.HasPrefix(ce, "v1/") {
			p.refuse(a.name("--custom-endpoint"), "%q: sixpin addresses %s under a base URL ending in /v1", ce, path)
		}
	}
	prof := &profile{name: "aiperf-target", kind: "openai-compatible", baseURL: strings.TrimSuffix(url, "/") + "/v1", protocol: protocol,
		maxTokensField: field, outputControl: "ignore_eos",
		description: "the server `aiperf profile` addressed (" + url + path + ")"}
	prof.from = append(prof.from, "from "+or(a.given("--url", "--endpoint-type", "--custom-endpoint"), "AIPerf's defaults")+" (--url localhost:8000 --endpoint-type chat unless given)")
	w.profile = prof
	if a.has("--api-key") {
		p.note(a.name("--api-key"), "left out of the files: sixpin reads the key from the environment variable the profile names (OPENAI_API_KEY)")
	}
	extra := aiperfPairs(a, p, "--extra-inputs")
	exact := false
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		v := extra[k]
		if k == "ignore_eos" {
			exact = v == true
			continue
		}
		if prof.extraBody == nil {
			prof.extraBody = map[string]any{}
		}
		prof.extraBody[k] = v
		prof.from = append(prof.from, fmt.Sprintf("--extra-inputs %s → extra_body.%s", k, k))
	}
	if h := aiperfPairs(a, p, "--header"); len(h) > 0 {
		prof.headers = map[string]string{}
		for k, v := range h {
			prof.headers[k] = fmt.Sprint(v)
		}
	}
	if !r.bool("--streaming") {
		p.note("--streaming", "not given: AIPerf then sends stream: false and measures whole responses (no TTFT, no ITL); sixpin always streams — the workload is the same, the timings are not comparable to a non-streamed run")
	}
	if _, ok := extra["temperature"]; !ok {
		p.note("", "sampling: AIPerf's client sends no temperature (the server's default applies) and neither does sixpin")
	}

	// Dataset.
	for _, f := range []string{"--input-file", "--public-dataset", "--custom-dataset-type", "--fixed-schedule"} {
		if a.has(f) && !(f == "--fixed-schedule" && !r.bool(f)) {
			p.refuse(a.name(f), "%s: sixpin synthesises prompts of pinned lengths; it does not read AIPerf's datasets or schedules (replay a trace in sixpin's, Mooncake's or Azure's format with workload kind trace)", orVal(r.str(f, "")))
		}
	}
	for _, f := range []string{"--seq-dist", "--audio-length-mean", "--image-height-mean", "--image-width-mean"} {
		if a.has(f) && r.str(f, "") != "0" {
			p.refuse(a.name(f), "%s: sixpin sends text prompts of one length distribution (a mix of ISL/OSL pairs is pins.mix.classes, written by hand)", orVal(r.str(f, "")))
		}
	}
	if b := r.int("--prompt-batch-size", 1); b != 1 {
		p.refuse(a.name("--prompt-batch-size"), "several prompts per request (embeddings and rankings): sixpin sends one")
	}
	if t := r.float("--conversation-turn-mean", 1); t != 1 || r.float("--conversation-turn-stddev", 0) != 0 {
		p.refuse(a.name("--conversation-turn-mean"), "multi-turn conversations: sixpin's agentic workload grows its context differently (each turn adds a tool result); write it by hand")
	}
	w.seed = 1
	if a.has("--random-seed") {
		w.seed = int64(r.int("--random-seed", 0))
		w.seedFrom = a.given("--random-seed") + ": AIPerf seeds Python's and numpy's generators with it; sixpin's plan draws its own values for this seed"
	} else {
		w.seedFrom = "--random-seed not given: AIPerf draws unseeded (a new sequence each run); sixpin's seed 1 fixes one"
	}
	isl, islSD := r.float("--prompt-input-tokens-mean", 550), r.float("--prompt-input-tokens-stddev", 0)
	if isl < 1 || islSD < 0 {
		p.refuse(a.name("--prompt-input-tokens-mean"), "want a mean of at least 1 token and a stddev ≥ 0")
	} else {
		w.prompt = ceilTruncatedNormal(isl, islSD).plus(o.TemplateOverhead)
		w.promptFrom = fmt.Sprintf("%s%s: ⌈X⌉ for X ~ N(%s, %s²) drawn again until X ≥ 0 (AIPerf's sample_positive_normal_integer)",
			or(a.given("--prompt-input-tokens-mean", "--prompt-input-tokens-stddev"), "--isl 550 (default)"), "", num(isl), num(islSD))
		if islSD > 0 {
			w.promptFrom += "; sixpin's normal rounds, so its mean is the peer's + ½"
		}
		if w.prompt.approx != "" {
			p.note(a.name("--prompt-input-tokens-stddev"), "%s", w.prompt.approx)
		}
		aiperfTemplate(p, protocol, o)
	}
	if !a.has("--prompt-output-tokens-mean") {
		p.refuse("--osl", "not given: AIPerf then sends no max_tokens and the model decides each output's length; sixpin pins output lengths — give --output-tokens-mean (and --extra-inputs ignore_eos:true for exact lengths)")
	} else {
		osl, oslSD := r.float("--prompt-output-tokens-mean", 0), r.float("--prompt-output-tokens-stddev", 0)
		if osl < 1 || oslSD < 0 {
			p.refuse(a.name("--prompt-output-tokens-mean"), "want a mean of at least 1 token and a stddev ≥ 0")
		} else {
			w.output = ceilTruncatedNormal(osl, oslSD)
			w.outputFrom = fmt.Sprintf("%s: max_tokens ⌈X⌉ for X ~ N(%s, %s²), X ≥ 0", a.given("--prompt-output-tokens-mean", "--prompt-output-tokens-stddev"), num(osl), num(oslSD))
		}
	}
	w.exact = exact
	if exact {
		w.exactFrom = "--extra-inputs ignore_eos:true: AIPerf adds ignore_eos to every body; sixpin sends it (the profile's output_control) and checks each request got its full length"
	} else {
		w.exactFrom = "no --extra-inputs ignore_eos:true: AIPerf lets the model stop early (max_tokens is a ceiling), and so does sixpin"
		p.note("--extra-inputs", "no ignore_eos: a real model may stop before max_tokens in either tool, so the output totals are ceilings")
	}
	if pool := r.int("--prompt-prefix-pool-size", 0); pool > 0 {
		plen := r.int("--prompt-prefix-length", 0)
		w.prefix, w.groups = plen, pool
		w.prompt = w.prompt.plus(plen + 1)
		w.prefixFrom = fmt.Sprintf("%s, %s: a random one of %d prefixes of %d tokens, then a space, heads every prompt", a.given("--prompt-prefix-pool-size"), a.given("--prompt-prefix-length"), pool, plen)
		p.note(a.name("--prompt-prefix-pool-size"), "AIPerf joins prefix and prompt with a space, which may merge tokens at the seam (its own docs say the prompt may be off by one); sixpin counts the space as a token")
	}

	// Load.
	aiperfLoad(a, r, p, w)
	w.name = o.Name
	if w.name == "" {
		w.name = "aiperf-synthetic"
	}
	w.description = fmt.Sprintf("`aiperf profile` with synthetic prompts, translated: %d requests", w.requests)
	return finish(AIPerfPeer, w, p, o)
}

// orVal is v quoted, or "given" when v is empty.
func orVal(v string) string {
	if v == "" {
		return "given"
	}
	return strconv.Quote(v)
}

// aiperfTemplate notes how a chat prompt's length is counted.
func aiperfTemplate(p *problems, protocol string, o Options) {
	if protocol == "chat" && o.TemplateOverhead == 0 {
		p.note("--isl", "AIPerf's ISL counts the prompt text's tokens; the server adds its chat template, which sixpin's prompt pin counts: for the server to count the same, give sixpin import --template-overhead N (what sixpin's probe measures: results target.template_overhead_tokens)")
	}
}

// aiperfLoad reads AIPerf's timing mode.
func aiperfLoad(a *args, r reader, p *problems, w *workload) {
	n := r.int("--request-count", 10)
	if a.has("--benchmark-duration") {
		if a.has("--request-count") {
			p.refuse(a.name("--benchmark-duration"), "AIPerf refuses --request-count and --benchmark-duration together")
		}
		d := r.float("--benchmark-duration", 0)
		w.duration = secs(d)
		w.durationFrom = a.given("--benchmark-duration") + ": issuing stops after it"
		p.note(a.name("--benchmark-duration"), "AIPerf waits --benchmark-grace-period (default 30s) for answers in flight and counts those that arrive; sixpin gives in-flight requests its own grace period (--grace) and cuts the rest")
		n = 0
	} else {
		w.requests = n
		w.requestsFrom = "--request-count " + strconv.Itoa(n) + dflt(a, "--request-count")
	}
	c := r.int("--concurrency", 0)
	rate := r.float("--request-rate", 0)
	mode := r.str("--request-rate-mode", "poisson")
	switch {
	case a.has("--request-rate") && rate > 0:
		w.mode, w.rate, w.maxInFlight = scenario.ModeOpen, rate, c
		switch mode {
		case "poisson":
			w.arrival = scenario.ArrivalPoisson
		case "constant":
			w.arrival = scenario.ArrivalConstant
		default:
			p.refuse(a.name("--request-rate-mode"), "%q with a request rate: constant or poisson", mode)
		}
		w.concFrom = fmt.Sprintf("--request-rate %s, --request-rate-mode %s%s: the first request at 0, then %s gaps", num(rate), mode, dflt(a, "--request-rate-mode"),
			map[string]string{"poisson": "exponential", "constant": "even"}[mode])
		if c > 0 {
			w.concFrom += fmt.Sprintf("; --concurrency %d caps the requests in flight", c)
			p.note(a.name("--concurrency"), "with a request rate, AIPerf waits for a free slot before it sends and then sleeps the next gap, so its schedule slips behind a busy server; sixpin keeps its schedule and measures from it")
		}
	case a.has("--request-rate"):
		p.refuse(a.name("--request-rate"), "must be > 0")
	default:
		if c == 0 {
			c = 1
			p.note("--concurrency", "not given: AIPerf then runs one request at a time (concurrency 1)")
		}
		w.mode, w.streams = scenario.ModeClosed, c
		w.concFrom = fmt.Sprintf("%s: AIPerf's concurrency burst — each of %d slots sends its next request when its last one returns: a closed loop", or(a.given("--concurrency"), "no --concurrency (1)"), c)
	}
	if k := r.int("--warmup-request-count", 0); k > 0 {
		w.warm = Warmup{Requests: k, Input: float64(k) * w.prompt.mean, Output: float64(k) * w.output.mean, Setting: a.name("--warmup-request-count")}
		p.note(a.name("--warmup-request-count"), "AIPerf sends %d warm-up requests of the same workload before it measures and leaves them out of its figures; sixpin has no count-based warm-up (windows.warmup is a time), so the scenario leaves them out: a server counting both tools sees AIPerf's %d more", k, k)
	}
	if v := r.float("--request-cancellation-rate", 0); v > 0 {
		p.refuse(a.name("--request-cancellation-rate"), "cancels a share of requests on purpose: sixpin sends every request to its end")
	}
	if n := r.int("--conversation-num", 100); a.has("--conversation-num") || w.prompt.dist.Kind != scenario.DistFixed {
		p.note("--num-dataset-entries", "AIPerf draws a dataset of %d prompts and sends its requests from it, so with a stddev the same lengths recur; sixpin draws every request's lengths anew (the same distribution)", n)
	}
}

// secs is s seconds as a Duration.
func secs(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

// aiperfPairs reads a key:value list (or a JSON object) of --extra-inputs
// or --header, values coerced as AIPerf's coerce_value does.
func aiperfPairs(a *args, p *problems, flag string) map[string]any {
	out := map[string]any{}
	for _, item := range a.vals[flag] {
		if strings.HasPrefix(strings.TrimSpace(item), "{") {
			var m map[string]any
			if err := json.Unmarshal([]byte(item), &m); err != nil {
				p.refuse(a.name(flag), "not a JSON object: %v", err)
				continue
			}
			for k, v := range m {
				out[k] = v
			}
			continue
		}
		for _, kv := range strings.Split(item, ",") {
			k, v, ok := strings.Cut(kv, ":")
			if !ok {
				p.refuse(a.name(flag), "%q: want name:value", kv)
				continue
			}
			out[strings.TrimSpace(k)] = coerce(strings.TrimSpace(v))
		}
	}
	return out
}

// coerce turns a string into a bool or number where it reads as one.
func coerce(v string) any {
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}
