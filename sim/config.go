// Package sim is a simulated inference server.
//
// It speaks OpenAI's chat, legacy completions and Responses APIs and
// Anthropic's Messages API: an http.Handler whose timing comes from a roofline model of an accelerator
// with continuous batching. It is sixpin's default target and its test
// double; results measured against it are always marked simulated.
package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"
)

// Batching modes.
const (
	// BatchingContinuous admits waiting requests at every step boundary.
	BatchingContinuous = "continuous"
	// BatchingStatic admits a new batch only when the running one is done.
	BatchingStatic = "static"
)

// Fault classes, the keys of Config.Faults.
const (
	// FaultHTTP400 .. FaultHTTP503 answer that status with an OpenAI-style
	// error body and no timing.
	FaultHTTP400 = "http_400"
	FaultHTTP429 = "http_429" // also sets Retry-After: 1 (seconds)
	FaultHTTP500 = "http_500"
	FaultHTTP503 = "http_503"
	// FaultCut closes the connection abruptly after half the output
	// tokens: no finish chunk, no [DONE].
	FaultCut = "cut"
	// FaultMalformed sends the event `data: {"choices":[{"delta":{"content":`
	// after half the output tokens, then continues normally (not
	// streaming: the body is cut in half).
	FaultMalformed = "malformed"
	// FaultEmpty answers with no tokens: role chunk, finish chunk
	// ("stop"), usage with completion_tokens 0, [DONE].
	FaultEmpty = "empty"
	// FaultStall sends the first token and then nothing, holding the
	// connection until the client leaves or the Server closes.
	FaultStall = "stall"
	// FaultStreamError fails the generation after half the output
	// tokens: a stream ends with its protocol's in-stream error (chat and
	// completions: an error chunk and [DONE]; Messages: an error event,
	// overloaded_error; Responses: an error event and response.failed);
	// a non-streaming request gets the protocol's overload error (503;
	// Messages: 529 overloaded_error).
	FaultStreamError = "stream_error"
)

// Defaults of Config, applied by Defaults to zero fields.
const (
	DefaultModel                  = "sim-model"
	DefaultMaxModelLen            = 32768 // tokens
	DefaultMaxNumSeqs             = 256
	DefaultMaxBatchedTokens       = 8192 // tokens per step
	DefaultGPUMemoryUtilization   = 0.9  // fraction of accelerator memory
	DefaultTokensPerChunk         = 1
	DefaultTemplateOverheadTokens = 5   // tokens per message
	DefaultNaturalOutputTokens    = 200 // tokens, median
	DefaultSeed                   = 1
	DefaultFixedTTFT              = 200 * time.Millisecond
	DefaultFixedITL               = 10 * time.Millisecond
	DefaultBlockSize              = 16 // tokens per KV block, vLLM's default
	DefaultTimeScale              = 1
)

// Metrics dialects (Config.Metrics): whose names /metrics serves.
const (
	// MetricsVLLM serves vLLM V1's names (vllm:…).
	MetricsVLLM = "vllm"
	// MetricsSGLang serves SGLang's names (sglang:…), counting its
	// tokenizer's counters when a request finishes, as SGLang does.
	MetricsSGLang = "sglang"
)

// Timing models.
const (
	// TimingRoofline derives every delay from the Roofline model and a
	// batching engine shared by all requests.
	TimingRoofline = "roofline"
	// TimingFixed gives every request the same TTFT and inter-token gap,
	// independent of load (useful for testing the client).
	TimingFixed = "fixed"
	// TimingNone sends every token as fast as the connection takes it.
	TimingNone = "none"
)

