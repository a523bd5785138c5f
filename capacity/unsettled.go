package capacity

import (
	"cmp"
	"slices"

	"github.com/sixpin/sixpin/verdict"
)

// Share is the values of one condition beyond its bound at one value of
// the axis, pooled over the points judged for its tier there.
type Share struct {
	Value float64 `json:"value"`
	// N values were judged, Beyond of them beyond the bound.
	N      int64 `json:"n"`
	Beyond int64 `json:"beyond"`
}

// Unsettled reports whether a is not settled by its bound: a pass above a
// failure, or N*+1 that passed once too.
func (a Answer) Unsettled() bool { return len(a.Notes) > 0 || a.HiPasses > 0 }

// Shares are, for tier's condition c (its Key), the values beyond the
// bound at each value the search judged the tier at, in axis order: where
// they stay near what the condition allows (a p90: 10%) across values, no
// concurrency is the last to meet the bound — N* there is a coin toss
// between runs, not a property of the deployment.
func Shares(f *File, tier string, c verdict.Condition) []Share {
	by := map[float64]*Share{}
	for _, p := range f.Points {
		if !slices.Contains(p.Judged, tier) || !p.Valid {
			continue
		}
		tv := p.Verdict(tier)
		if tv == nil {
			continue
		}
		for _, cv := range tv.Conditions {
			if cv.Condition.Key() != c.Key() || cv.N == 0 {
				continue
			}
			s := by[p.Value]
			if s == nil {
				s = &Share{Value: p.Value}
				by[p.Value] = s
			}
			s.N += cv.N
			s.Beyond += cv.Beyond
		}
	}
	out := make([]Share, 0, len(by))
	for _, s := range by {
		out = append(out, *s)
	}
	slices.SortFunc(out, func(x, y Share) int { return cmp.Compare(x.Value, y.Value) })
	return out
}
