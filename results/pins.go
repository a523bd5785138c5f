package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
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
	Model       Pin[scenario.ModelDeclared, ModelObserved]             `json:"model"`
	Prompt      Pin[scenario.TokensDeclared, TokensObserved]           `json:"prompt"`
	Output      Pin[scenario.OutputDeclared, TokensObserved]           `json:"output"`
	Concurrency Pin[scenario.ConcurrencyDeclared, ConcurrencyObserved] `json:"concurrency"`
	KVCache     Pin[scenario.KVCachePin, KVCacheObserved]              `json:"kv_cache"`
	Mix         Pin[scenario.MixDeclared, MixObserved]                 `json:"mix"`
}

// Declared returns the declared side of the six pins.
func (p Pins) Declared() scenario.Declared {
	return scenario.Declared{Model: p.Model.Declared, Prompt: p.Prompt.Declared, Output: p.Output.Declared,
		Concurrency: p.Concurrency.Declared, KVCache: p.KVCache.Declared, Mix: p.Mix.Declared}
}

// ModelObserved is what the server said about its model.
type ModelObserved struct {
	// Reported is the model id in the server's responses.
	Reported string `json:"reported,omitempty"`
	// Listed is the ids /v1/models listed.
	Listed []string `json:"listed,omitempty"`
	// Engine is the serving engine discovery recognised.
	Engine       string  `json:"engine,omitempty"`
	ParamsB      float64 `json:"params_b,omitempty"`
	Quantization string  `json:"quantization,omitempty"`
	Dtype        string  `json:"dtype,omitempty"`
	// Source names where ParamsB came from.
	Source string `json:"source,omitempty"`
}

// TokensObserved is a token-count pin as the server counted it (usage),
// over the successful requests of the whole run.
type TokensObserved struct {
	PerRequest *Dist  `json:"per_request"`
	Drift      *Drift `json:"drift,omitempty"`
	// Source is "usage" (the server's count) or "chunks" (the client's).
	Source string `json:"source"`
	// Served compares what every issued request asked for with what the
	// requests that succeeded asked for: a class of requests that failed
	// changes the workload actually served.
	Served *Served `json:"served,omitempty"`
	// OverContext counts the planned prompts longer than the server's
	// context (prompt pin only; nil when none or the context is unknown).
	OverContext *OverContext `json:"over_context,omitempty"`
	// UnplannedCache is set when the server's prefix cache served prompt
	// tokens the scenario did not plan to share (prompt pin only).
	UnplannedCache *UnplannedCache `json:"unplanned_cache,omitempty"`
}

// Served compares the requested lengths of all issued requests with those
// of the requests that succeeded (interrupted requests are left out of
// both), in tokens.
type Served struct {
	Issued    int     `json:"issued"`
	Failed    int     `json:"failed"`
	MeanAll   float64 `json:"requested_mean_all"`
	MeanOK    float64 `json:"requested_mean_served"`
	OffPct    float64 `json:"off_pct"`
	Tolerance float64 `json:"tolerance_pct"`
}

// beyond reports whether the served workload differs from the issued one
// beyond the tolerance.
func (s *Served) beyond() bool { return s != nil && s.Failed > 0 && s.OffPct > s.Tolerance }

// reason says how the served workload differs, naming the failed share.
func (s *Served) reason(what string) string {
	return fmt.Sprintf("the served workload is not the requested one: %s of %s failed (%s), and those that succeeded asked for %s %s against %s over all issued (%.1f%% off, more than %s%%)",
		numfmt.Int(s.Failed), reqs(s.Issued), pct(float64(s.Failed)/float64(s.Issued)), what, num(s.MeanOK), num(s.MeanAll), s.OffPct, trimPct(s.Tolerance))
}

// OverContext counts planned requests that do not fit the server's
// context (prompt + output > ContextTokens).
type OverContext struct {
	// Planned is how many planned requests were checked (a run bounded by
	// time alone: its first ExpectationSamples); Exceeding of them do not
	// fit.
	Planned   int `json:"planned"`
	Exceeding int `json:"exceeding"`
	// ContextTokens is the server's context (max_model_len, n_ctx per slot).
	ContextTokens int `json:"context_tokens"`
	// Allowed is true when they were sent on purpose (--allow-over-context).
	Allowed bool `json:"allowed,omitempty"`
	// Sampled is true when the plan is unbounded and Planned is a sample.
	Sampled bool `json:"sampled,omitempty"`
}

