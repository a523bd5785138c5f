// Package capacity is the data of `sixpin capacity`: the largest
// concurrency that meets each SLO tier, and the constraint that binds one
// step above it. It plans the search over one concurrency pin (closed-loop
// streams, concurrent agentic sessions, or an open-loop rate in req/s),
// every other pin held: a bracket by doubling or halving, then bisection,
// then confirmation runs at N* and N*+1, within a budget of runs and time.
// It reads each point's verdicts (verdict.Judge) and results, names what
// bound each tier from the evidence (the TTFT split, the KV regime, rate
// limits, errors, sixpin's own saturation), normalises the answers per
// GPU, per kW and per $/hour, and keeps the throughput–interactivity curve
// of every point. It runs nothing and words nothing: harness runs the
// points, report words the file (schema sixpin/capacity/v1).
package capacity

import (
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// Schema is the capacity file's schema id.
const Schema = "sixpin/capacity/v1"

// File is a capacity file: the plan, every point with its verdicts and
// full results, and the answer per tier.
type File struct {
	Schema        string `json:"schema"`
	SixpinVersion string `json:"sixpin_version"`
	// Scenario is the scenario file searched; ScenarioName its name.
	Scenario     string `json:"scenario"`
	ScenarioName string `json:"scenario_name"`
	// Profile names the target's profile; Simulated is true for the
	// built-in simulator.
	Profile   string `json:"profile"`
	Simulated bool   `json:"simulated"`
	Plan      Plan   `json:"plan"`
	// Deployment is what the profile declares of the hardware and its
	// price, for the normalised answers.
	Deployment Deployment `json:"deployment"`
	// Points are every run, in the order they ran.
	Points  []Point  `json:"points"`
	Answers []Answer `json:"answers"`
	// Stop is why the search stopped: StopDone, StopMaxRuns, StopBudget,
	// StopInterrupted, StopError.
	Stop string `json:"stop"`
	// ElapsedS is the search's wall time in seconds; LoadS the run time
	// under load, summed over points.
	ElapsedS float64 `json:"elapsed_s"`
	LoadS    float64 `json:"load_s"`
	// Incomplete is true when an interrupt stopped the search: the points
	// measured whole count, a point cut short counts for nothing.
	Incomplete       bool   `json:"incomplete"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	// Sharded says how the search was split across processes (nil: it
	// ran in one); each point's run is then its shards' merged results,
	// their attestation under run.merged.
	Sharded *Sharding `json:"sharded,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
}

// Sharding is a search split across processes (`sixpin capacity --shard
// I/N`): shard 0 led it, and every point ran as Count shards started
// together and merged.
type Sharding struct {
	Count int `json:"count"`
	// RunID is the search's; point k ran as RunID-pK.
	RunID string `json:"run_id"`
}

// Why a search stopped.
const (
	StopDone        = "done"
	StopMaxRuns     = "max_runs"
	StopBudget      = "budget"
	StopInterrupted = "interrupted"
	// StopError: a point could not run (the endpoint went away); the
	// points before it are kept.
	StopError = "error"
)

// Plan is what the search was asked.
type Plan struct {
	Axis  Axis           `json:"axis"`
	Tiers []verdict.Tier `json:"tiers"`
	// Start is the first point: the scenario's own concurrency.
	Start float64 `json:"start"`
	// MaxRuns and BudgetS bound the search (0: no bound): points run, and
	// wall time in seconds.
	MaxRuns int     `json:"max_runs,omitempty"`
	BudgetS float64 `json:"budget_s,omitempty"`
	// Points is how many log-spaced points were asked for the curve
	// (--points), beside those the search visits.
	Points int `json:"points,omitempty"`
	// MinSteadyS is the steady stretch a pass needs, s of run time;
	// PointS the longest a point runs (the scenario's duration), s.
	MinSteadyS float64 `json:"min_steady_s"`
	PointS     float64 `json:"point_s"`
	// Seed is the scenario's seed: a value's k-th run uses Seed + k.
	Seed int64 `json:"seed"`
	// PassAtEnd is true when a point may stop early only on a failure,
	// its passes read when it ends (verdict.JudgeOptions.PassAtEnd): an
	// agentic workload, whose contexts deepen as it runs.
	PassAtEnd bool `json:"pass_at_end,omitempty"`
	// SessionsStart is how an agentic point's sessions start (scenario's
	// workload.start): stationary unless the scenario said fresh.
	SessionsStart string `json:"sessions_start,omitempty"`
}

// Deployment is what a profile declares about the hardware behind the
// endpoint (zero: not declared).
type Deployment struct {
	GPUs       int     `json:"gpus,omitempty"`
	PowerWatts float64 `json:"power_watts,omitempty"`
	USDPerHour float64 `json:"usd_per_hour,omitempty"`
}

// Roles of a point in the search.
const (
	RoleStart   = "start"
	RoleBracket = "bracket"
	RoleBisect  = "bisect"
	RoleConfirm = "confirm"
	RoleCurve   = "curve"
)

// Point is one run of the search: the concurrency it ran at, why, its
// verdicts and its full results.
type Point struct {
	// Value is the concurrency pin's value: streams, sessions, or req/s.
	Value float64 `json:"value"`
	Seed  int64   `json:"seed"`
	Role  string  `json:"role"`
	// Judged names the tiers the point was run for: the search reads
	// their verdicts; the others' are shown, not counted.
	Judged []string `json:"judged"`
	// Valid is false when the point cannot count as a pass: a broken pin,
	// sixpin itself saturated (its calibration floor flagged, an open loop
	// that fell behind), or cut short by an interrupt; Invalid says why.
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// Verdicts are every tier's verdict on the point.
	Verdicts []verdict.TierVerdict `json:"verdicts"`
	Curve    Curve                 `json:"curve"`
	// LoadS is the point's run time under load, s.
	LoadS float64      `json:"load_s"`
	Run   *results.Run `json:"run"`
}

// Passed reports whether the point counts as a pass for tier: valid and
// its verdict passed.
func (p Point) Passed(tier string) bool {
	if !p.Valid {
		return false
	}
	for _, v := range p.Verdicts {
		if v.Tier == tier {
			return v.Outcome == verdict.Passed
		}
	}
	return false
}

// Verdict is the point's verdict on tier (nil: none).
func (p *Point) Verdict(tier string) *verdict.TierVerdict {
	for i := range p.Verdicts {
		if p.Verdicts[i].Tier == tier {
			return &p.Verdicts[i]
		}
	}
	return nil
}

// Curve is one point of the throughput–interactivity curve, from its
// steady window.
type Curve struct {
	// AggregateTokS is the output of all streams together, tok/s.
	AggregateTokS float64 `json:"aggregate_tok_s"`
	// EffectiveP50TokS and DecodeP50TokS are per stream, tok/s: what one
	// user sees (sixpin's own per-stream figures).
	EffectiveP50TokS float64 `json:"effective_p50_tok_s"`
	DecodeP50TokS    float64 `json:"decode_p50_tok_s"`
	// TPOTP90Ms is the p90 of time per output token, ms; TPSPerUser is
	// MLPerf's tps_per_user, 1000 / TPOTP90Ms (0: no TPOT).
	TPOTP90Ms  float64 `json:"tpot_p90_ms"`
	TPSPerUser float64 `json:"tps_per_user"`
	// TTFTP90Ms is the p90 of TTFT, ms.
	TTFTP90Ms float64 `json:"ttft_p90_ms"`
	// CompletedRPS is the steady window's completed requests per second;
	// MeanInFlight the concurrency observed.
	CompletedRPS float64 `json:"completed_rps"`
	MeanInFlight float64 `json:"mean_in_flight"`
}

// CurveOf reads run's steady window into a curve point.
func CurveOf(run *results.Run) Curve {
	var c Curve
	w := run.Windows[results.WindowSteady]
	if w == nil {
		return c
	}
	c.AggregateTokS, c.MeanInFlight = w.AggregateOutputTokS, w.MeanInFlight
	if w.DurationS > 0 {
		c.CompletedRPS = float64(w.Completed) / w.DurationS
	}
	if d := w.EffectiveTokS; d != nil {
		c.EffectiveP50TokS = d.P50
	}
	if d := w.DecodeTokS; d != nil {
		c.DecodeP50TokS = d.P50
	}
	if d := w.TTFTMs; d != nil {
		c.TTFTP90Ms = d.P90
	}
	if d := w.TPOTMs; d != nil && d.P90 > 0 {
		c.TPOTP90Ms, c.TPSPerUser = d.P90, 1000/d.P90
	}
	return c
}

// Validity is whether run can count as a pass, and why not: a broken
// pin (results' own validity), sixpin saturated (its calibration floor
// flagged; an open loop that fell behind its schedule), or an interrupt.
func Validity(run *results.Run) (valid bool, why []string) {
	why = append(why, run.Invalid...)
	if c := run.Calibration; c != nil && c.Flagged {
		why = append(why, "sixpin saturated: its own floor is "+trim(c.OverheadPctOfTTFT)+"% of the TTFT p50")
	}
	if s := run.Schedule; s != nil && s.Behind {
		why = append(why, "sixpin saturated: the open loop fell behind its schedule")
	}
	if run.Incomplete {
		why = append(why, "cut short: "+run.IncompleteReason)
	}
	return len(why) == 0 && run.Valid, why
}
