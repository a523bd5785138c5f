package report

import (
	"io"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/verdict"
)

// Each kind of answer is said as such: N* with what binds above it, the
// interval a budget left, the bound it passed at, a failure at the
// smallest value; a rate in req/s.
func TestCapacityAnswerWords(t *testing.T) {
	t.Parallel()
	c, err := verdict.ParseCondition("ttft_ms.p90 <= 2000")
	if err != nil {
		t.Fatal(err)
	}
	f := func(v float64) *float64 { return &v }
	sessions := &capacity.File{Plan: capacity.Plan{Axis: capacity.Axis{Kind: capacity.AxisSessions}}, Stop: capacity.StopBudget}
	rate := &capacity.File{Plan: capacity.Plan{Axis: capacity.Axis{Kind: capacity.AxisRate, Resolution: 0.1}}}
	queue := &capacity.Binding{At: 7, Condition: &c, Value: 2800, HasValue: true, Decided: true, Cause: capacity.CauseQueue,
		Evidence: capacity.Evidence{WaitingPeak: f(3), KVPeakPct: f(97)}}
	for _, x := range []struct {
		f    *capacity.File
		a    capacity.Answer
		want string
	}{
		{sessions, capacity.Answer{Tier: "interactive", Kind: capacity.Found, Lo: 6, HasLo: true, Hi: 7, HasHi: true, Binding: queue},
			"interactive: 6 sessions — at 7 the server queues (waiting peak 3, KV 97%): TTFT p90 2.8 s > 2 s"},
		{sessions, capacity.Answer{Tier: "interactive", Kind: capacity.Interval, Lo: 6, HasLo: true, Hi: 9, HasHi: true},
			"interactive: 6 ≤ N* < 9 sessions (the --budget ran out first)"},
		{sessions, capacity.Answer{Tier: "loose", Kind: capacity.AtLeast, Lo: 64, HasLo: true}, "loose: N* ≥ 64 sessions: it passed at the largest value tried; raise --max"},
		{sessions, capacity.Answer{Tier: "strict", Kind: capacity.FailsAtMin, Hi: 1, HasHi: true}, "strict: fails at 1 session, the smallest value tried"},
		{sessions, capacity.Answer{Tier: "none", Kind: capacity.Unmeasured}, "none: not measured: no point was judged for it"},
		{rate, capacity.Answer{Tier: "api", Kind: capacity.Found, Lo: 2.5, HasLo: true, Hi: 2.75, HasHi: true,
			Binding: &capacity.Binding{At: 2.75, Condition: &c, Value: 2100, HasValue: true, Cause: capacity.CauseRateLimit,
				Evidence: capacity.Evidence{Rejected429: 30, Requests: 100, Bucket: "tokens_per_minute"}}},
			"api: 2.5 req/s — at 2.75 the endpoint rate-limits (429 × 30 of 100 requests, tokens_per_minute): TTFT p90 2.1 s > 2 s, not decided at 95%"},
		// An invalid point fails the tier whatever its figures: a figure
		// within its bound is not said to break it.
		{rate, capacity.Answer{Tier: "api", Kind: capacity.FailsAtMin, Hi: 0.5, HasHi: true,
			Binding: &capacity.Binding{At: 0.5, Condition: &c, Value: 63.1, HasValue: true, Cause: capacity.CauseClient,
				Evidence: capacity.Evidence{Invalid: []string{"the open loop fell behind its schedule"}}}},
			"api: fails at 0.5 req/s, the smallest value tried — at 0.5 sixpin itself saturates: the point measured the client, not the server (the open loop fell behind its schedule): TTFT p90 63.1 ms within 2 s, not counted: the point is invalid"},
		{rate, capacity.Answer{Tier: "api", Kind: capacity.Interval, Hi: 2, HasHi: true, Unjudged: 1, HasUnjudged: true},
			"api: N* < 2 req/s (at 1 req/s a point could not judge it in its time: lengthen the points with --duration)"},
	} {
		if got := CapacityAnswer(x.f, x.a); got != x.want {
			t.Errorf("got  %q\nwant %q", got, x.want)
		}
	}
	if s := normalisedWords(sessions, &capacity.Normalised{PerGPU: 3, PerKW: 12, PerUSDHour: 66.7, CostPerAgentHourUSD: 0.015, CostBasis: "energy"}); s != "3 per GPU · 12 per kW · 66.7 per $/hour · $0.015 per agent-hour (energy)" {
		t.Errorf("normalised %q", s)
	}
	if !strings.Contains(shortDuration(10), "10s") || shortDuration(360) != "6m" || shortDuration(90) != "1m30s" {
		t.Errorf("durations %q %q %q", shortDuration(10), shortDuration(360), shortDuration(90))
	}
}

