package results

import (
	"fmt"
	"slices"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
)

// DefaultMaxDegenerateShare is the share of a window's sampled answers
// that may be degenerate (record.OutputScore.Degenerate) before the run is
// invalid, when the scenario gives no slo.max_degenerate_share.
const DefaultMaxDegenerateShare = 0.1

// minScoredForVerdict is how many sampled answers a window needs before
// its degenerate share can make a run invalid: one loop in two answers
// says little.
const minScoredForVerdict = 5

// OutputWindow is what the sampled answers of a window's successful
// requests were (record.KeepsText: the first 256 requests, then one in
// 16): how many were scored and how many degenerate, their repetition,
// and the decode speed of each kind — a drafter speeds up what repeats,
// so degenerate answers decoding faster is the drafter's share showing.
type OutputWindow struct {
	Scored          int     `json:"scored"`
	Degenerate      int     `json:"degenerate"`
	DegenerateShare float64 `json:"degenerate_share"`
	// The scored answers' medians (nil in a merged run: medians do not
	// add).
	RepeatShareP50 *float64 `json:"repeat_share_p50,omitempty"`
	Distinct2P50   *float64 `json:"distinct2_p50,omitempty"`
	CompressionP50 *float64 `json:"compression_p50,omitempty"`
	// DecodeTokSP50Degenerate and DecodeTokSP50Healthy are the per-stream
	// decode tok/s medians of the scored answers of each kind whose decode
	// was measured (nil: none, or a merged run).
	DecodeTokSP50Degenerate *float64 `json:"decode_tok_s_p50_degenerate,omitempty"`
	DecodeTokSP50Healthy    *float64 `json:"decode_tok_s_p50_healthy,omitempty"`
}

// outputAcc gathers a window's scored answers. Samples are bounded by
// record.KeepsText, so their figures are kept whole and read exactly.
type outputAcc struct {
	scored, degenerate             int
	repeat, distinct2, compression []float64
	decodeDegenerate, decodeOK     []float64
}

func (a *outputAcc) add(r *record.Record) {
	s := r.Output
	if s == nil {
		return
	}
	a.scored++
	if s.Degenerate() {
		a.degenerate++
	}
	a.repeat = append(a.repeat, s.RepeatShare)
	a.distinct2 = append(a.distinct2, s.Distinct2)
	a.compression = append(a.compression, s.Compression)
}

// decode adds a scored answer's decode tok/s to its kind.
func (a *outputAcc) decode(r *record.Record, tokS float64) {
	switch {
	case r.Output == nil:
	case r.Output.Degenerate():
		a.decodeDegenerate = append(a.decodeDegenerate, tokS)
	default:
		a.decodeOK = append(a.decodeOK, tokS)
	}
}

func (a *outputAcc) result() *OutputWindow {
	if a.scored == 0 {
		return nil
	}
	return &OutputWindow{Scored: a.scored, Degenerate: a.degenerate, DegenerateShare: float64(a.degenerate) / float64(a.scored),
		RepeatShareP50: median(a.repeat), Distinct2P50: median(a.distinct2), CompressionP50: median(a.compression),
		DecodeTokSP50Degenerate: median(a.decodeDegenerate), DecodeTokSP50Healthy: median(a.decodeOK)}
}

// median is the middle of vs (the mean of the two middles), nil when
// empty. It sorts vs.
func median(vs []float64) *float64 {
	if len(vs) == 0 {
		return nil
	}
	slices.Sort(vs)
	m := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		m = (vs[len(vs)/2-1] + m) / 2
	}
	return &m
}

// addOutput adds a shard's window's scored answers into *dst; the
// medians do not add, and are left out.
func addOutput(dst **OutputWindow, src *OutputWindow) {
	if src == nil {
		return
	}
	if *dst == nil {
		*dst = &OutputWindow{}
	}
	d := *dst
	d.Scored += src.Scored
	d.Degenerate += src.Degenerate
	d.DegenerateShare = float64(d.Degenerate) / float64(d.Scored)
}

// degenerateReason says why the headline window's answers make the run
// invalid (their degenerate share over max, or over
// DefaultMaxDegenerateShare when max is 0), or "" when they do not.
func degenerateReason(max float64, headline string, w *Window) string {
	if w == nil || w.Output == nil || w.Output.Scored < minScoredForVerdict {
		return ""
	}
	o := w.Output
	limit, named := max, "slo.max_degenerate_share"
	if limit <= 0 {
		limit, named = DefaultMaxDegenerateShare, "the default when slo.max_degenerate_share is not given"
	}
	if o.DegenerateShare <= limit {
		return ""
	}
	speed := ""
	if d, h := o.DecodeTokSP50Degenerate, o.DecodeTokSP50Healthy; d != nil && h != nil && *h > 0 {
		speed = fmt.Sprintf("; they decoded at %s tok/s (p50) against %s for the others, %s×", num(*d), num(*h), num(*d / *h))
	}
	return fmt.Sprintf("output: %s of the sampled answers (%d of %d, %s window) are degenerate — one phrase looping over half of each or more%s — over %s%% (%s): "+
		"a speculative drafter guesses repeated text best, so their tok/s measures the drafter, not the server; forcing the output length (ignore_eos) on a model that would have stopped is the usual cause",
		pct(o.DegenerateShare), o.Degenerate, o.Scored, headline, speed, numfmt.Plain(limit*100), named)
}