// Config configures a simulated server. The zero value of a field means its
// default (see Defaults). It is read from a profile's `sim:` section.
type Config struct {
	// Model is the served model id (default "sim-model").
	Model string `yaml:"model"`
	// Timing is TimingRoofline (default), TimingFixed or TimingNone.
	Timing   string   `yaml:"timing"`
	Roofline Roofline `yaml:"roofline"`
	Fixed    Fixed    `yaml:"fixed"`

	// MaxModelLen is the context window in tokens (prompt + output); a
	// longer request gets vLLM's 400 error (default 32768).
	MaxModelLen int `yaml:"max_model_len"`
	// MaxNumSeqs caps the running batch (default 256).
	MaxNumSeqs int `yaml:"max_num_seqs"`
	// KVBudgetTokens is the KV cache size in tokens, held in blocks of
	// BlockSize tokens (default: MaxNumSeqs × MaxModelLen, i.e. never
	// binding). As in vLLM, a waiting request is admitted when the blocks
	// of its prompt (less those found in the prefix cache) are free, and a
	// running sequence takes one more block whenever its context crosses a
	// block boundary; when none is free, the most recently admitted
	// sequence is preempted (its blocks freed, recomputed later). A
	// request larger than the whole budget runs alone.
	KVBudgetTokens int `yaml:"kv_budget_tokens"`
	// BlockSize is the KV block size in tokens (default 16).
	BlockSize int `yaml:"block_size"`
	// PrefixCaching keeps the content of full KV blocks after their
	// sequence ends, so that a later prompt sharing a prefix of whole
	// blocks skips their prefill, as vLLM's automatic prefix caching and
	// llama.cpp's slot cache do (default false). Blocks are identified by
	// a hash chain over the prompt's token ids (message boundaries and
	// roles included); free cached blocks are evicted least recently used
	// first. Responses report the blocks found as
	// usage.prompt_tokens_details.cached_tokens. Only TimingRoofline
	// turns a hit into a shorter prefill; the other timings still report
	// cached_tokens.
	PrefixCaching *bool `yaml:"prefix_caching"`
	// GPUMemoryUtilization is what the simulated server reports as vLLM's
	// gpu_memory_utilization in /metrics (default 0.9, vLLM's long-standing
	// default). It only describes the server: the KV budget is
	// KVBudgetTokens.
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
	// Batching is "continuous" (default) or "static".
	Batching string `yaml:"batching"`
	// MaxBatchedTokens is the per-step token budget for chunked prefill
	// (default 8192); prefill of a long prompt spreads over several steps.
	MaxBatchedTokens int `yaml:"max_batched_tokens"`

	// TokensPerChunk is how many tokens each streamed chunk carries
	// (default 1); >1 imitates servers that coalesce tokens.
	TokensPerChunk int `yaml:"tokens_per_chunk"`
	// TemplateOverheadTokens is what the chat template adds per message
	// (default 5) plus a fixed 3 for the assistant prime.
	TemplateOverheadTokens *int `yaml:"template_overhead_tokens"`
	// NaturalOutputTokens is the median length of an answer when the
	// request does not ask to ignore EOS (default 200); lengths are
	// lognormal around it, deterministic per request, capped by max_tokens.
	NaturalOutputTokens int `yaml:"natural_output_tokens"`
	// ReasoningShare is the fraction of output tokens sent as reasoning
	// before the answer (default 0): chat's reasoning_content, a Messages
	// thinking block (only with thinking enabled, at most its budget), a
	// Responses reasoning item; legacy completions never split it.
	ReasoningShare float64 `yaml:"reasoning_share"`
	// Tokenizer is how the simulator counts prompt tokens and answers
	// /tokenize: "words" (default: one token per whitespace-separated
	// word) or any name tokenizer.Get takes ("qwen2", "cl100k_base",
	// "o200k_base", "hf:PATH").
	Tokenizer string `yaml:"tokenizer"`
	// Seed makes token counts deterministic (default 1).
	Seed int64 `yaml:"seed"`
	// SendStamps adds "sixpin_sent_unix_ns" to the JSON of each streamed
	// event, in every protocol: the wall-clock time just before the event
	// was written (default true).
	SendStamps *bool `yaml:"send_stamps"`
	// RateLimits answers requests over a hosted API's quotas with 429
	// (default: none). See RateLimits.
	RateLimits RateLimits `yaml:"rate_limits"`
	// OverloadAfterWaiting refuses a request that arrives while at least
	// this many requests wait for the engine (submitted, not yet
	// admitted) as overloaded: 529 overloaded_error on /v1/messages, 503
	// on OpenAI's protocols (default 0: never). It needs timing roofline:
	// only the engine queues.
	OverloadAfterWaiting int `yaml:"overload_after_waiting"`
	// APIKey, when set, is the key every generation request must carry:
	// "Authorization: Bearer KEY" (OpenAI's protocols) or "x-api-key:
	// KEY" (Messages, which also takes the bearer form); others get 401.
	// It is set in code only, never read from or written to a profile,
	// so a key never lands in a file.
	APIKey string `yaml:"-"`
	// TimeScale multiplies every modelled delay (roofline steps,
	// Roofline.RequestOverhead, fixed TTFT and ITL) and every rate-limit
	// window, Retry-After and reset (default 1). A time_scale of 0.05
	// runs the modelled world 20× faster. Figures measured against a
	// scaled simulator are in compressed time: divide its durations by
	// TimeScale (and multiply its rates by it) to read them in simulated
	// time. What the model does not time is not scaled — the server's
	// own parsing and tokenizing, the round trip, the client's handling,
	// a goroutine waking — so divided by TimeScale it weighs 1/TimeScale
	// times what it does in real time (results.Compressed says how much).
	TimeScale float64 `yaml:"time_scale"`
	// Faults injects failures: class → probability per request, decided
	// deterministically from hash(Seed, prompt text), so a given prompt
	// always meets the same fault. Probabilities sum to ≤ 1. Classes:
	// http_400, http_429 (with Retry-After: 1), http_500, http_503;
	// cut (connection closed after half the tokens, without [DONE]);
	// malformed (an invalid JSON event after half the tokens, then the
	// rest as normal); empty (a stream with no tokens); stall (nothing
	// more after the first token, until the client leaves or Close);
	// stream_error (the protocol's in-stream error after half the tokens,
	// see FaultStreamError). On /v1/messages, http_503 answers as
	// Anthropic signals overload: 529 overloaded_error.
	Faults map[string]float64 `yaml:"faults"`
	// SpecDecode models speculative decoding (default: none, every
	// decode step yields one token per sequence). See SpecDecode.
	SpecDecode *SpecDecode `yaml:"spec_decode"`
	// Metrics is whose names GET /metrics serves: MetricsVLLM (default)
	// or MetricsSGLang. See handleMetrics and handleSGLangMetrics.
	Metrics string `yaml:"metrics"`
	// LoopPastEOS makes a request whose length is forced (ignore_eos or
	// min_tokens) beyond its natural length (see NaturalOutputTokens)
	// repeat, past that length, its last LoopPhraseTokens tokens over and
	// over, as a model stuck in a loop under ignore_eos does (default
	// false: the output goes on as before). The loop is output repetitiveness,
	// which SpecDecode turns into a higher acceptance.
	LoopPastEOS bool `yaml:"loop_past_eos"`

	// RequestLog, when set, receives one JSON line per generation request
	// the Server admitted, as it ends (RequestLogEntry): a per-run count
	// of what was served, request by request (not YAML).
	RequestLog io.Writer `yaml:"-"`
}

