package report

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// capacityUnit names the axis's unit for a value: "session(s)",
// "stream(s)", "req/s".
func capacityUnit(a capacity.Axis, v float64) string {
	switch a.Kind {
	case capacity.AxisRate:
		return "req/s"
	case capacity.AxisSessions:
		if v == 1 {
			return "session"
		}
		return "sessions"
	}
	if v == 1 {
		return "stream"
	}
	return "streams"
}

// CapacityPointLabel names a value of f's axis: "6 sessions", "2.5 req/s".
func CapacityPointLabel(f *capacity.File, v float64) string {
	return numfmt.Plain(v) + " " + capacityUnit(f.Plan.Axis, v)
}

// axisWords says what the search varies: "concurrent agentic sessions
// (concurrency.streams)".
func axisWords(a capacity.Axis) string {
	switch a.Kind {
	case capacity.AxisRate:
		return "the open-loop arrival rate in req/s (" + a.Pin + ")"
	case capacity.AxisSessions:
		return "concurrent agentic sessions (" + a.Pin + ")"
	}
	return "closed-loop streams (" + a.Pin + ")"
}

// WriteCapacityPlan writes what a capacity search will do, before its
// first point: what it varies and holds, the tiers, how each point is
// judged, the search and its budget.
func WriteCapacityPlan(w io.Writer, f *capacity.File) error {
	p := &numfmt.Printer{W: w}
	target := "profile " + f.Profile
	if f.Simulated {
		target += " (the built-in simulator: simulated figures)"
	}
	p.F("sixpin capacity: %s (%s) against %s\n", f.ScenarioName, f.Scenario, target)
	for _, l := range capacityPlan(f) {
		for i, line := range l.lines {
			key := l.key + ":"
			if i > 0 {
				key = ""
			}
			p.F("  %-9s%s\n", key, line)
		}
	}
	return p.Err
}

// planLine is one line of a capacity plan: a key ("varies", "tiers") and
// its text, a line per tier.
type planLine struct {
	key   string
	lines []string
}

// capacityPlan is f's plan in words: what it varies and holds, the tiers,
// how each point is judged, the search, its budget and the curve.
func capacityPlan(f *capacity.File) []planLine {
	pl, a := f.Plan, f.Plan.Axis
	out := []planLine{{"varies", []string{fmt.Sprintf("%s from %s, between %s and %s; every other pin held", axisWords(a),
		CapacityPointLabel(f, pl.Start), numfmt.Plain(a.Min), numfmt.Plain(a.Max))}}}
	tiers := planLine{key: "tiers"}
	for _, t := range pl.Tiers {
		tiers.lines = append(tiers.lines, t.String())
	}
	out = append(out, tiers)
	point := "each point runs until its tiers are decided at 95% confidence (Wald's sequential test on the share of values beyond each bound)"
	if pl.PointS > 0 {
		point += ", at most " + shortDuration(pl.PointS)
	}
	pass := fmt.Sprintf("a pass needs %s of steady state and each percentile's minimum count (a p90: 36 values)", shortDuration(pl.MinSteadyS))
	switch {
	case pl.PassAtEnd:
		point = strings.Replace(point, "until its tiers are decided", "until its tiers fail", 1)
		pass = "a pass is read when the point ends: its sessions start fresh (workload.start: fresh) and deepen as it goes, and its first minutes would flatter it; " + pass
	case pl.SessionsStart == scenario.StartStationary:
		point += "; its sessions start mid-life (workload.start: stationary: the i-th of N at a turn drawn from the i-th share of its life, its history sent cold), values judged once each has had that turn answered (or, when some starve, once half have had " + strconv.Itoa(results.StarvedAfter) + " more)"
	}
	out = append(out, planLine{"points", []string{point + "; " + pass}})
	step := "N*+1 is one more"
	if !a.Integer() {
		step = fmt.Sprintf("N*+1 is %s%% more", numfmt.Plain(a.Resolution*100))
	}
	out = append(out, planLine{"search", []string{fmt.Sprintf("bracket by doubling or halving, bisect, then confirm N* and N*+1 with the next seed (%s)", step)}})
	var budget []string
	if pl.MaxRuns > 0 {
		budget = append(budget, numfmt.Count(pl.MaxRuns, "point", "points"))
	}
	if pl.BudgetS > 0 {
		budget = append(budget, shortDuration(pl.BudgetS)+" of wall time")
	}
	if len(budget) == 0 {
		out = append(out, planLine{"budget", []string{"none: the search runs until every tier is answered"}})
	} else {
		out = append(out, planLine{"budget", []string{fmt.Sprintf("at most %s; if it runs out first, the answer is the interval it reached", strings.Join(budget, " and "))}})
	}
	if pl.Points > 0 {
		out = append(out, planLine{"curve", []string{fmt.Sprintf("then %d log-spaced points between %s and %s", pl.Points, numfmt.Plain(a.Min), numfmt.Plain(a.Max))}})
	}
	return out
}

