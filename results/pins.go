package results

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdict is a pin's verification: its declared value was checked against
// what the server did.
type Verdict string

// Verdicts.
const (
	Verified     Verdict = "true"
	Contradicted Verdict = "false"
	Unverifiable Verdict = "unverifiable"
)

// Pin is one of the six pins: declared, observed, verified (with why).
type Pin[D, O any] struct {
	Declared D       `json:"declared"`
	Observed O       `json:"observed"`
	Verified Verdict `json:"verified"`
	Reason   string  `json:"reason,omitempty"`
}

// Pins are the six pins of a run (DESIGN §1).
type Pins struct {
	Model       Pin[ModelDeclared, ModelObserved]             `json:"model"`
	Prompt      Pin[TokensDeclared, TokensObserved]           `json:"prompt"`
	Output      Pin[OutputDeclared, TokensObserved]           `json:"output"`
	Concurrency Pin[ConcurrencyDeclared, ConcurrencyObserved] `json:"concurrency"`
	KVCache     Pin[KVCacheDeclared, KVCacheObserved]         `json:"kv_cache"`
	Mix         Pin[MixDeclared, MixObserved]                 `json:"mix"`
}

// ModelDeclared is pin 1 as declared; Requested is the id sent on the wire.
type ModelDeclared struct {
	Name          string  `json:"name"`
	ParamsB       float64 `json:"params_b,omitempty"`
	ActiveParamsB float64 `json:"active_params_b,omitempty"`
	Dtype         string  `json:"dtype,omitempty"`
	Requested     string  `json:"requested"`
}

// ModelObserved is what the server said about its model.
type ModelObserved struct {
	// Reported is the model id in the server's responses.
	Reported string `json:"reported,omitempty"`
	// Listed is the ids /v1/models listed.
	Listed  []string `json:"listed,omitempty"`
	ParamsB float64  `json:"params_b,omitempty"`
}

