package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/sixpin/sixpin/analyze"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// AnalyzeFormats are the formats WriteAnalyze renders an analyze report to.
var AnalyzeFormats = []string{"text", "md", "json", "csv"}

// analyzeReport renders an analyze.Report.
type analyzeReport struct{ *analyze.Report }

// WriteAnalyze renders r, `sixpin analyze`'s report, in format (one of
// AnalyzeFormats) to w.
func WriteAnalyze(w io.Writer, r *analyze.Report, format string) error {
	ar := analyzeReport{r}
	switch format {
	case "text":
		return ar.writeText(w)
	case "md":
		return ar.writeMarkdown(w)
	case "json":
		return ar.writeJSON(w)
	case "csv":
		return ar.writeCSV(w)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(AnalyzeFormats, ", "))
}

// writeJSON writes the report as indented JSON.
func (r analyzeReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r.Report)
}

// analyzeCSVHeader names the CSV columns: one row per provider and model.
var analyzeCSVHeader = []string{
	"provider", "model", "generations", "n", "tokens",
	"effective_tok_s_p10", "effective_tok_s_p25", "effective_tok_s_p50", "effective_tok_s_p75", "effective_tok_s_p90", "effective_tok_s_min", "effective_tok_s_max",
	"context_tokens_p50", "context_tokens_p90", "context_tokens_max", "input_output_p50", "cache_read_share",
	"decode_tok_s_p50", "ttft_s_p50", "prefill_share_p50", "decode_n",
	"effective_tok_s_p50_lt20k", "n_lt20k", "effective_tok_s_p50_20k_50k", "n_20k_50k", "effective_tok_s_p50_50k_120k", "n_50k_120k", "effective_tok_s_p50_gt120k", "n_gt120k",
	"cost_usd",
}

