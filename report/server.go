package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// serverWindow is the server's view of the named window (nil: not
// scraped, or not that window).
func serverWindow(run *results.Run, name string) *results.ServerWindow {
	if run.Server == nil {
		return nil
	}
	return run.Server.Windows[name]
}

// serverKV is what pin 5 adds from the server's metrics in the headline
// window: peak and mean KV usage, preemptions, queueing, the regime.
func serverKV(run *results.Run) string {
	sw := serverWindow(run, run.Headline)
	if sw == nil || sw.Scrapes == 0 {
		return ""
	}
	var parts []string
	if kv := sw.KVUsagePct; kv != nil {
		parts = append(parts, fmt.Sprintf("KV usage peak %s%%, mean %s%%", num(kv.Peak), num(kv.Mean)))
	}
	if sw.Preemptions != nil {
		parts = append(parts, numfmt.Count(int(*sw.Preemptions), "preemption", ""))
	}
	if q := sw.Waiting; q != nil {
		parts = append(parts, fmt.Sprintf("waiting peak %s", num(q.Peak)))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "server (" + run.Headline + " window, /metrics): " + strings.Join(parts, ", ")
	if sw.KVRegime != "" {
		s += " — " + regimeWords(sw)
	}
	return s
}

// regimeWords is a window's KV regime and what it rests on: "queued
// (requests waiting in 100% of scrapes, 88% of TTFT in the server's
// queue; the KV cache was not the limit)".
func regimeWords(sw *results.ServerWindow) string {
	var why []string
	if v := sw.WaitingScrapesShare; v != nil && *v > 0 {
		why = append(why, "requests waiting in "+pct(*v)+" of scrapes")
	}
	if v := sw.QueuedTTFTShare; v != nil && *v > 0 {
		why = append(why, pct(*v)+" of TTFT in the server's queue")
	}
	switch sw.KVRegime {
	case results.RegimeQueued:
		why = append(why, "the KV cache was not the limit: admission was")
	case results.RegimeFits:
		if len(why) == 0 {
			return sw.KVRegime
		}
	}
	if len(why) == 0 {
		return sw.KVRegime
	}
	return sw.KVRegime + " (" + strings.Join(why, ", ") + ")"
}

// serverMix is what pin 6 adds: the server's prompt:generation token
// ratio in the headline window beside the client's of the same window.
func serverMix(run *results.Run) string {
	sw := serverWindow(run, run.Headline)
	if sw == nil || sw.PromptGenerationRatio == nil {
		return ""
	}
	return fmt.Sprintf("server prompt:generation %s beside the client's %s (%s window)", num(*sw.PromptGenerationRatio),
		RatioLabel(sw.ClientInputOutputRatio), run.Headline)
}

// withServer appends the server's part to a pin's observed text.
func withServer(observed, server string) string {
	if server == "" {
		return observed
	}
	return observed + "; " + server
}

// writeServerWindow writes what the server saw in a window, under the
// client's figures.
func writeServerWindow(p *numfmt.Printer, run *results.Run, name string) {
	sw := serverWindow(run, name)
	if sw == nil || sw.Scrapes == 0 {
		return
	}
	p.F("  server (%s, %d scrapes in window)", run.Server.Source, sw.Scrapes)
	if sw.KVRegime != "" {
		p.F(": KV regime %s", strings.ToUpper(sw.KVRegime))
		if words := regimeWords(sw); words != sw.KVRegime {
			p.F(" %s", strings.TrimPrefix(words, sw.KVRegime+" "))
		}
	}
	p.F("\n")
	var parts []string
	if kv := sw.KVUsagePct; kv != nil {
		parts = append(parts, fmt.Sprintf("KV usage mean %s%%, peak %s%%", num(kv.Mean), num(kv.Peak)))
	}
	if r := sw.Running; r != nil {
		parts = append(parts, fmt.Sprintf("running mean %s, peak %s", num(r.Mean), num(r.Peak)))
	}
	if q := sw.Waiting; q != nil {
		parts = append(parts, fmt.Sprintf("waiting mean %s, peak %s", num(q.Mean), num(q.Peak)))
	}
	if sw.Preemptions != nil {
		parts = append(parts, fmt.Sprintf("%s preemptions", num(*sw.Preemptions)))
	}
	if sw.PrefixCacheHitPct != nil {
		parts = append(parts, fmt.Sprintf("prefix cache hits %s%%", num(*sw.PrefixCacheHitPct)))
	}
	if len(parts) > 0 {
		p.F("    %s\n", strings.Join(parts, "; "))
	}
	if sw.GenerationTokS != nil {
		p.F("    server generation %s tok/s beside the client's %s tok/s", num(*sw.GenerationTokS), num(sw.ClientOutputTokS))
		if sw.PromptTokS != nil {
			p.F("; server prompt %s tok/s", num(*sw.PromptTokS))
		}
		if sw.PromptGenerationRatio != nil {
			p.F("; prompt:generation %s (client %s)", num(*sw.PromptGenerationRatio), RatioLabel(sw.ClientInputOutputRatio))
		}
		p.F("\n")
	}
	for _, h := range []struct {
		label string
		d     *results.HistDelta
	}{{"server TTFT ms", sw.TTFTMs}, {"server queue ms", sw.QueueMs}, {"server prefill ms", sw.PrefillMs}, {"server E2E ms", sw.E2EMs}} {
		if h.d != nil {
			p.F("    %-20s n=%s mean %s, p50 %s, p90 %s, p99 %s (within the server's buckets; – where they cannot place it)\n",
				h.label, group(h.d.Count), num(h.d.Mean), optNum(h.d.P50), optNum(h.d.P90), optNum(h.d.P99))
		}
	}
}

// writeServerSummary writes the scrape's health and which windows ran
// saturated.
func writeServerSummary(p *numfmt.Printer, run *results.Run) {
	if c := run.Calibration; c != nil && c.TTFTMs != nil {
		p.F("Calibration: %s\n", CalibrationLine(c))
	}
	if l := requestIDLine(run.RequestIDs); l != "" {
		p.F("%s\n", l)
	}
	writeSpecSummary(p, run)
	s := run.Server
	if s == nil {
		return
	}
	p.F("Server metrics: %s every %s s, %d scrapes", s.Source, num(s.EveryS), s.Scrapes)
	if s.Failures > 0 {
		p.F(", %d failed (last: %s)", s.Failures, s.LastError)
	}
	p.F("\n")
	var under, queued []string
	for _, name := range results.WindowNames {
		sw := s.Windows[name]
		switch {
		case sw == nil:
		case sw.KVRegime == results.RegimeSaturated || sw.KVRegime == results.RegimePreempting:
			under = append(under, name+" ("+sw.KVRegime+")")
		case sw.KVRegime == results.RegimeQueued:
			queued = append(queued, name)
		}
	}
	if len(under) > 0 {
		p.F("  measured under KV saturation: %s — the KV cache was the limit there (full, or requests waiting while it was over %d%%, or preempted), so its figures include that wait\n",
			strings.Join(under, ", "), results.HighKVPct)
	}
	if len(queued) > 0 {
		p.F("  measured with requests queued: %s — the server held requests back at admission (max_num_seqs, its prefill budget), not for KV memory; their figures include that wait\n", strings.Join(queued, ", "))
	}
}

// optNum formats an optional figure, "–" when absent.
func optNum(v *float64) string {
	if v == nil {
		return "–"
	}
	return num(*v)
}

// Colours of the server's series.
const (
	colServer  = "#ad1457"
	colKV      = "#4e342e"
	colWaiting = "#c62828"
)

// serverPoints is one figure of the server's series as chart points
// (scrapes that lack it are skipped).
func serverPoints(run *results.Run, f func(results.ServerPoint) *float64) ([][2]float64, float64) {
	var pts [][2]float64
	var hi float64
	end := timeAxis(run).max
	for _, p := range run.Server.Series {
		if v := f(p); v != nil && p.TS <= end {
			pts = append(pts, [2]float64{p.TS, *v})
			hi = max(hi, *v)
		}
	}
	return pts, hi
}

// serverThroughputChart draws the server's own generation rate over the
// client's aggregate output rate, on the run's time axis with its
// windows shaded (nil: no server series with token counters).
func serverThroughputChart(run *results.Run) *chart {
	if run.Server == nil || len(run.Series.OutputTokens) == 0 {
		return nil
	}
	gen, ghi := serverPoints(run, func(p results.ServerPoint) *float64 { return p.GenerationTokS })
	if len(gen) == 0 {
		return nil
	}
	c := throughputChart(run)
	c.title = "Output tok/s: the client's each second, the server's own between scrapes"
	c.series = append(c.series, series{name: "server generation tok/s (/metrics)", color: colServer, marks: true, pts: gen})
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, max(c.y.max, ghi*1.1), 6, tickLabel)
	return c
}

