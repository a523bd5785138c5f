package results

import (
	"math"
	"time"

	"github.com/sixpin/sixpin/record"
)

// This file is what the server's speculative decoding did in a window,
// as the server counted it: llama.cpp's per-request draft counts (its
// timings) summed over a window's requests, vLLM's spec_decode counters'
// rise between the scrapes bounding a window, and SGLang's: its counters'
// rise, or where it has only its acceptance-length gauge, the gauge's
// mean over the window's scrapes.

// Speculative-decoding states (SpecDecode.State). There is no "off": a
// server that says nothing may speculate all the same.
const (
	// SpecOn: the server counts speculative decoding (vLLM's series
	// exist; SGLang's counter exists or its gauge is at least 1;
	// llama.cpp sent draft counts in the window).
	SpecOn = "on"
	// SpecUnknown: the server said nothing of speculative decoding.
	SpecUnknown = "unknown"
)

// Sources of speculative-decoding counts (SpecDecode.Source).
const (
	SpecSourceVLLM = "vllm /metrics"
	// SpecSourceLlamaCppMetrics is llama-server's /metrics (--metrics):
	// vLLM's counters under its llamacpp: prefix, added to as each
	// request ends.
	SpecSourceLlamaCppMetrics = "llama.cpp /metrics"
	SpecSourceLlamaCpp        = "llama.cpp timings"
	// SpecSourceSGLang is SGLang's counters (spec_verify_calls_total,
	// generation_tokens_total, num_requests_total), which it counts when
	// a request finishes: a window's figures are those of the requests
	// that finished between the scrapes that cover it.
	SpecSourceSGLang = "sglang /metrics"
	// SpecSourceSGLangGauge is SGLang's gauge spec_accept_length (an
	// SGLang without the counters, before May 2026): each scrape reads
	// the mean over the server's last decode-log interval (40 decode
	// batches by default) before it, and a window's figure is the mean of
	// the readings of the scrapes after its start up to the first at or
	// after its end, each scrape weighing the same (a mean over time, not
	// over tokens).
	SpecSourceSGLangGauge = "sglang /metrics gauge"
)

// SpecDecode is a server's speculative decoding over one window, in
// vLLM's terms: a draft is one sequence's verification step that had
// draft tokens; its accepted tokens are the prefix of them the target
// model confirmed. A nil figure is one the source does not give.
type SpecDecode struct {
	// State is SpecOn or SpecUnknown; Source is one of the SpecSource
	// constants ("" when unknown).
	State  string `json:"state"`
	Source string `json:"source,omitempty"`
	// Requests counts the window's successful requests whose timings
	// carried draft counts (llama.cpp), or the requests the server
	// finished between the scrapes (SGLang's counters).
	Requests int `json:"requests,omitempty"`
	// Scrapes counts the scrapes whose gauge readings are averaged
	// (SpecSourceSGLangGauge only).
	Scrapes int `json:"scrapes,omitempty"`
	// Drafts counts verification steps with drafts (vLLM), or SGLang's
	// verification steps (its spec_verify_calls_total: every decode step
	// of a speculating request); llama.cpp does not say.
	Drafts *int64 `json:"drafts,omitempty"`
	// DraftTokens were proposed, AcceptedTokens of them accepted. SGLang
	// counts neither: its accepted tokens are its generated tokens less
	// one per request (the prefill's) and one per verification step (the
	// target's own), and its draft tokens are its verification steps
	// times the tokens each proposes (spec_num_draft_tokens − 1, when
	// that gauge held one value over the window).
	DraftTokens    *int64 `json:"draft_tokens,omitempty"`
	AcceptedTokens *int64 `json:"accepted_tokens,omitempty"`
	// AcceptanceRatePct is AcceptedTokens ÷ DraftTokens, in percent
	// (vLLM's draft acceptance rate, SGLang's since April 2026); from
	// SGLang's gauge, (MeanAcceptanceLength − 1) ÷ the tokens each step
	// proposes. nil when nothing was drafted or it is not known.
	AcceptanceRatePct *float64 `json:"acceptance_rate_pct,omitempty"`
	// MeanAcceptanceLength is 1 + AcceptedTokens ÷ Drafts: tokens per
	// verification step, the target's own included (vLLM's mean
	// acceptance length, SGLang's accept length); from SGLang's gauge,
	// the mean of its readings. nil without Drafts.
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length,omitempty"`
	// PerPositionAcceptancePct is, for each draft position 0 to K−1, the
	// share of drafts whose token at that position was accepted, in
	// percent (vLLM's per-position acceptance rate); nil where unknown.
	PerPositionAcceptancePct []float64 `json:"per_position_acceptance_pct,omitempty"`
}

