// Package waterfall is the data of `sixpin waterfall`: what each pin costs.
//
// It walks from a start scenario (a vendor's, or the built-in brochure
// preset) to a production one, one pin at a time. It plans the steps (which
// pins differ, in which order, which configurations must be run), and
// turns the runs' measurements into the waterfall: the start, each step's
// value, change, ratio and share, the end, and the attribution: exact
// Shapley values over every subset whenever their runs fit the budget,
// else the order and its reverse with how much they disagree. It runs
// nothing and words nothing: harness runs the plan, report renders the
// file.
package waterfall

import (
	"github.com/sixpin/sixpin/results"
)

// Schema is the waterfall file's schema id.
const Schema = "sixpin/waterfall/v1"

// Metrics a waterfall reads from each run, all per the run's window: the
// P50 of per-stream effective and decode tok/s, the aggregate output
// tok/s, and the P50 of TTFT in milliseconds (lower is better; its ratios
// run the other way).
const (
	MetricEffective = "effective"
	MetricDecode    = "decode"
	MetricAggregate = "aggregate"
	MetricTTFT      = "ttft"
)

// Metrics lists the metrics every step records, in report order.
var Metrics = []string{MetricEffective, MetricDecode, MetricAggregate, MetricTTFT}

// The metric switch of the default waterfall: a brochure quotes output
// speed (decode tok/s), a person at a terminal feels effective tok/s.
const (
	SwitchFrom = MetricDecode
	SwitchTo   = MetricEffective
)

// Windows the waterfall reads: it starts in the burst window (a brochure
// figure is a burst figure) and ends in the steady one.
const (
	WindowFrom = results.WindowBurst
	WindowTo   = results.WindowSteady
)

// The moves of a waterfall (its "pins"), in DefaultOrder. Eight are
// scenario parts that need a run of their own; window and metric are
// views of the same runs and need none. PinPrompt is the prompt's shape
// (its length and shared prefix); PinContent its content class
// (pins.prompt.content: prose, code, …), which decides how well a
// speculative drafter guesses. A mix class's own content moves with the
// mix.
const (
	PinModel       = "model"
	PinKVCache     = "kv_cache"
	PinMix         = "mix"
	PinOutput      = "output"
	PinPrompt      = "prompt"
	PinContent     = "content"
	PinConcurrency = "concurrency"
	PinWorkload    = "workload"
	PinWindow      = "window"
	PinMetric      = "metric"
)

// DefaultOrder is the order the waterfall moves pins in: the declared-only
// pins first (model and KV-cache budget: sixpin cannot change the server,
// so they cost only noise), then the request's shape (mix, output length,
// prompt length, then the prompt's content: what a speculative drafter
// makes of it), then the load (concurrency, then the workload: agentic
// sessions re-sending a growing history), then the window (burst →
// steady), and the metric last, so that its step is what prefill costs at
// the production pins.
var DefaultOrder = []string{PinModel, PinKVCache, PinMix, PinOutput, PinPrompt, PinContent, PinConcurrency, PinWorkload, PinWindow, PinMetric}