// serverStateChart draws the server's KV usage (left axis) and its
// running and waiting requests (right axis) at each scrape, windows
// shaded (nil: the server exposes none of them).
func serverStateChart(run *results.Run) *chart {
	if run.Server == nil {
		return nil
	}
	kv, _ := serverPoints(run, func(p results.ServerPoint) *float64 { return p.KVUsagePct })
	running, rhi := serverPoints(run, func(p results.ServerPoint) *float64 { return p.Running })
	waiting, whi := serverPoints(run, func(p results.ServerPoint) *float64 { return p.Waiting })
	if len(kv)+len(running)+len(waiting) == 0 {
		return nil
	}
	c := &chart{title: "The server's state: KV cache usage and requests running and waiting", width: 1060, height: 320,
		xLabel: "seconds from start of load", yLabel: "KV usage %", x: timeAxis(run), bands: windowBands(run)}
	c.y.ticks, c.y.min, c.y.max = niceTicks(0, 100, 6, tickLabel)
	c.hlines = append(c.hlines, hline{results.SaturatedKVPct, c.x.min, c.x.max, colKV, "saturated"})
	if len(kv) > 0 {
		c.series = append(c.series, series{name: "KV usage %", color: colKV, marks: true, pts: kv})
	}
	if len(running) > 0 {
		c.series = append(c.series, series{name: "running (right axis)", color: colInFlight, right: true, dash: true, pts: running})
	}
	if len(waiting) > 0 {
		c.series = append(c.series, series{name: "waiting (right axis)", color: colWaiting, right: true, dash: true, pts: waiting})
	}
	y2 := axis{label: "requests"}
	y2.ticks, y2.min, y2.max = niceTicks(0, max(rhi, whi, 1)*1.15, 6, tickLabel)
	c.y2 = &y2
	return c
}