// shortDuration formats seconds as a Go duration without trailing zero
// units: "6m", "20s", "1m30s".
func shortDuration(s float64) string {
	t := time.Duration(s * float64(time.Second)).Round(time.Second).String()
	if strings.HasSuffix(t, "m0s") {
		t = strings.TrimSuffix(t, "0s")
	}
	if strings.HasSuffix(t, "h0m") {
		t = strings.TrimSuffix(t, "0m")
	}
	return t
}

// CapacityProgress is the line after point i of f: where it ran, each
// tier's verdict on it, and the search's time so far.
func CapacityProgress(f *capacity.File, i int, elapsed time.Duration) string {
	pt := f.Points[i]
	var vs []string
	for _, v := range pt.Verdicts {
		s := v.Tier + " " + string(v.Outcome)
		switch {
		case !pt.Valid && v.Outcome == verdict.Passed:
			s = v.Tier + " invalid"
		case v.Decided:
			s += " at " + verdict.Seconds(v.AtS) + " s"
		case v.Outcome == verdict.Undecided:
			s += " (too little to judge: not a pass)"
		default:
			s += " (not decided: the point estimate)"
		}
		if !slices.Contains(pt.Judged, v.Tier) {
			s += " [not counted]"
		}
		vs = append(vs, s)
	}
	line := fmt.Sprintf("point %d (%s) at %s: %s — %s of load", i+1, pt.Role, CapacityPointLabel(f, pt.Value), strings.Join(vs, ", "), shortDuration(pt.LoadS))
	if !pt.Valid {
		line += "; invalid: " + strings.Join(pt.Invalid, "; ")
	}
	return line + "; " + shortDuration(elapsed.Seconds()) + " so far"
}

// CapacityAnswer is a tier's answer in one line: "interactive: 6 agents —
// at 7 the server queues (waiting peak 3, KV 97%): TTFT p90 2.8 s > 2 s".
func CapacityAnswer(f *capacity.File, a capacity.Answer) string {
	ax := f.Plan.Axis
	unit := func(v float64) string { return capacityUnit(ax, v) }
	var s string
	switch a.Kind {
	case capacity.Found:
		s = fmt.Sprintf("%s: %s", a.Tier, CapacityPointLabel(f, a.Lo))
	case capacity.AtLeast:
		return fmt.Sprintf("%s: N* ≥ %s %s: it passed at the largest value tried; raise --max", a.Tier, numfmt.Plain(a.Lo), unit(a.Lo))
	case capacity.FailsAtMin:
		s = fmt.Sprintf("%s: fails at %s, the smallest value tried", a.Tier, CapacityPointLabel(f, a.Hi))
	case capacity.Interval:
		switch {
		case a.HasLo && a.HasHi:
			s = fmt.Sprintf("%s: %s ≤ N* < %s %s", a.Tier, numfmt.Plain(a.Lo), numfmt.Plain(a.Hi), unit(a.Hi))
		case a.HasHi:
			s = fmt.Sprintf("%s: N* < %s %s", a.Tier, numfmt.Plain(a.Hi), unit(a.Hi))
		case a.HasLo:
			s = fmt.Sprintf("%s: N* ≥ %s %s", a.Tier, numfmt.Plain(a.Lo), unit(a.Lo))
		default:
			s = a.Tier + ": not judged"
		}
		if a.HasUnjudged {
			s += fmt.Sprintf(" (at %s a point could not judge it in its time: lengthen the points with --duration)", CapacityPointLabel(f, a.Unjudged))
			return s
		}
		s += " (" + stopWords(f.Stop) + ")"
	default:
		return a.Tier + ": not measured: no point was judged for it"
	}
	if b := a.Binding; b != nil {
		s += " — " + bindingWords(f, b)
	}
	return s
}