// File is a waterfall file (schema sixpin/waterfall/v1): the plan, what
// every configuration measured, the waterfall built from it, and every
// run's full results. Rebuild recomputes the waterfall for another metric
// from Configs alone.
type File struct {
	Schema        string `json:"schema"`
	SixpinVersion string `json:"sixpin_version"`
	// From and To name the start (a scenario path, or "brochure") and the
	// production scenario.
	From string `json:"from"`
	To   string `json:"to"`
	// Metric is the metric held through every step, or "" for the
	// default: decode tok/s at the start, effective tok/s at the end, the
	// switch its own step.
	Metric string `json:"metric,omitempty"`
	// Order is the moved pins in step order; Skipped the pins that did
	// not move, and why.
	Order   []string  `json:"order"`
	Skipped []Skipped `json:"skipped"`
	// Repeat is how many runs (seeds seed, seed+1, …) measured each
	// configuration.
	Repeat int `json:"repeat"`
	// Claim is the vendor's published figure checked against the start.
	Claim *Claim `json:"claim,omitempty"`
	Start Point  `json:"start"`
	Steps []Step `json:"steps"`
	End   Point  `json:"end"`
	// Prefill is why the metric switch (decode → effective) costs what
	// it costs, read at the production pins; nil without that step.
	Prefill *Prefill `json:"prefill,omitempty"`
	// Attribution is each pin's cost over the orders run (or every
	// subset, exact).
	Attribution Attribution `json:"attribution"`
	// Configs are the configurations run: which pins had moved, and what
	// each of its runs measured.
	Configs []Config `json:"configs"`
	// Incomplete is true when the waterfall was interrupted before every
	// configuration was measured; the steps stop at the first one missing.
	Incomplete       bool     `json:"incomplete"`
	IncompleteReason string   `json:"incomplete_reason,omitempty"`
	Notes            []string `json:"notes,omitempty"`
	// Fallbacks name the runs whose window lacked the metric (no
	// successful request in it), read over the whole run instead.
	Fallbacks []string `json:"window_fallbacks,omitempty"`
	// Runs are every run's full results, in the order they ran; each
	// Config names its own by index.
	Runs []*results.Run `json:"runs"`
}

// Skipped is a pin that did not move: equal in both scenarios, held
// (--metric), or folded into another move (a trace gives prompt, output,
// concurrency and mix, and only independent requests have a content
// class, so they move with the workload).
type Skipped struct {
	Pin    string `json:"pin"`
	Value  string `json:"value,omitempty"`
	Reason string `json:"reason"`
}

// Claim is a vendor's published figure beside the measured start.
type Claim struct {
	Value    float64 `json:"value"`
	Measured float64 `json:"measured"`
	// DeltaPct is (Measured − Value) / Value, in percent.
	DeltaPct float64 `json:"delta_pct"`
}

// Point is one end of the waterfall: every pin's value there, the window
// and metric read, the value and its 95% confidence interval over the
// repeats (nil for one run).
type Point struct {
	Pins   map[string]string `json:"pins"`
	Config string            `json:"config"`
	Window string            `json:"window"`
	Metric string            `json:"metric"`
	Value  float64           `json:"value"`
	CI     *Interval         `json:"ci,omitempty"`
	Validity
}

// Validity is whether a figure was measured on valid runs: how many of
// its configuration's runs were invalid (a pin broken beyond tolerance,
// errors over the budget: 429-throttled survivors), and their distinct
// reasons, each "pin: why" as the run's results give it.
type Validity struct {
	InvalidRuns int      `json:"invalid_runs,omitempty"`
	Invalid     []string `json:"invalid,omitempty"`
}

// Prefill is what the time went to at the production pins (the end's
// configuration and window), the mean over the repeats: Share is the
// prefill share of the time, Σ TTFT / Σ E2E over the window's successful
// requests (0–1), TTFTMs the TTFT P50 in milliseconds. Effective tok/s
// counts that time, decode tok/s does not.
type Prefill struct {
	Window string  `json:"window"`
	Share  float64 `json:"share"`
	TTFTMs float64 `json:"ttft_ms"`
}

