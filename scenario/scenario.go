// Package scenario is sixpin's workload description: the six pins and the
// Plan they imply.
//
// It holds the YAML schema with the six pins, strict loading with file:line:col errors, validation, seeded
// distributions, the Plan (the materialised, reproducible list of requests
// and arrival times) and the declared pins it implies (Plan.Declared).
package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/trace"
)

// Scenario is one benchmark workload as declared in YAML. Load fills it,
// applies defaults and validates it; a Scenario returned by Load is complete.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Seed drives every random choice of the Plan. Same seed, same plan.
	// Parse defaults an absent seed to 1; a written 0 is kept.
	Seed int64 `yaml:"seed"`
	Pins Pins  `yaml:"pins"`
	// Duration bounds the run in wall time (issuing stops after it); zero
	// means unbounded in time (then Requests must be set).
	Duration Duration `yaml:"duration"`
	// Requests bounds the run by a request count; zero means unbounded
	// (then Duration must be set). When both are set, whichever comes first.
	Requests int `yaml:"requests"`
	// RequestTimeout bounds one request from send to last byte (default 10m).
	RequestTimeout Duration `yaml:"request_timeout"`
	// Workload is the kind of traffic: independent requests (default) or
	// agentic sessions.
	Workload Workload `yaml:"workload"`
	Windows  Windows  `yaml:"windows"`
	SLO      SLO      `yaml:"slo"`
	// AbortOn is a tier the run must keep: the run stops as soon as one
	// of its conditions is decided broken at 95% confidence (package
	// verdict parses and judges it; empty: never).
	AbortOn Conditions `yaml:"abort_on"`
	// Target optionally names where to run; CLI flags override it.
	Target Target `yaml:"target"`
	// Sweep runs the scenario once per value of one pin, the other five
	// held (nil: a single run).
	Sweep *Sweep `yaml:"sweep"`

	// Path is the file the scenario was read from (not YAML).
	Path string `yaml:"-"`
	// SHA256 is the hex digest of the file's bytes (not YAML).
	SHA256 string `yaml:"-"`
	// Warnings are non-fatal findings of validation (e.g. more closed-loop
	// streams than the declared max_num_seqs), positioned like errors when
	// the scenario came from a file (not YAML).
	Warnings []*FieldError `yaml:"-"`
}

// Pins are the six parameters every figure is bound to (DESIGN §1).
type Pins struct {
	Model       ModelPin       `yaml:"model"`
	Prompt      PromptPin      `yaml:"prompt"`
	Output      OutputPin      `yaml:"output"`
	Concurrency ConcurrencyPin `yaml:"concurrency"`
	KVCache     KVCachePin     `yaml:"kv_cache"`
	Mix         MixPin         `yaml:"mix"`
}

// ModelPin is pin 1: which model, and how big.
type ModelPin struct {
	Name string `yaml:"name"`
	// ParamsB is the total parameter count in billions.
	ParamsB float64 `yaml:"params_b"`
	// ActiveParamsB is the active parameter count in billions (MoE); zero
	// means dense (= ParamsB).
	ActiveParamsB float64 `yaml:"active_params_b"`
	Dtype         string  `yaml:"dtype"`
}

// PromptPin is pin 2: prompt length in tokens.
type PromptPin struct {
	Tokens Dist `yaml:"tokens"`
	// SharedPrefixTokens is how many leading tokens requests share, so that
	// a server's prefix cache can serve them (0: every prompt is unique
	// from its first token). Top-level pin only.
	SharedPrefixTokens int `yaml:"shared_prefix_tokens"`
	// PrefixGroups is how many distinct shared prefixes there are; each
	// request draws one (default 1 when SharedPrefixTokens is set).
	PrefixGroups int `yaml:"prefix_groups"`
	// TolerancePct is the allowed drift of the server's prompt count from
	// the pinned length, per request, in percent (default 2; at least one
	// token). Beyond it the run is invalid. Top-level pin only.
	TolerancePct *float64 `yaml:"tolerance_pct"`
	// Content is the class of the prompts' text: one of ContentClasses
	// or ContentFromLogs, or weights over them drawn per request (nil: a
	// mix class inherits the top-level one, which defaults to
	// ContentProse). Independent requests only (workload kind requests).
	Content Content `yaml:"content"`
	// Logs is the agent logs the from-logs content is built from (Claude
	// Code transcripts or Codex rollouts: a .jsonl file or a directory of
	// them), relative to the scenario file unless absolute; required with
	// from-logs and only with it (Scenario.LogsPath). Top-level pin only.
	Logs string `yaml:"logs"`
}