// Two real searches side by side, in text and Markdown: N* per tier with
// its change (tight: 2 → 3 streams, higher) and what binds in each, the
// pins they held, the curve value by value.
func TestCapacityCompareGolden(t *testing.T) {
	t.Parallel()
	c, err := capacity.Compare([]capacity.Input{{Name: fixCapTwo, File: loadCapacity(t, fixCapTwo)}, {Name: fixCapThree, File: loadCapacity(t, fixCapThree)}},
		stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Comparable() {
		t.Fatalf("incomparable: %s", c.MismatchSummary())
	}
	for _, md := range []bool{false, true} {
		got := render(t, func(w io.Writer) error { return WriteCapacityCompare(w, c, md) })
		name := "capacity-compare.txt"
		if md {
			name = "capacity-compare.md"
		}
		golden(t, name, got)
		if !strings.Contains(string(got), "tight: 2 → 3 streams — higher: B's N* lies above A's") {
			t.Errorf("%s lacks the change of N*:\n%s", name, got)
		}
	}
}

// An unsettled tier shows its condition's share beyond the bound at each
// value judged; a settled one does not.
func TestUnsettledWords(t *testing.T) {
	c := verdict.Condition{Metric: "ttft_ms", Stat: "p90", Op: verdict.AtMost, Bound: 2000}
	point := func(v float64, n, beyond int64) capacity.Point {
		return capacity.Point{Value: v, Valid: true, Judged: []string{"i"}, Verdicts: []verdict.TierVerdict{{Tier: "i",
			Conditions: []verdict.CondVerdict{{Condition: c, N: n, Beyond: beyond}}}}}
	}
	f := &capacity.File{Plan: capacity.Plan{Axis: capacity.Axis{Kind: capacity.AxisSessions},
		Tiers: []verdict.Tier{{Name: "i", Conditions: []verdict.Condition{c}}}},
		Points: []capacity.Point{point(1, 40, 5), point(2, 90, 9), point(3, 60, 7)}}
	a := capacity.Answer{Tier: "i", Kind: capacity.FailsAtMin, Hi: 1, HasHi: true, Notes: []string{"passed at 2, above a failure at 1"}}
	got := strings.Join(answerLines(f, a), "\n")
	if !strings.Contains(got, "not settled: ttft_ms.p90's values beyond its bound at each value judged (a p90 allows 10.0%): 1 → 12.5% of 40 · 2 → 10.0% of 90 · 3 → 11.7% of 60") {
		t.Errorf("%s", got)
	}
	a.Notes = nil
	if got := strings.Join(answerLines(f, a), "\n"); strings.Contains(got, "not settled") {
		t.Errorf("a settled answer: %s", got)
	}
}

// N* over seeds: answers within one step say so with their range, a wider
// spread says it is not settled, and an answer that is not a number on
// some seed says that instead.
func TestWriteCapacityRepeats(t *testing.T) {
	file := func(seed int64, answers ...capacity.Answer) *capacity.File {
		return &capacity.File{Plan: capacity.Plan{Seed: seed, Axis: capacity.Axis{Kind: capacity.AxisSessions},
			Tiers: []verdict.Tier{{Name: "relaxed"}, {Name: "interactive"}}}, Answers: answers}
	}
	found := func(tier string, n float64) capacity.Answer {
		return capacity.Answer{Tier: tier, Kind: capacity.Found, Lo: n, HasLo: true, Hi: n + 1, HasHi: true}
	}
	var b strings.Builder
	if err := WriteCapacityRepeats(&b, []*capacity.File{
		file(101, found("relaxed", 6), found("interactive", 3)),
		file(1101, found("relaxed", 6), capacity.Answer{Tier: "interactive", Kind: capacity.FailsAtMin, Hi: 1, HasHi: true}),
		file(2101, found("relaxed", 7), found("interactive", 5)),
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"N* over 3 seeds (101, 1101, 2101):",
		"relaxed: 6 sessions · 6 sessions · 7 sessions — within one step (6–7)",
		"interactive: 3 sessions · fails at 1 session · 5 sessions — not a number on every seed"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	_ = WriteCapacityRepeats(&b, []*capacity.File{file(1, found("relaxed", 3)), file(2, found("relaxed", 5))})
	if !strings.Contains(b.String(), "relaxed: 3 sessions · 5 sessions — not within one step (3–5): the bound is not settled") {
		t.Errorf("%s", b.String())
	}
}