// writeCSV writes one row per provider and model (columns: analyzeCSVHeader);
// empty cells are figures with no data.
func (r analyzeReport) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(analyzeCSVHeader)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	pick := func(d *analyze.Dist, get func(*analyze.Dist) float64) string {
		if d == nil {
			return ""
		}
		return f(get(d))
	}
	p10 := func(d *analyze.Dist) float64 { return d.P10 }
	p25 := func(d *analyze.Dist) float64 { return d.P25 }
	p50 := func(d *analyze.Dist) float64 { return d.P50 }
	p75 := func(d *analyze.Dist) float64 { return d.P75 }
	p90 := func(d *analyze.Dist) float64 { return d.P90 }
	lo := func(d *analyze.Dist) float64 { return d.Min }
	hi := func(d *analyze.Dist) float64 { return d.Max }
	n := func(d *analyze.Dist) float64 { return float64(d.N) }
	for _, m := range r.Models {
		e := m.EffectiveTokS
		rec := []string{m.Provider, m.Model, strconv.Itoa(m.Generations), strconv.Itoa(m.N), strconv.FormatInt(m.Tokens, 10),
			pick(e, p10), pick(e, p25), pick(e, p50), pick(e, p75), pick(e, p90), pick(e, lo), pick(e, hi),
			pick(m.ContextTokens, p50), pick(m.ContextTokens, p90), pick(m.ContextTokens, hi), pick(m.InputOutputRatio, p50), f(m.CacheReadShare),
			pick(m.DecodeTokS, p50), pick(m.TTFTS, p50), pick(m.PrefillShare, p50), pick(m.TTFTS, n),
		}
		for _, b := range m.ByContext {
			cnt := "0"
			if b.EffectiveTokS != nil {
				cnt = strconv.Itoa(b.EffectiveTokS.N)
			}
			rec = append(rec, pick(b.EffectiveTokS, p50), cnt)
		}
		cost := ""
		if m.CostUSD != nil {
			cost = f(*m.CostUSD)
		}
		rec = append(rec, cost)
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// whole formats a count (interpolated counts keep one decimal).
func whole(v float64) string {
	if v == math.Trunc(v) || v >= 100 {
		return numfmt.Thousands(v)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func distOr(d *analyze.Dist, get func(*analyze.Dist) float64) string {
	if d == nil {
		return "–"
	}
	return cell(get(d))
}

// skipped lists the non-zero skip counts in words.
func (r analyzeReport) skipped() []string {
	s := r.Counts.Skipped
	var out []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			out = append(out, "1 "+one)
		case n > 1:
			out = append(out, numfmt.Thousands(float64(n))+" "+many)
		}
	}
	add(s.MalformedLines, "unreadable line", "unreadable lines")
	add(s.MalformedMessages, "malformed message", "malformed messages")
	if len(s.UnknownTypes) > 0 {
		out = append(out, "of unknown kind "+named(s.UnknownTypes))
	}
	add(s.MissingFields, "assistant message missing fields", "assistant messages missing fields")
	add(s.Errored, "errored", "errored")
	add(s.Incomplete, "incomplete", "incomplete")
	add(s.NoRequestTime, "with no record before it to time it from", "with no record before them to time them from")
	add(s.ToolOutsideSpan, "with a tool start outside the message", "with a tool start outside the message")
	add(s.ToolCallsWithoutStart, "finished with tool calls but no tool start", "finished with tool calls but no tool start")
	add(s.BelowMinOutput, fmt.Sprintf("below %d output tokens", r.Filters.MinOutputTokens), fmt.Sprintf("below %d output tokens", r.Filters.MinOutputTokens))
	add(s.DurationOutOfRange, "outside 0.2 s–1 h", "outside 0.2 s–1 h")
	return out
}

// named lists counts by name, most first: "3 session_message.type=x,
// 1 message.role=system".
func named(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	for i, k := range keys {
		keys[i] = numfmt.Thousands(float64(m[k])) + " " + k
	}
	return strings.Join(keys, ", ")
}

// padName left-aligns names in a right-aligned tabwriter table.
func padName(names []string) func(string) string {
	width := 0
	for _, n := range names {
		width = max(width, utf8.RuneCountInString(n))
	}
	return func(n string) string { return n + strings.Repeat(" ", width-utf8.RuneCountInString(n)) }
}

func (r analyzeReport) headline() []string {
	var lines []string
	if r.Source == analyze.SourceClaudeCode || r.Source == analyze.SourceCodex {
		lines = append(lines, fmt.Sprintf("%s: %s, %s", r.SourceName(), numfmt.Count(r.Counts.Files, "file", ""), r.Period()))
		for _, p := range r.Paths {
			lines = append(lines, "  "+p)
		}
	} else {
		dbs := "database"
		if len(r.Databases) != 1 {
			dbs = "databases"
		}
		lines = append(lines, fmt.Sprintf("opencode: %d %s, %s", len(r.Databases), dbs, r.Period()))
	}
	for _, d := range r.Databases {
		how := "snapshot"
		if d.Mode == analyze.ModeReadOnly {
			how = "read-only, in use"
		}
		if d.V2Messages > 0 {
			how += fmt.Sprintf("; %s opencode 1 rows, %s OpenCode 2 rows", numfmt.Thousands(float64(d.V1Messages)), numfmt.Thousands(float64(d.V2Messages)))
		}
		lines = append(lines, fmt.Sprintf("  %s (%s)", d.Path, how))
	}
	var filt []string
	f := r.Filters
	if f.Since != nil {
		filt = append(filt, "since "+f.Since.Format("2006-01-02 15:04"))
	}
	if f.Until != nil {
		filt = append(filt, "until "+f.Until.Format("2006-01-02 15:04"))
	}
	if len(f.Providers) > 0 {
		filt = append(filt, "provider "+strings.Join(f.Providers, " or "))
	}
	if len(f.Models) > 0 {
		filt = append(filt, "model "+strings.Join(f.Models, " or "))
	}
	if len(filt) > 0 {
		lines = append(lines, "filters: "+strings.Join(filt, ", "))
	}
	c := r.Counts
	read := numfmt.Count(c.Messages, "message", "")
	if c.Lines > 0 {
		read = numfmt.Count(c.Messages, "record", "") + " in " + numfmt.Count(c.Lines, "line", "")
	}
	lines = append(lines, fmt.Sprintf("%s of %s in %s; %s for throughput (%s read)",
		numfmt.Count(c.Generations, "generation", ""), numfmt.Count(len(r.Models), "model", ""), numfmt.Count(r.Sessions.Sessions, "session", ""),
		numfmt.Count(c.Samples, "sample", ""), read))
	if c.Duplicates > 0 {
		copies := "copies"
		if c.Duplicates == 1 {
			copies = "copy"
		}
		l := fmt.Sprintf("counted once: %s %s", numfmt.Thousands(float64(c.Duplicates)), copies)
		if c.LayoutDuplicates > 0 {
			l += fmt.Sprintf(" (%s in both opencode layouts)", numfmt.Thousands(float64(c.LayoutDuplicates)))
		}
		lines = append(lines, l)
	}
	if len(c.Other) > 0 {
		lines = append(lines, "not model calls: "+named(c.Other))
	}
	if sk := r.skipped(); len(sk) > 0 {
		lines = append(lines, "skipped: "+strings.Join(sk, ", "))
	}
	if c.MalformedParts > 0 {
		lines = append(lines, fmt.Sprintf("unreadable parts ignored (as throughput.py ignores them): %s in %s, kept without a first-token time",
			numfmt.Count(c.MalformedParts, "part", ""), numfmt.Count(c.MalformedPartMessages, "message", "")))
	}
	if c.MissingTokens > 0 {
		lines = append(lines, "token counts missing (taken as 0, as throughput.py reads them): "+numfmt.Count(c.MissingTokens, "generation", ""))
	}
	if ex := c.Skipped.Examples; len(ex) > 0 {
		lines = append(lines, "unreadable lines: "+strings.Join(ex, "; "))
	}
	return lines
}

// effTitle heads the effective-throughput table.
func (r analyzeReport) effTitle() string {
	if r.Source == analyze.SourceClaudeCode || r.Source == analyze.SourceCodex {
		return "Effective throughput, tok/s: (output + reasoning tokens) / generation time, request → last output (timed from the log's records: see the definitions)"
	}
	return "Effective throughput, tok/s: (output + reasoning tokens) / generation time, created → completed, cut at the first tool start"
}

// writeText writes the report for a terminal.
func (r analyzeReport) writeText(w io.Writer) error {
	ew := &numfmt.Printer{W: w}
	for _, l := range r.headline() {
		ew.F("%s\n", l)
	}
	ew.F("\n")
	ew.F("%s\n", r.effTitle())
	names := []string{"PROVIDER/MODEL"}
	for _, m := range r.Models {
		names = append(names, m.Key())
	}
	pad := padName(names)
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pad("PROVIDER/MODEL")+"\tN\tTOKENS\tP10\tP25\tP50\tP75\tP90\tMIN\tMAX\t")
	for _, m := range r.Models {
		e := m.EffectiveTokS
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pad(m.Key()), numfmt.Thousands(float64(m.N)), numfmt.Thousands(float64(m.Tokens)),
			distOr(e, func(d *analyze.Dist) float64 { return d.P10 }), distOr(e, func(d *analyze.Dist) float64 { return d.P25 }), distOr(e, func(d *analyze.Dist) float64 { return d.P50 }),
			distOr(e, func(d *analyze.Dist) float64 { return d.P75 }), distOr(e, func(d *analyze.Dist) float64 { return d.P90 }),
			distOr(e, func(d *analyze.Dist) float64 { return d.Min }), distOr(e, func(d *analyze.Dist) float64 { return d.Max }))
	}
	tw.Flush()
	for _, m := range r.Models {
		ew.F("\n")
		ew.F("%s\n", m.Key())
		for _, l := range modelDetails(m, r.Unavailable) {
			ew.F("%s\n", "  "+l)
		}
	}
	paragraph(ew, strings.Join(r.sessionLines(), "\n"))
	paragraph(ew, r.reportedLimitsLine())
	if r.Cost != nil {
		paragraph(ew, r.costLine())
	}
	return ew.Err
}

