package results

import (
	"fmt"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
)

// DefaultMaxErrorRate is the error budget of a scenario that declares no
// slo.max_error_rate: a run whose endpoint failed more than 1% of its
// requests (interrupts excluded) is invalid.
const DefaultMaxErrorRate = 0.01

// Header is everything about a run that is known before its first
// request and that turning its records into a results file needs: what
// was run, against what, the declared pins, what discovery found, and how
// to cut and judge the measurement. It heads the record spill, so that
// Recover can rebuild a results file from a run that was killed; it never
// holds an API key.
type Header struct {
	SixpinVersion string `json:"sixpin_version"`
	// StartedAt is the wall-clock start of load.
	StartedAt time.Time        `json:"started_at"`
	Scenario  ScenarioInfo     `json:"scenario"`
	Target    TargetInfo       `json:"target"`
	Declared  Declared         `json:"declared"`
	Discovery record.Discovery `json:"discovery"`
	Windows   WindowSpec       `json:"windows"`
	SLO       SLO              `json:"slo"`
	Tol       Tolerances       `json:"tolerances"`
	// OpenRateRPS is the declared open-loop rate (0: closed loop or a
	// replay), for the schedule report.
	OpenRateRPS float64         `json:"open_rate_rps,omitempty"`
	Pricing     *record.Pricing `json:"pricing,omitempty"`
	Energy      *record.Energy  `json:"energy,omitempty"`
	RateLimits  *RateLimits     `json:"rate_limits,omitempty"`
	// ProbeFailure is why the chat template's overhead is unknown ("" when
	// the probe measured it): the prompt pin is then unverifiable.
	ProbeFailure string `json:"probe_failure,omitempty"`
	// FallbackTokenizer is true when the prompts were built by a fallback
	// tokenizer (the profile named none).
	FallbackTokenizer bool `json:"fallback_tokenizer,omitempty"`
	// Notes are caveats known before the run.
	Notes []string `json:"notes,omitempty"`
	// TimeScale is wall time per run time when the run was made in
	// compressed time (--time-scale; 0: real time).
	TimeScale float64 `json:"time_scale,omitempty"`
	// Shard is the run's shard identity (nil: the whole plan); Assemble
	// fills in its start and schedule lag.
	Shard *ShardInfo `json:"shard,omitempty"`
	// KVFit is the KV-fit preflight (nil: no KV budget known).
	KVFit *KVFit `json:"kv_fit,omitempty"`
	// AllowPinMismatch names the pins (PinNames) whose contradiction the
	// user accepted knowingly (`--allow-pin-mismatch`): they are still ✗,
	// but do not make the run invalid.
	AllowPinMismatch []string `json:"allow_pin_mismatch,omitempty"`
	// Planned is the parity evidence of the requests the run plans (nil:
	// not known before the run — a closed loop bounded by its duration
	// alone — or not a list of independent requests).
	Planned *PlannedTokens `json:"planned,omitempty"`
}

// Ending is how a run ended, as Assemble needs to know it.
type Ending struct {
	// Incomplete is true when the run did not finish (interrupted,
	// killed, or still going at a checkpoint); Reason says why.
	Incomplete bool
	Reason     string
	// Interrupted is true when a signal stopped it (as opposed to a
	// checkpoint of a run still going, or a recovery).
	Interrupted bool
	// StoppedEarly is set when the run stopped itself once its verdict
	// was decided (abort_on, a capacity point): it is complete, shorter.
	StoppedEarly *StoppedEarly
}

// StoppedEarly says when and why a run stopped issuing before its
// duration or request count ran out, because a sequential test had
// decided its verdict: a tier of abort_on broken, or every tier of a
// capacity point decided.
type StoppedEarly struct {
	// AtS is when, in seconds of run time from the start of load.
	AtS    float64 `json:"at_s"`
	Reason string  `json:"reason"`
	// Aborted is true when abort_on stopped it (a broken tier fails the
	// run); false when a capacity point stopped because it was decided.
	Aborted bool `json:"aborted,omitempty"`
}

