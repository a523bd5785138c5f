package sim

import (
	"math/rand/v2"
	"sync/atomic"
)

// This file is speculative decoding inside the roofline engine (see
// SpecDecode): how many tokens each sequence drafts in a step, and how
// many of them the step accepts.

// saltSpec seeds a request's acceptance draws from its hash.
const saltSpec = 0x73706563 // "spec"

// seqSpec is one sequence's speculative decoding. rng and alpha are set
// before submission; draft belongs to the engine goroutine; the counts are
// the hand-over to the handler (read once the output is complete).
type seqSpec struct {
	alpha float64    // acceptance rate, 0–1
	rng   *rand.Rand // the request's own draws, seeded by its hash

	draft int // tokens drafted for the step being planned

	drafted, accepted atomic.Int64 // llama.cpp's draft_n and draft_n_accepted
	// steps counts its decode steps, each a verification (SGLang's
	// spec_verify_ct), whether or not it drafted in it: near the end it
	// drafts fewer, at its last token none.
	steps atomic.Int64
}

// newSeqSpec is the speculative decoding of a request whose hash is hash,
// with acceptance rate alpha.
func newSeqSpec(alpha float64, hash uint64) *seqSpec {
	return &seqSpec{alpha: alpha, rng: rand.New(rand.NewPCG(hash, saltSpec))}
}

// specStats are the engine's draft counters, vLLM's: drafts (verification
// steps with at least one draft token), draft tokens, accepted tokens, and
// accepted tokens by draft position (0 to K−1). They belong to the sched.
type specStats struct {
	drafts, draftTokens, accepted int64
	perPos                        []int64
}

// sglangDecodeLogInterval is the decode steps over which SGLang's
// scheduler computes its spec_accept_length and spec_accept_rate gauges,
// its --decode-log-interval (default 40).
const sglangDecodeLogInterval = 40

// sglangGauges are SGLang's speculative-decoding gauges as its scheduler
// computes them: over each run of sglangDecodeLogInterval decode steps,
// the tokens per sequence step (1 + accepted) and the accepted share of
// the tokens proposed (K per sequence step). length and rate are the last
// interval's (0 before the first ends); the rest count the interval under
// way. They belong to the sched.
type sglangGauges struct {
	length, rate             float64
	batches                  int
	seqSteps, tokens, accept int64
}

// observe counts one decode step: seqs speculating sequences each
// verified once, yielding tokens in all, accepted of them draft tokens,
// with k draft tokens counted as proposed to each (SGLang's count).
func (g *sglangGauges) observe(seqs, tokens, accepted int64, k int) {
	g.batches++
	g.seqSteps += seqs
	g.tokens += tokens
	g.accept += accepted
	if g.batches < sglangDecodeLogInterval {
		return
	}
	g.length = float64(g.tokens) / float64(g.seqSteps)
	g.rate = float64(g.accept) / float64(g.seqSteps*int64(k))
	g.batches, g.seqSteps, g.tokens, g.accept = 0, 0, 0, 0
}

// drafts is how many tokens q drafts in its next decode step: K, but
// never more than the tokens it still has to generate less the target's
// own one; 0 without speculative decoding.
func (s *sched) drafts(q *seq) int {
	if q.spec == nil || s.k == 0 {
		return 0
	}
	return max(0, min(s.k, q.out-q.generated-1))
}

// verify is the tokens q's decode step yields: 1 (the target's), plus the
// prefix of its q.spec.draft draft tokens accepted, each in turn with
// probability α drawn from q's own generator. It counts the drafts.
func (s *sched) verify(q *seq) int {
	if q.spec == nil {
		return 1
	}
	q.spec.steps.Add(1)
	if q.spec.draft == 0 {
		return 1
	}
	d, a := q.spec.draft, 0
	for a < d && q.spec.rng.Float64() < q.spec.alpha {
		a++
	}
	st := &s.spec
	st.drafts++
	st.draftTokens += int64(d)
	st.accepted += int64(a)
	for i := range a {
		st.perPos[i]++
	}
	q.spec.drafted.Add(int64(d))
	q.spec.accepted.Add(int64(a))
	return 1 + a
}