// reportedLimitsLine sums up the rate-limit meters the logs carry.
func (r analyzeReport) reportedLimitsLine() string {
	if len(r.ReportedLimits) == 0 {
		return ""
	}
	var ws []string
	for _, l := range r.ReportedLimits {
		w := l.Name
		switch m := l.WindowMinutes; {
		case m > 0 && m%1440 == 0:
			w += fmt.Sprintf(" (%d-day window)", m/1440)
		case m > 0 && m%60 == 0:
			w += fmt.Sprintf(" (%d-hour window)", m/60)
		case m > 0:
			w += fmt.Sprintf(" (%d-minute window)", m)
		}
		ws = append(ws, fmt.Sprintf("%s at most %s%% used (%s reports)", w, strconv.FormatFloat(l.MaxUsedPercent, 'f', -1, 64), numfmt.Thousands(float64(l.Samples))))
	}
	return "Rate limits as " + r.SourceName() + " reported them: " + strings.Join(ws, "; ")
}

// unavailableLine says which figures the logs cannot give, and why.
func (r analyzeReport) unavailableLine() string {
	if len(r.Unavailable) == 0 {
		return ""
	}
	keys := make([]string, 0, len(r.Unavailable))
	for k := range r.Unavailable {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var why []string
	for _, k := range keys {
		if !slices.Contains(why, r.Unavailable[k]) {
			why = append(why, r.Unavailable[k])
		}
	}
	return "Not available from these logs: " + strings.Join(keys, ", ") + " (" + strings.Join(why, "; ") + ")"
}

// details are a model's figures beyond effective throughput, one line
// each; unavailable says why a figure is missing.
func modelDetails(m *analyze.ModelReport, unavailable map[string]string) []string {
	var out []string
	p50 := func(d *analyze.Dist) float64 { return d.P50 }
	if c := m.ContextTokens; c != nil {
		out = append(out, fmt.Sprintf("context      P50 %s, P90 %s, max %s tokens over %s generations (input + cache read + cache write)",
			cell(c.P50), cell(c.P90), cell(c.Max), numfmt.Thousands(float64(m.Generations))))
	}
	l := fmt.Sprintf("input:output P50 %s×", distOr(m.InputOutputRatio, p50))
	l += fmt.Sprintf("; cache reads %s of the prompt tokens", numfmt.Percent(m.CacheReadShare))
	out = append(out, l)
	var bs []string
	for _, b := range m.ByContext {
		n := 0
		if b.EffectiveTokS != nil {
			n = b.EffectiveTokS.N
		}
		bs = append(bs, fmt.Sprintf("%s %s (n %s)", b.Name, distOr(b.EffectiveTokS, p50), numfmt.Thousands(float64(n))))
	}
	out = append(out, "by context   effective tok/s P50: "+strings.Join(bs, ", "))
	if m.TTFTS != nil {
		out = append(out, fmt.Sprintf("decode       P50 %s tok/s; TTFT P50 %s s; prefill P50 %s of the generation time (n %s)",
			distOr(m.DecodeTokS, p50), cell(m.TTFTS.P50), numfmt.Percent(m.PrefillShare.P50), numfmt.Thousands(float64(m.TTFTS.N))))
	} else if why, ok := unavailable["decode_tok_s"]; ok {
		out = append(out, "decode       not available: "+why)
	} else {
		out = append(out, "decode       no part timings")
	}
	if m.CostUSD != nil {
		out = append(out, "cost         "+numfmt.Money(*m.CostUSD))
	}
	return out
}

func (r analyzeReport) sessionLines() []string {
	s := r.Sessions
	if s.Sessions == 0 {
		return nil
	}
	head := fmt.Sprintf("Sessions: %s; the most any 60 s window of one session held", numfmt.Thousands(float64(s.Sessions)))
	if r.Filters.Profile != "" {
		head += ", against " + r.Filters.Profile + "'s limits"
	}
	var b strings.Builder
	names := []string{"BUCKET"}
	for _, k := range s.Buckets {
		names = append(names, k.Bucket)
	}
	pad := padName(names)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, pad("BUCKET")+"\tLIMIT\tP50 PEAK\tP90 PEAK\tMAX PEAK\tMAX SHARE\tSESSIONS OVER\t")
	for _, k := range s.Buckets {
		limit, share, over := "–", "–", "–"
		if k.Limit > 0 {
			limit, share, over = numfmt.Thousands(float64(k.Limit)), numfmt.Percent(k.PeakShare), fmt.Sprintf("%d of %d", k.Over, s.Sessions)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", pad(k.Bucket), limit, whole(k.Peak.P50), whole(k.Peak.P90), whole(k.Peak.Max), share, over)
	}
	tw.Flush()
	lines := []string{head}
	lines = append(lines, strings.Split(strings.TrimRight(b.String(), "\n"), "\n")...)
	for _, k := range s.Buckets {
		if k.Bucket == "tokens_per_minute" {
			lines = append(lines, fmt.Sprintf("busiest session by total tokens: %s (cache reads count in full against total tokens per minute)", k.PeakSession))
		}
	}
	return lines
}

func (r analyzeReport) costLine() string {
	c := r.Cost
	where := "at the profile's prices"
	if r.Filters.Profile != "" {
		where = "at " + r.Filters.Profile + "'s prices"
	}
	var s string
	if c.Basis == "energy" {
		s = fmt.Sprintf("Cost %s: %s (%.0f W over %s of model time at $%.4g/kWh)", where, numfmt.Money(c.TotalUSD), c.Energy.PowerWatts,
			(time.Duration(c.ModelTimeS * float64(time.Second))).Round(time.Second), c.Energy.USDPerKWh)
	} else {
		b := c.Bill
		s = fmt.Sprintf("Cost %s: %s (input %s of which cached reads %s, output %s of which reasoning %s)", where, numfmt.Money(c.TotalUSD),
			numfmt.Money(b.InputUSD+b.CachedInputUSD), numfmt.Money(b.CachedInputUSD), numfmt.Money(b.OutputUSD+b.ReasoningUSD), numfmt.Money(b.ReasoningUSD))
	}
	return s + fmt.Sprintf("; %s per session, %s per million output tokens", numfmt.Money(c.PerSessionUSD), numfmt.Money(c.PerMOutputTokensUSD))
}

// writeMarkdown writes the report as a Markdown document.
func (r analyzeReport) writeMarkdown(w io.Writer) error {
	ew := &numfmt.Printer{W: w}
	ew.F("%s\n", "# Effective throughput from "+r.SourceName()+" sessions")
	ew.F("\n")
	var dbs []string
	for _, l := range r.headline() {
		if strings.HasPrefix(l, "  ") {
			dbs = append(dbs, "- `"+strings.TrimSpace(l)+"`")
			continue
		}
		ew.F("%s\n", l+"  ")
	}
	if len(dbs) > 0 {
		ew.F("\n")
		for _, l := range dbs {
			ew.F("%s\n", l)
		}
	}
	ew.F("\n")
	ew.F("%s\n", "## "+r.effTitle())
	ew.F("\n")
	ew.F("| provider/model | n | tokens | P10 | P25 | P50 | P75 | P90 | min | max |\n")
	ew.F("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, m := range r.Models {
		e := m.EffectiveTokS
		ew.F("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(m.Key()), numfmt.Thousands(float64(m.N)), numfmt.Thousands(float64(m.Tokens)),
			distOr(e, func(d *analyze.Dist) float64 { return d.P10 }), distOr(e, func(d *analyze.Dist) float64 { return d.P25 }), distOr(e, func(d *analyze.Dist) float64 { return d.P50 }),
			distOr(e, func(d *analyze.Dist) float64 { return d.P75 }), distOr(e, func(d *analyze.Dist) float64 { return d.P90 }),
			distOr(e, func(d *analyze.Dist) float64 { return d.Min }), distOr(e, func(d *analyze.Dist) float64 { return d.Max }))
	}
	ew.F("\n")
	ew.F("## Beyond tok/s\n")
	ew.F("\n")
	head := "| provider/model | context P50 | context P90 | input:output P50 | cache reads | decode P50 tok/s | TTFT P50 s | prefill P50 |"
	sep := "|---|--:|--:|--:|--:|--:|--:|--:|"
	for _, b := range results.ContextDepths {
		head += " " + b.Name + " P50 |"
		sep += "--:|"
	}
	if r.Cost != nil {
		head += " cost |"
		sep += "--:|"
	}
	ew.F("%s\n", head)
	ew.F("%s\n", sep)
	p50 := func(d *analyze.Dist) float64 { return d.P50 }
	p90 := func(d *analyze.Dist) float64 { return d.P90 }
	for _, m := range r.Models {
		prefill := "–"
		if m.PrefillShare != nil {
			prefill = numfmt.Percent(m.PrefillShare.P50)
		}
		row := fmt.Sprintf("| %s | %s | %s | %s× | %s | %s | %s | %s |", mdCell(m.Key()), distOr(m.ContextTokens, p50), distOr(m.ContextTokens, p90),
			distOr(m.InputOutputRatio, p50), numfmt.Percent(m.CacheReadShare), distOr(m.DecodeTokS, p50), distOr(m.TTFTS, p50), prefill)
		for _, b := range m.ByContext {
			n := 0
			if b.EffectiveTokS != nil {
				n = b.EffectiveTokS.N
			}
			row += fmt.Sprintf(" %s (n %s) |", distOr(b.EffectiveTokS, p50), numfmt.Thousands(float64(n)))
		}
		if r.Cost != nil {
			if m.CostUSD != nil {
				row += " " + numfmt.Money(*m.CostUSD) + " |"
			} else {
				row += " – |"
			}
		}
		ew.F("%s\n", row)
	}
	if lines := r.sessionLines(); len(lines) > 0 {
		ew.F("\n")
		ew.F("%s\n", "## "+lines[0])
		ew.F("\n")
		ew.F("| bucket | limit | P50 peak | P90 peak | max peak | max share | sessions over |\n")
		ew.F("|---|--:|--:|--:|--:|--:|--:|\n")
		for _, k := range r.Sessions.Buckets {
			limit, share, over := "–", "–", "–"
			if k.Limit > 0 {
				limit, share, over = numfmt.Thousands(float64(k.Limit)), numfmt.Percent(k.PeakShare), fmt.Sprintf("%d of %d", k.Over, r.Sessions.Sessions)
			}
			ew.F("| %s | %s | %s | %s | %s | %s | %s |\n", k.Bucket, limit, whole(k.Peak.P50), whole(k.Peak.P90), whole(k.Peak.Max), share, over)
		}
	}
	paragraph(ew, r.unavailableLine())
	paragraph(ew, r.reportedLimitsLine())
	if r.Cost != nil {
		paragraph(ew, "## Cost")
		paragraph(ew, r.costLine())
	}
	ew.F("\n")
	ew.F("## Definitions\n")
	ew.F("\n")
	keys := make([]string, 0, len(r.Definitions))
	for k := range r.Definitions {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ew.F("- **%s**: %s\n", k, r.Definitions[k])
	}
	return ew.Err
}

// paragraph writes text after a blank line; nothing when text is empty.
func paragraph(p *numfmt.Printer, text string) {
	if text != "" {
		p.F("\n%s\n", text)
	}
}
