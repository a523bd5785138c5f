package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// Axis kinds: what the search varies.
const (
	// AxisStreams is closed-loop streams (requests always in flight).
	AxisStreams = "streams"
	// AxisSessions is concurrent agentic sessions (closed loop).
	AxisSessions = "sessions"
	// AxisRate is the open-loop arrival rate, req/s.
	AxisRate = "rate"
)

// Defaults of the search.
const (
	// DefaultMax is the largest count tried (streams, sessions): beyond
	// it the answer is "N* ≥ DefaultMax".
	DefaultMax = 64
	// DefaultRateSpan is how far a rate search reaches each side of the
	// scenario's rate by default: ×64 and ÷64.
	DefaultRateSpan = 64
	// DefaultResolution is a rate search's resolution: N* and N*+1 a
	// tenth apart.
	DefaultResolution = 0.1
)

// Axis is the concurrency pin a search varies, and its range.
type Axis struct {
	Kind string `json:"kind"`
	// Pin is the scenario's pin: concurrency.streams or concurrency.rate.
	Pin string `json:"pin"`
	// Min and Max bound the values tried.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Resolution is a rate's relative step: N*+1 is N* × (1 +
	// Resolution). Counts step by one.
	Resolution float64 `json:"resolution,omitempty"`
}

// NewAxis is the axis a search of sc varies, with its start (the
// scenario's own value): streams, or sessions for agentic work, in closed
// loop; the rate in open loop. max 0 takes the default (DefaultMax; a
// rate: ×DefaultRateSpan its own), resolution 0 DefaultResolution.
func NewAxis(sc *scenario.Scenario, min, max, resolution float64) (Axis, float64, error) {
	c := sc.Pins.Concurrency
	switch {
	case sc.Sweep != nil:
		return Axis{}, 0, fmt.Errorf("the scenario sweeps %s: a capacity search varies the concurrency itself; give a scenario without sweep", sc.Sweep.Pin)
	case sc.Workload.Replay():
		return Axis{}, 0, fmt.Errorf("a trace replays its own concurrency: a capacity search needs closed-loop streams, agentic sessions or an open-loop rate")
	}
	a := Axis{Kind: AxisStreams, Pin: scenario.SweepStreams, Min: 1, Max: DefaultMax}
	start := float64(c.Streams)
	if sc.Workload.Agentic() {
		a.Kind = AxisSessions
	}
	if c.Mode == scenario.ModeOpen {
		a = Axis{Kind: AxisRate, Pin: scenario.SweepRate, Min: c.Rate / DefaultRateSpan, Max: c.Rate * DefaultRateSpan, Resolution: DefaultResolution}
		start = c.Rate
		if resolution > 0 {
			a.Resolution = resolution
		}
	} else if resolution > 0 {
		return a, 0, fmt.Errorf("--resolution is for an open-loop rate; counts of %s step by one", a.Kind)
	}
	if min > 0 {
		a.Min = min
	}
	if max > 0 {
		a.Max = max
	}
	if a.Integer() && (a.Min != math.Trunc(a.Min) || a.Max != math.Trunc(a.Max)) {
		return a, 0, fmt.Errorf("--min and --max count %s: whole numbers", a.Kind)
	}
	if a.Min > a.Max {
		return a, 0, fmt.Errorf("--min %s is above --max %s", trim(a.Min), trim(a.Max))
	}
	return a, a.clamp(start), nil
}

// Integer reports whether the axis counts (streams, sessions).
func (a Axis) Integer() bool { return a.Kind != AxisRate }

