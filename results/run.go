package results

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"time"

	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/record"
)

// Schema is the results file's schema id. Consumers rely on the fields
// listed in DESIGN §6; new fields may be added, none renamed.
const Schema = "sixpin/result/v1"

// Run is a results file: everything one run measured, bound to its pins.
type Run struct {
	Schema        string `json:"schema"`
	SixpinVersion string `json:"sixpin_version"`
	// StartedAt is the wall-clock time of the start of load; every offset
	// in the file (windows, series) counts from it.
	StartedAt time.Time `json:"started_at"`
	// StartUnixNS is StartedAt in Unix nanoseconds, for aligning series
	// of runs made on several machines.
	StartUnixNS int64 `json:"start_unix_ns"`
	// Incomplete is true when the run was interrupted; the figures cover
	// what was measured until then.
	Incomplete       bool   `json:"incomplete"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// StoppedEarly is set when the run stopped itself once a sequential
	// test had decided its verdict (abort_on, a capacity point): the run
	// is complete, and shorter than planned.
	StoppedEarly *StoppedEarly `json:"stopped_early,omitempty"`
	// Valid is false when a pin was violated beyond tolerance; Invalid
	// lists why.
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// AllowPinMismatch names the pins whose contradiction the user
	// accepted (`--allow-pin-mismatch`): ✗ on the card, not invalid.
	AllowPinMismatch []string `json:"allow_pin_mismatch,omitempty"`

	Scenario ScenarioInfo `json:"scenario"`
	Target   TargetInfo   `json:"target"`
	Pins     Pins         `json:"pins"`
	// Discovery is everything the server said about itself, with sources.
	Discovery *record.Discovery `json:"discovery,omitempty"`
	// Windows holds warmup, burst, steady and all; Headline names the
	// window the summary leads with (steady).
	Windows  map[string]*Window `json:"windows"`
	Headline string             `json:"headline_window"`
	Errors   Errors             `json:"errors"`
	Schedule *Schedule          `json:"schedule,omitempty"`
	// ClientAddedLatencyMs is receive time − the server's send stamp per
	// chunk, when the server stamps chunks: sixpin's own added latency.
	ClientAddedLatencyMs *Dist  `json:"client_added_latency_ms,omitempty"`
	Series               Series `json:"series"`
	// Cost is filled when the profile declares pricing or a power draw,
	// RateLimits when it declares limits or the server refused requests
	// with 429 (nil otherwise).
	Cost       *Cost            `json:"cost"`
	RateLimits *RateLimitReport `json:"rate_limits"`
	// Tokens totals the server's usage; Sessions summarises agentic
	// sessions; ByContext is per-request speed by context depth.
	Tokens    Tokens          `json:"tokens"`
	Sessions  *Sessions       `json:"sessions,omitempty"`
	ByContext []ContextBucket `json:"by_context"`
	// Parity is the evidence that the run sent the workload another tool
	// sends: planned and served token totals and the digest of the
	// planned sequence (nil in files from before it was recorded).
	Parity *Parity `json:"parity,omitempty"`
	// Peers are the run's figures as other benchmarks define them, over
	// every request (nil in files from before they were recorded, and in
	// a merge of shards one of which has none).
	Peers *Peers `json:"peer_figures,omitempty"`
	// Histograms are window → metric → encoded HDR histogram.
	Histograms map[string]map[string]EncodedHistogram `json:"histograms"`
	Client     ClientInfo                             `json:"client"`
	// Server is the server's own metrics scraped during the run (nil: not
	// scraped: --server-metrics off, or no Prometheus endpoint answered).
	Server *Server `json:"server,omitempty"`
	// KVFit is the KV-fit preflight made before load: whether the
	// planned concurrency fits the server's KV cache (nil: no budget
	// known).
	KVFit *KVFit `json:"kv_fit,omitempty"`
	// Calibration is sixpin's own floor, measured before the run
	// (`--calibrate`; nil without it).
	Calibration *Calibration `json:"calibration,omitempty"`
	// Compressed says how compressed time (--time-scale) distorted the
	// figures (nil: the run was in real time).
	Compressed *Compressed `json:"compressed,omitempty"`
	// RequestIDs says how the requests' X-Request-Id went.
	RequestIDs *RequestIDs `json:"request_ids,omitempty"`
	// Shard is this run's shard identity (`sixpin run --shard I/N`; nil
	// for a run of the whole plan); Merged the attestation of a run that
	// `sixpin merge` made of shards.
	Shard  *ShardInfo   `json:"shard,omitempty"`
	Merged *Attestation `json:"merged,omitempty"`
	// ContentCheck is `run --content-check`'s slices, one per content
	// class, and whether the run is content-sensitive (nil: not checked).
	ContentCheck *ContentCheck `json:"content_check,omitempty"`
	// Notes are caveats a reader must see beside the figures.
	Notes []string `json:"notes,omitempty"`
}

// RequestIDs is how the run's X-Request-Id headers went: every request
// was sent with PREFIX-N (N from 1, in the order the requests were
// sent), so that server logs and traces can be joined with the run.
type RequestIDs struct {
	Prefix string `json:"prefix"`
	// Sent counts the requests that carried an id; Echoed those whose
	// answer carried it back, Mismatched those whose answer carried
	// another (a proxy that replaces it).
	Sent       int `json:"sent"`
	Echoed     int `json:"echoed"`
	Mismatched int `json:"mismatched"`
}

// Count adds one record's id.
func (r *RequestIDs) Count(rec *record.Record) {
	if rec.RequestID == "" {
		return
	}
	r.Sent++
	switch rec.IDEcho {
	case record.IDEchoed:
		r.Echoed++
	case record.IDMismatch:
		r.Mismatched++
	}
}

// ScenarioInfo identifies the scenario a run replayed.
type ScenarioInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Path        string `json:"path"`
	SHA256      string `json:"sha256"`
	Seed        int64  `json:"seed"`
	// PromptSalt salted every prompt text of the run (16 hex digits): the
	// same seed and salt send the same bytes (`--prompt-salt` reuses it).
	PromptSalt string `json:"prompt_salt,omitempty"`
	// SessionsStart is how agentic sessions started (workload.start,
	// which a capacity search sets): "stationary" when the sessions
	// running at the start joined mid-life; "" when they started fresh.
	SessionsStart string `json:"sessions_start,omitempty"`
	// Duration and Requests are the run's bounds (after CLI overrides).
	DurationS float64 `json:"duration_s,omitempty"`
	Requests  int     `json:"requests,omitempty"`
	Windows   struct {
		WarmupS float64 `json:"warmup_s"`
		BurstS  float64 `json:"burst_s"`
		Steady  string  `json:"steady"`
	} `json:"windows"`
	SLO struct {
		TTFTMs             float64 `json:"ttft_ms,omitempty"`
		TPOTMs             float64 `json:"tpot_ms,omitempty"`
		E2EMs              float64 `json:"e2e_ms,omitempty"`
		MaxErrorRate       float64 `json:"max_error_rate,omitempty"`
		MaxDegenerateShare float64 `json:"max_degenerate_share,omitempty"`
	} `json:"slo"`
}

// TargetInfo describes the endpoint. It never holds an API key: only the
// name of the environment variable it came from and whether it was set.
type TargetInfo struct {
	Endpoint  string `json:"endpoint"`
	Profile   string `json:"profile"`
	Model     string `json:"model"`
	Simulated bool   `json:"simulated"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	APIKeySet bool   `json:"api_key_set"`
	// OutputControl is how the output pin was enforced (ignore_eos,
	// min_tokens, or none).
	OutputControl string `json:"output_control"`
	// Protocol is the API the endpoint was spoken to in: chat, messages,
	// responses or completions (empty in files from before it was
	// recorded: chat).
	Protocol string `json:"protocol,omitempty"`
	// HTTP is the HTTP the profile asked for over TLS: "1.1" or "2"
	// (empty in files from before it was recorded: 2); what was spoken
	// is ClientInfo.Wire.
	HTTP string `json:"http,omitempty"`
	// TemplateOverheadTokens is what the chat template added to the prompt,
	// measured by a probe request and subtracted from every prompt.
	TemplateOverheadTokens int `json:"template_overhead_tokens"`
}