// DefaultPromptTolerancePct and DefaultOutputTolerancePct are the drift
// tolerances when a scenario sets none.
const (
	DefaultPromptTolerancePct = 2.0
	DefaultOutputTolerancePct = 10.0
)

// PromptTolerancePct returns the prompt drift tolerance in percent.
func (p PromptPin) PromptTolerancePct() float64 {
	if p.TolerancePct != nil {
		return *p.TolerancePct
	}
	return DefaultPromptTolerancePct
}

// OutputPin is pin 3: output length in tokens.
type OutputPin struct {
	Tokens Dist `yaml:"tokens"`
	// Exact asks the endpoint not to stop early (ignore_eos/min_tokens);
	// every request must then get exactly its pinned length.
	Exact bool `yaml:"exact"`
	// TolerancePct is, when not exact, the allowed drift of the mean output
	// length from the mean pinned length, in percent (default 10). Beyond
	// it the run is invalid. Top-level pin only.
	TolerancePct *float64 `yaml:"tolerance_pct"`
}

// OutputTolerancePct returns the output drift tolerance in percent (0
// when exact).
func (o OutputPin) OutputTolerancePct() float64 {
	switch {
	case o.Exact:
		return 0
	case o.TolerancePct != nil:
		return *o.TolerancePct
	}
	return DefaultOutputTolerancePct
}

// Mode is how load is issued: one vocabulary for the concurrency pin
// (pins.concurrency.mode, and the declared pin's "mode" in a results
// file) and for what a plan's units are (Plan.Mode). A scenario declares
// closed or open; Load sets trace for a trace replay; sessions is a
// plan's alone — an agentic workload declares closed, its streams being
// sessions (ConcurrencyDeclared.Sessions).
type Mode string

// Modes. Unit i of a plan is request i (ModeClosed, ModeOpen), agentic
// session i (ModeSessions) or trace session i (ModeTrace); a shard of the
// plan executes the units Unit(0), Unit(1), … (see Plan.Shard).
const (
	// ModeClosed keeps Streams requests in flight: each of Streams
	// workers issues the next unit when its last one ends.
	ModeClosed Mode = "closed"
	// ModeOpen issues request i at arrival i of Arrivals, whatever is in
	// flight (at most MaxInFlight when set).
	ModeOpen Mode = "open"
	// ModeSessions plays agentic sessions, Streams at a time.
	ModeSessions Mode = "sessions"
	// ModeTrace replays a trace's sessions, each at its recorded start:
	// the trace's own concurrency.
	ModeTrace Mode = "trace"
)

// Arrival processes.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
	ArrivalGamma    = "gamma"
)

// ConcurrencyPin is pin 4: closed loop (Streams always in flight) or open
// loop (arrivals at Rate requests/s).
type ConcurrencyPin struct {
	Mode    Mode `yaml:"mode"`
	Streams int  `yaml:"streams"`
	// Rate is the open-loop arrival rate in requests per second.
	Rate float64 `yaml:"rate"`
	// Arrival is the open-loop inter-arrival process (default poisson).
	Arrival string `yaml:"arrival"`
	// Burstiness is the gamma shape factor: 1 is Poisson, < 1 burstier,
	// > 1 more regular. Only for arrival: gamma (default 1).
	Burstiness float64 `yaml:"burstiness"`
	// MaxInFlight caps open-loop requests in flight; zero means no cap.
	MaxInFlight int `yaml:"max_in_flight"`
	// Queueing is QueueingAllowed when the scenario studies a server that
	// queues part of what it is sent (a queueing study): a server that
	// served less concurrency than the client kept in flight is then
	// reported, not a broken pin. Empty: the server must serve what it is
	// sent.
	Queueing string `yaml:"queueing"`
}

// QueueingAllowed is ConcurrencyPin.Queueing's one value.
const QueueingAllowed = "allowed"

// KVCachePin is pin 5: the server's KV-cache budget as declared. sixpin
// cannot set it; it records it, checks it for consistency, and verifies it
// against discovery where the server exposes it. As written, it is also
// its declared side in a results file (Declared.KVCache).
type KVCachePin struct {
	MaxModelLen          int     `yaml:"max_model_len" json:"max_model_len,omitempty"`
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization" json:"gpu_memory_utilization,omitempty"`
	MaxNumSeqs           int     `yaml:"max_num_seqs" json:"max_num_seqs,omitempty"`
	// Batching is "continuous" or "static"; empty means undeclared.
	Batching string `yaml:"batching" json:"batching,omitempty"`
	// PrefixCaching is nil when undeclared.
	PrefixCaching *bool `yaml:"prefix_caching" json:"prefix_caching,omitempty"`
}