// kTokens is a token count in K or M: 524K, 6.46M.
func kTokens(v float64) string {
	switch {
	case v >= 1e6:
		return numfmt.Short(v/1e6) + "M"
	case v >= 1e3:
		return numfmt.Short(v/1e3) + "K"
	}
	return numfmt.Short(v)
}

// KVFitLine says the KV-fit preflight in one line: "64 streams × 101K
// tokens need 6.46M KV tokens; the server holds 524K: at most 5 fit;
// expect queueing or preemption".
func KVFitLine(f *results.KVFit) string {
	s := fmt.Sprintf("%s × %s tokens", numfmt.Count(f.Streams, "stream", ""), kTokens(f.PerStreamTokens))
	if f.SharedPrefixTokens > 0 {
		s += fmt.Sprintf(" (+ %s shared prefix tokens held once)", kTokens(float64(f.SharedPrefixTokens*f.PrefixGroups)))
	}
	s += fmt.Sprintf(" need %s KV tokens; ", kTokens(f.NeedTokens))
	if f.Uncertain {
		s += fmt.Sprintf("the server holds %s if its %d slots share one cache (llama-server's --kv-unified, its default) or %s if each has its own — it does not say which",
			kTokens(float64(f.BudgetTokens)), f.MaxNumSeqs, kTokens(float64(f.AltBudgetTokens)))
	} else {
		s += "the server holds " + kTokens(float64(f.BudgetTokens))
		if f.MaxNumSeqs > 0 {
			s += fmt.Sprintf(" and runs at most %d sequences", f.MaxNumSeqs)
		}
	}
	switch {
	case f.FillsWhenDeep():
		return s + fmt.Sprintf(": they fit (up to %d would); at their deepest (%s tokens each) at most %d fit: expect the cache to fill as the sessions' contexts deepen",
			f.MaxFit, kTokens(f.DeepestTokens), f.DeepestMaxFit)
	case f.Fits:
		return s + fmt.Sprintf(": they fit (up to %d would)", f.MaxFit)
	case f.Uncertain && f.Streams <= f.AltMaxFit:
		return s + fmt.Sprintf(": at most %d fit in one shared cache (all %d in caches per slot); expect queueing or preemption unless the caches are per slot", f.MaxFit, f.Streams)
	case f.Uncertain:
		return s + fmt.Sprintf(": at most %d fit in one shared cache (%d in caches per slot); expect queueing or preemption", f.MaxFit, f.AltMaxFit)
	}
	return s + fmt.Sprintf(": at most %d fit; expect queueing or preemption", f.MaxFit)
}