// Roofline is the accelerator and model in DESIGN §7's terms. Calibrate it
// by observed figures (single-stream decode tok/s at a short and a long
// context, prefill tok/s), not datasheet peaks.
//
// A zero Roofline becomes DefaultRoofline(). In a partly given one, zero
// BytesPerParam and KVBytes become 2, zero KVHeads becomes Heads, zero
// ComputeUtil and MemUtil become 1 and zero PrefillUtil becomes
// ComputeUtil; the other fields must be given (see Validate).
// Its methods are pure and safe for concurrent use.
type Roofline struct {
	// ParamsB is P in billions of parameters (active, for MoE).
	ParamsB float64 `yaml:"params_b"`
	// BytesPerParam is b (2 for bf16, ~0.56 for 4-bit quantisation).
	BytesPerParam float64 `yaml:"bytes_per_param"`
	// Layers is L, the layers that hold a KV cache.
	Layers int `yaml:"layers"`
	// Heads is H, attention (query) heads, for attention FLOPs.
	Heads int `yaml:"heads"`
	// KVHeads is H_kv.
	KVHeads int `yaml:"kv_heads"`
	// HeadDim is d.
	HeadDim int `yaml:"head_dim"`
	// KVBytes is b_kv, bytes per KV element (2 for fp16).
	KVBytes float64 `yaml:"kv_bytes"`
	// PeakTFLOPS is the accelerator's peak dense throughput in TFLOP/s.
	PeakTFLOPS float64 `yaml:"peak_tflops"`
	// MemBandwidthGBs is memory bandwidth in GB/s.
	MemBandwidthGBs float64 `yaml:"mem_bandwidth_gbs"`
	// ComputeUtil and MemUtil are the achieved fractions (0–1] of peak
	// (default 1: the peak figures given are already achieved ones).
	ComputeUtil float64 `yaml:"compute_util"`
	MemUtil     float64 `yaml:"mem_util"`
	// PrefillUtil is the achieved fraction (0–1] of peak on prefill
	// FLOPs (default ComputeUtil); ComputeUtil then applies to decode
	// FLOPs only. A service whose decode is tuned far beyond its prefill
	// (a wafer-scale engine) needs it.
	PrefillUtil float64 `yaml:"prefill_util"`
	// StepOverhead is a fixed cost per engine step (default 0).
	StepOverhead time.Duration `yaml:"step_overhead"`
	// RequestOverhead is a fixed wait before each request joins the
	// engine (default 0): a hosted service's gateway, queueing and
	// tokenisation. It adds to the request's TTFT without holding up
	// the batch.
	RequestOverhead time.Duration `yaml:"request_overhead"`
}

