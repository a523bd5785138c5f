package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// WriteSummary renders run as the text summary `sixpin run` ends with: the
// pin card first, then the headline (steady) and burst windows, then the
// sections (SummarySections: sessions, context depths, rate limits, cost,
// errors, the server, notes). Every figure names its window and whether it
// is per stream or aggregate.
func WriteSummary(w io.Writer, run *results.Run) error {
	p := &numfmt.Printer{W: w}
	writeRunHead(p, run)
	p.F("\n")
	if err := WritePinCard(w, PinCard(run)); err != nil {
		return err
	}
	for _, name := range summaryWindows(run) {
		p.F("\n")
		writeWindow(p, run, name, run.Windows[name])
	}
	p.F("\n")
	for _, sec := range SummarySections {
		sec.write(p, run)
	}
	return p.Err
}

// summaryWindows are the windows the summary details, in its order: the
// headline, then the burst.
func summaryWindows(run *results.Run) []string {
	var out []string
	for _, name := range []string{run.Headline, results.WindowBurst} {
		if run.Windows[name] != nil {
			out = append(out, name)
		}
	}
	return out
}

// SummarySection is one section of the text summary after its windows:
// ID names it (the HTML page's anchor), Title heads it in the page, and
// write prints it (nothing when the run has none of it). The HTML page
// prints each with the same words, in the same order.
type SummarySection struct {
	ID, Title string
	write     func(p *numfmt.Printer, run *results.Run)
}

// SummarySections are the summary's sections after its windows, in order.
var SummarySections = []SummarySection{
	{"sessions", "Agentic sessions", writeSessions},
	{"context", "By context depth", writeContext},
	{"content-check", "Content check", writeContentCheck},
	{"rate-limits", "Rate limits", writeRateLimits},
	{"cost", "Cost", func(p *numfmt.Printer, run *results.Run) {
		if run.Cost != nil {
			p.F("Cost (whole run): %s\n", costLine(run.Cost))
		}
	}},
	{"tokens", "Tokens", func(p *numfmt.Printer, run *results.Run) {
		if t := run.Tokens; t.Input > 0 {
			p.F("Tokens (whole run, usage): %s in (%s cached, %s of input), %s out (%s reasoning)\n",
				group(float64(t.Input)), group(float64(t.CachedInput)), pct(t.CacheHitRatio), group(float64(t.Output)), group(float64(t.Reasoning)))
		}
	}},
	{"errors", "Errors", writeErrors},
	{"server", "The server", writeServerSummary},
	{"schedule", "Schedule", writeSchedule},
	{"client-latency", "Client-added latency", func(p *numfmt.Printer, run *results.Run) {
		if c := run.ClientAddedLatencyMs; c != nil {
			p.F("Client-added latency (all windows, %s chunks; receive − server send stamp): p50 %s ms, p99 %s ms, max %s ms\n",
				group(float64(c.Count)), num(c.P50), num(c.P99), num(c.Max))
		}
	}},
	{"notes", "Notes", func(p *numfmt.Printer, run *results.Run) {
		for _, n := range run.Notes {
			p.F("Note: %s\n", n)
		}
	}},
}

// Write prints the section of run to w.
func (s SummarySection) Write(w io.Writer, run *results.Run) error {
	p := &numfmt.Printer{W: w}
	s.write(p, run)
	return p.Err
}

func writeRateLimits(p *numfmt.Printer, run *results.Run) {
	if lines := rateLimitLines(run.RateLimits); len(lines) > 0 {
		p.F("Rate limits (%s's limits, metered client-side over sliding windows, whole run):\n", run.Target.Profile)
		for _, l := range lines {
			p.F("  %s\n", l)
		}
	}
}

func writeSchedule(p *numfmt.Printer, run *results.Run) {
	s := run.Schedule
	if s == nil {
		return
	}
	p.F("Schedule (open loop): declared %s req/s, scheduled %s req/s, sent %s req/s", num(s.TargetRateRPS),
		num(s.ScheduledRateRPS), num(s.AchievedRateRPS))
	if s.LagMs != nil {
		p.F(", send lag p50 %s ms, p99 %s ms", num(s.LagMs.P50), num(s.LagMs.P99))
	}
	p.F("\n")
	if s.Behind {
		p.F("  WARNING: the client fell behind its schedule: %s\n", s.Note)
	}
}