// Step is one pin moved from its start value to its production value.
type Step struct {
	Pin  string `json:"pin"`
	From string `json:"from"`
	To   string `json:"to"`
	// Config is the configuration measured after the step; Window and
	// Metric are the view read.
	Config string `json:"config"`
	Window string `json:"window"`
	Metric string `json:"metric"`
	// Value is the metric after the step; Delta the change (Value − the
	// previous value); Ratio Value / the previous value; Share the step's
	// part of the whole change, multiplicatively: ln Ratio / ln(end /
	// start), so that the shares sum to 1 and start × Π Ratio = end.
	Value float64 `json:"value"`
	Delta float64 `json:"delta"`
	Ratio float64 `json:"ratio"`
	Share float64 `json:"share"`
	// CI is the 95% confidence interval of Delta (paired by seed across
	// the repeats; nil for one run), ValueCI that of Value; Noise is true
	// when CI holds 0: the change is within noise.
	CI      *Interval `json:"ci,omitempty"`
	ValueCI *Interval `json:"value_ci,omitempty"`
	Noise   bool      `json:"noise"`
	// Runs is false for a view step (window, metric): it read the
	// previous step's runs again.
	Runs bool `json:"runs"`
	// Validity is that of the runs the step's value was read from (a
	// view step's are the previous step's).
	Validity
}

// Interval is a confidence interval [Lo, Hi].
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Contains reports whether x lies in the interval.
func (i Interval) Contains(x float64) bool { return x >= i.Lo && x <= i.Hi }

// Attribution methods.
const (
	MethodOrder    = "order"     // one order: each step's ratio
	MethodTwoOrder = "two-order" // the order and its reverse, and their mean
	MethodExact    = "exact"     // every subset: exact Shapley values
)

// Attribution is each moved pin's cost: its ratio in every order run
// and, over them, a Shapley value (exact over every subset, or the
// two-order estimate), as a factor: the pins' factors multiply to end /
// start.
type Attribution struct {
	Method string `json:"method"`
	// Auto is true when Method was chosen by default: exact whenever
	// ExactRuns fit MaxRuns, else the order and its reverse.
	Auto bool `json:"auto"`
	// ExactRuns is how many runs exact attribution needs (every subset
	// of the moved scenario pins × the repeats); MaxRuns the budget it
	// was held to.
	ExactRuns int `json:"exact_runs"`
	MaxRuns   int `json:"max_runs"`
	// Orders are the orders whose every step was measured ("default",
	// "reverse", or the order given).
	Orders []NamedOrder `json:"orders"`
	Pins   []PinCost    `json:"pins"`
	// Spread is how much the orders disagree: the largest Hi / Lo over
	// the pins (1: every order agrees), at SpreadPin; 0 when one order
	// alone was measured and nobody knows.
	Spread    float64 `json:"spread"`
	SpreadPin string  `json:"spread_pin,omitempty"`
}

// NamedOrder is one order of the moved pins.
type NamedOrder struct {
	Name string   `json:"name"`
	Pins []string `json:"pins"`
}

// PinCost is one pin's cost: the ratio of its step in each order (same
// order as Attribution.Orders), and the Shapley factor (the geometric mean
// of the ratios for two orders; the exact value for every subset).
type PinCost struct {
	Pin     string    `json:"pin"`
	Ratios  []float64 `json:"ratios"`
	Shapley float64   `json:"shapley"`
	// Share is ln Shapley / ln(end / start).
	Share float64 `json:"share"`
	// Lo and Hi are the least and greatest factor the pin's step has in
	// the orders measured: the two orders' ratios, or, exact, its
	// change joining every subset of the other pins (every order's).
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Config is one configuration run: the scenario pins moved to their
// production value (Key joins them with "+" in DefaultOrder; "" is the
// start), its runs (indices into File.Runs) and what each measured.
type Config struct {
	Key   string    `json:"key"`
	Moved []string  `json:"moved"`
	Runs  []int     `json:"runs"`
	Seeds []int64   `json:"seeds"`
	Meas  []Measure `json:"measures"`
}

// Measure is what one run measured: window → metric → value (every
// metric, and MeasurePrefillShare, in the burst, steady and all
// windows). A window without a successful request lacks its metrics.
type Measure map[string]map[string]float64

// MeasurePrefillShare is a Measure's prefill share of the time: Σ TTFT /
// Σ E2E over the window's successful requests (0–1). It is not a metric
// a waterfall moves through; it says why the metric switch costs what it
// costs.
const MeasurePrefillShare = "prefill_share"