// TokensDeclared is a token-count pin as declared.
type TokensDeclared struct {
	Dist string  `json:"dist"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// OutputDeclared is pin 3 as declared, with how it was enforced.
type OutputDeclared struct {
	TokensDeclared
	Exact bool `json:"exact"`
	// Control is the endpoint's don't-stop-early control in use
	// (ignore_eos, min_tokens, or none).
	Control string `json:"control"`
}

// TokensObserved is a token-count pin as the server counted it (usage),
// over the successful requests of the whole run.
type TokensObserved struct {
	PerRequest *Dist  `json:"per_request"`
	Drift      *Drift `json:"drift,omitempty"`
	// Source is "usage" (the server's count) or "chunks" (the client's).
	Source string `json:"source"`
}

// Drift compares the server's token count with the requested one, per
// request, in percent of the requested count.
type Drift struct {
	Requests   int     `json:"requests"`
	MeanPct    float64 `json:"mean_pct"`
	MeanAbsPct float64 `json:"mean_abs_pct"`
	MaxAbsPct  float64 `json:"max_abs_pct"`
	// Exact counts requests with no drift at all.
	Exact int `json:"exact"`
}

// ConcurrencyDeclared is pin 4 as declared.
type ConcurrencyDeclared struct {
	Mode        string  `json:"mode"`
	Streams     int     `json:"streams,omitempty"`
	RateRPS     float64 `json:"rate_rps,omitempty"`
	Arrival     string  `json:"arrival,omitempty"`
	Burstiness  float64 `json:"burstiness,omitempty"`
	MaxInFlight int     `json:"max_in_flight,omitempty"`
}

// ConcurrencyObserved is the in-flight count over the headline window,
// with Little's law as a cross-check (mean in flight ≈ start rate × mean
// latency), and for open loop the run's pacing.
type ConcurrencyObserved struct {
	Window       string  `json:"window"`
	MeanInFlight float64 `json:"mean_in_flight"`
	MaxInFlight  int     `json:"max_in_flight"`
	// StartRateRPS is requests started per second in the window.
	StartRateRPS float64   `json:"start_rate_rps"`
	LittlesLaw   float64   `json:"littles_law_in_flight"`
	Schedule     *Schedule `json:"schedule,omitempty"`
}

// KVCacheDeclared is pin 5 as declared.
type KVCacheDeclared struct {
	MaxModelLen          int     `json:"max_model_len,omitempty"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`
	Batching             string  `json:"batching,omitempty"`
	PrefixCaching        *bool   `json:"prefix_caching,omitempty"`
}

// KVCacheObserved is what discovery found of the server's KV settings.
type KVCacheObserved struct {
	MaxModelLen int    `json:"max_model_len,omitempty"`
	Source      string `json:"source,omitempty"`
}

// MixDeclared is pin 6 as declared.
type MixDeclared struct {
	InputOutputRatio float64        `json:"input_output_ratio"`
	Classes          []ClassWeights `json:"classes,omitempty"`
}

// ClassWeights names a request class and its weight.
type ClassWeights struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
}

// MixObserved is the prefill/decode mix over the whole run: the observed
// input:output ratio beside the ratio the same requests asked for (a small
// sample may differ from the declared population mean; the server must
// still honour what was sent), and the prefill share of wall time.
type MixObserved struct {
	Window                    string  `json:"window"`
	InputOutputRatio          float64 `json:"input_output_ratio"`
	RequestedInputOutputRatio float64 `json:"requested_input_output_ratio"`
	PrefillShare              float64 `json:"prefill_share"`
}

// Declared gathers the declared side of all six pins.
type Declared struct {
	Model       ModelDeclared
	Prompt      TokensDeclared
	Output      OutputDeclared
	Concurrency ConcurrencyDeclared
	KVCache     KVCacheDeclared
	Mix         MixDeclared
}

// Discovery is what the server said about itself before the run.
type Discovery struct {
	ModelIDs    []string
	MaxModelLen int
	ParamsB     float64
	// Source names the endpoint discovery read ("/v1/models").
	Source string
	// Err is why discovery failed, if it did.
	Err string
}

// Tolerances for verification (DESIGN §1; issue-set defaults).
const (
	promptTolPct = 2.0
	outputTolPct = 10.0
	mixTolPct    = 25.0
	concTolPct   = 10.0
	rateTolPct   = 5.0
	paramsTolPct = 10.0
)

// BuildPins fills the observed and verified side of every pin from what the
// run measured (headline window), what discovery found, and, for open loop,
// the run's pacing (nil in closed loop).
func BuildPins(d Declared, m *Measurement, disc Discovery, headline string, sched *Schedule) Pins {
	var p Pins
	w := m.Windows[headline]
	all := m.Windows[WindowAll]

	p.Model.Declared = d.Model
	p.Model.Observed = ModelObserved{Reported: m.ReportedModel, Listed: disc.ModelIDs, ParamsB: disc.ParamsB}
	p.Model.Verified, p.Model.Reason = verifyModel(d.Model, p.Model.Observed, disc)

	source := "usage"
	if m.TokensFromChunks {
		source = "chunks"
	}
	p.Prompt.Declared = d.Prompt
	p.Prompt.Observed = TokensObserved{PerRequest: all.PromptTokens, Drift: m.PromptDrift, Source: "usage"}
	p.Prompt.Verified, p.Prompt.Reason = verifyDrift(m.PromptDrift, promptTolPct, false)

	p.Output.Declared = d.Output
	p.Output.Observed = TokensObserved{PerRequest: all.OutputPerReq, Drift: m.OutputDrift, Source: source}
	p.Output.Verified, p.Output.Reason = verifyDrift(m.OutputDrift, outputTolPct, d.Output.Exact)

	p.Concurrency.Declared = d.Concurrency
	obs := ConcurrencyObserved{Window: headline, Schedule: sched}
	if w != nil {
		obs.MeanInFlight, obs.MaxInFlight = w.MeanInFlight, w.MaxInFlight
		if w.DurationS > 0 {
			obs.StartRateRPS = float64(w.Requests) / w.DurationS
		}
		if w.E2EMs != nil {
			// In flight counts from the send, E2E from the scheduled start.
			inFlightMs := w.E2EMs.Mean
			if w.ScheduleLagMs != nil {
				inFlightMs -= w.ScheduleLagMs.Mean
			}
			obs.LittlesLaw = obs.StartRateRPS * inFlightMs / 1e3
		}
	}
	p.Concurrency.Observed = obs
	p.Concurrency.Verified, p.Concurrency.Reason = verifyConcurrency(d.Concurrency, obs)

	p.KVCache.Declared = d.KVCache
	p.KVCache.Observed = KVCacheObserved{MaxModelLen: disc.MaxModelLen}
	if disc.MaxModelLen > 0 {
		p.KVCache.Observed.Source = disc.Source
	}
	p.KVCache.Verified, p.KVCache.Reason = verifyKV(d.KVCache, p.KVCache.Observed)

	p.Mix.Declared = d.Mix
	p.Mix.Observed = MixObserved{Window: WindowAll, InputOutputRatio: all.InputOutputRatio,
		RequestedInputOutputRatio: all.RequestedInputOutputRatio, PrefillShare: all.PrefillShare}
	p.Mix.Verified, p.Mix.Reason = verifyMix(d.Mix, p.Mix.Observed)
	return p
}

func pctOff(got, want float64) float64 {
	if want == 0 {
		return math.Inf(1)
	}
	return math.Abs(got-want) / want * 100
}

func verifyModel(d ModelDeclared, o ModelObserved, disc Discovery) (Verdict, string) {
	if d.ParamsB > 0 && o.ParamsB > 0 && pctOff(o.ParamsB, d.ParamsB) > paramsTolPct {
		return Contradicted, fmt.Sprintf("declared %gB parameters, server reports %.3gB", d.ParamsB, o.ParamsB)
	}
	switch {
	case len(o.Listed) > 0 && !slices.Contains(o.Listed, d.Requested):
		return Contradicted, fmt.Sprintf("the server does not list %q (it lists %s)", d.Requested, strings.Join(o.Listed, ", "))
	case o.Reported != "" && o.Reported != d.Requested && !slices.Contains(o.Listed, o.Reported):
		return Contradicted, fmt.Sprintf("requested %q, the server answered as %q", d.Requested, o.Reported)
	case d.ParamsB > 0 && o.ParamsB > 0:
		return Verified, fmt.Sprintf("served as %q with %.3gB parameters", d.Requested, o.ParamsB)
	case len(o.Listed) > 0 || o.Reported != "":
		return Unverifiable, fmt.Sprintf("the server serves %q but does not report its size", d.Requested)
	case disc.Err != "":
		return Unverifiable, "discovery failed: " + disc.Err
	}
	return Unverifiable, "the server reports no model metadata"
}

func verifyDrift(dr *Drift, tolPct float64, exact bool) (Verdict, string) {
	if dr == nil || dr.Requests == 0 {
		return Unverifiable, "the server reported no usage token counts"
	}
	if exact {
		if dr.Exact == dr.Requests {
			return Verified, fmt.Sprintf("exact in all %d requests", dr.Requests)
		}
		return Contradicted, fmt.Sprintf("exact in %d of %d requests (max drift %.1f%%)", dr.Exact, dr.Requests, dr.MaxAbsPct)
	}
	if dr.MeanAbsPct <= tolPct {
		return Verified, fmt.Sprintf("mean drift %.2f%% ≤ %.0f%% over %d requests", dr.MeanAbsPct, tolPct, dr.Requests)
	}
	return Contradicted, fmt.Sprintf("mean drift %.2f%% > %.0f%% over %d requests", dr.MeanAbsPct, tolPct, dr.Requests)
}

func verifyConcurrency(d ConcurrencyDeclared, o ConcurrencyObserved) (Verdict, string) {
	if o.MeanInFlight == 0 {
		return Unverifiable, "no request was in flight in the " + o.Window + " window"
	}
	switch d.Mode {
	case "closed":
		if o.MaxInFlight <= d.Streams && pctOff(o.MeanInFlight, float64(d.Streams)) <= concTolPct {
			return Verified, fmt.Sprintf("%.2f in flight on average (max %d) in the %s window", o.MeanInFlight, o.MaxInFlight, o.Window)
		}
		return Contradicted, fmt.Sprintf("%.2f in flight on average (max %d), declared %d", o.MeanInFlight, o.MaxInFlight, d.Streams)
	case "open":
		sc := o.Schedule
		if sc == nil || sc.Requests < 2 {
			return Unverifiable, "too few requests to measure an arrival rate"
		}
		if sc.Behind {
			return Contradicted, "the client fell behind its schedule: " + sc.Note
		}
		// A random arrival process's mean rate over n gaps spreads by about
		// CV/√n; allow three of those, and never less than 5%.
		tol := max(rateTolPct, 300*arrivalCV(d.Arrival, d.Burstiness)/math.Sqrt(float64(sc.Requests-1)))
		if off := pctOff(sc.ScheduledRateRPS, d.RateRPS); off > tol {
			return Contradicted, fmt.Sprintf("arrivals came at %.4g req/s, %.1f%% off the declared %.4g (allowed %.1f%% at %d requests)",
				sc.ScheduledRateRPS, off, d.RateRPS, tol, sc.Requests)
		}
		return Verified, fmt.Sprintf("sent on schedule at %.4g req/s (scheduled %.4g, declared %.4g; %s arrivals allow ±%.1f%% at %d requests)",
			sc.AchievedRateRPS, sc.ScheduledRateRPS, d.RateRPS, d.Arrival, tol, sc.Requests)
	}
	return Unverifiable, "unknown mode " + d.Mode
}

func verifyKV(d KVCacheDeclared, o KVCacheObserved) (Verdict, string) {
	switch {
	case o.MaxModelLen == 0:
		return Unverifiable, "the endpoint exposes no KV-cache settings"
	case d.MaxModelLen == 0:
		return Unverifiable, fmt.Sprintf("not declared; the server reports max_model_len %d", o.MaxModelLen)
	case d.MaxModelLen == o.MaxModelLen:
		return Verified, fmt.Sprintf("max_model_len %d (%s); the rest is not exposed", o.MaxModelLen, o.Source)
	}
	return Contradicted, fmt.Sprintf("declared max_model_len %d, the server reports %d", d.MaxModelLen, o.MaxModelLen)
}

func verifyMix(d MixDeclared, o MixObserved) (Verdict, string) {
	switch {
	case o.InputOutputRatio == 0:
		return Unverifiable, "no successful request with usage"
	case pctOff(o.InputOutputRatio, o.RequestedInputOutputRatio) > mixTolPct:
		return Contradicted, fmt.Sprintf("input:output %.3g observed vs %.3g requested (> %.0f%% off)",
			o.InputOutputRatio, o.RequestedInputOutputRatio, mixTolPct)
	case d.InputOutputRatio > 0 && pctOff(o.RequestedInputOutputRatio, d.InputOutputRatio) > mixTolPct:
		return Verified, fmt.Sprintf("input:output %.3g observed = %.3g requested; this sample's ratio differs from the declared mean %.3g (more requests narrow it)",
			o.InputOutputRatio, o.RequestedInputOutputRatio, d.InputOutputRatio)
	}
	return Verified, fmt.Sprintf("input:output %.3g observed vs %.3g requested (declared %.3g)",
		o.InputOutputRatio, o.RequestedInputOutputRatio, d.InputOutputRatio)
}