// TargetLabel names a run's target in one phrase.
func TargetLabel(t results.TargetInfo) string {
	if t.Simulated {
		return fmt.Sprintf("built-in simulator (profile %s, model %q)", t.Profile, t.Model)
	}
	s := fmt.Sprintf("%s (model %q", t.Endpoint, t.Model)
	if t.Profile != "" {
		s += ", profile " + t.Profile
	}
	return s + ")"
}

func writeWindow(p *numfmt.Printer, run *results.Run, name string, w *results.Window) {
	title := map[string]string{
		results.WindowSteady: "STEADY (headline)",
		results.WindowBurst:  "BURST (first seconds of load: the brochure window)",
		results.WindowAll:    "ALL",
		results.WindowWarmup: "WARMUP",
	}[name]
	p.F("%s window %s–%s s (%s s)", title, num(w.StartS), num(w.EndS), num(w.DurationS))
	if name == results.WindowSteady && run.Scenario.Windows.Steady == "auto" && w.StartS > run.Scenario.Windows.WarmupS {
		p.F(", start trimmed by MSER-5 (%s s after the warmup)", num(w.StartS-run.Scenario.Windows.WarmupS))
	}
	p.F("\n")
	if w.Note != "" {
		p.F("  note: %s\n", w.Note)
	}
	p.F("  requests started in window: %d (%d ok, %d failed)\n", w.Requests, w.Completed, w.Failed)
	if w.Completed == 0 {
		p.F("  no successful request started in this window: no latency figures\n")
	}
	lat := []distRow{{"TTFT ms", w.TTFTMs}, {"ITL ms", w.ITLMs}, {"TPOT ms", w.TPOTMs}, {"E2E ms", w.E2EMs}}
	if w.TTFTAnswerMs != nil && w.TTFTMs != nil && w.TTFTAnswerMs.P50 != w.TTFTMs.P50 {
		lat = append(lat[:1], append([]distRow{{"TTFT answer ms", w.TTFTAnswerMs}}, lat[1:]...)...)
	}
	if w.Completed > 0 {
		writeDistTable(p, "per request, "+name, requestStats, lat)
		writeDistTable(p, "per stream, "+name, streamStats, []distRow{{"decode tok/s", w.DecodeTokS}, {"effective tok/s", w.EffectiveTokS}})
	}
	if w.DecodeUnmeasured > 0 {
		p.F("  decode not measured in %s of %s requests: %s\n", group(float64(w.DecodeUnmeasured)), group(float64(w.Completed)), DecodeUnmeasuredWhy)
	}
	writeTTFTSplit(p, name, w)
	p.F("  aggregate output (all streams, %s window): %s tok/s at c=%s (mean in flight; max %d) = %s tok/s per stream\n",
		name, num(w.AggregateOutputTokS), num(w.MeanInFlight), w.MaxInFlight, num(w.AggregatePerStreamTokS))
	if w.ReasoningTokens > 0 && w.OutputPerReq != nil {
		p.F("  reasoning (%s window): %s tokens, %s of the output of its successful requests\n", name,
			group(float64(w.ReasoningTokens)), pct(float64(w.ReasoningTokens)/(w.OutputPerReq.Mean*float64(w.Completed))))
	}
	if name == results.WindowBurst && w.PeakAggregateOutputTokS > 0 {
		p.F("  peak aggregate over any %s s span of the run: %s tok/s (from %s s)\n", num(w.DurationS), num(w.PeakAggregateOutputTokS), num(w.PeakStartS))
	}
	if w.Completed > 0 {
		p.F("  mix (%s window): input:output %s, prefill %s of wall time (Σ TTFT / Σ E2E)\n", name,
			RatioLabel(w.InputOutputRatio), PrefillLabel(w.PrefillShare))
	}
	if g := w.Goodput; g != nil {
		p.F("  goodput (%s window, SLO %s): %s req/s, %s of requests\n", name, SLOLabel(run), num(g.RateRPS), pct(g.Fraction))
	}
	writeAnswers(p, name, w.Output)
	writeSpecWindow(p, run, name)
	if len(w.ErrorsByClass) > 0 {
		p.F("  errors in window: %s\n", results.ClassList(w.ErrorsByClass))
	}
	writeServerWindow(p, run, name)
}