// kvFitShort is the preflight for pin 5's row.
func kvFitShort(run *results.Run) string {
	f := run.KVFit
	if f == nil {
		return ""
	}
	uncertain := ""
	if f.Uncertain {
		uncertain = fmt.Sprintf(" if the slots share one cache (%d if each has its own: the server does not say)", f.AltMaxFit)
	}
	if f.Fits {
		return fmt.Sprintf("preflight: %d streams fit (up to %d would%s)", f.Streams, f.MaxFit, uncertain)
	}
	return fmt.Sprintf("preflight: at most %d of %d streams fit%s", f.MaxFit, f.Streams, uncertain)
}

// writeTTFTSplit writes how the server's own timings split the window's
// TTFT: its queue (when it says), its prefill, and the rest.
func writeTTFTSplit(p *numfmt.Printer, name string, w *results.Window) {
	if w.ServerPrefillMs == nil || w.TTFTRestMs == nil {
		return
	}
	p.F("  TTFT split by the server's own timings (%s requests it timed, %s window):\n", group(float64(w.ServerPrefillMs.Count)), name)
	writeDistTable(p, "TTFT split, "+name, requestStats, []distRow{
		{"server queue ms", w.ServerQueueMs}, {"server prefill ms", w.ServerPrefillMs}, {"rest ms (network, client)", w.TTFTRestMs}})
	if w.ServerQueueMs == nil {
		p.F("    the server does not say its queue: the rest includes it\n")
	}
}

// requestIDLine says how the X-Request-Id headers went.
func requestIDLine(r *results.RequestIDs) string {
	if r == nil || r.Sent == 0 {
		return ""
	}
	s := fmt.Sprintf("Request ids: X-Request-Id %s-N on %s", r.Prefix, numfmt.Count(r.Sent, "request", ""))
	switch {
	case r.Mismatched > 0:
		s += fmt.Sprintf("; %d answers carried another id (a proxy replacing it?), %d echoed it", r.Mismatched, r.Echoed)
	case r.Echoed == r.Sent:
		s += "; every answer echoed its id"
	case r.Echoed > 0:
		s += fmt.Sprintf("; %d answers echoed it", r.Echoed)
	default:
		s += "; the server does not echo them"
	}
	return s
}

// CalibrationLine says sixpin's own floor (`--calibrate`).
func CalibrationLine(c *results.Calibration) string {
	s := fmt.Sprintf("sixpin's own floor at %d streams, %d requests of %s → %s tokens", c.Streams, c.Requests,
		group(float64(c.PromptTokens)), group(float64(c.OutputTokens)))
	if len(c.RoundTTFTP50Ms) == 0 {
		s += fmt.Sprintf(" against a loopback server: TTFT p50 %s ms, p99 %s ms", num(c.TTFTMs.P50), num(c.TTFTMs.P99))
	} else {
		s += fmt.Sprintf(" in %d rounds after %d warm-up against a loopback server: TTFT p50 %s ms (the median of the rounds' p50s, %s–%s ms: spread %s%%), p99 %s ms",
			c.Rounds, c.WarmupRequests, num(c.FloorTTFTMs), num(slices.Min(c.RoundTTFTP50Ms)), num(slices.Max(c.RoundTTFTP50Ms)), num(c.SpreadPct), num(c.TTFTMs.P99))
	}
	if c.ITLMs != nil {
		s += fmt.Sprintf("; ITL p50 %s ms, p99 %s ms", num(c.ITLMs.P50), num(c.ITLMs.P99))
	}
	if c.OverheadPctOfTTFT > 0 {
		s += fmt.Sprintf("; %s%% of the run's TTFT p50", num(c.OverheadPctOfTTFT))
		if c.Flagged {
			s += " — FLAGGED: over 5%, the client's overhead is part of the figures"
		}
	}
	if len(c.RoundTTFTP50Ms) > 0 && c.SpreadPct > results.CalibrationSteadyPct {
		s += fmt.Sprintf(" — UNSTEADY: its rounds spread over %d%% of the floor (a busy machine?), so the floor and its flag are uncertain", results.CalibrationSteadyPct)
	}
	return s
}