// Round rounds v to the axis: a whole count, or a rate to three
// significant digits.
func (a Axis) Round(v float64) float64 {
	if a.Integer() {
		return math.Round(v)
	}
	if v <= 0 {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return f
}

// clamp is v rounded to the axis and kept inside [Min, Max]: a rounded
// rate may fall just outside it (1/64 to 0.0156).
func (a Axis) clamp(v float64) float64 { return min(max(a.Round(v), a.Min), a.Max) }

// Next is the value one step above v: v + 1, or v × (1 + Resolution).
func (a Axis) Next(v float64) float64 {
	if a.Integer() {
		return v + 1
	}
	return a.Round(v * (1 + a.Resolution))
}

// adjacent reports whether nothing the search would try lies between lo
// and hi.
func (a Axis) adjacent(lo, hi float64) bool {
	if a.Integer() {
		return hi-lo <= 1
	}
	return hi <= a.Next(lo)*(1+1e-9)
}

// up is the bracket's next value above a pass at v: twice it, at most
// Max.
func (a Axis) up(v float64) float64 { return a.clamp(max(2*v, a.Next(v))) }

// down is the bracket's next value below a fail at v: half of it, at
// least Min.
func (a Axis) down(v float64) float64 {
	d := v / 2
	if a.Integer() {
		d = math.Min(math.Floor(d), v-1)
	}
	return a.clamp(d)
}

// mid is the bisection's value between lo and hi: the middle count, or
// the geometric mean of two rates.
func (a Axis) mid(lo, hi float64) float64 {
	if a.Integer() {
		return math.Floor((lo + hi) / 2)
	}
	m := a.Round(math.Sqrt(lo * hi))
	if m <= lo || m >= hi {
		m = a.Next(lo)
	}
	return m
}

// Search is the state of a capacity search: what every tier knows from
// the points so far, and what to run next. It is data: the caller runs
// each point Next asks for and gives back its verdicts with Record.
//
// Every tier is assumed monotone: more concurrency never helps it. A
// value counts as a pass for a tier only when every run at it passed (a
// failed or invalid run is a fail), so N* is the largest value below the
// smallest failure that passed every time; a pass above a failure is
// noted, never counted. Found needs a confirmation: N* and N*+1 each run
// at least twice (the second time with the next seed).
type Search struct {
	axis  Axis
	start float64
	tiers []string
	// runs are the points recorded, by tier: value → passes and fails.
	runs []map[float64]*tally
}

// tally is one value's runs for one tier.
// A run the point could not judge (verdict.Undecided: too few values in
// its time) is neither: it is counted apart, and a tier that wants a value
// such a run left stops there (Answer.Unjudged).
type tally struct{ pass, fail, undecided int }

// NewSearch starts a search of tiers along axis from start.
func NewSearch(axis Axis, start float64, tiers []string) *Search {
	s := &Search{axis: axis, start: axis.clamp(start), tiers: tiers}
	for range tiers {
		s.runs = append(s.runs, map[float64]*tally{})
	}
	return s
}

// Record adds a point's outcome for the tiers it was judged for; a point
// an interrupt cut short counts for nothing.
func (s *Search) Record(p Point) {
	if p.Run != nil && p.Run.Incomplete {
		return
	}
	for i, name := range s.tiers {
		if !slices.Contains(p.Judged, name) {
			continue
		}
		t := s.runs[i][p.Value]
		if t == nil {
			t = &tally{}
			s.runs[i][p.Value] = t
		}
		switch v := p.Verdict(name); {
		case p.Passed(name):
			t.pass++
		case p.Valid && v != nil && v.Outcome == verdict.Undecided:
			t.undecided++
		default:
			t.fail++
		}
	}
}

// Runs counts the runs recorded at value v for tier i.
func (s *Search) runsAt(i int, v float64) int {
	if t := s.runs[i][v]; t != nil {
		return t.pass + t.fail
	}
	return 0
}

// bracket is what tier i knows: lo the largest value that passed every
// time below hi, the smallest that failed (ok flags say whether each
// exists).
func (s *Search) bracket(i int) (lo float64, hasLo bool, hi float64, hasHi bool) {
	for v, t := range s.runs[i] {
		if t.fail > 0 && (!hasHi || v < hi) {
			hi, hasHi = v, true
		}
	}
	for v, t := range s.runs[i] {
		if t.fail == 0 && t.pass > 0 && (!hasHi || v < hi) && (!hasLo || v > lo) {
			lo, hasLo = v, true
		}
	}
	return lo, hasLo, hi, hasHi
}

// want is the value tier i needs next and why; ok false when its answer
// is settled, or stuck at a value a point could not judge (stuck true).
func (s *Search) want(i int) (v float64, role string, ok bool) {
	v, role, ok = s.next(i)
	if t := s.runs[i][v]; ok && t != nil && t.undecided > 0 {
		return v, role, false
	}
	return v, role, ok
}

// stuck is the value a point could not judge where tier i's search
// stopped (ok false when it did not).
func (s *Search) stuck(i int) (v float64, ok bool) {
	v, _, want := s.next(i)
	t := s.runs[i][v]
	return v, want && t != nil && t.undecided > 0
}

// next is the value tier i's bracket, bisection or confirmation needs
// next and why; ok false when its answer is settled.
func (s *Search) next(i int) (v float64, role string, ok bool) {
	a := s.axis
	lo, hasLo, hi, hasHi := s.bracket(i)
	switch {
	case !hasLo && !hasHi:
		return s.start, RoleStart, true
	case !hasHi && lo >= a.Max:
		return 0, "", false // N* ≥ Max
	case !hasHi:
		return a.up(lo), RoleBracket, true
	case !hasLo && hi <= a.Min:
		return 0, "", false // fails at Min
	case !hasLo:
		return a.down(hi), RoleBracket, true
	case !a.adjacent(lo, hi):
		return a.mid(lo, hi), RoleBisect, true
	case s.runsAt(i, lo) < 2:
		return lo, RoleConfirm, true
	case s.runsAt(i, hi) < 2:
		return hi, RoleConfirm, true
	}
	return 0, "", false
}

// Next is the value to run next, why, and the tiers it is run for (those
// that want it); ok false when every tier's answer is settled. The value
// most tiers want goes first; between equals, the earlier tier's.
func (s *Search) Next() (v float64, role string, judged []string, ok bool) {
	type wanted struct {
		v     float64
		role  string
		tiers []string
	}
	var ws []*wanted
	for i, name := range s.tiers {
		wv, r, want := s.want(i)
		if !want {
			continue
		}
		j := slices.IndexFunc(ws, func(w *wanted) bool { return w.v == wv })
		if j < 0 {
			ws = append(ws, &wanted{v: wv, role: r})
			j = len(ws) - 1
		}
		ws[j].tiers = append(ws[j].tiers, name)
	}
	if len(ws) == 0 {
		return 0, "", nil, false
	}
	best := ws[0]
	for _, w := range ws[1:] {
		if len(w.tiers) > len(best.tiers) {
			best = w
		}
	}
	// Every tier whose bracket the value falls inside learns from it too.
	for i, name := range s.tiers {
		if !slices.Contains(best.tiers, name) && s.informs(i, best.v) {
			best.tiers = append(best.tiers, name)
		}
	}
	slices.SortFunc(best.tiers, func(a, b string) int { return slices.Index(s.tiers, a) - slices.Index(s.tiers, b) })
	return best.v, best.role, best.tiers, true
}

// Informs reports whether a run at v tells the tier named something.
func (s *Search) Informs(tier string, v float64) bool {
	i := slices.Index(s.tiers, tier)
	return i >= 0 && s.informs(i, v)
}

// informs reports whether a run at v tells tier i something: v lies
// strictly inside its bracket, or is a value it still needs confirmed.
func (s *Search) informs(i int, v float64) bool {
	if _, _, ok := s.want(i); !ok {
		return false
	}
	lo, hasLo, hi, hasHi := s.bracket(i)
	return (!hasLo || v > lo) && (!hasHi || v < hi)
}

// Answer kinds.
const (
	// Found: N* passed (at least twice) and N*+1 failed (run at least
	// twice), nothing between them.
	Found = "found"
	// Interval: the budget ran out first; N* lies in [Lo, Hi).
	Interval = "interval"
	// AtLeast: the tier passed at the largest value tried (Max).
	AtLeast = "at_least"
	// FailsAtMin: the tier failed at the smallest value (Min).
	FailsAtMin = "fails_at_min"
	// Unmeasured: no point was judged for the tier.
	Unmeasured = "unmeasured"
)

// Answer is a tier's answer: N* or the interval it lies in, with the
// evidence at N*+1.
type Answer struct {
	Tier string `json:"tier"`
	Kind string `json:"kind"`
	// Lo is N* (Found), the largest value that passed every time
	// (Interval, AtLeast; HasLo false when none passed); Hi the smallest
	// that failed (HasHi false when none did).
	Lo    float64 `json:"lo"`
	HasLo bool    `json:"has_lo"`
	Hi    float64 `json:"hi"`
	HasHi bool    `json:"has_hi"`
	// LoRuns and HiRuns count the runs at Lo and Hi; HiPasses those of
	// Hi's that passed (a marginal boundary when above zero).
	LoRuns   int `json:"lo_runs"`
	HiRuns   int `json:"hi_runs"`
	HiPasses int `json:"hi_passes"`
	// Binding is what broke the tier at Hi (nil: no failure).
	Binding *Binding `json:"binding,omitempty"`
	// PerDeployment normalises Lo (nil: nothing passed).
	PerDeployment *Normalised `json:"normalised,omitempty"`
	// Unjudged is the value where the search stopped because a point
	// there could not judge the tier in its time (too few values; HasUnjudged).
	Unjudged    float64 `json:"unjudged,omitempty"`
	HasUnjudged bool    `json:"has_unjudged,omitempty"`
	// Notes are caveats: a pass above a failure (not monotone).
	Notes []string `json:"notes,omitempty"`
}

// Answer is tier i's answer now; a search stopped before it settled
// answers with the interval it knows.
func (s *Search) answer(i int) Answer {
	lo, hasLo, hi, hasHi := s.bracket(i)
	a := Answer{Tier: s.tiers[i], Lo: lo, HasLo: hasLo, Hi: hi, HasHi: hasHi, LoRuns: s.runsAt(i, lo)}
	if hasHi {
		t := s.runs[i][hi]
		a.HiRuns, a.HiPasses = t.pass+t.fail, t.pass
	}
	_, _, open := s.want(i)
	a.Unjudged, a.HasUnjudged = s.stuck(i)
	switch {
	case len(s.runs[i]) == 0:
		a.Kind = Unmeasured
	case open || a.HasUnjudged:
		a.Kind = Interval
	case !hasHi:
		a.Kind = AtLeast
	case !hasLo:
		a.Kind = FailsAtMin
	default:
		a.Kind = Found
	}
	for v, t := range s.runs[i] {
		if hasHi && v > hi && t.pass > 0 {
			a.Notes = append(a.Notes, fmt.Sprintf("passed at %s, above a failure at %s: this tier is not monotone there; the failure counts", trim(v), trim(hi)))
		}
	}
	slices.Sort(a.Notes)
	return a
}

// Answers are every tier's answers now.
func (s *Search) Answers() []Answer {
	out := make([]Answer, len(s.tiers))
	for i := range s.tiers {
		out[i] = s.answer(i)
	}
	return out
}

// CurveValues are n values log-spaced over the axis (MLPerf's endpoint
// rules lay their concurrency points out so), rounded to it, without
// those in have.
func CurveValues(a Axis, n int, have []float64) []float64 {
	var out []float64
	for k := range n {
		f := 0.0
		if n > 1 {
			f = float64(k) / float64(n-1)
		}
		v := a.clamp(a.Min * math.Pow(a.Max/a.Min, f))
		if !slices.Contains(have, v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// trim formats v as written: 6, 2.5.
func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TierNames lists tiers' names.
func TierNames(tiers []verdict.Tier) []string {
	ns := make([]string, len(tiers))
	for i, t := range tiers {
		ns[i] = t.Name
	}
	return ns
}