// stopWords says why a search stopped before an answer.
func stopWords(stop string) string {
	switch stop {
	case capacity.StopMaxRuns:
		return "--max-runs ran out first"
	case capacity.StopBudget:
		return "the --budget ran out first"
	case capacity.StopInterrupted:
		return "interrupted first"
	case capacity.StopError:
		return "an error stopped it first"
	}
	return "not settled"
}

// bindingWords says what broke a tier at N*+1: "at 7 the server queues
// (waiting peak 3, KV 97%): TTFT p90 2.8 s > 2 s".
func bindingWords(f *capacity.File, b *capacity.Binding) string {
	e := b.Evidence
	var ev []string
	pct := func(v float64) string { return numfmt.Short(v) + "%" }
	share := func(part *float64) (string, bool) {
		if v := e.TTFTShare(part); v >= 0 {
			return numfmt.Percent(v), true
		}
		return "", false
	}
	what := ""
	switch b.Cause {
	case capacity.CauseQueue:
		what = "the server queues"
		if s, ok := share(e.QueueMeanMs); ok {
			ev = append(ev, "queue "+s+" of TTFT")
		}
		if e.WaitingPeak != nil {
			ev = append(ev, "waiting peak "+numfmt.Short(*e.WaitingPeak))
		}
		if e.KVPeakPct != nil && *e.KVPeakPct >= results.HighKVPct {
			ev = append(ev, "KV "+pct(*e.KVPeakPct))
		}
	case capacity.CauseKV:
		what = "the KV cache is full"
		if e.KVPeakPct != nil {
			ev = append(ev, "KV "+pct(*e.KVPeakPct))
		}
		if e.WaitingPeak != nil {
			ev = append(ev, "waiting peak "+numfmt.Short(*e.WaitingPeak))
		}
	case capacity.CausePreemption:
		what = "the server preempts requests"
		if e.Preemptions != nil {
			ev = append(ev, numfmt.Short(*e.Preemptions)+" preemptions")
		}
		if e.KVPeakPct != nil {
			ev = append(ev, "KV "+pct(*e.KVPeakPct))
		}
	case capacity.CausePrefill:
		what = "prefill takes the TTFT"
		if s, ok := share(e.PrefillMeanMs); ok {
			ev = append(ev, "prefill "+s+" of TTFT")
		}
	case capacity.CauseDecode:
		what = "decode slows as the batch grows"
		if e.RunningPeak != nil {
			ev = append(ev, "running peak "+numfmt.Short(*e.RunningPeak))
		}
		if e.KVPeakPct != nil && *e.KVPeakPct >= results.HighKVPct {
			ev = append(ev, "KV "+pct(*e.KVPeakPct))
		}
	case capacity.CauseRateLimit:
		what = "the endpoint rate-limits"
		ev = append(ev, fmt.Sprintf("429 × %d of %d requests", e.Rejected429, e.Requests))
		if e.Bucket != "" {
			ev = append(ev, e.Bucket)
		}
	case capacity.CauseErrors:
		what = "requests fail"
		ev = append(ev, fmt.Sprintf("%d of %d failed", e.Failed, e.Requests))
		if e.ErrorClass != "" {
			ev = append(ev, "mostly "+e.ErrorClass)
		}
	case capacity.CauseClient:
		what = "sixpin itself saturates: the point measured the client, not the server"
		ev = append(ev, e.Invalid...)
	case capacity.CauseInvalid:
		what = "the point is invalid"
		ev = append(ev, e.Invalid...)
	case capacity.CauseUndecided:
		what = "the point could not judge it: too few values in its time (lengthen the points with --duration)"
	default:
		what = "TTFT grows outside the server's queue and prefill"
		if s, ok := share(e.RestMeanMs); ok {
			ev = append(ev, "the rest "+s+" of TTFT")
		} else {
			ev = append(ev, "the server does not time its queue or prefill")
		}
	}
	s := "at " + numfmt.Plain(b.At) + " " + what
	if len(ev) > 0 {
		s += " (" + strings.Join(ev, ", ") + ")"
	}
	if b.Condition != nil {
		c := *b.Condition
		s += ": " + c.Label() + " "
		switch {
		case b.HasValue && c.Beyond(b.Value):
			s += conditionValue(c, b.Value) + " " + broken(c) + " " + conditionValue(c, c.Bound)
		case b.HasValue:
			// An invalid point fails whatever its figures say.
			return s + conditionValue(c, b.Value) + " within " + conditionValue(c, c.Bound) + ", not counted: the point is invalid"
		default:
			s += "broken (" + c.String() + ")"
		}
		if !b.Decided && b.Cause != capacity.CauseUndecided {
			s += ", not decided at 95%"
		}
	}
	return s
}

