package capacity

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/verdict"
)

// oracle judges a point: tier i passes at v when pass(i, v).
type oracle func(tier string, v float64, run int) bool

// drive runs a search to its end (or maxRuns points) against o and
// returns the points it ran.
func drive(t *testing.T, s *Search, o oracle, maxRuns int) []Point {
	t.Helper()
	var ps []Point
	runs := map[float64]int{}
	for len(ps) < maxRuns {
		v, role, judged, ok := s.Next()
		if !ok {
			break
		}
		p := Point{Value: v, Role: role, Judged: judged, Valid: true}
		for _, name := range s.tiers {
			out := verdict.Failed
			if o(name, v, runs[v]) {
				out = verdict.Passed
			}
			p.Verdicts = append(p.Verdicts, verdict.TierVerdict{Tier: name, Outcome: out, Decided: true})
		}
		runs[v]++
		s.Record(p)
		ps = append(ps, p)
	}
	return ps
}

func threshold(ns map[string]float64) oracle {
	return func(tier string, v float64, _ int) bool { return v <= ns[tier] }
}

func values(ps []Point) []float64 {
	vs := make([]float64, len(ps))
	for i, p := range ps {
		vs[i] = p.Value
	}
	return vs
}

// Two tiers with N* 6 and 20 from the scenario's 2: bracket by doubling,
// bisect, confirm N* and N*+1 twice each; a point serves every tier whose
// bracket it falls in, so the tiers share runs.
func TestSearchFindsEachTier(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisSessions, Min: 1, Max: 64}
	s := NewSearch(a, 2, []string{"tight", "loose"})
	ps := drive(t, s, threshold(map[string]float64{"tight": 6, "loose": 20}), 100)
	ans := s.Answers()
	if got := ans[0]; got.Kind != Found || got.Lo != 6 || got.Hi != 7 || got.LoRuns < 2 || got.HiRuns < 2 || got.HiPasses != 0 {
		t.Errorf("tight: %+v", got)
	}
	if got := ans[1]; got.Kind != Found || got.Lo != 20 || got.Hi != 21 || got.LoRuns < 2 || got.HiRuns < 2 {
		t.Errorf("loose: %+v", got)
	}
	want := []float64{2, 4, 8, 6, 7, 6, 7, 16, 32, 24, 20, 22, 21, 20, 21}
	if !slices.Equal(values(ps), want) {
		t.Errorf("points %v, want %v", values(ps), want)
	}
	if ps[0].Role != RoleStart || ps[1].Role != RoleBracket || ps[3].Role != RoleBisect || ps[5].Role != RoleConfirm {
		t.Errorf("roles %v %v %v %v", ps[0].Role, ps[1].Role, ps[3].Role, ps[5].Role)
	}
	// 2 and 4 serve both tiers, 8 too (it fails tight, inside loose's
	// bracket).
	if !slices.Equal(ps[2].Judged, []string{"tight", "loose"}) {
		t.Errorf("8 judged for %v", ps[2].Judged)
	}
}

// The budget out before the confirmations, the answer is the interval
// the points allow, never a guess; none passing yet is "below Hi".
func TestSearchBudgetGivesAnInterval(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisStreams, Min: 1, Max: 64}
	s := NewSearch(a, 2, []string{"t"})
	drive(t, s, threshold(map[string]float64{"t": 6}), 3) // 2, 4, 8
	got := s.Answers()[0]
	if got.Kind != Interval || got.Lo != 4 || got.Hi != 8 || !got.HasLo || !got.HasHi {
		t.Errorf("%+v", got)
	}
	s = NewSearch(a, 16, []string{"t"})
	drive(t, s, threshold(map[string]float64{"t": 6}), 1)
	if got := s.Answers()[0]; got.Kind != Interval || got.HasLo || got.Hi != 16 {
		t.Errorf("%+v", got)
	}
}

