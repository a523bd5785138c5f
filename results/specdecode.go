package results

import (
	"math"

	"github.com/sixpin/sixpin/record"
)

// This file is what the server's speculative decoding did in a window,
// as the server counted it: llama.cpp's per-request draft counts (its
// timings) summed over a window's requests, and vLLM's spec_decode
// counters' rise between the scrapes bounding a window.

// Speculative-decoding states (SpecDecode.State). There is no "off": a
// server that says nothing may speculate all the same.
const (
	// SpecOn: the server counts speculative decoding (vLLM's series
	// exist; llama.cpp sent draft counts in the window).
	SpecOn = "on"
	// SpecUnknown: the server said nothing of speculative decoding.
	SpecUnknown = "unknown"
)

// Sources of speculative-decoding counts (SpecDecode.Source).
const (
	SpecSourceVLLM     = "vllm /metrics"
	SpecSourceLlamaCpp = "llama.cpp timings"
)

// SpecDecode is a server's speculative decoding over one window, in
// vLLM's terms: a draft is one sequence's verification step that had
// draft tokens; its accepted tokens are the prefix of them the target
// model confirmed. A nil figure is one the source does not give.
type SpecDecode struct {
	// State is SpecOn or SpecUnknown; Source is SpecSourceVLLM or
	// SpecSourceLlamaCpp ("" when unknown).
	State  string `json:"state"`
	Source string `json:"source,omitempty"`
	// Requests counts the window's successful requests whose timings
	// carried draft counts (llama.cpp's source only).
	Requests int `json:"requests,omitempty"`
	// Drafts counts verification steps with drafts (vLLM only; llama.cpp
	// does not say).
	Drafts *int64 `json:"drafts,omitempty"`
	// DraftTokens were proposed, AcceptedTokens of them accepted.
	DraftTokens    int64 `json:"draft_tokens"`
	AcceptedTokens int64 `json:"accepted_tokens"`
	// AcceptanceRatePct is AcceptedTokens ÷ DraftTokens, in percent
	// (vLLM's draft acceptance rate); nil when nothing was drafted.
	AcceptanceRatePct *float64 `json:"acceptance_rate_pct,omitempty"`
	// MeanAcceptanceLength is 1 + AcceptedTokens ÷ Drafts: tokens per
	// verification step, the target's own token included (vLLM's mean
	// acceptance length); nil without Drafts.
	MeanAcceptanceLength *float64 `json:"mean_acceptance_length,omitempty"`
	// PerPositionAcceptancePct is, for each draft position 0 to K−1, the
	// share of drafts whose token at that position was accepted, in
	// percent (vLLM's per-position acceptance rate); nil where unknown.
	PerPositionAcceptancePct []float64 `json:"per_position_acceptance_pct,omitempty"`
}

// newSpecDecode is the figures of counts from source; drafts < 0 and nil
// perPos are unknown.
func newSpecDecode(source string, drafts, draftTokens, accepted int64, perPos []int64) *SpecDecode {
	s := &SpecDecode{State: SpecOn, Source: source, DraftTokens: draftTokens, AcceptedTokens: accepted}
	if draftTokens > 0 {
		r := 100 * float64(accepted) / float64(draftTokens)
		s.AcceptanceRatePct = &r
	}
	if drafts >= 0 {
		s.Drafts = &drafts
		if drafts > 0 {
			l := 1 + float64(accepted)/float64(drafts)
			s.MeanAcceptanceLength = &l
			for _, n := range perPos {
				s.PerPositionAcceptancePct = append(s.PerPositionAcceptancePct, 100*float64(n)/float64(drafts))
			}
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
	if s != nil && s.State == SpecOn && s.Source == SpecSourceLlamaCpp {
		a.requests += s.Requests
		a.draftTokens += s.DraftTokens
		a.accept += s.AcceptedTokens
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

// serverSpec is vLLM's spec_decode counters' rise from scrape a to b; nil
// when b has none.
func serverSpec(a, b *record.ServerSample) *SpecDecode {
	if b.SpecDraftTokens == nil || b.SpecAccepted == nil {
		return nil
	}
	n := func(v, base *float64) int64 {
		d := since(v, base)
		if d == nil {
			return -1
		}
		return int64(math.Round(*d))
	}
	var perPos []int64
	for i, v := range b.SpecAcceptedPerPos {
		var base *float64
		if i < len(a.SpecAcceptedPerPos) {
			base = &a.SpecAcceptedPerPos[i]
		}
		perPos = append(perPos, n(&v, base))
	}
	return newSpecDecode(SpecSourceVLLM, n(b.SpecDrafts, a.SpecDrafts), n(b.SpecDraftTokens, a.SpecDraftTokens),
		n(b.SpecAccepted, a.SpecAccepted), perPos)
}