// RateLimits are a hosted API's quotas, enforced server-side over sliding
// windows (a minute or a day, times Config.TimeScale). A zero field is no
// limit. A request is counted when it is admitted (the request, its prompt
// tokens) and when it completes (its output tokens); a request that would
// take a bucket over its limit is refused with 429, a Retry-After header
// (whole seconds until the window frees enough, at least 1) and an error
// naming the bucket. Every chat response carries Cerebras-style headers
// for each configured bucket: x-ratelimit-limit-<bucket>,
// x-ratelimit-remaining-<bucket> and x-ratelimit-reset-<bucket> (seconds
// until the window is empty), where <bucket> is requests-minute,
// requests-day, tokens-minute, uncached-tokens-minute,
// output-tokens-minute or tokens-day.
type RateLimits struct {
	// RequestsPerMinute counts requests.
	RequestsPerMinute int `yaml:"requests_per_minute"`
	// RequestsPerDay counts requests over a day.
	RequestsPerDay int `yaml:"requests_per_day"`
	// TokensPerMinute counts every token: prompt tokens, cached ones
	// included, then output tokens.
	TokensPerMinute int `yaml:"tokens_per_minute"`
	// UncachedTokensPerMinute counts prompt tokens not found in the
	// prefix cache.
	UncachedTokensPerMinute int `yaml:"uncached_tokens_per_minute"`
	// OutputTokensPerMinute counts output tokens (reasoning included).
	OutputTokensPerMinute int `yaml:"output_tokens_per_minute"`
	// TokensPerDay counts every token, as TokensPerMinute, over a day.
	TokensPerDay int `yaml:"tokens_per_day"`
}

// Fixed is the load-independent timing of TimingFixed. The two fields are
// defaulted together: only when both are zero do they become
// DefaultFixedTTFT and DefaultFixedITL, so {ttft: 1s, itl: 0} is honoured.
type Fixed struct {
	// TTFT is the wait from the request to the first token chunk.
	TTFT time.Duration `yaml:"ttft"`
	// ITL is the gap between consecutive chunks (each carries
	// TokensPerChunk tokens).
	ITL time.Duration `yaml:"itl"`
}

// DefaultRoofline is an 8B dense bf16 model with Llama-3-8B's shape (32
// layers, 32 query heads, 8 KV heads of 128) on one H100-class accelerator
// (989 dense TFLOP/s at 50%, 3,350 GB/s at 80%): about 167 tok/s single
// stream at a short context, 132 tok/s at 32K, and ~27K tok/s prefill.
func DefaultRoofline() Roofline {
	return Roofline{
		ParamsB:         8,
		BytesPerParam:   2,
		Layers:          32,
		Heads:           32,
		KVHeads:         8,
		HeadDim:         128,
		KVBytes:         2,
		PeakTFLOPS:      989,
		MemBandwidthGBs: 3350,
		ComputeUtil:     0.5,
		MemUtil:         0.8,
		PrefillUtil:     0.5,
	}
}

