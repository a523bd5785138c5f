package importer

import (
	"fmt"
	"math"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/scenario"
)

// InferencePerfPeer is what InferencePerf follows: inference-perf's
// config schema (inference_perf/config/**/config.py, common.py), its
// random and synthetic data generators (datagen/random_datagen.py,
// synthetic_datagen.py) and their lengths
// (utils/numeric/distribution/utils.py generate_distribution), its load
// timers (loadgen/load_timer.py) and its model-server client config.
var InferencePerfPeer = Peer{
	Name:    "inference-perf",
	Command: "inference-perf --config_file",
	Version: "v0.6.1",
	Source:  "github.com/kubernetes-sigs/inference-perf v0.6.1 @a40897e6 (inference_perf/config, datagen, loadgen/load_timer.py, utils/numeric/distribution/utils.py)",
}

// The config's sections, as inference-perf's pydantic models declare
// them. Sections sixpin does not translate are kept as nodes and named
// when they are set.
type ipConfig struct {
	API             *ipAPI     `yaml:"api"`
	Data            *ipData    `yaml:"data"`
	Load            *ipLoad    `yaml:"load"`
	Server          *ipServer  `yaml:"server"`
	Metrics         *yaml.Node `yaml:"metrics"`
	Report          *yaml.Node `yaml:"report"`
	Storage         *yaml.Node `yaml:"storage"`
	Tokenizer       *yaml.Node `yaml:"tokenizer"`
	CircuitBreakers *yaml.Node `yaml:"circuit_breakers"`
}

type ipAPI struct {
	Type               string            `yaml:"type"`
	Streaming          *bool             `yaml:"streaming"`
	Headers            map[string]string `yaml:"headers"`
	SLOUnit            string            `yaml:"slo_unit"`
	SLOTPOTHeader      string            `yaml:"slo_tpot_header"`
	SLOTTFTHeader      string            `yaml:"slo_ttft_header"`
	ResponseFormat     *yaml.Node        `yaml:"response_format"`
	SessionIDHeaderKey string            `yaml:"session_id_header_key"`
}

type ipDist struct {
	Min        *float64 `yaml:"min"`
	Max        *float64 `yaml:"max"`
	Mean       *float64 `yaml:"mean"`
	StdDev     *float64 `yaml:"std_dev"`
	TotalCount *int     `yaml:"total_count"`
	Type       string   `yaml:"type"`
	Variance   *float64 `yaml:"variance"`
	Skew       *float64 `yaml:"skew"`
}

type ipData struct {
	Type               string     `yaml:"type"`
	Path               string     `yaml:"path"`
	CorpusFilePath     string     `yaml:"corpus_file_path"`
	InputDistribution  *ipDist    `yaml:"input_distribution"`
	OutputDistribution *ipDist    `yaml:"output_distribution"`
	SharedPrefix       *ipShared  `yaml:"shared_prefix"`
	Multimodal         *yaml.Node `yaml:"multimodal"`
	Trace              *yaml.Node `yaml:"trace"`
	OTelTraceReplay    *yaml.Node `yaml:"otel_trace_replay"`
	WekaTraceReplay    *yaml.Node `yaml:"weka_trace_replay"`
	ConversationReplay *yaml.Node `yaml:"conversation_replay"`
	VisionArena        *yaml.Node `yaml:"visionarena"`
}

type ipShared struct {
	NumGroups            *int       `yaml:"num_groups"`
	NumUniqueSysPrompts  *int       `yaml:"num_unique_system_prompts"`
	NumPromptsPerGroup   *int       `yaml:"num_prompts_per_group"`
	NumUsersPerSysPrompt *int       `yaml:"num_users_per_system_prompt"`
	SystemPromptLen      *int       `yaml:"system_prompt_len"`
	QuestionLen          *int       `yaml:"question_len"`
	OutputLen            *int       `yaml:"output_len"`
	Seed                 *int64     `yaml:"seed"`
	QuestionDistribution *yaml.Node `yaml:"question_distribution"`
	OutputDistribution   *yaml.Node `yaml:"output_distribution"`
	EnableMultiTurnChat  *bool      `yaml:"enable_multi_turn_chat"`
	Multimodal           *yaml.Node `yaml:"multimodal"`
}