// broken is the comparison that breaks c: ">" for a ceiling, "<" for a
// floor.
func broken(c verdict.Condition) string {
	if c.Op == verdict.AtMost {
		return ">"
	}
	return "<"
}

// conditionValue formats v in c's unit: ms of a second or more as
// seconds ("2.8 s"), shares as percentages.
func conditionValue(c verdict.Condition, v float64) string {
	switch u := c.Unit(); {
	case c.IsShare():
		return numfmt.Short(v*100) + "%"
	case u == "ms" && v >= 1000:
		return numfmt.Short(v/1000) + " s"
	case u == "":
		return numfmt.Short(v)
	default:
		return numfmt.Short(v) + " " + u
	}
}

// confirmWords says how N* and N*+1 were confirmed: "6 passed 2 of 2
// runs; 7 failed 2 of 2".
func confirmWords(f *capacity.File, a capacity.Answer) string {
	if a.Kind != capacity.Found {
		return ""
	}
	s := fmt.Sprintf("confirmed: %s passed %d of %d runs; %s failed %d of %d",
		numfmt.Plain(a.Lo), a.LoRuns, a.LoRuns, numfmt.Plain(a.Hi), a.HiRuns-a.HiPasses, a.HiRuns)
	if a.HiPasses > 0 {
		s += " (a marginal boundary: it passed once too)"
	}
	return s
}

// normalisedWords is N* per GPU, kW and $/hour, and the cost of an
// agent-hour.
func normalisedWords(f *capacity.File, n *capacity.Normalised) string {
	if n == nil {
		return ""
	}
	unit := "agent"
	if f.Plan.Axis.Kind == capacity.AxisStreams {
		unit = "stream"
	}
	var parts []string
	if n.PerGPU > 0 {
		parts = append(parts, numfmt.Short(n.PerGPU)+" per GPU")
	}
	if n.PerKW > 0 {
		parts = append(parts, numfmt.Short(n.PerKW)+" per kW")
	}
	if n.PerUSDHour > 0 && f.Plan.Axis.Kind != capacity.AxisRate {
		parts = append(parts, numfmt.Short(n.PerUSDHour)+" per $/hour", numfmt.Money(n.CostPerAgentHourUSD)+" per "+unit+"-hour ("+n.CostBasis+")")
	} else if n.PerUSDHour > 0 {
		parts = append(parts, numfmt.Short(n.PerUSDHour)+" req/s per $/hour")
	}
	return strings.Join(parts, " · ")
}

// answerLines are a tier's answer, its confirmation, its normalised
// figures and its notes, a line each (those it has).
func answerLines(f *capacity.File, a capacity.Answer) []string {
	lines := []string{CapacityAnswer(f, a)}
	if s := confirmWords(f, a); s != "" {
		lines = append(lines, s)
	}
	if s := normalisedWords(f, a.PerDeployment); s != "" {
		lines = append(lines, s)
	}
	lines = append(lines, a.Notes...)
	if s := unsettledWords(f, a); s != "" {
		lines = append(lines, s)
	}
	return lines
}

// unsettledWords shows an unsettled tier's condition (the binding one,
// else its first) beyond its bound at each value judged: "beyond 2 s
// (a p90 allows 10%): 1 → 12% of 140 · 2 → 9.4% of 170 …", and says
// what a share that stays near the allowance means.
func unsettledWords(f *capacity.File, a capacity.Answer) string {
	if !a.Unsettled() {
		return ""
	}
	var c verdict.Condition
	switch {
	case a.Binding != nil && a.Binding.Condition != nil:
		c = *a.Binding.Condition
	default:
		i := slices.IndexFunc(f.Plan.Tiers, func(t verdict.Tier) bool { return t.Name == a.Tier })
		if i < 0 || len(f.Plan.Tiers[i].Conditions) == 0 {
			return ""
		}
		c = f.Plan.Tiers[i].Conditions[0]
	}
	shares := capacity.Shares(f, a.Tier, c)
	if len(shares) < 2 {
		return ""
	}
	parts := make([]string, len(shares))
	for i, sh := range shares {
		parts[i] = fmt.Sprintf("%s → %s of %d", numfmt.Plain(sh.Value), numfmt.Percent(float64(sh.Beyond)/float64(sh.N)), sh.N)
	}
	return fmt.Sprintf("not settled: %s's values beyond its bound at each value judged (a %s allows %s): %s — where the share sits near the allowance over several values, which of them passes last is a toss between runs, not a property of the deployment",
		c.Key(), allowsWhatCond(c), numfmt.Percent(c.Allowed()), strings.Join(parts, " · "))
}

