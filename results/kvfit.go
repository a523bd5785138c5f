package results

import (
	"math"

	"github.com/sixpin/sixpin/record"
)

// KVFit is the preflight's answer, before load: whether the planned
// concurrency's sequences fit the server's KV cache at once.
type KVFit struct {
	// Streams is the planned concurrency: closed-loop streams, agentic
	// sessions, or open loop's max_in_flight.
	Streams int `json:"streams"`
	// PerStreamTokens is what one sequence holds at its end: mean prompt
	// plus mean output less the shared prefix, in tokens.
	PerStreamTokens float64 `json:"per_stream_tokens"`
	// SharedPrefixTokens × PrefixGroups are held once, when the server
	// caches prefixes (0 otherwise).
	SharedPrefixTokens int `json:"shared_prefix_tokens,omitempty"`
	PrefixGroups       int `json:"prefix_groups,omitempty"`
	// NeedTokens is Streams × PerStreamTokens plus the shared prefixes.
	NeedTokens float64 `json:"need_tokens"`
	// BudgetTokens is the server's KV cache in tokens, BudgetFrom where
	// that came from.
	BudgetTokens int    `json:"budget_tokens"`
	BudgetFrom   string `json:"budget_from"`
	// MaxNumSeqs is the server's cap on sequences at once (0: none known).
	MaxNumSeqs int `json:"max_num_seqs,omitempty"`
	// MaxFit is the most streams that fit the budget (and MaxNumSeqs).
	MaxFit int `json:"max_fit"`
	// Fits is Streams ≤ MaxFit.
	Fits bool `json:"fits"`
	// Uncertain is set when the server does not say whether its slots
	// share one KV cache: BudgetTokens, MaxFit and Fits are then the
	// smaller reading (one cache of max_model_len tokens the slots share:
	// llama-server's --kv-unified, its default when --parallel is not
	// given), AltBudgetTokens and AltMaxFit the larger (a cache of
	// max_model_len per slot). The larger is never taken as fact.
	Uncertain       bool `json:"uncertain,omitempty"`
	AltBudgetTokens int  `json:"alt_budget_tokens,omitempty"`
	AltMaxFit       int  `json:"alt_max_fit,omitempty"`
	// DeepestTokens is what one sequence holds at its deepest, for a
	// workload whose contexts deepen as it runs (agentic sessions: their
	// max_context_tokens plus an answer; 0: not such a workload), and
	// DeepestMaxFit how many of those the budget holds. A mean that fits
	// can still fill the cache in a run's last minutes.
	DeepestTokens float64 `json:"deepest_tokens,omitempty"`
	DeepestMaxFit int     `json:"deepest_max_fit,omitempty"`
}

// WithDeepest records that each sequence grows to tokens at its deepest,
// and how many of those fit the budget.
func (f *KVFit) WithDeepest(tokens float64) {
	if tokens <= f.PerStreamTokens {
		return
	}
	f.DeepestTokens = tokens
	f.DeepestMaxFit = f.fit(f.BudgetTokens, float64(f.SharedPrefixTokens*f.PrefixGroups), tokens)
}

// FillsWhenDeep reports whether the planned sequences fit on their mean
// but not at their deepest: the cache fills as their contexts deepen.
func (f *KVFit) FillsWhenDeep() bool {
	return f.Fits && f.DeepestTokens > 0 && f.Streams > f.DeepestMaxFit
}