// MixPin is pin 6: the prefill/decode mix, as one request class (the
// top-level prompt and output pins) or weighted classes.
type MixPin struct {
	// InputOutputRatio is the declared expected prompt:output token ratio
	// (mean prompt / mean output); zero means derive it from the pins.
	InputOutputRatio float64 `yaml:"input_output_ratio"`
	Classes          []Class `yaml:"classes"`
}

// Class is one request class of a mix. A class without its own prompt or
// output pin inherits the top-level one.
type Class struct {
	Name   string     `yaml:"name"`
	Weight float64    `yaml:"weight"`
	Prompt *PromptPin `yaml:"prompt"`
	Output *OutputPin `yaml:"output"`
}

// Windows declares how the timeline is cut (DESIGN §3). All offsets are
// from the start of load.
type Windows struct {
	// Warmup is excluded from headline figures (default 0).
	Warmup Duration `yaml:"warmup"`
	// Burst is the length of the burst window at the start of load
	// (default 10s).
	Burst Duration `yaml:"burst"`
	// Steady is "auto" (MSER-5 trims the start) or explicit bounds.
	Steady Steady `yaml:"steady"`
}

// Steady is the steady-state window: Auto, or [Start, End) offsets from the
// start of load. A zero End means "to the last scheduled arrival".
//
// In YAML it is the string "auto" or a mapping {start: D, end: D} of Go
// duration strings; an absent steady means auto.
type Steady struct {
	Auto  bool          `yaml:"-"`
	Start time.Duration `yaml:"start"`
	End   time.Duration `yaml:"end"`
}

// SLO bounds a "good" request for goodput. Zero fields are not checked.
type SLO struct {
	TTFTMs float64 `yaml:"ttft_ms"`
	TPOTMs float64 `yaml:"tpot_ms"`
	E2EMs  float64 `yaml:"e2e_ms"`
	// MaxErrorRate is the error budget as a fraction (0.01 = 1%); a run
	// whose error rate exceeds it fails (exit 1). Zero means no budget.
	MaxErrorRate float64 `yaml:"max_error_rate"`
	// MaxDegenerateShare bounds the share of the sampled answers that may
	// be degenerate (one phrase looping over half of it or more) before
	// the run is invalid: a drafter guesses repeated text best, so such a
	// run measures the drafter (0: the default, 10%).
	MaxDegenerateShare float64 `yaml:"max_degenerate_share"`
}

// Sweepable pins.
const (
	SweepStreams      = "concurrency.streams"
	SweepRate         = "concurrency.rate"
	SweepPromptTokens = "prompt.tokens"
	SweepOutputTokens = "output.tokens"
)

// Sweep is one pin and the values it takes, one run each. Sweeping one pin
// at a time keeps every figure attributable to it.
type Sweep struct {
	Pin    string    `yaml:"pin"`
	Values []float64 `yaml:"values"`
}

// At returns a copy of s with the swept pin set to v and no sweep, named
// after the point ("chat-8k-c16@concurrency.streams=8").
func (s *Scenario) At(v float64) *Scenario {
	c := *s
	c.Sweep = nil
	c.Pins = s.Pins
	switch s.Sweep.Pin {
	case SweepStreams:
		c.Pins.Concurrency.Streams = int(v)
	case SweepRate:
		c.Pins.Concurrency.Rate = v
	case SweepPromptTokens:
		c.Pins.Prompt.Tokens = Fixed(v)
		c.Pins.Mix.InputOutputRatio = 0
	case SweepOutputTokens:
		c.Pins.Output.Tokens = Fixed(v)
		c.Pins.Mix.InputOutputRatio = 0
	}
	c.Name = fmt.Sprintf("%s@%s=%s", s.Name, s.Sweep.Pin, strconv.FormatFloat(v, 'f', -1, 64))
	return &c
}

// Workload kinds.
const (
	WorkloadRequests = "requests"
	WorkloadAgentic  = "agentic"
	WorkloadTrace    = "trace"
)

// On-429 policies of agentic sessions.
const (
	On429Backoff      = "backoff"
	On429AbortSession = "abort-session"
	On429CountOnly    = "count-only"
)