// allowsWhatCond names what sets c's allowance: its percentile, or "share".
func allowsWhatCond(c verdict.Condition) string {
	if c.IsShare() {
		return "share"
	}
	return c.Stat
}

// WriteCapacityText renders a capacity file as text (md false) or
// Markdown: each tier's answer with what binds at N*+1, its confirmation
// and normalised figures, then every point with its verdicts and its
// place on the throughput–interactivity curve.
func WriteCapacityText(w io.Writer, f *capacity.File, md bool) error {
	p := &numfmt.Printer{W: w}
	title := fmt.Sprintf("Capacity: %s against %s, in %s", f.ScenarioName, f.Profile, axisWords(f.Plan.Axis))
	if f.Simulated {
		title += " — simulated"
	}
	if md {
		p.F("# %s\n\n", title)
	} else {
		p.F("%s\n\n", title)
	}
	if f.Incomplete {
		if md {
			p.F("> **INCOMPLETE:** %s\n\n", mdCell(f.IncompleteReason))
		} else {
			p.F("INCOMPLETE: %s\n\n", f.IncompleteReason)
		}
	}
	for _, a := range f.Answers {
		lines := answerLines(f, a)
		if md {
			p.F("- **%s**\n", mdCell(lines[0]))
			for _, l := range lines[1:] {
				p.F("  - %s\n", mdCell(l))
			}
			continue
		}
		p.F("  %s\n", lines[0])
		for _, l := range lines[1:] {
			p.F("      %s\n", l)
		}
	}
	p.F("\n")
	t := capacityPointsTable(f)
	t.write(p, md)
	p.F("\n")
	notes := capacityNotes(f)
	for _, n := range notes {
		if md {
			p.F("_%s_\n\n", mdCell(n))
		} else {
			p.F("%s\n", n)
		}
	}
	return p.Err
}

// capacityNotes are what a capacity report says under its points: how
// the search ended, the key to the tier columns and the curve's figures,
// and the file's own notes.
func capacityNotes(f *capacity.File) []string {
	stop := fmt.Sprintf("%d points, %s under load in %s of wall time; ", len(f.Points), shortDuration(f.LoadS), shortDuration(f.ElapsedS))
	switch f.Stop {
	case capacity.StopDone:
		stop += "every tier answered."
	default:
		stop += "stopped: " + stopWords(f.Stop) + "."
	}
	return append([]string{stop,
		"In the tier columns: ? not decided at 95% before the point ended (the point estimate's side of the bound); undecided: too little to judge, not a pass; (…) not counted for that tier (the search did not run the point for it).",
		"Per stream: effective tok/s p50 (output over the whole request, prefill included) and MLPerf's tps_per_user = 1000 / TPOT p90; aggregate: every stream's output together, steady window."},
		f.Notes...)
}

// capacityPointsTable is every point: its value, role and seed, each
// tier's verdict, and its place on the curve.
func capacityPointsTable(f *capacity.File) setTable {
	head := []string{"#", "value", "role", "seed"}
	for _, t := range f.Plan.Tiers {
		head = append(head, t.Name)
	}
	head = append(head, "aggregate tok/s", "effective p50 tok/s", "tps_per_user", "TTFT p90", "KV regime", "load")
	t := setTable{title: "Points, in the order they ran", head: head}
	for i, pt := range f.Points {
		row := []string{strconv.Itoa(i + 1), CapacityPointLabel(f, pt.Value), pt.Role, strconv.FormatInt(pt.Seed, 10)}
		for _, tr := range f.Plan.Tiers {
			cell := "–"
			if v := pt.Verdict(tr.Name); v != nil {
				cell = string(v.Outcome)
				if !v.Decided && v.Outcome != verdict.Undecided {
					cell += "?"
				}
				if !pt.Valid {
					cell = "invalid"
				}
				if !slices.Contains(pt.Judged, tr.Name) {
					cell = "(" + cell + ")"
				}
			}
			row = append(row, cell)
		}
		c := pt.Curve
		regime := "–"
		if pt.Run != nil && pt.Run.Server != nil {
			if sw := pt.Run.Server.Windows[results.WindowSteady]; sw != nil && sw.KVRegime != "" {
				regime = sw.KVRegime
			}
		}
		ttft := "–"
		if finite(c.TTFTP90Ms) && c.TTFTP90Ms > 0 {
			ttft = numfmt.Sig(c.TTFTP90Ms) + " ms"
		}
		row = append(row, cell(c.AggregateTokS), cell(c.EffectiveP50TokS), cell(c.TPSPerUser), ttft, regime, shortDuration(pt.LoadS))
		t.rows = append(t.rows, row)
	}
	return t
}

