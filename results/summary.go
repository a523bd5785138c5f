package results

import (
	"fmt"
	"io"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// WriteSummary renders run as the text summary `sixpin run` ends with: the
// pin card first, then the headline (steady) and burst windows, errors and
// notes. Every figure names its window and whether it is per stream or
// aggregate.
func WriteSummary(w io.Writer, run *Run) error {
	p := &printer{w: w}
	sim := ""
	if run.Target.Simulated {
		sim = " [SIMULATED]"
	}
	p.f("sixpin %s · scenario %s (seed %d) · target %s%s\n", run.SixpinVersion, run.Scenario.Name,
		run.Scenario.Seed, targetLabel(run.Target), sim)
	if run.Incomplete {
		p.f("INCOMPLETE: %s — the figures cover what was measured until then.\n", run.IncompleteReason)
	}
	if !run.Valid {
		p.f("INVALID: %s\n", strings.Join(run.Invalid, "; "))
	}
	p.f("\n")
	writePinCard(p, run)
	for _, name := range []string{run.Headline, WindowBurst} {
		if win := run.Windows[name]; win != nil {
			p.f("\n")
			writeWindow(p, run, name, win)
		}
	}
	p.f("\n")
	writeErrors(p, run)
	if s := run.Schedule; s != nil {
		p.f("Schedule (open loop): declared %s req/s, scheduled %s req/s, sent %s req/s", num(s.TargetRateRPS),
			num(s.ScheduledRateRPS), num(s.AchievedRateRPS))
		if s.LagMs != nil {
			p.f(", send lag p50 %s ms, p99 %s ms", num(s.LagMs.P50), num(s.LagMs.P99))
		}
		p.f("\n")
		if s.Behind {
			p.f("  WARNING: the client fell behind its schedule: %s\n", s.Note)
		}
	}
	if c := run.ClientAddedLatencyMs; c != nil {
		p.f("Client-added latency (all windows, %s chunks; receive − server send stamp): p50 %s ms, p99 %s ms, max %s ms\n",
			group(float64(c.Count)), num(c.P50), num(c.P99), num(c.Max))
	}
	for _, n := range run.Notes {
		p.f("Note: %s\n", n)
	}
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func targetLabel(t TargetInfo) string {
	if t.Simulated {
		return fmt.Sprintf("built-in simulator (profile %s, model %q)", t.Profile, t.Model)
	}
	s := fmt.Sprintf("%s (model %q", t.Endpoint, t.Model)
	if t.Profile != "" {
		s += ", profile " + t.Profile
	}
	return s + ")"
}

func verdictMark(v Verdict) string {
	switch v {
	case Verified:
		return "verified"
	case Contradicted:
		return "CONTRADICTED"
	}
	return "unverifiable"
}

func writePinCard(p *printer, run *Run) {
	pins := run.Pins
	p.f("Pin card (declared → observed; observed over the %s window unless noted)\n", run.Headline)
	row := func(n int, name, declared, observed string, v Verdict, reason string) {
		p.f("  %d %-12s %s\n", n, name, declared)
		p.f("    %-12s → %s\n", "", observed)
		p.f("    %-12s   %s: %s\n", "", verdictMark(v), reason)
	}
	m := pins.Model
	md := m.Declared.Name
	if m.Declared.ParamsB > 0 {
		md += fmt.Sprintf(", %gB", m.Declared.ParamsB)
		if m.Declared.ActiveParamsB > 0 {
			md += fmt.Sprintf(" (%gB active)", m.Declared.ActiveParamsB)
		}
	}
	if m.Declared.Dtype != "" {
		md += " " + m.Declared.Dtype
	}
	md += fmt.Sprintf("; requested as %q", m.Declared.Requested)
	mo := "server reports no model"
	if m.Observed.Reported != "" {
		mo = fmt.Sprintf("answered as %q", m.Observed.Reported)
	}
	if m.Observed.ParamsB > 0 {
		mo += fmt.Sprintf(", %.3gB parameters", m.Observed.ParamsB)
	}
	row(1, "model", md, mo, m.Verified, m.Reason)

	tok := func(d TokensDeclared) string {
		return fmt.Sprintf("%s tokens (mean %s)", d.Dist, group(d.Mean))
	}
	tokObs := func(o TokensObserved) string {
		if o.PerRequest == nil {
			return "no successful request"
		}
		s := fmt.Sprintf("p50 %s, mean %s, range [%s, %s] tokens (%s, all windows)", group(o.PerRequest.P50),
			group(o.PerRequest.Mean), group(o.PerRequest.Min), group(o.PerRequest.Max), o.Source)
		if o.Drift != nil {
			s += fmt.Sprintf("; drift vs requested mean %+.2f%%, max |%.2f%%|", o.Drift.MeanPct, o.Drift.MaxAbsPct)
		}
		return s
	}
	row(2, "prompt", tok(pins.Prompt.Declared), tokObs(pins.Prompt.Observed), pins.Prompt.Verified, pins.Prompt.Reason)
	od := tok(pins.Output.Declared.TokensDeclared)
	if pins.Output.Declared.Exact {
		od += ", exact via " + pins.Output.Declared.Control
	}
	row(3, "output", od, tokObs(pins.Output.Observed), pins.Output.Verified, pins.Output.Reason)

	c := pins.Concurrency
	var cd string
	if c.Declared.Mode == "open" {
		cd = fmt.Sprintf("open loop, %s req/s %s", num(c.Declared.RateRPS), c.Declared.Arrival)
		if c.Declared.Arrival == "gamma" {
			cd += fmt.Sprintf(" (burstiness %g)", c.Declared.Burstiness)
		}
		if c.Declared.MaxInFlight > 0 {
			cd += fmt.Sprintf(", at most %d in flight", c.Declared.MaxInFlight)
		}
	} else {
		cd = fmt.Sprintf("closed loop, %d streams", c.Declared.Streams)
	}
	co := fmt.Sprintf("mean %s in flight, max %d; %s req/s started; Little's law %s",
		num(c.Observed.MeanInFlight), c.Observed.MaxInFlight, num(c.Observed.StartRateRPS), num(c.Observed.LittlesLaw))
	row(4, "concurrency", cd, co, c.Verified, c.Reason)

	k := pins.KVCache
	var kd []string
	if k.Declared.MaxModelLen > 0 {
		kd = append(kd, "max_model_len "+group(float64(k.Declared.MaxModelLen)))
	}
	if k.Declared.GPUMemoryUtilization > 0 {
		kd = append(kd, fmt.Sprintf("gpu_memory_utilization %g", k.Declared.GPUMemoryUtilization))
	}
	if k.Declared.MaxNumSeqs > 0 {
		kd = append(kd, fmt.Sprintf("max_num_seqs %d", k.Declared.MaxNumSeqs))
	}
	if k.Declared.Batching != "" {
		kd = append(kd, k.Declared.Batching+" batching")
	}
	if k.Declared.PrefixCaching != nil {
		kd = append(kd, fmt.Sprintf("prefix_caching %t", *k.Declared.PrefixCaching))
	}
	if len(kd) == 0 {
		kd = []string{"not declared"}
	}
	ko := "nothing exposed"
	if k.Observed.MaxModelLen > 0 {
		ko = fmt.Sprintf("max_model_len %s (%s)", group(float64(k.Observed.MaxModelLen)), k.Observed.Source)
	}
	row(5, "kv_cache", strings.Join(kd, ", "), ko, k.Verified, k.Reason)

	x := pins.Mix
	xd := fmt.Sprintf("input:output %s", num(x.Declared.InputOutputRatio))
	for i, cl := range x.Declared.Classes {
		if i == 0 {
			xd += "; classes"
		}
		xd += fmt.Sprintf(" %s×%g", cl.Name, cl.Weight)
	}
	xo := fmt.Sprintf("input:output %s (requested %s), prefill %s of wall time (Σ TTFT / Σ E2E; all windows)",
		num(x.Observed.InputOutputRatio), num(x.Observed.RequestedInputOutputRatio), pct(x.Observed.PrefillShare))
	row(6, "mix", xd, xo, x.Verified, x.Reason)
}

func writeWindow(p *printer, run *Run, name string, w *Window) {
	title := map[string]string{
		WindowSteady: "STEADY (headline)",
		WindowBurst:  "BURST (first seconds of load: the brochure window)",
		WindowAll:    "ALL",
		WindowWarmup: "WARMUP",
	}[name]
	p.f("%s window %s–%s s (%s s)", title, num(w.StartS), num(w.EndS), num(w.DurationS))
	if name == WindowSteady && run.Scenario.Windows.Steady == "auto" && w.StartS > run.Scenario.Windows.WarmupS {
		p.f(", start trimmed by MSER-5 (%s s after the warmup)", num(w.StartS-run.Scenario.Windows.WarmupS))
	}
	p.f("\n")
	if w.Note != "" {
		p.f("  note: %s\n", w.Note)
	}
	p.f("  requests started in window: %d (%d ok, %d failed)\n", w.Requests, w.Completed, w.Failed)
	if w.Completed == 0 {
		p.f("  no successful request started in this window: no latency figures\n")
	}
	lat := []struct {
		label string
		d     *Dist
	}{
		{"TTFT ms", w.TTFTMs}, {"ITL ms", w.ITLMs}, {"TPOT ms", w.TPOTMs}, {"E2E ms", w.E2EMs},
	}
	if w.TTFTAnswerMs != nil && w.TTFTMs != nil && w.TTFTAnswerMs.P50 != w.TTFTMs.P50 {
		lat = append(lat[:1], append([]struct {
			label string
			d     *Dist
		}{{"TTFT answer ms", w.TTFTAnswerMs}}, lat[1:]...)...)
	}
	if w.Completed > 0 {
		p.f("  %-30s %10s %10s %10s %10s %10s\n", "per request, "+name, "mean", "p50", "p90", "p99", "max")
		for _, l := range lat {
			if l.d != nil {
				p.f("  %-30s %10s %10s %10s %10s %10s\n", l.label, num(l.d.Mean), num(l.d.P50), num(l.d.P90), num(l.d.P99), num(l.d.Max))
			}
		}
		p.f("  %-30s %10s %10s %10s %10s %10s\n", "per stream, "+name, "mean", "min", "p10", "p50", "p90")
		for _, l := range []struct {
			label string
			d     *Dist
		}{{"decode tok/s", w.DecodeTokS}, {"effective tok/s", w.EffectiveTokS}} {
			if l.d != nil {
				p.f("  %-30s %10s %10s %10s %10s %10s\n", l.label, num(l.d.Mean), num(l.d.Min), num(l.d.P10), num(l.d.P50), num(l.d.P90))
			}
		}
	}
	p.f("  aggregate output (all streams, %s window): %s tok/s at c=%s (mean in flight; max %d) = %s tok/s per stream\n",
		name, num(w.AggregateOutputTokS), num(w.MeanInFlight), w.MaxInFlight, num(w.AggregatePerStreamTokS))
	if name == WindowBurst && w.PeakAggregateOutputTokS > 0 {
		p.f("  peak aggregate over any %s s span of the run: %s tok/s (from %s s)\n", num(w.DurationS), num(w.PeakAggregateOutputTokS), num(w.PeakStartS))
	}
	if g := w.Goodput; g != nil {
		p.f("  goodput (%s window, SLO %s): %s req/s, %s of requests\n", name, sloLabel(run), num(g.RateRPS), pct(g.Fraction))
	}
	if len(w.ErrorsByClass) > 0 {
		p.f("  errors in window: %s\n", classList(w.ErrorsByClass))
	}
}

func sloLabel(run *Run) string {
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

func writeErrors(p *printer, run *Run) {
	e := run.Errors
	if e.Failed == 0 {
		p.f("Errors (whole run): none in %d requests\n", e.Requests)
		return
	}
	p.f("Errors (whole run): %d of %d requests failed (%s, interrupts excluded): %s\n",
		e.Failed, e.Requests, pct(e.Rate), classList(e.ByClass))
	for _, c := range ErrorClasses {
		for _, ex := range e.Examples[string(c)] {
			p.f("  %s: %s\n", c, ex)
		}
	}
}

func classList(m map[string]int) string {
	var parts []string
	for _, c := range ErrorClasses {
		if n := m[string(c)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

func num(v float64) string   { return numfmt.Sig(v) }
func group(v float64) string { return numfmt.Thousands(v) }
func pct(f float64) string   { return numfmt.Percent(f) }