type ipLoad struct {
	Type                    string     `yaml:"type"`
	Interval                *float64   `yaml:"interval"`
	Stages                  []ipStage  `yaml:"stages"`
	Sweep                   *yaml.Node `yaml:"sweep"`
	NumWorkers              *int       `yaml:"num_workers"`
	WorkerMaxConcurrency    *int       `yaml:"worker_max_concurrency"`
	WorkerMaxTCPConnections *int       `yaml:"worker_max_tcp_connections"`
	Trace                   *yaml.Node `yaml:"trace"`
	CircuitBreakers         []string   `yaml:"circuit_breakers"`
	RequestTimeout          *float64   `yaml:"request_timeout"`
	LoraTrafficSplit        *yaml.Node `yaml:"lora_traffic_split"`
	BaseSeed                *int64     `yaml:"base_seed"`
}

type ipStage struct {
	Rate               *float64 `yaml:"rate"`
	Duration           *float64 `yaml:"duration"`
	NumRequests        *int     `yaml:"num_requests"`
	ConcurrencyLevel   *int     `yaml:"concurrency_level"`
	ConcurrentSessions *int     `yaml:"concurrent_sessions"`
	SessionRate        *float64 `yaml:"session_rate"`
	NumSessions        *int     `yaml:"num_sessions"`
	Timeout            *float64 `yaml:"timeout"`
}

type ipServer struct {
	Type      string `yaml:"type"`
	ModelName string `yaml:"model_name"`
	BaseURL   string `yaml:"base_url"`
	IgnoreEOS *bool  `yaml:"ignore_eos"`
	APIKey    string `yaml:"api_key"`
	CertPath  string `yaml:"cert_path"`
	KeyPath   string `yaml:"key_path"`
}

var ipKind = strictyaml.Kind{Noun: "inference-perf config", Keys: "api, data, load, server, ..."}

// ipDatasets says why each data type sixpin cannot generate is refused.
var ipDatasets = map[string]string{
	"mock":                  "mock data (inference-perf's default): a fixed placeholder prompt for testing inference-perf itself, with no pinned lengths",
	"shareGPT":              "ShareGPT's recorded conversations, downloaded from Hugging Face: sixpin synthesises prompts of pinned lengths",
	"cnn_dailymail":         "CNN/DailyMail articles, downloaded from Hugging Face: sixpin does not read them",
	"infinity_instruct":     "Infinity-Instruct conversations, downloaded from Hugging Face: sixpin does not read them",
	"billsum_conversations": "BillSum conversations, downloaded from Hugging Face: sixpin does not read them",
	"otel_trace_replay":     "OpenTelemetry agent traces with dependencies between calls: sixpin replays its own, Mooncake's and Azure's traces",
	"weka_trace_replay":     "Weka's agent traces: sixpin replays its own, Mooncake's and Azure's traces",
	"conversation_replay":   "recorded multi-turn conversations: sixpin's agentic workload synthesises its sessions",
	"visionarena":           "VisionArena's multimodal chats: sixpin sends text",
}

