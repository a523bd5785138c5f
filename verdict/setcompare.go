package verdict

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// kindName is a set's kind with its article: "a sweep", "a repeat", "a
// bake-off".
func kindName(kind string) string {
	if kind == results.SetBakeoff {
		return "a bake-off"
	}
	return "a " + kind
}

// matchPoints pairs the points of sets with the first set's, by key: the
// same kind, the same swept pin, and the same points in every set. It
// returns the points of each set in the first set's order, or why the sets
// cannot be compared point by point.
func matchPoints(sets []SetInput) ([][]Point, []string) {
	a := sets[0]
	var why []string
	for _, b := range sets[1:] {
		switch {
		case b.Set.Kind != a.Set.Kind:
			why = append(why, fmt.Sprintf("%s is %s, %s is %s", a.Name, kindName(a.Set.Kind), b.Name, kindName(b.Set.Kind)))
		case b.Set.Pin != a.Set.Pin:
			why = append(why, fmt.Sprintf("%s sweeps %s, %s sweeps %s", a.Name, a.Set.Pin, b.Name, b.Set.Pin))
		}
	}
	if len(why) > 0 {
		return nil, why
	}
	ref := Points(a.Set)
	out := [][]Point{ref}
	for _, b := range sets[1:] {
		byKey := map[string]Point{}
		for _, p := range Points(b.Set) {
			byKey[p.Key] = p
		}
		var ps []Point
		for _, p := range ref {
			q, ok := byKey[p.Key]
			if !ok {
				why = append(why, fmt.Sprintf("%s has no point %s", b.Name, p.Label))
			}
			delete(byKey, p.Key)
			ps = append(ps, q)
		}
		for _, q := range Points(b.Set) {
			if _, extra := byKey[q.Key]; extra {
				why = append(why, fmt.Sprintf("%s has a point %s that %s lacks", b.Name, q.Label, a.Name))
			}
		}
		out = append(out, ps)
	}
	if len(why) > 0 {
		return nil, why
	}
	return out, nil
}

// SetComparison is sets compared point by point, each set's point against
// the first set's.
type SetComparison struct {
	Sets   []SetInput
	Stats  stats.Settings
	Points []PointComparison
}

// PointComparison is one point of the first set compared with the same
// point of the others; its Runs are named FILE#POINT.
type PointComparison struct {
	Point Point
	*Comparison
}

// CompareSets compares sets point by point: sets of one kind, sweeping one
// pin, with the same points (a sweep's values, a repeat's seeds, a
// bake-off's profiles); otherwise it refuses with an error that
// errors.Is(err, ErrIncomparable), saying why. Each point is compared as
// Compare compares runs, pins first.
func CompareSets(sets []SetInput, st stats.Settings) (*SetComparison, error) {
	if len(sets) < 2 {
		return nil, fmt.Errorf("compare: need at least two set files (got %d)", len(sets))
	}
	matched, why := matchPoints(sets)
	if len(why) > 0 {
		return nil, incomparable("sets are not comparable point by point: " + strings.Join(why, "; "))
	}
	sc := &SetComparison{Sets: sets, Stats: st}
	for i, p := range matched[0] {
		var ins []Input
		for j, s := range sets {
			ins = append(ins, Input{Name: s.Name + "#" + matched[j][i].Key, Run: matched[j][i].Run})
		}
		c, err := Compare(ins, st)
		if err != nil {
			return nil, err
		}
		sc.Points = append(sc.Points, PointComparison{Point: p, Comparison: c})
	}
	return sc, nil
}

// Comparable reports whether every point's pins agree.
func (sc *SetComparison) Comparable() bool {
	for _, p := range sc.Points {
		if !p.Comparable() {
			return false
		}
	}
	return true
}

// MismatchSummary names the differing pins of every point that has any.
func (sc *SetComparison) MismatchSummary() string {
	var parts []string
	for _, p := range sc.Points {
		if !p.Comparable() {
			parts = append(parts, p.MismatchSummary())
		}
	}
	return strings.Join(parts, "\n")
}