// Defaults returns c with every zero field set to its default (see the
// field docs and the Default constants). It does not validate.
func Defaults(c Config) Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Timing == "" {
		c.Timing = TimingRoofline
	}
	if c.Roofline == (Roofline{}) {
		c.Roofline = DefaultRoofline()
	} else {
		r := &c.Roofline
		if r.BytesPerParam == 0 {
			r.BytesPerParam = 2
		}
		if r.KVBytes == 0 {
			r.KVBytes = 2
		}
		if r.KVHeads == 0 {
			r.KVHeads = r.Heads
		}
		if r.ComputeUtil == 0 {
			r.ComputeUtil = 1
		}
		if r.MemUtil == 0 {
			r.MemUtil = 1
		}
	}
	if c.Roofline.PrefillUtil == 0 {
		c.Roofline.PrefillUtil = c.Roofline.ComputeUtil
	}
	if c.Fixed == (Fixed{}) {
		c.Fixed = Fixed{TTFT: DefaultFixedTTFT, ITL: DefaultFixedITL}
	}
	if c.MaxModelLen == 0 {
		c.MaxModelLen = DefaultMaxModelLen
	}
	if c.MaxNumSeqs == 0 {
		c.MaxNumSeqs = DefaultMaxNumSeqs
	}
	if c.KVBudgetTokens == 0 && c.MaxNumSeqs > 0 && c.MaxModelLen > 0 {
		c.KVBudgetTokens = c.MaxNumSeqs * c.MaxModelLen
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.PrefixCaching == nil {
		v := false
		c.PrefixCaching = &v
	}
	if c.TimeScale == 0 {
		c.TimeScale = DefaultTimeScale
	}
	if c.GPUMemoryUtilization == 0 {
		c.GPUMemoryUtilization = DefaultGPUMemoryUtilization
	}
	if c.Batching == "" {
		c.Batching = BatchingContinuous
	}
	if c.Metrics == "" {
		c.Metrics = MetricsVLLM
	}
	if c.MaxBatchedTokens == 0 {
		c.MaxBatchedTokens = DefaultMaxBatchedTokens
	}
	if c.TokensPerChunk == 0 {
		c.TokensPerChunk = DefaultTokensPerChunk
	}
	if c.TemplateOverheadTokens == nil {
		v := DefaultTemplateOverheadTokens
		c.TemplateOverheadTokens = &v
	}
	if c.NaturalOutputTokens == 0 {
		c.NaturalOutputTokens = DefaultNaturalOutputTokens
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.SendStamps == nil {
		v := true
		c.SendStamps = &v
	}
	return c
}

// Validate reports every invalid field of c, named by its YAML path
// ("roofline.mem_bandwidth_gbs: must be > 0 for timing roofline"). Zero
// fields are taken as their defaults, so a raw profile section validates.
func (c Config) Validate() error {
	c = Defaults(c)
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	switch c.Timing {
	case TimingRoofline, TimingFixed, TimingNone:
	default:
		bad("timing", "must be %q, %q or %q, got %q", TimingRoofline, TimingFixed, TimingNone, c.Timing)
	}
	switch c.Batching {
	case BatchingContinuous, BatchingStatic:
	default:
		bad("batching", "must be %q or %q, got %q", BatchingContinuous, BatchingStatic, c.Batching)
	}
	switch c.Metrics {
	case MetricsVLLM, MetricsSGLang:
	default:
		bad("metrics", "must be %q or %q, got %q", MetricsVLLM, MetricsSGLang, c.Metrics)
	}
	positive := func(field string, v int) {
		if v <= 0 {
			bad(field, "must be > 0, got %d", v)
		}
	}
	positive("max_model_len", c.MaxModelLen)
	positive("max_num_seqs", c.MaxNumSeqs)
	if c.KVBudgetTokens != 0 || c.MaxNumSeqs > 0 && c.MaxModelLen > 0 {
		// Unset, it is max_num_seqs × max_model_len: when those are bad,
		// the error is theirs.
		positive("kv_budget_tokens", c.KVBudgetTokens)
	}
	positive("block_size", c.BlockSize)
	positive("max_batched_tokens", c.MaxBatchedTokens)
	positive("tokens_per_chunk", c.TokensPerChunk)
	positive("natural_output_tokens", c.NaturalOutputTokens)
	if *c.TemplateOverheadTokens < 0 {
		bad("template_overhead_tokens", "must be ≥ 0, got %d", *c.TemplateOverheadTokens)
	}
	if !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1) {
		bad("gpu_memory_utilization", "must be in (0, 1], got %g", c.GPUMemoryUtilization)
	}
	if !(c.ReasoningShare >= 0 && c.ReasoningShare <= 1) {
		bad("reasoning_share", "must be in [0, 1], got %g", c.ReasoningShare)
	}
	if c.Fixed.TTFT < 0 {
		bad("fixed.ttft", "must be ≥ 0, got %s", c.Fixed.TTFT)
	}
	if c.Fixed.ITL < 0 {
		bad("fixed.itl", "must be ≥ 0, got %s", c.Fixed.ITL)
	}
	if !(c.TimeScale > 0) || math.IsInf(c.TimeScale, 0) {
		bad("time_scale", "must be > 0, got %g", c.TimeScale)
	}
	if c.OverloadAfterWaiting < 0 {
		bad("overload_after_waiting", "must be ≥ 0 (0: never), got %d", c.OverloadAfterWaiting)
	} else if c.OverloadAfterWaiting > 0 && c.Timing != TimingRoofline {
		bad("overload_after_waiting", "needs timing %q (only the engine queues), got timing %q", TimingRoofline, c.Timing)
	}
	errs = append(errs, c.RateLimits.validate()...)
	if c.Timing == TimingRoofline {
		errs = append(errs, c.Roofline.validate()...)
	}
	errs = append(errs, validateFaults(c.Faults)...)
	if c.SpecDecode != nil {
		errs = append(errs, c.SpecDecode.validate(c.Timing)...)
	}
	return errors.Join(errs...)
}

