package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

func num(v float64) string   { return numfmt.Sig(v) }
func group(v float64) string { return numfmt.Thousands(v) }
func pct(f float64) string   { return numfmt.Percent(f) }

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;").Replace(s)
}

// WriteMarkdown writes runs as GitHub-flavoured Markdown that pastes into
// a pull request or $GITHUB_STEP_SUMMARY: for each run its identity, the
// pin card as a table (✓ verified, ✗ contradicted, ? unverifiable, with the
// unverified pins named), then a table per window (steady, burst, all) with
// per-request latency percentiles, per-stream speeds, and the aggregate,
// goodput and errors beside them; then whole-run errors, tokens and cost.
func WriteMarkdown(w io.Writer, runs []Input) error {
	p := &numfmt.Printer{W: w}
	if len(runs) == 1 {
		p.F("# sixpin report: %s\n\n", runs[0].Run.Scenario.Name)
	} else {
		p.F("# sixpin report: %d runs\n\n", len(runs))
	}
	for i, in := range runs {
		if i > 0 {
			p.F("\n---\n\n")
		}
		writeMarkdownRun(p, in, len(runs) > 1)
	}
	return p.Err
}

func writeMarkdownRun(p *numfmt.Printer, in Input, heading bool) {
	run := in.Run
	if heading {
		p.F("## %s · `%s`\n\n", run.Scenario.Name, in.Name)
	}
	p.F("%s\n\n", mdIdentity(in))
	writeMarkdownWarnings(p, run)
	p.F("### Pin card\n\n")
	writeMarkdownPinCard(p, PinCard(run))
	for _, name := range reportWindows {
		if win := run.Windows[name]; win != nil {
			p.F("\n")
			writeMarkdownWindow(p, run, name, win)
		}
	}
	p.F("\n### Whole run\n\n")
	writeMarkdownRunFacts(p, run)
}

// mdIdentity is the one line that says what was run against what.
func mdIdentity(in Input) string {
	run := in.Run
	s := fmt.Sprintf("Scenario **%s** (seed %d) · target %s", run.Scenario.Name, run.Scenario.Seed, mdCell(TargetLabel(run.Target)))
	if run.Target.Simulated {
		s += " · **SIMULATED**"
	}
	s += fmt.Sprintf(" · sixpin %s · started %s · `%s`", run.SixpinVersion, run.StartedAt.UTC().Format(time.DateTime+" UTC"), in.Name)
	return s
}

func writeMarkdownWarnings(p *numfmt.Printer, run *results.Run) {
	if e := run.StoppedEarly; e != nil {
		p.F("> **STOPPED EARLY** at %s s: %s\n\n", verdict.Seconds(e.AtS), mdCell(e.Reason))
	}
	if run.Incomplete {
		p.F("> **INCOMPLETE:** %s — the figures cover what was measured until then.\n\n", mdCell(run.IncompleteReason))
	}
	if !run.Valid {
		p.F("> **INVALID:** %s\n\n", mdCell(strings.Join(run.Invalid, "; ")))
	}
}

// writeMarkdownPinCard writes the pin card as a table.
func writeMarkdownPinCard(p *numfmt.Printer, c Card) {
	p.F("Headline figures from the %s. ✓ verified · ✗ contradicted · ? unverifiable\n\n", c.Window)
	p.F("| | pin | declared | observed | verification |\n|:-:|---|---|---|---|\n")
	for _, r := range c.Rows {
		p.F("| %s | %d %s | %s | %s | %s |\n", r.Mark(), r.N, r.Pin, mdCell(r.Declared), mdCell(r.Observed), mdCell(r.Reason))
	}
	if len(c.Unverified) > 0 {
		p.F("\n> **Not verified: %s** — figures are only as strong as these pins.\n", strings.Join(c.Unverified, ", "))
	}
	if c.Sensitive != "" {
		p.F("\n> **%s**\n", c.Sensitive)
	} else {
		p.F("\nAll six pins verified.\n")
	}
}

// windowDists are the distributions a window table shows.
func windowDists(w *results.Window) []distRow {
	rows := []distRow{{"TTFT ms", w.TTFTMs}}
	if w.TTFTAnswerMs != nil && w.TTFTMs != nil && w.TTFTAnswerMs.P50 != w.TTFTMs.P50 {
		rows = append(rows, distRow{"TTFT answer ms", w.TTFTAnswerMs})
	}
	return append(rows, distRow{"ITL ms", w.ITLMs}, distRow{"TPOT ms", w.TPOTMs}, distRow{"E2E ms", w.E2EMs},
		distRow{"decode tok/s per stream", w.DecodeTokS}, distRow{"effective tok/s per stream", w.EffectiveTokS})
}

func writeMarkdownWindow(p *numfmt.Printer, run *results.Run, name string, w *results.Window) {
	p.F("### %s · %s–%s s (%s s)\n\n", windowTitle(name), num(w.StartS), num(w.EndS), num(w.DurationS))
	if w.Note != "" {
		p.F("_Note: %s_\n\n", mdCell(w.Note))
	}
	if w.Completed > 0 {
		writeMarkdownDistTable(p, name, windowDists(w))
	}
	if w.ServerPrefillMs != nil && w.TTFTRestMs != nil {
		p.F("TTFT split by the server's own timings (%s requests it timed", group(float64(w.ServerPrefillMs.Count)))
		if w.ServerQueueMs == nil {
			p.F("; the server does not say its queue: the rest includes it")
		}
		p.F("):\n\n")
		writeMarkdownDistTable(p, "TTFT split, "+name, []distRow{{"server queue ms", w.ServerQueueMs},
			{"server prefill ms", w.ServerPrefillMs}, {"rest ms (network, client)", w.TTFTRestMs}})
	}
	for _, l := range windowFacts(run, name, w) {
		p.F("- %s\n", l)
	}
}