// How agentic sessions start (Workload.Start).
const (
	// StartFresh: every session starts at its first turn, so a run's
	// contexts deepen from the first prompt as it goes (a ramp).
	StartFresh = "fresh"
	// StartStationary: the sessions running when load starts each join
	// at a turn drawn uniformly from its life, their history sent cold,
	// so the run's contexts are as deep from the start as a long run's
	// (the sessions that follow start fresh).
	StartStationary = "stationary"
)

// Workload says what the traffic is. For kind agentic, a session is a loop
// of turns: each turn re-sends the whole history (the first prompt, then
// every answer and tool result so far, byte-identical, so a server's prefix
// cache can hit) plus the new tool result, and the session waits a think
// time (the tool's execution, excluded from every model-time metric)
// before the next turn. pins.prompt is then the first turn's prompt,
// pins.output each turn's output, and pins.concurrency.streams the number
// of concurrent sessions.
//
// Its methods take a pointer: a Workload is over 500 bytes, and a method
// on the value copies it into the caller's frame, inlined or not — one
// such call per request made the runner's request frame 2 KiB, on every
// stream's stack.
type Workload struct {
	// Kind is "requests" (default) or "agentic".
	Kind string `yaml:"kind"`
	// Sessions bounds the run by a number of sessions (0: unbounded; the
	// run's duration or request count then ends it).
	Sessions int `yaml:"sessions"`
	// Turns is how many turns a session takes at most.
	Turns Dist `yaml:"turns"`
	// GrowthTokens is the tool result each turn after the first adds to
	// the history, in tokens.
	GrowthTokens Dist `yaml:"growth_tokens"`
	// ThinkSeconds is the wait between a turn's answer and the next turn,
	// in seconds.
	ThinkSeconds Dist `yaml:"think_seconds"`
	// MaxContextTokens ends a session when its next prompt plus output
	// would exceed it (default: pins.kv_cache.max_model_len; a server's
	// context-length error ends it too).
	MaxContextTokens int `yaml:"max_context_tokens"`
	// CostCapUSD ends a session once it has cost more (needs the
	// profile's pricing; 0: no cap).
	CostCapUSD float64 `yaml:"cost_cap_usd"`
	// On429 is what a session does when rate limited: backoff (retry
	// after Retry-After or a jittered exponential backoff; default),
	// abort-session, or count-only (record it and go on to the next turn).
	On429 string `yaml:"on_429"`
	// MaxRetries bounds backoff retries of one turn (default 5).
	MaxRetries int `yaml:"max_retries"`
	// Start is how the sessions running at the start of load begin:
	// fresh (at their first turn; "" is fresh for a run) or stationary
	// (each at a random phase of its life). A capacity search starts
	// agentic points stationary unless the scenario says fresh.
	Start string `yaml:"start"`
	// SessionAffinity, when set, sends every request of a session
	// (agentic or a trace's) with headers naming the session, so that a
	// router can keep a session on one replica (nil: off; an MLPerf
	// replay sends X-Session-ID regardless, Plan.Affinity). It changes
	// what a router does, so the pin card shows it.
	SessionAffinity *SessionAffinity `yaml:"session_affinity"`

	// File is the trace to replay (kind trace): sixpin's JSONL, Mooncake's
	// JSONL, Azure's CSV, a Weka agentic trace's JSON or (format
	// mlperf-agentic) MLPerf's agentic dataset; relative to the scenario
	// file.
	File string `yaml:"file"`
	// TimeScale stretches the trace's arrivals and think times (0.5:
	// twice as fast; default 1).
	TimeScale float64 `yaml:"time_scale"`
	// Format names a trace format that is not detected: "mlperf-agentic"
	// (MLPerf's agentic inference dataset: real conversations, one row per
	// message, replayed with their tools, tool calls, tool results,
	// reasoning and delays). Empty: sixpin's JSONL, Mooncake's, Azure's or
	// Weka's, detected.
	Format string `yaml:"format"`
	// SHA256 is the hex SHA-256 File must have (format mlperf-agentic): a
	// different file is refused before load, naming both digests.
	SHA256 string `yaml:"sha256"`
	// PreserveReasoning says whether later turns re-send the reasoning of
	// earlier answers in their history (reasoning_content, with
	// chat_template_kwargs.preserve_thinking, so the server's chat
	// template keeps it too). Default false for kind agentic and sixpin's
	// own trace replays (what sixpin always did); true for format
	// mlperf-agentic, whose rules require it.
	PreserveReasoning *bool `yaml:"preserve_reasoning"`
	// MLPerf is the MLPerf agentic dataset File holds (format
	// mlperf-agentic), read by Load (not YAML); Trace is then its token
	// counts.
	MLPerf *trace.MLPerfAgentic `yaml:"-"`
	// Trace is the trace File holds, opened by Load (not YAML): checked
	// and summarised, its sessions read again as a replay wants them
	// (trace.File).
	Trace *trace.File `yaml:"-"`
	// readErr is why File could not be read.
	readErr error
}