// writeAnswers says what the window's sampled answers were: how many
// were degenerate (a loop), how repetitive they ran, and how fast each
// kind decoded.
func writeAnswers(p *numfmt.Printer, name string, o *results.OutputWindow) {
	if o == nil {
		return
	}
	p.F("  answers (%s window, %s sampled): %s degenerate", name, group(float64(o.Scored)), pct(o.DegenerateShare))
	if r, d, c := o.RepeatShareP50, o.Distinct2P50, o.CompressionP50; r != nil && d != nil && c != nil {
		p.F("; p50 %s of an answer its longest repeated phrase, distinct word pairs %s, compresses %s×", pct(*r), pct(*d), num(*c))
	}
	if d, h := o.DecodeTokSP50Degenerate, o.DecodeTokSP50Healthy; d != nil && h != nil {
		p.F("; decode p50 %s tok/s degenerate against %s healthy", num(*d), num(*h))
	}
	p.F("\n")
}

// DecodeUnmeasuredWhy says why requests are left out of decode tok/s,
// ITL and TPOT (record.Record.DecodeMeasured).
var DecodeUnmeasuredWhy = fmt.Sprintf("their tokens after the first came in fewer than %d reads of their own or within %s (an answer sent at once, by a server or proxy that buffers it, or too short to time) — left out of decode tok/s, ITL and TPOT, which would measure the client's parse",
	record.MinDecodeReads, record.MinDecodeSpan)

// The columns of the summary's distribution tables: per request the
// tail matters (up to max), per stream the slow streams (down to min).
var (
	requestStats = []string{"mean", "p50", "p90", "p99", "max"}
	streamStats  = []string{"mean", "min", "p10", "p50", "p90"}
)

// distRow is one row of a distribution table: its label and its
// distribution (nil: the row is left out).
type distRow struct {
	label string
	d     *results.Dist
}

// writeDistTable writes a table of distributions under its own header:
// title, then the statistics cols names, each row's figures taken by
// those same names, so a header cannot name other columns than its rows
// print. A mean its own p50 contradicts by an order of magnitude
// (SkewedMean) is left out ("–") and a note under the table says why.
func writeDistTable(p *numfmt.Printer, title string, cols []string, rows []distRow) {
	p.F("  %-30s", title)
	for _, st := range cols {
		p.F(" %10s", st)
	}
	p.F("\n")
	var skewed []string
	for _, r := range rows {
		if r.d == nil {
			continue
		}
		p.F("  %-30s", r.label)
		for _, st := range cols {
			cell := num(verdict.StatOf(r.d, st))
			if st == "mean" && SkewedMean(r.d) {
				cell = "–"
				skewed = append(skewed, fmt.Sprintf("%s (mean %s against p50 %s, max %s)", r.label, num(r.d.Mean), num(r.d.P50), num(r.d.Max)))
			}
			p.F(" %10s", cell)
		}
		p.F("\n")
	}
	if len(skewed) > 0 {
		p.F("  – a mean over %d× its p50 (or under 1/%d) is not printed: a few outliers decide it — read the percentiles: %s\n",
			skewRatio, skewRatio, strings.Join(skewed, "; "))
	}
}

// skewRatio is how far a mean may be from its p50 before it is not
// printed.
const skewRatio = 5

// SkewedMean reports whether d's mean is an order of magnitude from its
// own p50 (skewRatio: a lognormal spread of σ 1.8 before it counts): a mean the middle of the samples contradicts says
// what a few outliers did, not what a request saw.
func SkewedMean(d *results.Dist) bool {
	return d != nil && d.P50 > 0 && (d.Mean > skewRatio*d.P50 || d.Mean*skewRatio < d.P50)
}

// RatioLabel formats an observed input:output token ratio; 0 is a window
// in which no successful request reported usage.
func RatioLabel(v float64) string {
	if v == 0 {
		return "unknown (no usage reported)"
	}
	return num(v)
}