// newSpecDecode is the figures of counts from source; a count < 0 and
// a nil perPos are unknown.
func newSpecDecode(source string, drafts, draftTokens, accepted int64, perPos []int64) *SpecDecode {
	s := &SpecDecode{State: SpecOn, Source: source}
	known := func(n int64) *int64 {
		if n < 0 {
			return nil
		}
		return &n
	}
	s.Drafts, s.DraftTokens, s.AcceptedTokens = known(drafts), known(draftTokens), known(accepted)
	if draftTokens > 0 && accepted >= 0 {
		r := 100 * float64(accepted) / float64(draftTokens)
		s.AcceptanceRatePct = &r
	}
	if drafts > 0 {
		if accepted >= 0 {
			l := 1 + float64(accepted)/float64(drafts)
			s.MeanAcceptanceLength = &l
		}
		for _, n := range perPos {
			s.PerPositionAcceptancePct = append(s.PerPositionAcceptancePct, 100*float64(n)/float64(drafts))
		}
	}
	return s
}

// specAcc sums a window's per-request draft counts (llama.cpp's).
type specAcc struct {
	requests            int
	draftTokens, accept int64
}

// add counts r, a successful request.
func (a *specAcc) add(r *record.Record) {
	if t := r.Server; t.Has && t.DraftTokens > 0 {
		a.requests++
		a.draftTokens += int64(t.DraftTokens)
		a.accept += int64(t.DraftAccepted)
	}
}

// addWindow adds a shard's window (a merge): nil (an older sixpin) and
// unknown add nothing.
func (a *specAcc) addWindow(s *SpecDecode) {
	if s != nil && s.State == SpecOn && s.Source == SpecSourceLlamaCpp && s.DraftTokens != nil && s.AcceptedTokens != nil {
		a.requests += s.Requests
		a.draftTokens += *s.DraftTokens
		a.accept += *s.AcceptedTokens
	}
}

// result is the window's speculative decoding by its requests' timings:
// unknown when none carried draft counts.
func (a *specAcc) result() *SpecDecode {
	if a.requests == 0 {
		return &SpecDecode{State: SpecUnknown}
	}
	s := newSpecDecode(SpecSourceLlamaCpp, -1, a.draftTokens, a.accept, nil)
	s.Requests = a.requests
	return s
}

// serverSpec is the speculative-decoding counters' rise from scrape a to
// scrape c (samples are the run's scrapes): vLLM's, else SGLang's; nil
// when c has neither.
func serverSpec(samples []record.ServerSample, a, c *record.ServerSample) *SpecDecode {
	switch {
	case c.SpecEngine == llamaCpp && c.SpecDraftTokens != nil && *c.SpecDraftTokens == 0:
		// llama-server exposes the counters with or without a draft
		// model: never a draft token since it started says nothing.
		return nil
	case c.SpecDraftTokens != nil && c.SpecAccepted != nil:
		return vllmSpec(a, c)
	case c.SpecVerifySteps != nil:
		return sglangSpec(samples, a, c)
	}
	return nil
}

// rise is counter v's rise since base, rounded; -1 when v is absent.
func rise(v, base *float64) int64 {
	d := since(v, base)
	if d == nil {
		return -1
	}
	return int64(math.Round(*d))
}

// llamaCpp is record.ServerSample.SpecEngine for llama-server's counters
// (endpoint.SourceLlamaCpp).
const llamaCpp = "llama.cpp"

