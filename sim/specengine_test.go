package sim

import (
	"slices"
	"testing"
)

// TestSchedSpecDecode drives a sched in virtual time with speculative
// decoding at the extremes, where the counts are certain: at α = 1 every
// draft is accepted, at α = 0 none; drafts shrink near the end (never
// past the output, less the target's own token), the prefill's token is
// never drafted, and a verification step costs the roofline of 1 + its
// drafts.
func TestSchedSpecDecode(t *testing.T) {
	const k, out = 3, 10
	for _, tc := range []struct {
		name       string
		alpha      float64
		perStep    []int // tokens each decode step yields
		drafts     int64
		draftToks  int64
		accepted   int64
		perPos     []int64
		firstDraft int // drafts verified by the first decode step
	}{
		{"all accepted", 1, []int{4, 4, 1}, 2, 6, 6, []int64{2, 2, 2}, 3},
		{"none accepted", 0, []int{1, 1, 1, 1, 1, 1, 1, 1, 1}, 8, 3*6 + 2 + 1, 0, []int64{0, 0, 0}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := specConfig(k)
			s := newSched(Defaults(c))
			q := newSeq(20, out, nil)
			q.spec = newSeqSpec(tc.alpha, 1)
			s.add(q)
			var perStep []int
			for step := 0; ; step++ {
				st := s.plan()
				if st.idle() {
					break
				}
				if len(st.decode) == 1 {
					ctx := q.prompt + q.generated
					n := 1 + q.spec.draft
					if step == 1 && q.spec.draft != tc.firstDraft {
						t.Errorf("first decode step drafts %d, want %d", q.spec.draft, tc.firstDraft)
					}
					rl := s.rl
					want := rl.stepTime(0, float64(n)*(2*rl.params()+rl.attnFLOPsPerToken()*float64(ctx)),
						rl.KVBytesPerToken()*float64(ctx)+rl.weightBytes())
					if st.dur != want {
						t.Errorf("step %d verifying %d tokens takes %s, want %s", step, n, st.dur, want)
					}
				}
				before := q.generated
				s.apply(st)
				if len(st.decode) == 1 {
					perStep = append(perStep, q.generated-before)
				}
			}
			sp := s.spec
			if !slices.Equal(perStep, tc.perStep) || q.generated != out {
				t.Errorf("decode steps yield %v (%d in all), want %v (%d)", perStep, q.generated, tc.perStep, out)
			}
			if sp.drafts != tc.drafts || sp.draftTokens != tc.draftToks || sp.accepted != tc.accepted || !slices.Equal(sp.perPos, tc.perPos) {
				t.Errorf("counters %+v, want drafts %d, draft tokens %d, accepted %d, per position %v",
					sp, tc.drafts, tc.draftToks, tc.accepted, tc.perPos)
			}
			if q.spec.drafted.Load() != tc.draftToks || q.spec.accepted.Load() != tc.accepted {
				t.Errorf("the request's draft_n %d, draft_n_accepted %d", q.spec.drafted.Load(), q.spec.accepted.Load())
			}
		})
	}
}

// TestSpecTokensPerStep checks, over a long output in virtual time, that
// a verification step yields (1 − α^(K+1)) / (1 − α) tokens on average
// (within 2%) for a few acceptances.
func TestSpecTokensPerStep(t *testing.T) {
	const k, out = 4, 40000
	for _, alpha := range []float64{0.3, 0.55, 0.8, 0.95} {
		s := newSched(Defaults(specConfig(k)))
		q := newSeq(10, out, nil)
		q.spec = newSeqSpec(alpha, 7)
		s.add(q)
		for st := s.plan(); !st.idle(); st = s.plan() {
			s.apply(st)
		}
		got := 1 + float64(s.spec.accepted)/float64(s.spec.drafts) // vLLM's mean acceptance length
		if want := ExpectedTokensPerStep(alpha, k); got < want*0.98 || got > want*1.02 {
			t.Errorf("α %g: %.3f tokens per step, want %.3f", alpha, got, want)
		}
	}
}
