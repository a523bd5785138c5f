package scenario

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/trace"
)

// Declared is the declared side of all six pins (DESIGN §1), as data: what
// `sixpin validate` describes, what a results file records under
// pins.<pin>.declared, what the pin card and `compare` read. Plan.Declared
// builds it once, from the scenario and its plan; the JSON tags are the
// results file's.
type Declared struct {
	Model       ModelDeclared       `json:"model"`
	Prompt      TokensDeclared      `json:"prompt"`
	Output      OutputDeclared      `json:"output"`
	Concurrency ConcurrencyDeclared `json:"concurrency"`
	KVCache     KVCachePin          `json:"kv_cache"`
	Mix         MixDeclared         `json:"mix"`
	// CachePlanned is true when the scenario means prompts to share a
	// prefix (shared_prefix_tokens, agentic history, a trace replay), so
	// prefix-cache hits are expected.
	CachePlanned bool `json:"cache_planned,omitempty"`
}

// ModelDeclared is pin 1 as declared; Requested is the id sent on the wire
// ("" before a target is resolved).
type ModelDeclared struct {
	Name          string  `json:"name"`
	ParamsB       float64 `json:"params_b,omitempty"`
	ActiveParamsB float64 `json:"active_params_b,omitempty"`
	Dtype         string  `json:"dtype,omitempty"`
	Requested     string  `json:"requested"`
}

// TokensDeclared is a token-count pin as declared: the distribution as
// written (Dist.String, or where the lengths come from), its bounds and
// the plan's mean, in tokens.
type TokensDeclared struct {
	Dist string  `json:"dist"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	// TolerancePct is the drift allowed before the run is invalid.
	TolerancePct float64 `json:"tolerance_pct"`
	// Content is the class of the prompts' text (prompt pin only): one of
	// ContentClasses, or each class's share of a mix whose classes differ
	// ("code 70%, prose 30%"); empty for agentic sessions, trace replays
	// and results files from before the pin.
	Content string `json:"content,omitempty"`
	// Tokenizer is whose count the prompts were built to (prompt pin only;
	// "" before a target is resolved).
	Tokenizer string `json:"tokenizer,omitempty"`
	// Unpinned, when not empty, says why the lengths are not pinned per
	// request (a replayed dataset's own texts; the model's own answers):
	// they are reported, not checked against the requested ones.
	Unpinned string `json:"unpinned,omitempty"`
	// PreserveReasoning is whether a session's later prompts re-send its
	// earlier answers' reasoning (prompt pin of agentic sessions and
	// trace replays only; nil otherwise).
	PreserveReasoning *bool `json:"preserve_reasoning,omitempty"`
}

// OutputDeclared is pin 3 as declared, with how it is enforced.
type OutputDeclared struct {
	TokensDeclared
	Exact bool `json:"exact"`
	// Control is the endpoint's don't-stop-early control in use
	// (ignore_eos, min_tokens, or none; "" before a target is resolved).
	Control string `json:"control"`
}

// ConcurrencyDeclared is pin 4 as declared.
type ConcurrencyDeclared struct {
	Mode        Mode    `json:"mode"`
	Streams     int     `json:"streams,omitempty"`
	RateRPS     float64 `json:"rate_rps,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	Burstiness  float64 `json:"burstiness,omitempty"`
	MaxInFlight int     `json:"max_in_flight,omitempty"`
	// Sessions is true when Streams counts concurrent agentic sessions
	// (or, in a trace replay, the most sessions the trace had at once).
	Sessions bool `json:"sessions,omitempty"`
	// Queueing is "allowed" when the scenario is a queueing study
	// (ConcurrencyPin.Queueing).
	Queueing string `json:"queueing,omitempty"`
	// SessionAffinity names the headers in which every request of a
	// session carried the session's id (workload.session_affinity,
	// canonicalised, joined by ", "); empty: none, a router placed each
	// request on its own.
	SessionAffinity string `json:"session_affinity,omitempty"`
	// SessionEcho names the response headers every session sent back
	// once answered with them (workload.session_affinity.echo, joined by
	// ", "); empty: none.
	SessionEcho string `json:"session_echo,omitempty"`
}

// MixDeclared is pin 6 as declared: the input:output ratio (the
// scenario's, else what its plan averages to) and the classes.
type MixDeclared struct {
	InputOutputRatio float64        `json:"input_output_ratio"`
	Classes          []ClassWeights `json:"classes,omitempty"`
}

// ClassWeights names a request class and its weight.
type ClassWeights struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// Wire is what the target, not the scenario, decides about the declared
// pins: the model id requested, the endpoint's don't-stop-early control,
// and the tokenizer prompts are built to. Its zero value (nothing resolved
// yet) is what `sixpin validate` describes.
type Wire struct {
	Model         string
	OutputControl string
	Tokenizer     string
}