// Schedule reports open-loop pacing: the target and achieved arrival rate
// and whether the client fell behind (coordinated omission avoided by
// measuring from the scheduled start; the lag shows the cost).
type Schedule struct {
	// TargetRateRPS is the declared rate; ScheduledRateRPS the rate of the
	// arrivals the plan drew; AchievedRateRPS the rate the client sent at.
	TargetRateRPS    float64 `json:"target_rate_rps"`
	ScheduledRateRPS float64 `json:"scheduled_rate_rps"`
	AchievedRateRPS  float64 `json:"achieved_rate_rps"`
	Requests         int     `json:"requests"`
	LagMs            *Dist   `json:"lag_ms"`
	Behind           bool    `json:"behind"`
	Note             string  `json:"note,omitempty"`
}

// ClientInfo is about the machine and process that generated the load.
type ClientInfo struct {
	GoVersion   string  `json:"go_version"`
	OS          string  `json:"os"`
	CPUs        int     `json:"cpus"`
	MaxRSSBytes int64   `json:"max_rss_bytes"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	// Connections is how many TCP connections the client opened to the
	// endpoint (the probe's included).
	Connections int64 `json:"connections,omitempty"`
	// Wire is the HTTP the first answer came over, as negotiated:
	// "HTTP/1.1", "HTTP/1.1 over TLS 1.3", "HTTP/2.0 over TLS 1.3"
	// (empty: no answer, or a file from before it was recorded).
	Wire string `json:"wire,omitempty"`
	// EventLoopStreams is how many answers were read on the client's
	// event loop (Linux, plain HTTP/1.1, answers the server paces: one
	// thread reads every such stream's socket), the others on a
	// goroutine each; absent when none was, or in a file from before.
	EventLoopStreams int64 `json:"event_loop_streams,omitempty"`
	// KeepAliveOff is set when the client stopped reusing connections
	// because the server hangs up on kept-alive ones without saying so.
	KeepAliveOff *KeepAliveOff `json:"keep_alive_off,omitempty"`
}

// KeepAliveOff says when (seconds from the run start; negative: before
// load, by the probe) and why the client began opening a connection per
// request.
type KeepAliveOff struct {
	AtS    float64 `json:"at_s"`
	Reason string  `json:"reason"`
}

// WriteFile writes run to path atomically: a temporary file in the same
// directory, synced, then renamed over path. A reader never sees half a
// file, and a crash leaves the old file (if any) intact.
func WriteFile(path string, run *Run) error { return writeJSON(path, run) }

// writeJSON writes v as indented JSON to path atomically.
func writeJSON(path string, v any) error {
	return atomicfile.WriteJSON(path, "results", v)
}

// ReadFile reads a results file and checks that sixpin wrote it whole
// (see Read).
func ReadFile(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return Read(path, data)
}

// Read decodes a results file's data (name is used in errors) and checks
// that sixpin wrote it whole: the schema, every window, a headline window
// that exists, counts that are not negative and agree with each other,
// series of one length, and histograms that decode and count what their
// window's summary counts. A file that fails is refused with a
// fielderr.List, each problem at file:line:col and its field. An optional
// part that is missing (no histograms at all, no series) adds a note to
// the run's Notes, so reports say what they cannot show. A set file is
// refused (ReadSet reads it).
func Read(name string, data []byte) (*Run, error) {
	c := newCheck(name, data)
	if SchemaOf(data) == SetSchema {
		c.at([]string{"schema"}, "a set of runs (%s), not one run: give its runs' own results files", SetSchema)
		return nil, *c.errs
	}
	var run Run
	if err := json.Unmarshal(data, &run); err != nil {
		c.decodeError(err, reflect.TypeFor[Run]())
		return nil, *c.errs
	}
	c.check(&run)
	return &run, c.result()
}

// result is the check's errors, sorted, or nil.
func (c *fileCheck) result() error {
	if len(*c.errs) == 0 {
		return nil
	}
	c.errs.Sort()
	return *c.errs
}

// SchemaOf is the schema a results or set file's data declares at its
// top ("" when it declares none or is not a JSON object).
func SchemaOf(data []byte) string {
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(data, &head) != nil {
		return ""
	}
	return head.Schema
}

// SetSchema is the schema of a file of several runs of one scenario.
const SetSchema = "sixpin/set/v1"

// Set kinds.
const (
	SetSweep   = "sweep"
	SetRepeat  = "repeat"
	SetBakeoff = "bakeoff"
)

// Set is several runs of one scenario, in one file: the points of a sweep
// (one pin varied, the other five held), repeats (the same pins, seeds
// seed, seed+1, …), or a bake-off (the same scenario against several
// profiles).
type Set struct {
	Schema   string `json:"schema"`
	Kind     string `json:"kind"`
	Scenario string `json:"scenario"`
	// Pin and Values are the sweep's (kind sweep).
	Pin    string    `json:"pin,omitempty"`
	Values []float64 `json:"values,omitempty"`
	// Profiles are the bake-off's, in run order; Gates their declared
	// intelligence gate ("pass", "fail"; absent: not declared).
	Profiles []string          `json:"profiles,omitempty"`
	Gates    map[string]string `json:"intelligence_gates,omitempty"`
	// Incomplete is true when the set was interrupted: IncompleteReason
	// says how far it got, Partial names its members cut short (each also
	// marked incomplete), Missing those never run ("concurrency.streams =
	// 16", "run 3 (seed 44)", "profile vllm").
	Incomplete       bool     `json:"incomplete"`
	IncompleteReason string   `json:"incomplete_reason,omitempty"`
	Partial          []string `json:"partial,omitempty"`
	Missing          []string `json:"missing,omitempty"`
	Runs             []*Run   `json:"runs"`
}

// WriteSetFile writes set to path atomically.
func WriteSetFile(path string, set *Set) error { return writeJSON(path, set) }

// ReadSetFile reads a set file and checks it as ReadSet does.
func ReadSetFile(path string) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read set: %w", err)
	}
	return ReadSet(path, data)
}

// ReadSet decodes a set file's data (name is used in errors) and checks
// that sixpin wrote it whole: its schema and kind, a label per run (a
// sweep's values, a bake-off's profiles), and every run as Read checks a
// results file, each problem at file:line:col and its field under
// runs[i]. A results file of one run is refused (Read reads it).
func ReadSet(name string, data []byte) (*Set, error) {
	c := newCheck(name, data)
	if s := SchemaOf(data); s == Schema {
		c.at([]string{"schema"}, "one run (%s), not a set of runs", Schema)
		return nil, *c.errs
	}
	var set Set
	if err := json.Unmarshal(data, &set); err != nil {
		c.decodeError(err, reflect.TypeFor[Set]())
		return nil, *c.errs
	}
	c.checkSet(&set)
	return &set, c.result()
}

// ReadAnyFile reads a results file or a set file, whichever path holds,
// with the same checks as ReadFile and ReadSetFile: one of run and set is
// set.
func ReadAnyFile(path string) (run *Run, set *Set, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read results: %w", err)
	}
	if SchemaOf(data) == SetSchema {
		set, err = ReadSet(path, data)
		return nil, set, err
	}
	run, err = Read(path, data)
	return run, nil, err
}