// PrefillLabel formats a prefill share of wall time; 0 is a window in
// which no request succeeded.
func PrefillLabel(v float64) string {
	if v == 0 {
		return "unknown (no request succeeded)"
	}
	return pct(v)
}

// SLOLabel describes the scenario's SLO ("TTFT ≤ 2,000 ms, TPOT ≤ 50.0
// ms"), or "" without one.
func SLOLabel(run *results.Run) string {
	var parts []string
	s := run.Scenario.SLO
	if s.TTFTMs > 0 {
		parts = append(parts, "TTFT ≤ "+num(s.TTFTMs)+" ms")
	}
	if s.TPOTMs > 0 {
		parts = append(parts, "TPOT ≤ "+num(s.TPOTMs)+" ms")
	}
	if s.E2EMs > 0 {
		parts = append(parts, "E2E ≤ "+num(s.E2EMs)+" ms")
	}
	return strings.Join(parts, ", ")
}

func writeErrors(p *numfmt.Printer, run *results.Run) {
	e := run.Errors
	if e.Failed == 0 {
		p.F("Errors (whole run): none in %s\n", numfmt.Count(e.Requests, "request", ""))
	} else {
		p.F("Errors (whole run): %s of %s failed (%s, interrupts excluded): %s\n",
			numfmt.Int(e.Failed), numfmt.Count(e.Requests, "request", ""), pct(e.Rate), results.ClassList(e.ByClass))
		for _, c := range record.ErrorClasses {
			for _, ex := range e.Examples[string(c)] {
				p.F("  %s: %s\n", c, ex)
			}
		}
	}
	for _, o := range e.Outages {
		if o.Recovered {
			p.F("  endpoint unreachable from %s s to %s s (%s failed to connect)\n", num(o.StartS), num(o.EndS), numfmt.Count(o.FailedRequests, "request", ""))
		} else {
			p.F("  endpoint unreachable from %s s: no new connection accepted by the end of the run (%s failed to connect)\n", num(o.StartS), numfmt.Count(o.FailedRequests, "request", ""))
		}
	}
	writeBackoff(p, e)
	if e.Reconnects > 0 {
		p.F("  reconnects: %d (requests sent again on a new connection: the server had closed the kept-alive one without reading them; not failures)\n", e.Reconnects)
	}
	if k := run.Client.KeepAliveOff; k != nil {
		from := "before load"
		if k.AtS >= 0 {
			from = "from " + num(k.AtS) + " s"
		}
		p.F("  connections: a new one per request %s (%d opened): the server hangs up on kept-alive connections without saying so (%s)\n", from, run.Client.Connections, k.Reason)
	}
}

// writeBackoff says how often the server asked sixpin to slow down, how
// long sixpin waited before sending again, and the open-loop arrivals it
// withheld meanwhile.
func writeBackoff(p *numfmt.Printer, e results.Errors) {
	if len(e.SlowDowns) > 0 {
		statuses := slices.Sorted(maps.Keys(e.SlowDowns))
		asked, parts := 0, make([]string, 0, len(statuses))
		for _, st := range statuses {
			asked += e.SlowDowns[st]
			parts = append(parts, fmt.Sprintf("%s × %s", st, numfmt.Int(e.SlowDowns[st])))
		}
		p.F("  the server asked sixpin to slow down %s (%s)\n", numfmt.Count(asked, "time", ""), strings.Join(parts, ", "))
	}
	if len(e.BackoffS) > 0 {
		total, parts := 0.0, []string{}
		for _, c := range record.ErrorClasses {
			if v, ok := e.BackoffS[string(c)]; ok {
				total += v
				parts = append(parts, fmt.Sprintf("after %s %s s", c, num(v)))
			}
		}
		p.F("  sixpin waited %s s before sending again (%s), never counted as latency\n", num(total), strings.Join(parts, ", "))
	}
	if e.WithheldArrivals > 0 {
		p.F("  %s fell inside those waits and were withheld (not sent, never sent late)\n", numfmt.Count(e.WithheldArrivals, "open-loop arrival", ""))
	}
}