// InferencePerf translates an inference-perf config file (name is used in
// errors, positioned at file:line:col). Its random and synthetic data
// draw total_count input and output lengths once, each
// round(clamp(X, min, max)) for X of the distribution's type (normal by
// default, with inference-perf's defaults min 10, max 1024, mean 512,
// std_dev 200); a load stage is rate × duration requests (constant),
// a Poisson count over the duration (poisson), or num_requests at
// concurrency_level (concurrent); server.ignore_eos defaults to true.
func InferencePerf(name string, data []byte, o Options) (*Result, error) {
	var c ipConfig
	if _, errs := strictyaml.Decode(name, data, &c, ipKind); len(errs) > 0 {
		return nil, fmt.Errorf("import %s: %w", InferencePerfPeer.Name, errs)
	}
	p := &problems{peer: InferencePerfPeer.Name}
	w := &workload{command: "inference-perf --config_file " + name}
	if c.API == nil {
		c.API = &ipAPI{}
	}
	if c.Data == nil {
		c.Data = &ipData{}
	}
	if c.Load == nil {
		c.Load = &ipLoad{}
	}

	// Target.
	protocol, field := "completions", "max_tokens"
	switch c.API.Type {
	case "", "completion":
	case "chat":
		protocol, field = "chat", "max_tokens"
	default:
		p.refuse("api.type", "%q: sixpin measures completion or chat", c.API.Type)
	}
	if c.API.Streaming == nil || !*c.API.Streaming {
		p.note("api.streaming", "false (inference-perf's default): it measures whole responses; sixpin always streams — the workload is the same, the timings are not comparable to a non-streamed run")
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"api.response_format", c.API.ResponseFormat != nil}, {"api.session_id_header_key", c.API.SessionIDHeaderKey != ""},
		{"api.slo_tpot_header", c.API.SLOTPOTHeader != ""}, {"api.slo_ttft_header", c.API.SLOTTFTHeader != ""}} {
		if k.set {
			p.refuse(k.key, "sixpin sends no such field or header")
		}
	}
	srv := c.Server
	if srv == nil || srv.BaseURL == "" {
		p.refuse("server.base_url", "required: the model server inference-perf addresses")
		srv = &ipServer{}
	}
	kind := "openai-compatible"
	switch srv.Type {
	case "", "vllm":
		kind = "vllm"
	case "sglang", "tgi":
		kind = srv.Type
	case "mock":
		p.refuse("server.type", "mock: inference-perf's own stand-in server; point sixpin at a real one (or at `sixpin sim`)")
	default:
		p.refuse("server.type", "%q is not one of inference-perf's model servers", srv.Type)
	}
	w.model = srv.ModelName
	w.modelFrom = "server.model_name"
	if w.model == "" {
		w.model = "model"
		p.note("server.model_name", "not given: name the model in the scenario, or run with --model NAME")
	}
	if srv.APIKey != "" {
		p.note("server.api_key", "left out of the files: sixpin reads the key from the environment variable the profile names (OPENAI_API_KEY)")
	}
	if srv.CertPath != "" || srv.KeyPath != "" {
		p.refuse("server.cert_path", "client certificates: sixpin does not present one")
	}
	prof := &profile{name: "inference-perf-target", kind: kind, baseURL: strings.TrimSuffix(strings.TrimSuffix(srv.BaseURL, "/"), "/v1") + "/v1",
		protocol: protocol, maxTokensField: field, outputControl: "ignore_eos", headers: c.API.Headers,
		description: "the server inference-perf addressed (" + srv.BaseURL + ")"}
	prof.from = append(prof.from, "from server.base_url, server.type and api.type")
	w.profile = prof
	w.exact = srv.IgnoreEOS == nil || *srv.IgnoreEOS
	if srv.IgnoreEOS == nil {
		w.exactFrom = "server.ignore_eos not given: inference-perf's default is true — it sends ignore_eos, and so does sixpin (the profile's output_control)"
	} else {
		w.exactFrom = fmt.Sprintf("server.ignore_eos: %t", *srv.IgnoreEOS)
	}
	for _, k := range []struct {
		key string
		set bool
		why string
	}{{"metrics", c.Metrics != nil, "which server metrics inference-perf scrapes (sixpin scrapes /metrics itself)"},
		{"report", c.Report != nil, "what inference-perf reports"}, {"storage", c.Storage != nil, "where inference-perf writes its reports"},
		{"tokenizer", c.Tokenizer != nil, "the client's tokenizer; sixpin builds prompts to the server's /tokenize (the profile's tokenizer: server)"}} {
		if k.set {
			p.note(k.key, "left out: %s", k.why)
		}
	}
	if c.CircuitBreakers != nil || len(c.Load.CircuitBreakers) > 0 {
		p.refuse("circuit_breakers", "stops the run on error patterns: sixpin's early stop is abort_on (a tier)")
	}

	ipDataOf(c.Data, p, w, o)
	ipLoadOf(c.Load, p, w)
	w.name = o.Name
	if w.name == "" {
		w.name = "inference-perf-" + or(c.Data.Type, "mock")
	}
	w.description = "an inference-perf config, translated: " + name
	return finish(InferencePerfPeer, w, p, o)
}