// String is the warning: "12 of 40 planned prompts exceed the server's
// 32,768-token context".
func (o *OverContext) String() string {
	of := "planned"
	if o.Sampled {
		of = "the first planned"
	}
	return fmt.Sprintf("%s of %s %s exceed the server's %s-token context (prompt + output)",
		numfmt.Int(o.Exceeding), numfmt.Int(o.Planned), of+" "+plural(o.Planned, "prompt"), numfmt.Int(o.ContextTokens))
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// UnplannedCache is prompt tokens served from a prefix cache that the
// scenario did not plan (no shared prefix, not agentic, not a replay):
// the prompts were seen before, by an earlier run with the same prompt
// salt, so TTFT measures a warm cache.
type UnplannedCache struct {
	CachedTokens int64   `json:"cached_tokens"`
	InputTokens  int64   `json:"input_tokens"`
	Share        float64 `json:"share"`
	// Requests is how many requests reported usage; CommonStart is set
	// when the share is so small (under commonStartShare) that it is the
	// prompts' common start the server matched (the chat template's
	// opening, a few tokens per request), not prompts seen before.
	Requests    int  `json:"requests,omitempty"`
	CommonStart bool `json:"common_start,omitempty"`
}

// commonStartShare is the cached share of the prompt tokens below which
// unplanned cache hits are the prompts' common start: a prompt seen
// before is served almost whole from the cache, and llama.cpp, for one,
// reuses a slot's first few tokens (the chat template's opening) for
// every prompt.
const commonStartShare = 0.05

// String is the warning, or, for a common start, the note.
func (u *UnplannedCache) String() string {
	if u.CommonStart {
		return fmt.Sprintf("the server's prefix cache served %s of the prompt tokens (%s of %s, about %s per request): the prompts' common start (the chat template's opening), not a warm cache",
			pct(u.Share), group(float64(u.CachedTokens)), group(float64(u.InputTokens)), group(float64(u.CachedTokens)/float64(max(u.Requests, 1))))
	}
	return fmt.Sprintf("the server's prefix cache served %s of the prompt tokens (%s of %s), which the scenario did not plan: these prompts were sent before (the same --prompt-salt?), so TTFT measures a warm cache",
		pct(u.Share), group(float64(u.CachedTokens)), group(float64(u.InputTokens)))
}

// Drift compares the server's token count with the requested one, per
// request, in percent of the requested count.
type Drift struct {
	Requests   int     `json:"requests"`
	MeanPct    float64 `json:"mean_pct"`
	MeanAbsPct float64 `json:"mean_abs_pct"`
	MaxAbsPct  float64 `json:"max_abs_pct"`
	// MeanObserved and MeanRequested are the mean counts in tokens.
	MeanObserved  float64 `json:"mean_observed"`
	MeanRequested float64 `json:"mean_requested"`
	// Exact counts requests with no drift at all.
	Exact int `json:"exact"`
	// TolerancePct is the allowed drift; Outside counts requests beyond
	// it (for prompts never tighter than one token).
	TolerancePct float64 `json:"tolerance_pct"`
	Outside      int     `json:"outside_tolerance"`
	// AbsPct is the distribution of |drift| in percent over the requests
	// (exact requests count at its floor, 0.001%).
	AbsPct *Dist `json:"abs_pct"`
	// Histogram holds AbsPct's histogram, so that shards merge (nil in
	// files written before it).
	Histogram *EncodedHistogram `json:"histogram,omitempty"`
}

// ConcurrencyObserved is the in-flight count over the headline window,
// with Little's law as a cross-check (mean in flight ≈ start rate × mean
// latency), and for open loop the run's pacing.
type ConcurrencyObserved struct {
	Window       string  `json:"window"`
	MeanInFlight float64 `json:"mean_in_flight"`
	MaxInFlight  int     `json:"max_in_flight"`
	// MeanServedInFlight counts only requests that succeeded: the
	// concurrency the server served. A request that failed held a stream
	// but was not served (failing instantly, it holds next to nothing).
	MeanServedInFlight float64 `json:"mean_served_in_flight"`
	// StartRateRPS is requests started per second in the window.
	StartRateRPS float64   `json:"start_rate_rps"`
	LittlesLaw   float64   `json:"littles_law_in_flight"`
	Schedule     *Schedule `json:"schedule,omitempty"`
	// WindowS is the window's length and MeanRequestS a request's mean
	// time in flight, both in seconds: a window shorter than a request
	// cannot show concurrency.
	WindowS      float64 `json:"window_s"`
	MeanRequestS float64 `json:"mean_request_s"`
	// MeanSessions and MaxSessions count agentic sessions under way (think
	// time included): what the pin declares for agentic workloads.
	MeanSessions float64 `json:"mean_sessions,omitempty"`
	MaxSessions  int     `json:"max_sessions,omitempty"`
	// Server is what the server served of it (nil: the server says
	// nothing of it).
	Server *ServedConcurrency `json:"server,omitempty"`
}

// KVCacheObserved is what discovery found of the server's KV settings
// (zero: not exposed), with where each came from.
type KVCacheObserved struct {
	MaxModelLen          int     `json:"max_model_len,omitempty"`
	BudgetTokens         int     `json:"budget_tokens,omitempty"`
	BlockSize            int     `json:"block_size,omitempty"`
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`
	PrefixCaching        *bool   `json:"prefix_caching,omitempty"`
	Batching             string  `json:"batching,omitempty"`
	// Sources names each fact's origin, by field.
	Sources map[string]string `json:"sources,omitempty"`
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
	// Served compares the requested input:output ratio of all issued
	// requests with that of the requests that succeeded.
	Served *Served `json:"served,omitempty"`
}

// Declared is the declared pins (built by the scenario's plan) and what
// the server's context implies for judging them.
type Declared struct {
	scenario.Declared
	// OverContext counts the planned prompts that do not fit the server's
	// context (nil: none, or the context is unknown).
	OverContext *OverContext `json:"over_context,omitempty"`
}

// Tolerances for verification (DESIGN §1; issue-set defaults).
const (
	// MixTolerancePct bounds how far an input:output ratio may be from
	// another before the mix pins differ.
	MixTolerancePct = 25.0
	concTolPct      = 10.0
	rateTolPct      = 5.0
	// ParamsTolerancePct bounds how far a model's parameter count may be
	// from another before the model pins differ.
	ParamsTolerancePct = 10.0
)

// BuildPins fills the observed and verified side of every pin from what the
// run measured (headline window), what discovery found, what the server's
// metrics said during the run (srv; nil: not scraped), and, for open loop,
// the run's pacing (nil in closed loop).
func BuildPins(d Declared, m *Measurement, disc record.Discovery, srv *Server, headline string, sched *Schedule) Pins {
	var p Pins
	w := m.Windows[headline]
	all := m.Windows[WindowAll]

	p.Model.Declared = d.Model
	p.Model.Observed = ModelObserved{Reported: m.ReportedModel, Listed: disc.ModelIDs, Engine: disc.Engine,
		ParamsB: disc.Model.ParamsB, Quantization: disc.Model.Quantization, Dtype: disc.Model.Dtype,
		Source: disc.From["model.params_b"]}
	p.Model.Verified, p.Model.Reason = verifyModel(d.Model, p.Model.Observed, disc)

	source := "usage"
	if m.TokensFromChunks {
		source = "chunks"
	}
	p.Prompt.Declared = d.Prompt
	p.Prompt.Observed = TokensObserved{PerRequest: all.PromptTokens, Drift: m.PromptDrift, Source: "usage",
		Served: m.Issued.prompt(d.Prompt.TolerancePct), OverContext: d.OverContext}
	p.Prompt.Verified, p.Prompt.Reason = verifyPromptDrift(m.PromptDrift)
	if d.Prompt.Unpinned != "" {
		p.Prompt.Verified, p.Prompt.Reason = verifyUnpinned(d.Prompt.Unpinned, m.PromptDrift)
		p.Prompt.Observed.Drift = nil // nothing was requested to drift from
	}
	if o := d.OverContext; o != nil && o.Exceeding > 0 && !o.Allowed {
		p.Prompt.Verified, p.Prompt.Reason = Contradicted, o.String()+": the server refuses them, so the declared prompts cannot be served (--allow-over-context sends them on purpose)"
	} else if s := p.Prompt.Observed.Served; s.beyond() {
		p.Prompt.Verified, p.Prompt.Reason = Contradicted, s.reason("prompts of")
	}
	if t := m.Tokens; !d.CachePlanned && t.CachedInput > 0 && t.Input > 0 {
		u := &UnplannedCache{CachedTokens: t.CachedInput, InputTokens: t.Input, Share: float64(t.CachedInput) / float64(t.Input), Requests: t.Requests}
		u.CommonStart = u.Share < commonStartShare
		p.Prompt.Observed.UnplannedCache = u
		p.Prompt.Reason += "; " + u.String()
	}

	p.Output.Declared = d.Output
	p.Output.Observed = TokensObserved{PerRequest: all.OutputPerReq, Drift: m.OutputDrift, Source: source,
		Served: m.Issued.output(d.Output.TolerancePct)}
	p.Output.Verified, p.Output.Reason = verifyOutputDrift(m.OutputDrift, d.Output.Exact)
	if d.Output.Unpinned != "" {
		p.Output.Verified, p.Output.Reason = verifyUnpinned(d.Output.Unpinned, m.OutputDrift)
		p.Output.Observed.Drift = nil
	}
	if s := p.Output.Observed.Served; s.beyond() {
		p.Output.Verified, p.Output.Reason = Contradicted, s.reason("outputs of")
	}

	p.Concurrency.Declared = d.Concurrency
	obs := ConcurrencyObserved{Window: headline, Schedule: sched}
	if w != nil {
		obs.MeanInFlight, obs.MaxInFlight = w.MeanInFlight, w.MaxInFlight
		obs.MeanServedInFlight = w.MeanServedInFlight
		if w.DurationS > 0 {
			obs.StartRateRPS = float64(w.Requests) / w.DurationS
		}
		obs.LittlesLaw = w.LittlesLawInFlight
		if w.E2EMs != nil {
			// In flight counts from the send, E2E from the scheduled start.
			inFlightMs := w.E2EMs.Mean
			if w.ScheduleLagMs != nil {
				inFlightMs -= w.ScheduleLagMs.Mean
			}
			obs.MeanRequestS = inFlightMs / 1e3
		}
		obs.WindowS = w.DurationS
		if len(m.Sessions.All) > 0 {
			var ev []int64
			for _, ss := range m.Sessions.All {
				ev = append(ev, int64(ss.StartS*1e6)<<1|1, int64(ss.EndS*1e6)<<1)
			}
			slices.Sort(ev)
			obs.MeanSessions, obs.MaxSessions = inFlight(ev, Span{secDur(w.StartS), secDur(w.EndS)})
		}
	}
	if w != nil {
		var sw *ServerWindow
		if srv != nil {
			sw = srv.Windows[headline]
		}
		obs.Server = servedConcurrency(obs.MeanInFlight, w, sw, disc.KV, disc.From["kv_cache.max_num_seqs"])
	}
	p.Concurrency.Observed = obs
	p.Concurrency.Verified, p.Concurrency.Reason = verifyConcurrency(d.Concurrency, obs)
	p.Concurrency.Verified, p.Concurrency.Reason = judgeServed(d.Concurrency, obs, p.Concurrency.Verified, p.Concurrency.Reason)

	p.KVCache.Declared = d.KVCache
	kv := disc.KV
	p.KVCache.Observed = KVCacheObserved{MaxModelLen: kv.MaxModelLen, BudgetTokens: kv.BudgetTokens,
		BlockSize: kv.BlockSize, GPUMemoryUtilization: kv.GPUMemoryUtilization, MaxNumSeqs: kv.MaxNumSeqs,
		PrefixCaching: kv.PrefixCaching, Batching: kv.Batching}
	for _, f := range []string{"max_model_len", "budget_tokens", "block_size", "gpu_memory_utilization", "max_num_seqs", "prefix_caching", "batching"} {
		if from, ok := disc.From["kv_cache."+f]; ok {
			if p.KVCache.Observed.Sources == nil {
				p.KVCache.Observed.Sources = map[string]string{}
			}
			p.KVCache.Observed.Sources[f] = from
		}
	}
	p.KVCache.Verified, p.KVCache.Reason = verifyKV(d.KVCache, p.KVCache.Observed, disc.Engine)

	p.Mix.Declared = d.Mix
	p.Mix.Observed = MixObserved{Window: WindowAll, InputOutputRatio: all.InputOutputRatio,
		RequestedInputOutputRatio: all.RequestedInputOutputRatio, PrefillShare: all.PrefillShare}
	p.Mix.Verified, p.Mix.Reason = verifyMix(d.Mix, p.Mix.Observed)
	if d.Prompt.Unpinned != "" && p.Mix.Observed.InputOutputRatio > 0 {
		p.Mix.Verified, p.Mix.Reason = Verified, fmt.Sprintf("input:output %s observed, as the replayed conversations and the model's answers make it",
			num(p.Mix.Observed.InputOutputRatio))
	}
	p.Mix.Observed.Served = m.Issued.ratio()
	if r := p.Mix.Observed.Served; r.beyond() {
		p.Mix.Verified, p.Mix.Reason = Contradicted, r.reason("an input:output ratio of")
	}
	return p
}

func pctOff(got, want float64) float64 {
	if want == 0 {
		return math.Inf(1)
	}
	return math.Abs(got-want) / want * 100
}

func verifyModel(d scenario.ModelDeclared, o ModelObserved, disc record.Discovery) (Verdict, string) {
	if d.ParamsB > 0 && o.ParamsB > 0 && pctOff(o.ParamsB, d.ParamsB) > ParamsTolerancePct {
		return Contradicted, fmt.Sprintf("declared %sB parameters, server reports %sB", numfmt.Plain(d.ParamsB), numfmt.Short(o.ParamsB))
	}
	switch {
	case len(o.Listed) > 0 && !slices.Contains(o.Listed, d.Requested):
		return Contradicted, fmt.Sprintf("the server does not list %q (it lists %s)", d.Requested, strings.Join(o.Listed, ", "))
	case o.Reported != "" && o.Reported != d.Requested && !slices.Contains(o.Listed, o.Reported):
		return Contradicted, fmt.Sprintf("requested %q, the server answered as %q", d.Requested, o.Reported)
	case d.ParamsB > 0 && o.ParamsB > 0:
		return Verified, fmt.Sprintf("served as %q with %sB parameters", d.Requested, numfmt.Short(o.ParamsB))
	case o.ParamsB > 0 && (len(o.Listed) > 0 || o.Reported != ""):
		return Unverifiable, fmt.Sprintf("the server serves %q with %sB parameters; the scenario declares no size to check (pins.model.params_b)",
			d.Requested, numfmt.Short(o.ParamsB))
	case len(o.Listed) > 0 || o.Reported != "":
		return Unverifiable, fmt.Sprintf("the server serves %q but does not report its size", d.Requested)
	case disc.Err != "":
		return Unverifiable, "discovery failed: " + disc.Err
	}
	return Unverifiable, "the server reports no model metadata"
}

// verifyPromptDrift: every request's prompt within tolerance.
func verifyPromptDrift(dr *Drift) (Verdict, string) {
	switch {
	case dr == nil || dr.Requests == 0:
		return Unverifiable, "the server reported no usage token counts"
	case dr.Outside > 0:
		return Contradicted, fmt.Sprintf("%s of %s drifted beyond ±%s%% (worst %.2f%%)",
			numfmt.Int(dr.Outside), reqs(dr.Requests), trimPct(dr.TolerancePct), dr.MaxAbsPct)
	case dr.Exact == dr.Requests:
		return Verified, "exact in " + all(dr.Requests)
	}
	return Verified, fmt.Sprintf("%s within ±%s%% (worst %.2f%%)", all(dr.Requests), trimPct(dr.TolerancePct), dr.MaxAbsPct)
}

// verifyUnpinned: a length the scenario does not pin (why says why: a
// replayed dataset's own texts, the model's own answers) is reported,
// not checked against the requested one.
func verifyUnpinned(why string, dr *Drift) (Verdict, string) {
	if dr == nil || dr.Requests == 0 {
		return Unverifiable, "the server reported no usage token counts"
	}
	return Verified, fmt.Sprintf("%s: mean %s tokens served over %s", why, num(dr.MeanObserved), reqs(dr.Requests))
}

// verifyOutputDrift: exact in every request, or the mean within tolerance.
func verifyOutputDrift(dr *Drift, exact bool) (Verdict, string) {
	switch {
	case dr == nil || dr.Requests == 0:
		return Unverifiable, "the server reported no usage token counts"
	case exact && dr.Exact == dr.Requests:
		return Verified, "exact in " + all(dr.Requests)
	case exact:
		return Contradicted, fmt.Sprintf("exact in %s of %s (worst drift %.1f%%, mean %s vs %s requested): the endpoint stopped early or ignored max_tokens",
			numfmt.Int(dr.Exact), reqs(dr.Requests), dr.MaxAbsPct, num(dr.MeanObserved), num(dr.MeanRequested))
	}
	off := pctOff(dr.MeanObserved, dr.MeanRequested)
	if off <= dr.TolerancePct {
		return Verified, fmt.Sprintf("mean %s vs %s requested (%.1f%% ≤ %s%%) over %s",
			num(dr.MeanObserved), num(dr.MeanRequested), off, trimPct(dr.TolerancePct), reqs(dr.Requests))
	}
	return Contradicted, fmt.Sprintf("mean %s vs %s requested (%.1f%% > %s%%) over %s",
		num(dr.MeanObserved), num(dr.MeanRequested), off, trimPct(dr.TolerancePct), reqs(dr.Requests))
}

// reqs is "1 request" or "N requests".
func reqs(n int) string { return numfmt.Count(n, "request", "") }

// all is "the 1 request" or "all N requests".
func all(n int) string {
	if n == 1 {
		return "the 1 request"
	}
	return "all " + reqs(n)
}

func trimPct(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
func verifyConcurrency(d scenario.ConcurrencyDeclared, o ConcurrencyObserved) (Verdict, string) {
	if o.MeanInFlight == 0 {
		return Unverifiable, "no request was in flight in the " + o.Window + " window"
	}
	if o.WindowS < o.MeanRequestS {
		return Unverifiable, fmt.Sprintf("the %s window (%s s) is shorter than a request (%s s on average): too short to observe concurrency",
			o.Window, num(o.WindowS), num(o.MeanRequestS))
	}
	switch {
	case d.Mode == scenario.ModeTrace:
		if o.MaxSessions > 0 && pctOff(float64(o.MaxSessions), float64(d.Streams)) <= 25 {
			return Verified, fmt.Sprintf("at most %d sessions at once, as recorded (%d)", o.MaxSessions, d.Streams)
		}
		return Unverifiable, fmt.Sprintf("at most %d sessions at once against %d recorded: the endpoint answers at another speed than the recorded one, so sessions overlap differently", o.MaxSessions, d.Streams)
	case d.Mode == scenario.ModeClosed && o.MaxSessions > 0:
		mean, want := o.MeanSessions, float64(d.Streams)
		switch {
		case o.MaxSessions > d.Streams:
			return Contradicted, fmt.Sprintf("%d sessions at once, declared %d", o.MaxSessions, d.Streams)
		case mean >= 0.9*want:
			return Verified, fmt.Sprintf("%.2f sessions under way on average (max %d) in the %s window; %.2f requests in flight between think times",
				mean, o.MaxSessions, o.Window, o.MeanInFlight)
		}
		return Contradicted, fmt.Sprintf("%.2f sessions under way on average (max %d), declared %d", mean, o.MaxSessions, d.Streams)
	case d.Mode == scenario.ModeClosed:
		mean, want := o.MeanInFlight, float64(d.Streams)
		switch {
		case o.MaxInFlight > d.Streams:
			return Contradicted, fmt.Sprintf("%d in flight at once, declared %d", o.MaxInFlight, d.Streams)
		case mean >= 0.5*want && o.MeanServedInFlight < 0.5*want:
			return Contradicted, fmt.Sprintf("%s in flight on average (max %d) of %d, but only %s on requests that succeeded: the requests in flight were failing, so the server did not serve the declared concurrency",
				num(mean), o.MaxInFlight, d.Streams, num(o.MeanServedInFlight))
		case mean >= 0.9*want:
			return Verified, fmt.Sprintf("%.2f in flight on average (max %d) in the %s window", mean, o.MaxInFlight, o.Window)
		case mean >= 0.5*want:
			return Verified, fmt.Sprintf("%.2f in flight on average (max %d) of %d: each stream spent %.0f%% of the time between requests (short requests make the client's turnaround show)",
				mean, o.MaxInFlight, d.Streams, 100*(1-mean/want))
		}
		return Contradicted, fmt.Sprintf("%.2f in flight on average (max %d), declared %d: the client could not keep its streams busy", mean, o.MaxInFlight, d.Streams)
	case d.Mode == scenario.ModeOpen:
		sc := o.Schedule
		if sc == nil || sc.Requests < 2 {
			return Unverifiable, "too few requests to measure an arrival rate"
		}
		if sc.Behind {
			return Contradicted, "the client fell behind its schedule: " + sc.Note
		}
		if o.MeanInFlight > 0 && o.MeanServedInFlight < 0.5*o.MeanInFlight {
			return Contradicted, fmt.Sprintf("sent on schedule, but of %s requests in flight on average only %s were on requests that succeeded: the declared rate was not served",
				num(o.MeanInFlight), num(o.MeanServedInFlight))
		}
		// A random arrival process's mean rate over n gaps spreads by about
		// CV/√n; allow three of those, and never less than 5%.
		tol := max(rateTolPct, 300*arrivalCV(d.Arrival, d.Burstiness)/math.Sqrt(float64(sc.Requests-1)))
		if off := pctOff(sc.ScheduledRateRPS, d.RateRPS); off > tol {
			return Contradicted, fmt.Sprintf("arrivals came at %s req/s, %.1f%% off the declared %s (allowed %.1f%% at %d requests)",
				num(sc.ScheduledRateRPS), off, numfmt.Plain(d.RateRPS), tol, sc.Requests)
		}
		return Verified, fmt.Sprintf("sent on schedule at %s req/s (scheduled %s, declared %s; %s arrivals allow ±%.1f%% at %d requests)",
			num(sc.AchievedRateRPS), num(sc.ScheduledRateRPS), numfmt.Plain(d.RateRPS), d.Arrival, tol, sc.Requests)
	}
	return Unverifiable, "unknown mode " + string(d.Mode)
}

// verifyKV compares every declared KV setting the server exposes: any
// mismatch contradicts the pin; none compared leaves it unverifiable.
// engine is the serving engine discovery recognised ("" unknown).
func verifyKV(d scenario.KVCachePin, o KVCacheObserved, engine string) (Verdict, string) {
	var agree, differ, hidden []string
	check := func(name string, declared, observed any, set, seen, same bool) {
		switch {
		case !set:
		case !seen:
			hidden = append(hidden, name)
		case same:
			agree = append(agree, fmt.Sprintf("%s %v", name, observed))
		default:
			differ = append(differ, fmt.Sprintf("%s declared %v, server %v", name, declared, observed))
		}
	}
	check("max_model_len", d.MaxModelLen, o.MaxModelLen, d.MaxModelLen > 0, o.MaxModelLen > 0, d.MaxModelLen == o.MaxModelLen)
	check("gpu_memory_utilization", d.GPUMemoryUtilization, o.GPUMemoryUtilization, d.GPUMemoryUtilization > 0,
		o.GPUMemoryUtilization > 0, math.Abs(d.GPUMemoryUtilization-o.GPUMemoryUtilization) < 0.005)
	check("max_num_seqs", d.MaxNumSeqs, o.MaxNumSeqs, d.MaxNumSeqs > 0, o.MaxNumSeqs > 0, d.MaxNumSeqs == o.MaxNumSeqs)
	if d.PrefixCaching != nil {
		seen := o.PrefixCaching != nil
		check("prefix_caching", *d.PrefixCaching, deref(o.PrefixCaching), true, seen, seen && *d.PrefixCaching == *o.PrefixCaching)
	}
	check("batching", d.Batching, o.Batching, d.Batching != "", o.Batching != "", d.Batching == o.Batching)
	notExposed := strings.Join(hidden, ", ")
	if engine == "llama.cpp" && slices.Contains(hidden, "batching") {
		notExposed += " (llama.cpp batches continuously unless started with --no-cont-batching, which it does not expose)"
	}
	hiddenNote := ""
	if len(hidden) > 0 {
		hiddenNote = "; not exposed: " + notExposed
	}
	switch {
	case len(differ) > 0:
		return Contradicted, strings.Join(differ, "; ")
	case len(agree) > 0:
		return Verified, strings.Join(agree, ", ") + " as declared" + hiddenNote
	case o.MaxModelLen == 0 && o.BudgetTokens == 0 && o.MaxNumSeqs == 0:
		return Unverifiable, "the endpoint exposes no KV-cache settings"
	case len(hidden) == 0:
		return Unverifiable, fmt.Sprintf("nothing declared to check (the server reports max_model_len %d)", o.MaxModelLen)
	}
	return Unverifiable, "declared settings not exposed: " + notExposed
}

func deref(b *bool) bool { return b != nil && *b }

func secDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func verifyMix(d scenario.MixDeclared, o MixObserved) (Verdict, string) {
	switch {
	case o.InputOutputRatio == 0:
		return Unverifiable, "no successful request with usage"
	case pctOff(o.InputOutputRatio, o.RequestedInputOutputRatio) > MixTolerancePct:
		return Contradicted, fmt.Sprintf("input:output %s observed vs %s requested (> %.0f%% off)",
			num(o.InputOutputRatio), num(o.RequestedInputOutputRatio), MixTolerancePct)
	case d.InputOutputRatio > 0 && pctOff(o.RequestedInputOutputRatio, d.InputOutputRatio) > MixTolerancePct:
		return Verified, fmt.Sprintf("input:output %s observed = %s requested; this sample's ratio differs from the declared mean %s (more requests narrow it)",
			num(o.InputOutputRatio), num(o.RequestedInputOutputRatio), num(d.InputOutputRatio))
	}
	return Verified, fmt.Sprintf("input:output %s observed vs %s requested (declared %s)",
		num(o.InputOutputRatio), num(o.RequestedInputOutputRatio), num(d.InputOutputRatio))
}

// PinNames are the six pins' names as the results file and
// --allow-pin-mismatch spell them, in pin order.
var PinNames = []string{"model", "prompt", "output", "concurrency", "kv_cache", "mix"}

// Validity judges a run by its pins, MLPerf-style: the figures describe
// the declared workload only if every pin the server could be checked
// against held within its tolerance — the model served, prompt and output
// lengths (over every issued request: a class of failed requests changes
// what was served), the concurrency the server served, its KV-cache
// settings and the served mix. Any pin contradicted makes the run
// invalid, unless the user accepted that pin's mismatch knowingly
// (allowed holds PinNames; `--allow-pin-mismatch`); reasons says why.
// (Assemble adds the error budget.)
func Validity(p Pins, allowed []string) (valid bool, reasons []string) {
	for _, c := range []struct {
		name    string
		verdict Verdict
		reason  string
	}{
		{"model", p.Model.Verified, p.Model.Reason},
		{"prompt", p.Prompt.Verified, p.Prompt.Reason},
		{"output", p.Output.Verified, p.Output.Reason},
		{"concurrency", p.Concurrency.Verified, p.Concurrency.Reason},
		{"kv_cache", p.KVCache.Verified, p.KVCache.Reason},
		{"mix", p.Mix.Verified, p.Mix.Reason},
	} {
		if c.verdict == Contradicted && !slices.Contains(allowed, c.name) {
			reasons = append(reasons, c.name+": "+c.reason)
		}
	}
	return len(reasons) == 0, reasons
}