// DefaultAffinityHeader is the session header sent when
// workload.session_affinity names none: the one MLPerf's agentic rules
// require on every request and vLLM's Rust router hashes first
// (vllm-project/router src/policies/hash_key.rs, SESSION_HEADER_NAMES, at
// 335c57e2ee621d7984ed645c9d23e871cd34331a).
const DefaultAffinityHeader = "X-Session-ID"

// SessionAffinity names the headers that carry a session's id. Every
// request of a session carries each of them with the same value, the
// session's id (Session.ID, TraceSession.ID); requests of different
// sessions carry different ones. Routers read different names: MLPerf's
// agentic rules and vLLM's Rust router (policy consistent_hash) read
// X-Session-ID; vLLM production-stack's router (--routing-logic session)
// reads the header its --session-key names (routing_logic.py,
// SessionRouter, at 5ae0b10828491c579173ae41a17a33901c3dd7b4). llm-d's
// session-affinity scorer needs no client id: it answers with an
// x-session-token of its own, the pod it chose, for the client to send
// back (llm-d-inference-scheduler pkg/plugins/scorer/session_affinity.go
// at d5cbb3224910773dfdc9ccd3976aa789990fe78f): Echo does that.
type SessionAffinity struct {
	// Headers are the header names (default [X-Session-ID] unless
	// written, even empty); at most MaxAffinityHeaders, none that sixpin
	// sets itself.
	Headers []string `yaml:"headers"`
	// Echo are response headers a session sends back: once an answer
	// carries one, every later request of the session carries its last
	// value under the same name (llm-d: [x-session-token]).
	Echo []string `yaml:"echo"`
}

// MaxAffinityHeaders bounds workload.session_affinity.headers.
const MaxAffinityHeaders = 8

// Replay reports whether the workload replays a trace.
func (w *Workload) Replay() bool { return w.Kind == WorkloadTrace }

// FormatMLPerfAgentic is workload.format for MLPerf's agentic dataset.
const FormatMLPerfAgentic = trace.FormatMLPerfAgentic

// MLPerfReplay reports whether the workload replays MLPerf's agentic
// dataset.
func (w *Workload) MLPerfReplay() bool { return w.Replay() && w.Format == FormatMLPerfAgentic }

// KeepsReasoning reports whether later turns re-send earlier answers'
// reasoning (PreserveReasoning, or its default).
func (w *Workload) KeepsReasoning() bool {
	if w.PreserveReasoning != nil {
		return *w.PreserveReasoning
	}
	return w.MLPerfReplay()
}

// Agentic reports whether the workload is agentic sessions.
func (w *Workload) Agentic() bool { return w.Kind == WorkloadAgentic }

// Stationary reports whether agentic sessions start at random phases of
// their lives (Start).
func (w *Workload) Stationary() bool { return w.Agentic() && w.Start == StartStationary }

// Target optionally names the endpoint in the scenario itself.
type Target struct {
	Profile  string `yaml:"profile"`
	Endpoint string `yaml:"endpoint"`
	Model    string `yaml:"model"`
}

// Duration is a time.Duration that reads from YAML as a Go duration string
// ("30s", "5m", "1h30m"; a bare number is an error, except 0) and writes
// as one, in YAML and JSON.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// YAMLDuration marks Duration for the strict decoder (strictyaml.Durationer).
func (Duration) YAMLDuration() {}

// String formats d like time.Duration without trailing zero units: "30s",
// "5m", "1h30m", "1.5s".
func (d Duration) String() string { return shortDur(time.Duration(d)) }

// shortDur formats d like time.Duration.String without trailing zero units.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalText encodes d as a Go duration string, so Duration reads back the
// same way from YAML and JSON.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a Go duration string ("30s", "5m"). It is used by
// plain yaml.v3 or encoding/json decoding; Load has its own, stricter path.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