// ipDataOf reads the data section.
func ipDataOf(d *ipData, p *problems, w *workload, o Options) {
	typ := or(d.Type, "mock")
	switch typ {
	case "random", "synthetic":
		if w.profile.protocol != "completions" {
			p.refuse("data.type", "%s data supports only api.type completion in inference-perf", typ)
		}
		in, ok1 := ipLength(d.InputDistribution, "data.input_distribution", p)
		out, ok2 := ipLength(d.OutputDistribution, "data.output_distribution", p)
		if !ok1 || !ok2 {
			return
		}
		w.prompt, w.output = in.plus(o.TemplateOverhead), out
		w.promptFrom, w.outputFrom = "data.input_distribution: "+in.approxOr(), "data.output_distribution: "+out.approxOr()
		p.note("data.input_distribution.total_count", "inference-perf draws total_count lengths once and its requests take them in turn; sixpin draws every request's anew (the same distribution)")
	case "shared_prefix":
		ipSharedOf(d.SharedPrefix, p, w, o)
	default:
		why, ok := ipDatasets[typ]
		if !ok {
			why = "not one of inference-perf's data types"
		}
		p.refuse("data.type", "%q is %s", typ, why)
	}
	if d.Path != "" || d.CorpusFilePath != "" {
		p.note("data.path", "left out: the text is inference-perf's, the lengths are what sixpin pins")
	}
	if d.Multimodal != nil || d.Trace != nil {
		p.refuse("data.multimodal", "multimodal data or a trace: sixpin sends text requests of pinned lengths (a trace replays with workload kind trace, in sixpin's, Mooncake's or Azure's format)")
	}
}

// approxOr says how l was pinned.
func (l length) approxOr() string {
	if l.approx != "" {
		return l.approx
	}
	return "round(clamp(X, min, max)) of the distribution — " + l.dist.String()
}

// ipLength reads one Distribution as generate_distribution draws it.
func ipLength(d *ipDist, key string, p *problems) (length, bool) {
	if d == nil {
		p.refuse(key, "required by inference-perf's random and synthetic data")
		return length{}, false
	}
	if d.TotalCount == nil {
		p.refuse(key+".total_count", "required by inference-perf's random and synthetic data")
	}
	f := func(v *float64, def float64) float64 {
		if v == nil {
			return def
		}
		return *v
	}
	lo, hi, mean, sd := f(d.Min, 10), f(d.Max, 1024), f(d.Mean, 512), f(d.StdDev, 200)
	if d.Variance != nil {
		if sd > 0 {
			p.refuse(key+".variance", "inference-perf refuses variance beside a std_dev > 0 (std_dev defaults to 200: set it to 0)")
			return length{}, false
		}
		sd = math.Sqrt(*d.Variance)
	}
	if d.Min == nil || d.Max == nil || d.Mean == nil {
		p.note(key, "inference-perf's defaults fill what is not given: min 10, max 1024, mean 512, std_dev 200")
	}
	if lo > hi || lo < 1 {
		p.refuse(key, "want 1 ≤ min ≤ max (got %s, %s)", num(lo), num(hi))
		return length{}, false
	}
	ilo, ihi := int(lo), int(hi)
	switch or(d.Type, "normal") {
	case "fixed":
		return fixed(max(int(mean), 1)), true // np.full(int(mean)): min and max do not apply
	case "normal":
		if mean < lo || mean > hi {
			p.refuse(key+".mean", "must be within [min, max], as inference-perf requires")
			return length{}, false
		}
		return clampedNormal(mean, sd, ilo, ihi), true
	case "uniform":
		return clampedUniform(lo, hi, ilo, ihi), true
	case "lognormal":
		return shiftedLognormal(mean, sd, ilo, ihi), true
	default:
		p.refuse(key+".type", "%q: inference-perf's random and synthetic data draw fixed, normal, uniform or lognormal lengths", d.Type)
		return length{}, false
	}
}

// ipSharedOf reads shared_prefix data: groups of prompts that share a
// system prompt, each with its own question.
func ipSharedOf(s *ipShared, p *problems, w *workload, o Options) {
	if s == nil {
		s = &ipShared{}
	}
	pick := func(a, b *int, def int) int {
		switch {
		case a != nil:
			return *a
		case b != nil:
			return *b
		}
		return def
	}
	groups := pick(s.NumGroups, s.NumUniqueSysPrompts, 10)
	per := pick(s.NumPromptsPerGroup, s.NumUsersPerSysPrompt, 10)
	sys := pick(s.SystemPromptLen, nil, 100)
	q := pick(s.QuestionLen, nil, 50)
	out := pick(s.OutputLen, nil, 50)
	if s.QuestionDistribution != nil || s.OutputDistribution != nil || s.Multimodal != nil || (s.EnableMultiTurnChat != nil && *s.EnableMultiTurnChat) {
		p.refuse("data.shared_prefix", "question or output distributions, multimodal prompts and multi-turn chat are not translated: sixpin's shared prefix has one question length")
		return
	}
	w.prompt = fixed(sys + q + o.TemplateOverhead)
	w.promptFrom = fmt.Sprintf("data.shared_prefix system_prompt_len %d + question_len %d", sys, q)
	w.prefix, w.groups = sys, groups
	w.prefixFrom = fmt.Sprintf("data.shared_prefix num_groups %d: that many system prompts, each shared by its group", groups)
	w.output = fixed(out)
	w.outputFrom = fmt.Sprintf("data.shared_prefix output_len %d", out)
	p.note("data.shared_prefix.num_prompts_per_group", "inference-perf has %d distinct questions per system prompt (%d prompts in all) and sends them in its order; sixpin draws each request's group uniformly, with a fresh question each time", per, groups*per)
}