func (r Roofline) validate() []error {
	var errs []error
	const why = "for timing roofline"
	pos := func(field string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, fmt.Errorf("roofline.%s: must be > 0 %s, got %g", field, why, v))
		}
	}
	pos("params_b", r.ParamsB)
	pos("bytes_per_param", r.BytesPerParam)
	pos("layers", float64(r.Layers))
	pos("heads", float64(r.Heads))
	pos("kv_heads", float64(r.KVHeads))
	pos("head_dim", float64(r.HeadDim))
	pos("kv_bytes", r.KVBytes)
	pos("peak_tflops", r.PeakTFLOPS)
	pos("mem_bandwidth_gbs", r.MemBandwidthGBs)
	util := func(field string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("roofline.%s: must be in (0, 1], got %g", field, v))
		}
	}
	util("compute_util", r.ComputeUtil)
	util("mem_util", r.MemUtil)
	util("prefill_util", r.PrefillUtil)
	if r.StepOverhead < 0 {
		errs = append(errs, fmt.Errorf("roofline.step_overhead: must be ≥ 0, got %s", r.StepOverhead))
	}
	if r.RequestOverhead < 0 {
		errs = append(errs, fmt.Errorf("roofline.request_overhead: must be ≥ 0, got %s", r.RequestOverhead))
	}
	return errs
}

func (l RateLimits) validate() []error {
	var errs []error
	for _, b := range bucketKinds {
		if v := b.limit(l); v < 0 {
			errs = append(errs, fmt.Errorf("rate_limits.%s: must be ≥ 0 (0: no limit), got %d", b.field, v))
		}
	}
	return errs
}

// scaled is d times TimeScale.
func (c Config) scaled(d time.Duration) time.Duration { return scaleDuration(d, c.TimeScale) }

// faultClasses lists the fault classes in the order their probability bands
// are laid out on [0, 1).
var faultClasses = []string{
	FaultHTTP400, FaultHTTP429, FaultHTTP500, FaultHTTP503,
	FaultCut, FaultMalformed, FaultEmpty, FaultStall, FaultStreamError,
}

func validateFaults(f map[string]float64) []error {
	var errs []error
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sum := 0.0
	for _, k := range keys {
		p := f[k]
		known := false
		for _, c := range faultClasses {
			known = known || c == k
		}
		if !known {
			errs = append(errs, fmt.Errorf("faults.%s: unknown fault class (want one of %v)", k, faultClasses))
			continue
		}
		if !(p >= 0 && p <= 1) {
			errs = append(errs, fmt.Errorf("faults.%s: must be a probability in [0, 1], got %g", k, p))
			continue
		}
		sum += p
	}
	if sum > 1+1e-9 {
		errs = append(errs, fmt.Errorf("faults: probabilities must sum to ≤ 1, got %g", sum))
	}
	return errs
}