func writeSessions(p *numfmt.Printer, run *results.Run) {
	ss := run.Sessions
	if ss == nil || len(ss.All) == 0 {
		return
	}
	p.F("Agentic sessions (whole run): %s", numfmt.Count(len(ss.All), "session", ""))
	if whole := ss.Whole(); whole < len(ss.All) {
		p.F(" (%d joined mid-life: turns and lifetime over the %d whole)", len(ss.All)-whole, whole)
	}
	if d := ss.Turns; d != nil {
		p.F(", turns p50 %s (max %s)", group(d.P50), group(d.Max))
	}
	if d := ss.LifetimeMin; d != nil {
		p.F(", lifetime p50 %s min (max %s)", num(d.P50), num(d.Max))
	}
	p.F("\n")
	if d := ss.GrowthPerMin; d != nil {
		p.F("  context growth p50 %s tokens/min per session", group(d.P50))
	}
	p.F("; cache hit %s of input tokens\n", pct(run.Tokens.CacheHitRatio))
	var reasons []string
	for _, r := range []string{record.SessionEndTurns, record.SessionEndContextWindow, record.SessionEndCostCap, record.SessionEndRateLimited, record.SessionEndError, record.SessionEndRunEnded, record.SessionEndInterrupted} {
		if n := ss.EndReasons[r]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
	}
	p.F("  ended by: %s\n", strings.Join(reasons, ", "))
	if d := ss.First429S; d != nil {
		rejected, retried := 0, 0
		for _, s := range ss.All {
			rejected += s.Rejections
			retried += s.Retries
		}
		p.F("  time to first 429: p50 %s s, min %s s (%s of %s were rate limited; %s × 429, %s)\n",
			num(d.P50), num(d.Min), numfmt.Int(d.Count), numfmt.Count(len(ss.All), "session", ""), numfmt.Int(rejected), numfmt.Count(retried, "retry", "retries"))
	}
}

func writeContext(p *numfmt.Printer, run *results.Run) {
	used := 0
	for _, b := range run.ByContext {
		if b.Requests > 0 {
			used++
		}
	}
	if used < 2 && (run.Sessions == nil || len(run.Sessions.All) == 0) {
		return
	}
	p.F("By context depth (whole run, per request; prompt tokens from usage):\n")
	p.F("  %-24s", "")
	for _, b := range run.ByContext {
		p.F(" %10s", b.Name)
	}
	p.F("\n")
	row := func(label string, get func(results.ContextBucket) string) {
		p.F("  %-24s", label)
		for _, b := range run.ByContext {
			p.F(" %10s", get(b))
		}
		p.F("\n")
	}
	row("requests", func(b results.ContextBucket) string { return fmt.Sprint(b.Requests) })
	p50 := func(d *results.Dist) string {
		if d == nil {
			return "–"
		}
		return num(d.P50)
	}
	row("effective tok/s p50", func(b results.ContextBucket) string { return p50(b.EffectiveTokS) })
	row("decode tok/s p50", func(b results.ContextBucket) string { return p50(b.DecodeTokS) })
	row("TTFT ms p50", func(b results.ContextBucket) string { return p50(b.TTFTMs) })
}

// writeRunHead writes a run's first lines: what ran against what, and
// whether it stopped early, is incomplete or invalid.
func writeRunHead(p *numfmt.Printer, run *results.Run) {
	sim := ""
	if run.Target.Simulated {
		sim = " [SIMULATED]"
	}
	wire := ""
	if w := run.Client.Wire; w != "" && !run.Target.Simulated {
		wire = " · spoken in " + w
	}
	p.F("sixpin %s · scenario %s (seed %d) · target %s%s%s\n", run.SixpinVersion, run.Scenario.Name,
		run.Scenario.Seed, TargetLabel(run.Target), sim, wire)
	if e := run.StoppedEarly; e != nil {
		p.F("STOPPED EARLY at %s s: %s\n", verdict.Seconds(e.AtS), e.Reason)
	}
	if run.Incomplete {
		p.F("INCOMPLETE: %s — the figures cover what was measured until then.\n", run.IncompleteReason)
	}
	if !run.Valid {
		p.F("INVALID: %s\n", strings.Join(run.Invalid, "; "))
	}
}