// A tier every value meets, or none, says so with the bound.
func TestSearchBounds(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisStreams, Min: 1, Max: 64}
	s := NewSearch(a, 4, []string{"easy", "impossible"})
	drive(t, s, threshold(map[string]float64{"easy": 1000, "impossible": 0}), 100)
	ans := s.Answers()
	if ans[0].Kind != AtLeast || ans[0].Lo != 64 {
		t.Errorf("easy: %+v", ans[0])
	}
	if ans[1].Kind != FailsAtMin || ans[1].Hi != 1 || ans[1].HasLo {
		t.Errorf("impossible: %+v", ans[1])
	}
}

// An invalid point never counts as a pass, whatever its verdict.
func TestSearchInvalidIsNotAPass(t *testing.T) {
	t.Parallel()
	s := NewSearch(Axis{Kind: AxisStreams, Min: 1, Max: 64}, 4, []string{"t"})
	s.Record(Point{Value: 4, Judged: []string{"t"}, Valid: false, Invalid: []string{"sixpin saturated"},
		Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: verdict.Passed}}})
	if got := s.Answers()[0]; got.HasLo || !got.HasHi || got.Hi != 4 {
		t.Errorf("%+v", got)
	}
}

// A confirmation that fails at N* moves the answer down; one that passes
// at N*+1 leaves it (a value counts as a pass only when it always
// passed) and is shown as a marginal boundary.
func TestSearchConfirmation(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisStreams, Min: 1, Max: 64}
	// 6 passes the first time, fails the second: N* is 5.
	flaky := func(_ string, v float64, run int) bool { return v <= 5 || v == 6 && run == 0 }
	s := NewSearch(a, 2, []string{"t"})
	drive(t, s, flaky, 100)
	if got := s.Answers()[0]; got.Kind != Found || got.Lo != 5 || got.Hi != 6 || got.HiPasses != 1 {
		t.Errorf("flaky N*: %+v", got)
	}
	// 7 fails first, then passes: still N* = 6, the boundary marginal.
	marginal := func(_ string, v float64, run int) bool { return v <= 6 || v == 7 && run > 0 }
	s = NewSearch(a, 2, []string{"t"})
	drive(t, s, marginal, 100)
	if got := s.Answers()[0]; got.Kind != Found || got.Lo != 6 || got.HiPasses != 1 || got.HiRuns != 2 {
		t.Errorf("marginal: %+v", got)
	}
}

// A rate is found within its resolution: N*+1 is N* × 1.1.
func TestSearchRate(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisRate, Min: 0.05, Max: 200, Resolution: 0.1}
	s := NewSearch(a, 2, []string{"t"})
	ps := drive(t, s, threshold(map[string]float64{"t": 7.3}), 100)
	got := s.Answers()[0]
	if got.Kind != Found || got.Lo > 7.3 || got.Hi <= 7.3 || got.Hi > got.Lo*1.1+1e-9 {
		t.Errorf("%+v after %v", got, values(ps))
	}
	if len(ps) > 16 {
		t.Errorf("%d points: %v", len(ps), values(ps))
	}
}

// A pass above a failure is noted, never counted.
func TestSearchNotMonotone(t *testing.T) {
	t.Parallel()
	s := NewSearch(Axis{Kind: AxisStreams, Min: 1, Max: 64}, 4, []string{"t"})
	for _, p := range []struct {
		v    float64
		pass bool
	}{{4, true}, {8, false}, {16, true}} {
		out := verdict.Failed
		if p.pass {
			out = verdict.Passed
		}
		s.Record(Point{Value: p.v, Judged: []string{"t"}, Valid: true, Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: out}}})
	}
	got := s.Answers()[0]
	if got.Hi != 8 || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "passed at 16, above a failure at 8") {
		t.Errorf("%+v", got)
	}
}