// FitKV is the KV-fit preflight of streams sequences of perStream tokens
// each (prompt + output − the shared prefix), sharing groups prefixes of
// prefix tokens, against what discovery found. The budget is the KV
// cache's tokens (vLLM num_gpu_blocks × block_size, SGLang
// max_total_num_tokens, the simulator's budget). Without one (llama.cpp,
// which says its per-slot context and its slots but not whether they
// share one cache), the budget is uncertain: one per-slot context if the
// slots share a unified cache, that times the slots if each has its own;
// the fit is judged by the smaller. nil when no budget is known or
// nothing is planned.
func FitKV(streams int, perStream float64, prefix, groups int, kv record.KVFacts, from map[string]string) *KVFit {
	f := &KVFit{Streams: streams, PerStreamTokens: perStream, BudgetTokens: kv.BudgetTokens, MaxNumSeqs: kv.MaxNumSeqs}
	f.BudgetFrom = from["kv_cache.budget_tokens"]
	if f.BudgetTokens <= 0 && kv.MaxModelLen > 0 && kv.MaxNumSeqs > 0 {
		f.BudgetTokens = kv.MaxModelLen
		f.BudgetFrom = "max_model_len, one cache the slots share (" + from["kv_cache.max_model_len"] + ")"
		if kv.MaxNumSeqs > 1 {
			f.Uncertain, f.AltBudgetTokens = true, kv.MaxModelLen*kv.MaxNumSeqs
		}
	}
	if f.BudgetTokens <= 0 || streams <= 0 || perStream <= 0 {
		return nil
	}
	shared := 0.0
	if prefix > 0 && (kv.PrefixCaching == nil || *kv.PrefixCaching) {
		f.SharedPrefixTokens, f.PrefixGroups = prefix, max(groups, 1)
		shared = float64(prefix * f.PrefixGroups)
	} else if prefix > 0 {
		f.PerStreamTokens += float64(prefix) // no prefix cache: every sequence holds its own
	}
	f.NeedTokens = float64(streams)*f.PerStreamTokens + shared
	f.MaxFit = f.fit(f.BudgetTokens, shared, f.PerStreamTokens)
	if f.Uncertain {
		f.AltMaxFit = f.fit(f.AltBudgetTokens, shared, f.PerStreamTokens)
	}
	f.Fits = streams <= f.MaxFit
	return f
}

// fit is the most sequences of per tokens each a budget of tokens holds,
// beside shared prefix tokens held once, within MaxNumSeqs.
func (f *KVFit) fit(budget int, shared, per float64) int {
	n := max(int(math.Floor((float64(budget)-shared)/per)), 0)
	if f.MaxNumSeqs > 0 {
		n = min(n, f.MaxNumSeqs)
	}
	return n
}

// Calibration is sixpin's own floor (`sixpin run --calibrate`): a short
// load at the run's concurrency and lengths against an in-process server
// that answers at once over loopback, so its TTFT and ITL are what the
// client and the loopback add.
type Calibration struct {
	Streams      int `json:"streams"`
	Requests     int `json:"requests"`
	Failed       int `json:"failed,omitempty"`
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Rounds of requests were recorded, one after the other, after
	// WarmupRequests that were not (connections opened, code paths run
	// once); Requests counts the recorded ones. 0: a file from before
	// rounds, whose requests were all recorded at once.
	Rounds         int `json:"rounds,omitempty"`
	WarmupRequests int `json:"warmup_requests,omitempty"`
	// TTFTMs and ITLMs pool the recorded requests' percentiles.
	TTFTMs *Dist `json:"ttft_ms"`
	ITLMs  *Dist `json:"itl_ms"`
	// RoundTTFTP50Ms is each round's TTFT p50, ms; FloorTTFTMs their
	// median, the floor the run is judged by; SpreadPct their range (max −
	// min) as a percentage of that median: how far the floor moves
	// between rounds, so how much it can be trusted (with Rounds only).
	RoundTTFTP50Ms []float64 `json:"round_ttft_p50_ms,omitempty"`
	FloorTTFTMs    float64   `json:"floor_ttft_ms,omitempty"`
	SpreadPct      float64   `json:"spread_pct"`
	// OverheadPctOfTTFT is the floor as a percentage of the run's TTFT
	// p50 in its headline window; Flagged when it exceeds 5%.
	OverheadPctOfTTFT float64 `json:"overhead_pct_of_ttft_p50"`
	Flagged           bool    `json:"flagged"`
}

// CalibrationSteadyPct is the spread of a calibration's rounds, in
// percent of its floor, beyond which the floor is unsteady: the machine
// was busy while it was measured, and the floor and its flag are
// uncertain.
const CalibrationSteadyPct = 25

// Floor is the calibration's TTFT floor, ms: the median of its rounds'
// p50s, or the pooled p50 in a file from before rounds.
func (c *Calibration) Floor() float64 {
	if c.FloorTTFTMs > 0 {
		return c.FloorTTFTMs
	}
	if c.TTFTMs != nil {
		return c.TTFTMs.P50
	}
	return 0
}