// ipLoadOf reads the load section: one stage.
func ipLoadOf(l *ipLoad, p *problems, w *workload) {
	typ := or(l.Type, "constant")
	if l.Sweep != nil {
		p.refuse("load.sweep", "picks its stages from a saturation it measures first: import one stage at a time")
		return
	}
	if l.Trace != nil || l.LoraTrafficSplit != nil {
		p.refuse("load.trace", "a trace's timing or LoRA traffic split: sixpin's scenario has one model and one arrival process")
	}
	if l.BaseSeed != nil {
		w.seed = *l.BaseSeed
		w.seedFrom = "load.base_seed: inference-perf's seed; sixpin's plan draws its own values for this seed"
	} else {
		w.seed = 1
		w.seedFrom = "load.base_seed not given: inference-perf seeds from the clock (a new sequence each run); sixpin's seed 1 fixes one"
	}
	if l.NumWorkers != nil || l.WorkerMaxConcurrency != nil || l.WorkerMaxTCPConnections != nil {
		p.note("load.num_workers", "left out: how inference-perf spreads its client over processes (at most num_workers × worker_max_concurrency requests in flight)")
	}
	if len(l.Stages) != 1 {
		p.refuse("load.stages", "%d stages: sixpin's scenario is one stage — import one at a time (write each stage as its own config)", len(l.Stages))
		return
	}
	st := l.Stages[0]
	switch typ {
	case "constant", "poisson":
		if st.Rate == nil || st.Duration == nil || *st.Rate <= 0 || *st.Duration <= 0 {
			p.refuse("load.stages[0]", "a %s stage needs rate > 0 and duration > 0", typ)
			return
		}
		w.mode, w.rate, w.arrival = scenario.ModeOpen, *st.Rate, scenario.ArrivalPoisson
		if typ == "constant" {
			n := int(*st.Rate * *st.Duration)
			w.requests, w.requestsFrom = n, fmt.Sprintf("load.stages[0]: int(rate %s × duration %s) = %d requests", num(*st.Rate), num(*st.Duration), n)
			w.concFrom = fmt.Sprintf("load.type constant, rate %s: inference-perf draws exponential gaps and rescales them to fill the stage's duration — a Poisson process conditioned on its count, not evenly spaced", num(*st.Rate))
			p.note("load.type", "constant is not even spacing in inference-perf: its ConstantLoadTimer draws exponential gaps normalised to the duration; sixpin's poisson arrivals are the same process without the normalisation (the last request lands near, not at, the end)")
		} else {
			w.duration = time.Duration(*st.Duration * float64(time.Second))
			w.durationFrom = fmt.Sprintf("load.stages[0].duration %s: arrivals until then", num(*st.Duration))
			w.concFrom = fmt.Sprintf("load.type poisson, rate %s: a Poisson(rate) count each second, spread by exponential gaps within it — a Poisson process", num(*st.Rate))
		}
	case "concurrent":
		if st.NumRequests == nil || st.ConcurrencyLevel == nil || *st.NumRequests < 1 || *st.ConcurrencyLevel < 1 {
			p.refuse("load.stages[0]", "a concurrent stage needs num_requests and concurrency_level ≥ 1")
			return
		}
		w.mode, w.streams = scenario.ModeClosed, *st.ConcurrencyLevel
		w.requests, w.requestsFrom = *st.NumRequests, "load.stages[0].num_requests"
		w.concFrom = fmt.Sprintf("load.type concurrent, concurrency_level %d: a closed loop of that many streams", *st.ConcurrencyLevel)
	default:
		p.refuse("load.type", "%q: a trace's or sessions' own timing; sixpin replays traces with workload kind trace", typ)
	}
	if l.RequestTimeout != nil {
		p.note("load.request_timeout", "sixpin's request_timeout is set in the scenario (default 10m); this one is left out")
	}
}