// vllmSpec is vLLM's spec_decode counters' rise from a to c (or
// llama.cpp's, which it names alike).
func vllmSpec(a, c *record.ServerSample) *SpecDecode {
	var perPos []int64
	for i, v := range c.SpecAcceptedPerPos {
		var base *float64
		if i < len(a.SpecAcceptedPerPos) {
			base = &a.SpecAcceptedPerPos[i]
		}
		perPos = append(perPos, rise(&v, base))
	}
	source := SpecSourceVLLM
	if c.SpecEngine == llamaCpp {
		source = SpecSourceLlamaCppMetrics
	}
	return newSpecDecode(source, rise(c.SpecDrafts, a.SpecDrafts), rise(c.SpecDraftTokens, a.SpecDraftTokens),
		rise(c.SpecAccepted, a.SpecAccepted), perPos)
}

// sglangSpec is SGLang's counters' rise from a to c, all three counted
// as requests finish: verification steps V, generated tokens G and
// requests R. Each request's first token comes from its prefill and
// each step adds the target's own token to those it accepts, so the
// accepted draft tokens are G − R − V (less, by what SGLang cut off
// past a stop or the length limit: those it does not count as
// generated). The draft tokens are V times the tokens a step proposes,
// when the scrapes from a to c agree on them.
func sglangSpec(samples []record.ServerSample, a, c *record.ServerSample) *SpecDecode {
	v := rise(c.SpecVerifySteps, a.SpecVerifySteps)
	g, r := rise(c.GenerationTokens, a.GenerationTokens), rise(c.FinishedRequests, a.FinishedRequests)
	accepted := int64(-1)
	if g >= 0 && r >= 0 && g-r-v >= 0 {
		accepted = g - r - v
	}
	draftTokens := int64(-1)
	if k := sglangProposed(samples, a.T, c.T); k > 0 {
		draftTokens = v * int64(k)
	}
	s := newSpecDecode(SpecSourceSGLang, v, draftTokens, accepted, nil)
	s.Requests = int(max(r, 0))
	return s
}

// sglangProposed is the draft tokens each SGLang verification step
// proposed over the scrapes from t0 to t1 (its spec_num_draft_tokens
// gauge less the current token), or 0 when no scrape says or they
// differ: adaptive speculative decoding changed it, or the schedulers
// (averaged over) disagree.
func sglangProposed(samples []record.ServerSample, t0, t1 time.Duration) float64 {
	k := 0.0
	for _, x := range samples {
		if x.T < t0 || x.T > t1 || x.SpecDraftWidth == nil || *x.SpecDraftWidth <= 1 {
			continue
		}
		w := *x.SpecDraftWidth - 1
		if w != math.Trunc(w) || k != 0 && w != k {
			return 0
		}
		k = w
	}
	return k
}

// sglangGaugeSpec is SGLang's spec_accept_length gauge over the scrapes
// in (after, through] (a reading is over the decode steps before it):
// the mean of the readings of at least 1 (SGLang logs 0 when it does not
// speculate), with the acceptance rate (L − 1) ÷ the tokens a step
// proposes where those scrapes agree on them. nil when none has a
// reading.
func sglangGaugeSpec(samples []record.ServerSample, after, through time.Duration) *SpecDecode {
	var g gauge
	for _, x := range samples {
		if x.T > after && x.T <= through && x.SpecAcceptLength != nil && *x.SpecAcceptLength >= 1 {
			g.add(*x.SpecAcceptLength)
		}
	}
	m := g.result()
	if m == nil {
		return nil
	}
	s := &SpecDecode{State: SpecOn, Source: SpecSourceSGLangGauge, Scrapes: g.n, MeanAcceptanceLength: &m.Mean}
	if k := sglangProposed(samples, after, through); k > 0 {
		r := 100 * (m.Mean - 1) / k
		s.AcceptanceRatePct = &r
	}
	return s
}

// SpecDecodeIn is a window's speculative decoding as the server counted
// it: its /metrics (the server's window: vLLM's and llama.cpp's counters
// count steps and positions, SGLang's steps) before llama.cpp's
// per-request counts (the window's); nil when the server said nothing.
func (r *Run) SpecDecodeIn(window string) *SpecDecode {
	if r.Server != nil {
		if sw := r.Server.Windows[window]; sw != nil && sw.SpecDecode != nil && sw.SpecDecode.State == SpecOn {
			return sw.SpecDecode
		}
	}
	if w := r.Windows[window]; w != nil && w.SpecDecode != nil && w.SpecDecode.State == SpecOn {
		return w.SpecDecode
	}
	return nil
}