// Declared returns the declared pins of the plan's scenario: its pins as
// written, with the means, the ratio of an undeclared mix and a trace's
// lengths and peak concurrency from the plan, and w's wire facts.
func (p *Plan) Declared(w Wire) Declared {
	s := p.s
	pins := s.Pins
	exp := p.Expected()
	d := Declared{
		Model: ModelDeclared{Name: pins.Model.Name, ParamsB: pins.Model.ParamsB,
			ActiveParamsB: pins.Model.ActiveParamsB, Dtype: pins.Model.Dtype, Requested: w.Model},
		Prompt: tokensDeclared(pins.Prompt.Tokens, exp.MeanPromptTokens, pins.Prompt.PromptTolerancePct()),
		Output: OutputDeclared{TokensDeclared: tokensDeclared(pins.Output.Tokens, exp.MeanOutputTokens, pins.Output.OutputTolerancePct()),
			Exact: pins.Output.Exact, Control: w.OutputControl},
		Concurrency: ConcurrencyDeclared{Mode: pins.Concurrency.Mode, Streams: p.Streams(),
			RateRPS: p.Rate(), Arrival: pins.Concurrency.Arrival, Burstiness: pins.Concurrency.Burstiness,
			MaxInFlight: p.MaxInFlight(), Queueing: pins.Concurrency.Queueing},
		KVCache:      pins.KVCache,
		Mix:          MixDeclared{InputOutputRatio: pins.Mix.InputOutputRatio},
		CachePlanned: pins.Prompt.SharedPrefixTokens > 0 || s.Workload.Agentic() || s.Workload.Replay(),
	}
	if d.Mix.InputOutputRatio == 0 {
		d.Mix.InputOutputRatio = exp.Ratio
	}
	if wl := s.Workload; wl.Replay() && wl.Trace != nil {
		st := wl.Trace.Summary()
		d.Prompt = TokensDeclared{Dist: fmt.Sprintf("from the trace %s: p50 %d", wl.File, st.Prompt.P50),
			Min: float64(st.Prompt.Min), Max: float64(st.Prompt.Max), Mean: exp.MeanPromptTokens, TolerancePct: pins.Prompt.PromptTolerancePct()}
		d.Output = OutputDeclared{TokensDeclared: TokensDeclared{Dist: fmt.Sprintf("from the trace: p50 %d", st.Output.P50),
			Min: float64(st.Output.Min), Max: float64(st.Output.Max), Mean: exp.MeanOutputTokens}, Exact: true, Control: w.OutputControl}
		d.Concurrency = ConcurrencyDeclared{Mode: ModeTrace, Streams: st.PeakSessions, Sessions: true}
		if !p.sh.Whole() {
			// The shard's own sessions, read again; a file that can no
			// longer be read leaves the whole trace's peak.
			if peak, err := wl.Trace.Peak(p.sh.N, p.sh.I); err == nil {
				d.Concurrency.Streams = peak
			}
		}
	}
	if wl := s.Workload; wl.MLPerfReplay() && wl.MLPerf != nil {
		st := wl.Trace.Summary()
		d.Prompt.Dist = fmt.Sprintf("from the MLPerf agentic dataset %s (SHA-256 %.12s…), in words: p50 %d", wl.File, wl.MLPerf.SHA256, st.Prompt.P50)
		d.Output = OutputDeclared{TokensDeclared: TokensDeclared{Dist: fmt.Sprintf("the model's own, up to each turn's max_new_tokens (the recorded answers: p50 %d words)", st.Output.P50),
			Min: float64(st.Output.Min), Max: float64(st.Output.Max), Mean: exp.MeanOutputTokens,
			Unpinned: "the model's own, up to each turn's max_new_tokens"}, Control: w.OutputControl}
		d.Prompt.Unpinned = "the dataset's own texts, sent as written (salted)"
		d.Concurrency = ConcurrencyDeclared{Mode: ModeClosed, Streams: p.Streams(), Sessions: true}
	}
	if wl := s.Workload; wl.Agentic() || wl.Replay() {
		keep := wl.KeepsReasoning()
		d.Prompt.PreserveReasoning = &keep
	}
	if wl := s.Workload; wl.Agentic() {
		d.Prompt.Dist = fmt.Sprintf("agentic history: first turn %s tokens, then each answer and a %s-token tool result more per turn", pins.Prompt.Tokens, wl.GrowthTokens)
		d.Concurrency.Sessions = true
	}
	d.Concurrency.SessionAffinity = strings.Join(p.Affinity(), ", ")
	d.Concurrency.SessionEcho = strings.Join(p.AffinityEcho(), ", ")
	d.Prompt.Content = s.contentDeclared()
	if !s.Workload.MLPerfReplay() { // its texts are the dataset's, not built by a tokenizer
		d.Prompt.Tokenizer = w.Tokenizer
	}
	for _, c := range pins.Mix.Classes {
		d.Mix.Classes = append(d.Mix.Classes, ClassWeights{Name: c.Name, Weight: c.Weight})
	}
	return d
}

// PerClass is TokensDeclared.Dist of a length only the mix's classes set.
const PerClass = "per class (see mix)"

// tokensDeclared is a token-count pin's declared side: the distribution as
// written with its bounds, or PerClass when only the classes set it.
func tokensDeclared(d Dist, mean, tolPct float64) TokensDeclared {
	if d.IsZero() {
		return TokensDeclared{Dist: PerClass, Mean: mean, TolerancePct: tolPct}
	}
	lo, hi := d.Bounds()
	return TokensDeclared{Dist: d.String(), Min: lo, Max: hi, Mean: mean, TolerancePct: tolPct}
}

// TraceMeans is what a trace's requests average to.
func TraceMeans(s trace.Summary) Expectation {
	return meanOf(s.Prompt.Sum, s.Output.Sum, s.Requests)
}