// WriteCapacityCSV writes a row per point and tier: the point, the
// tier's verdict, and the curve's figures.
func WriteCapacityCSV(w io.Writer, f *capacity.File) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"point", "value", "unit", "role", "seed", "valid", "tier", "judged", "outcome", "decided", "decided_at_s",
		"aggregate_tok_s", "effective_p50_tok_s", "decode_p50_tok_s", "tpot_p90_ms", "tps_per_user", "ttft_p90_ms", "load_s"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for i, pt := range f.Points {
		c := pt.Curve
		for _, v := range pt.Verdicts {
			_ = cw.Write([]string{strconv.Itoa(i + 1), g(pt.Value), capacityUnit(f.Plan.Axis, 2), pt.Role, strconv.FormatInt(pt.Seed, 10),
				strconv.FormatBool(pt.Valid), v.Tier, strconv.FormatBool(slices.Contains(pt.Judged, v.Tier)), string(v.Outcome),
				strconv.FormatBool(v.Decided), g(v.AtS), g(c.AggregateTokS), g(c.EffectiveP50TokS), g(c.DecodeP50TokS),
				g(c.TPOTP90Ms), g(c.TPSPerUser), g(c.TTFTP90Ms), g(pt.LoadS)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// RenderCapacity renders a capacity file in ft: text and md its answers
// and points, csv a row per point and tier, junit a test case per tier
// (failed when it fails at the smallest value), html a page with the
// throughput–interactivity curve (WriteCapacityHTML).
func RenderCapacity(w io.Writer, ft Format, name string, f *capacity.File) error {
	switch ft {
	case FormatMarkdown:
		return WriteCapacityText(w, f, true)
	case FormatCSV:
		return WriteCapacityCSV(w, f)
	case FormatJUnit:
		return writeCapacityJUnit(w, name, f)
	case FormatHTML:
		return WriteCapacityHTML(w, name, f)
	}
	return WriteCapacityText(w, f, false)
}

// writeCapacityJUnit writes a test suite with a case per tier: failed
// when the tier fails at the smallest value tried, or was not measured.
func writeCapacityJUnit(w io.Writer, name string, f *capacity.File) error {
	p := &numfmt.Printer{W: w}
	failures := 0
	for _, a := range f.Answers {
		if a.Kind == capacity.FailsAtMin || a.Kind == capacity.Unmeasured {
			failures++
		}
	}
	p.F("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\">\n",
		html.EscapeString(name), len(f.Answers), failures)
	for _, a := range f.Answers {
		p.F("    <testcase classname=\"capacity\" name=\"%s\">", html.EscapeString(a.Tier))
		if a.Kind == capacity.FailsAtMin || a.Kind == capacity.Unmeasured {
			p.F("<failure message=\"%s\"></failure>", html.EscapeString(CapacityAnswer(f, a)))
		} else {
			p.F("<system-out>%s</system-out>", html.EscapeString(CapacityAnswer(f, a)))
		}
		p.F("</testcase>\n")
	}
	p.F("  </testsuite>\n</testsuites>\n")
	return p.Err
}

// isCapacity reports whether the file at path declares the capacity
// schema (a file that cannot be read is left to the results reader).
func isCapacity(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && capacity.IsFile(data)
}

// nStar is an answer's N* as the gate shows it: "12", "6 ≤ N* < 9",
// "≥ 64", "fails at 1".
func nStar(f *capacity.File, a capacity.Answer) string {
	switch a.Kind {
	case capacity.Found:
		return numfmt.Plain(a.Lo)
	case capacity.AtLeast:
		return "≥ " + numfmt.Plain(a.Lo)
	case capacity.FailsAtMin:
		return "fails at " + numfmt.Plain(a.Hi)
	case capacity.Interval:
		switch {
		case a.HasLo && a.HasHi:
			return numfmt.Plain(a.Lo) + " ≤ N* < " + numfmt.Plain(a.Hi)
		case a.HasHi:
			return "< " + numfmt.Plain(a.Hi)
		}
		return "≥ " + numfmt.Plain(a.Lo)
	}
	return "not measured"
}

// WriteCapacityGate writes the gate's verdict on two capacity searches:
// "FAIL interactive: 12 → 10 sessions", a line per tier (md: a table).
func WriteCapacityGate(w io.Writer, base, cur string, bf, cf *capacity.File, g *capacity.GateResult, md bool) error {
	p := &numfmt.Printer{W: w}
	title := fmt.Sprintf("Gate: capacity of %s against %s (N* per tier, each with its interval)", cur, base)
	if md {
		p.F("# %s\n\n", title)
	} else {
		p.F("%s\n", title)
	}
	if len(g.Incomparable) > 0 {
		p.F("INCOMPARABLE: %s\n", strings.Join(g.Incomparable, "; "))
		return p.Err
	}
	t := setTable{head: []string{"", "tier", "baseline → current", "why"}}
	for _, tc := range g.Tiers {
		status := "pass"
		switch tc.Status {
		case verdict.Fail:
			status = "FAIL"
		case verdict.NotEvaluated:
			status = "NOT EVALUATED"
		}
		to := "missing"
		if tc.Current.Tier != "" {
			to = nStar(cf, tc.Current)
		}
		why := map[string]string{"drop": "the current N* lies below the baseline's", "rise": "the current N* lies above the baseline's",
			"same": "unchanged", "overlap": "the intervals overlap: no change can be told"}[tc.Change]
		if tc.Status == verdict.NotEvaluated {
			why = "the tier is missing or was not measured on one side"
		}
		t.rows = append(t.rows, []string{status, tc.Tier, nStar(bf, tc.Baseline) + " → " + to + " " + capacityUnit(bf.Plan.Axis, 2), why})
	}
	t.write(p, md)
	return p.Err
}

// WriteCapacityRepeats writes N* per tier over repeated searches of one
// scenario with different seeds (sixpin capacity --repeat): each seed's
// answer, and whether they lie within one step of the axis (one stream or
// session; a rate's resolution) — a tier whose answers spread wider is
// not settled by its bound on this deployment.
func WriteCapacityRepeats(w io.Writer, files []*capacity.File) error {
	if len(files) == 0 {
		return nil
	}
	p := &numfmt.Printer{W: w}
	seeds := make([]string, len(files))
	for i, f := range files {
		seeds[i] = strconv.FormatInt(f.Plan.Seed, 10)
	}
	f0 := files[0]
	p.F("\nN* over %d seeds (%s):\n", len(files), strings.Join(seeds, ", "))
	p.F("  %s against %s, in %s; every other pin held (each seed's file carries every point's pin card)\n", f0.ScenarioName, f0.Profile, axisWords(f0.Plan.Axis))
	for _, t := range files[0].Plan.Tiers {
		var labels []string
		lo, hi, all := math.Inf(1), math.Inf(-1), true
		for _, f := range files {
			i := slices.IndexFunc(f.Answers, func(a capacity.Answer) bool { return a.Tier == t.Name })
			if i < 0 {
				labels, all = append(labels, "not searched"), false
				continue
			}
			a := f.Answers[i]
			labels = append(labels, nStarLabel(f, a))
			if a.Kind != capacity.Found {
				all = false
				continue
			}
			lo, hi = min(lo, a.Lo), max(hi, a.Lo)
		}
		verdict := "not a number on every seed: read each file's answer"
		if all {
			a := files[0].Plan.Axis
			within := hi-lo <= 1
			if !a.Integer() {
				within = hi <= lo*(1+a.Resolution)*(1+1e-9)
			}
			verdict = fmt.Sprintf("within one step (%s–%s)", numfmt.Plain(lo), numfmt.Plain(hi))
			if !within {
				verdict = fmt.Sprintf("not within one step (%s–%s): the bound is not settled on this deployment; read each file's answer", numfmt.Plain(lo), numfmt.Plain(hi))
			}
		}
		p.F("  %s: %s — %s\n", t.Name, strings.Join(labels, " · "), verdict)
	}
	return p.Err
}