func TestCurveValues(t *testing.T) {
	t.Parallel()
	got := CurveValues(Axis{Kind: AxisStreams, Min: 1, Max: 64}, 7, []float64{4})
	if want := []float64{1, 2, 8, 16, 32, 64}; !slices.Equal(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	r := CurveValues(Axis{Kind: AxisRate, Min: 0.5, Max: 8, Resolution: 0.1}, 5, nil)
	if len(r) != 5 || r[0] != 0.5 || r[4] != 8 || math.Abs(r[2]-2) > 1e-9 {
		t.Errorf("%v", r)
	}
}

// A point that could not judge a tier (too few values in its time) is
// neither a pass nor a fail: the tier's search stops there, with the
// interval it had, rather than run the same point again or go on as if
// it had failed.
func TestSearchStopsWhereAPointCannotJudge(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisRate, Min: 0.05, Max: 200, Resolution: 0.1}
	s := NewSearch(a, 2, []string{"t"})
	undecided := func(v float64) Point {
		return Point{Value: v, Judged: []string{"t"}, Valid: true, Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: verdict.Undecided}}}
	}
	s.Record(Point{Value: 2, Judged: []string{"t"}, Valid: true, Verdicts: []verdict.TierVerdict{{Tier: "t", Outcome: verdict.Failed}}})
	v, _, _, ok := s.Next()
	if !ok || v != 1 {
		t.Fatalf("next %v %v", v, ok)
	}
	s.Record(undecided(1))
	if _, _, _, ok := s.Next(); ok {
		t.Error("the search runs again where a point could not judge")
	}
	got := s.Answers()[0]
	if got.Kind != Interval || !got.HasUnjudged || got.Unjudged != 1 || got.HasLo || got.Hi != 2 {
		t.Errorf("%+v", got)
	}
}

// A rate rounded to three digits stays inside the axis: the default
// minimum of a 1 req/s scenario, 1/64 = 0.015625, was rounded to 0.0156,
// below it, and the file then failed its own reader.
func TestCurveValuesStayOnTheAxis(t *testing.T) {
	t.Parallel()
	a := Axis{Kind: AxisRate, Min: 1.0 / 64, Max: 16, Resolution: 0.1}
	vs := CurveValues(a, 6, nil)
	if len(vs) != 6 {
		t.Fatalf("%v", vs)
	}
	for _, v := range vs {
		if v < a.Min || v > a.Max {
			t.Errorf("%v outside [%v, %v]", v, a.Min, a.Max)
		}
	}
	if d := a.down(0.02); d < a.Min {
		t.Errorf("down(0.02) = %v below %v", d, a.Min)
	}
}

// Shares pool a condition's judged values per value over the valid
// points judged for its tier, in axis order; an answer with a pass above
// its failure, or a marginal N*+1, is unsettled.
func TestSharesOfAnUnsettledTier(t *testing.T) {
	c := verdict.Condition{Metric: "ttft_ms", Stat: "p90", Op: verdict.AtMost, Bound: 2000}
	point := func(v float64, n, beyond int64, valid bool, judged ...string) Point {
		return Point{Value: v, Valid: valid, Judged: judged, Verdicts: []verdict.TierVerdict{{Tier: "i",
			Conditions: []verdict.CondVerdict{{Condition: c, N: n, Beyond: beyond}}}}}
	}
	f := &File{Points: []Point{point(3, 100, 11, true, "i"), point(1, 40, 4, true, "i"), point(3, 50, 4, true, "i"),
		point(2, 60, 30, false, "i"), point(2, 70, 7, true, "r")}}
	got := Shares(f, "i", c)
	want := []Share{{Value: 1, N: 40, Beyond: 4}, {Value: 3, N: 150, Beyond: 15}}
	if !slices.Equal(got, want) {
		t.Errorf("shares %+v, want %+v (the invalid point and the one run for another tier left out)", got, want)
	}
	if (Answer{}).Unsettled() || !(Answer{HiPasses: 1}).Unsettled() || !(Answer{Notes: []string{"passed at 3, above a failure at 2"}}).Unsettled() {
		t.Error("Unsettled")
	}
}