// writeMarkdownDistTable writes a table of distributions under its own
// header (title, then every statistic), a row per non-nil distribution.
func writeMarkdownDistTable(p *numfmt.Printer, title string, rows []distRow) {
	p.F("| %s | n | mean | min | p10 | p50 | p90 | p99 | max |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|\n", title)
	skewed := false
	for _, r := range rows {
		if d := r.d; d != nil {
			mean := num(d.Mean)
			if SkewedMean(d) {
				mean, skewed = "–", true
			}
			p.F("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.label, group(float64(d.Count)), mean, num(d.Min),
				num(d.P10), num(d.P50), num(d.P90), num(d.P99), num(d.Max))
		}
	}
	if skewed {
		p.F("\n_– a mean over %d× its p50 (or under 1/%d) is not printed: a few outliers decide it._\n", skewRatio, skewRatio)
	}
	p.F("\n")
}

// windowFacts are the window's figures beside its distributions, as
// Markdown list items (bold labels).
func windowFacts(run *results.Run, name string, w *results.Window) []string {
	var ls []string
	ls = append(ls, fmt.Sprintf("**Requests** started in window: %d (%d ok, %d failed)", w.Requests, w.Completed, w.Failed))
	if w.Completed == 0 {
		ls = append(ls, "No successful request started in this window: no latency figures.")
	}
	ls = append(ls, fmt.Sprintf("**Aggregate output** (all streams): **%s tok/s at c=%s** (mean in flight; max %d) = %s tok/s per stream",
		num(w.AggregateOutputTokS), num(w.MeanInFlight), w.MaxInFlight, num(w.AggregatePerStreamTokS)))
	if name == results.WindowBurst && w.PeakAggregateOutputTokS > 0 {
		ls = append(ls, fmt.Sprintf("**Peak aggregate** over any %s s span of the run: %s tok/s (from %s s)",
			num(w.DurationS), num(w.PeakAggregateOutputTokS), num(w.PeakStartS)))
	}
	if g := w.Goodput; g != nil {
		ls = append(ls, fmt.Sprintf("**Goodput** (SLO %s): %s req/s, %s of requests", SLOLabel(run), num(g.RateRPS), pct(g.Fraction)))
	}
	if len(w.ErrorsByClass) > 0 {
		ls = append(ls, "**Errors**: "+results.ClassList(w.ErrorsByClass))
	} else {
		ls = append(ls, "**Errors**: none")
	}
	if w.Completed > 0 {
		ls = append(ls, fmt.Sprintf("**Mix**: input:output %s, prefill %s of wall time (Σ TTFT / Σ E2E)", RatioLabel(w.InputOutputRatio), PrefillLabel(w.PrefillShare)))
	}
	return ls
}

func writeMarkdownRunFacts(p *numfmt.Printer, run *results.Run) {
	for _, l := range runFacts(run) {
		p.F("- %s\n", mdCell(l))
	}
}

// runFacts are the whole-run lines shared by the Markdown and HTML
// reports (plain text).
func runFacts(run *results.Run) []string {
	var ls []string
	e := run.Errors
	if e.Failed == 0 {
		ls = append(ls, "Errors: none in "+numfmt.Count(e.Requests, "request", ""))
	} else {
		ls = append(ls, fmt.Sprintf("Errors: %s of %s failed (%s, interrupts excluded): %s", numfmt.Int(e.Failed), numfmt.Count(e.Requests, "request", ""), pct(e.Rate), results.ClassList(e.ByClass)))
		for _, c := range record.ErrorClasses {
			for _, ex := range e.Examples[string(c)] {
				ls = append(ls, fmt.Sprintf("Error example, %s: %s", c, ex))
			}
		}
	}
	if t := run.Tokens; t.Input > 0 {
		ls = append(ls, fmt.Sprintf("Tokens (usage): %s in (%s cached, %s of input), %s out (%s reasoning)",
			group(float64(t.Input)), group(float64(t.CachedInput)), pct(t.CacheHitRatio), group(float64(t.Output)), group(float64(t.Reasoning))))
	}
	if run.Cost != nil {
		ls = append(ls, "Cost: "+costLine(run.Cost))
	}
	for _, l := range rateLimitLines(run.RateLimits) {
		ls = append(ls, "Rate limits: "+l)
	}
	if s := run.Schedule; s != nil {
		l := fmt.Sprintf("Schedule (open loop): declared %s req/s, scheduled %s req/s, sent %s req/s", num(s.TargetRateRPS), num(s.ScheduledRateRPS), num(s.AchievedRateRPS))
		if s.Behind {
			l += "; the client fell behind: " + s.Note
		}
		ls = append(ls, l)
	}
	if ss := run.Sessions; ss != nil && len(ss.All) > 0 {
		l := fmt.Sprintf("Agentic sessions: %d", len(ss.All))
		if d := ss.Turns; d != nil {
			l += fmt.Sprintf(", turns p50 %s (max %s)", group(d.P50), group(d.Max))
		}
		if d := ss.LifetimeMin; d != nil {
			l += fmt.Sprintf(", lifetime p50 %s min", num(d.P50))
		}
		ls = append(ls, l)
	}
	if c := run.ClientAddedLatencyMs; c != nil {
		ls = append(ls, fmt.Sprintf("Client-added latency (receive − server send stamp, %s chunks): p50 %s ms, p99 %s ms",
			group(float64(c.Count)), num(c.P50), num(c.P99)))
	}
	for _, n := range run.Notes {
		ls = append(ls, "Note: "+n)
	}
	return ls
}