// Assemble binds a measurement to the run's pins: the results file of a
// run with header h, measured as m, that ended as e.
func Assemble(h *Header, m *Measurement, e Ending) *Run {
	run := &Run{
		Schema:               Schema,
		SixpinVersion:        h.SixpinVersion,
		StartedAt:            h.StartedAt.UTC(),
		StartUnixNS:          h.StartedAt.UnixNano(),
		Incomplete:           e.Incomplete,
		IncompleteReason:     e.Reason,
		StoppedEarly:         e.StoppedEarly,
		Windows:              m.Windows,
		Headline:             WindowSteady,
		Errors:               m.Errors,
		ClientAddedLatencyMs: m.ClientAddedLatency,
		Series:               m.Series,
		Histograms:           m.Histograms,
		Scenario:             h.Scenario,
		Target:               h.Target,
		KVFit:                h.KVFit,
		AllowPinMismatch:     h.AllowPinMismatch,
	}
	if h.OpenRateRPS > 0 {
		run.Schedule = BuildSchedule(h.OpenRateRPS, h.TimeScale, m)
	}
	disc := h.Discovery
	run.Server = m.Server
	run.Pins = BuildPins(h.Declared, m, disc, m.Server, run.Headline, run.Schedule)
	run.Shard = shardOf(h, m, run.Schedule)
	if p := &run.Pins.Prompt; h.ProbeFailure != "" && p.Verified != Unverifiable {
		// Every prompt was built without the template's overhead: its
		// drift says nothing of the server.
		p.Verified = Unverifiable
		p.Reason = "the chat template's overhead is unknown, so prompts were built without subtracting it: " + h.ProbeFailure
	}
	if h.FallbackTokenizer && run.Pins.Prompt.Verified == Verified {
		run.Pins.Prompt.Reason = "lengths built by a fallback tokenizer, confirmed by the server's usage: " + run.Pins.Prompt.Reason
	}
	succeeded := m.Errors.Requests - m.Errors.Failed
	if e.Interrupted && succeeded == 0 {
		run.Pins.Concurrency.Verified = Unverifiable
		run.Pins.Concurrency.Reason = "interrupted before any request completed"
	}
	run.Valid, run.Invalid = Validity(run.Pins, run.AllowPinMismatch)
	if e.Interrupted && succeeded == 0 {
		run.Valid = false
		run.Invalid = append(run.Invalid, "interrupted before any request completed")
	}
	if reason := overBudget(h.Scenario.SLO.MaxErrorRate, m.Errors); reason != "" {
		run.Valid = false
		run.Invalid = append(run.Invalid, reason)
	}
	if reason := degenerateReason(h.Scenario.SLO.MaxDegenerateShare, run.Headline, run.Windows[run.Headline]); reason != "" {
		run.Valid = false
		run.Invalid = append(run.Invalid, reason)
	}
	run.Discovery = &disc
	run.Tokens, run.ByContext = m.Tokens, m.ByContext
	run.Parity = &Parity{Planned: h.Planned, Served: served(m.Tokens)}
	run.Peers = m.Peers
	if len(m.Sessions.All) > 0 {
		run.Sessions = &m.Sessions
	}
	wall := time.Duration(m.Windows[WindowAll].DurationS * float64(time.Second))
	run.Cost = BuildCost(h.Pricing, h.Energy, m, wall)
	run.RateLimits = BuildRateLimits(h.RateLimits, m)
	run.Notes = append(run.Notes, h.Notes...)
	if m.TokensFromChunks {
		run.Notes = append(run.Notes, "some responses carried no usage: their token counts are the client's chunk counts")
	}
	if m.MSERTrim > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("steady: auto trimmed %s off the steady window's start (MSER-5 over per-second aggregate output)", m.MSERTrim))
	}
	if c := run.Pins.Prompt.Observed.UnplannedCache; c != nil {
		run.Notes = append(run.Notes, c.String())
	}
	return run
}

// overBudget says why errs exceed the error budget (max, or
// DefaultMaxErrorRate when 0), or "" when they do not.
func overBudget(max float64, errs Errors) string {
	budget, named := max, "slo.max_error_rate"
	if budget <= 0 {
		budget, named = DefaultMaxErrorRate, "the default when slo.max_error_rate is not given"
	}
	if errs.Rate <= budget {
		return ""
	}
	return fmt.Sprintf("errors: %s of requests failed (%s; interrupts excluded), over the error budget of %s%% (%s)",
		pct(errs.Rate), ClassList(errs.ByClass), numfmt.Plain(budget*100), named)
}
