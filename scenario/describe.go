package scenario

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/trace"
)

// Describe writes the resolved scenario for `sixpin validate`: name, seed,
// the six pins one per line with their resolved values, the run bounds,
// windows, SLO, target and warnings. Means come from the plan
// (Plan.Expected). s should be valid (as Load returns it).
func (s *Scenario) Describe(w io.Writer) error {
	d := &describer{numfmt.Printer{W: w}}
	p := NewPlan(s)
	exp := p.Expected()
	pins := s.Pins

	d.line("scenario", "%s", s.Name)
	if s.Description != "" {
		d.line("description", "%s", strings.TrimSpace(s.Description))
	}
	if s.Path != "" {
		sum := s.SHA256
		if len(sum) > 12 {
			sum = sum[:12]
		}
		d.line("file", "%s (sha256 %s)", s.Path, sum)
	}
	d.line("seed", "%d", s.Seed)

	m := pins.Model
	model := []string{m.Name}
	if m.ParamsB > 0 {
		size := num(m.ParamsB) + "B params"
		if m.ActiveParamsB > 0 {
			size += " (" + num(m.ActiveParamsB) + "B active)"
		}
		model = append(model, size)
	}
	if m.Dtype != "" {
		model = append(model, m.Dtype)
	}
	d.line("model", "%s", strings.Join(model, ", "))

	classes := pins.Mix.Classes
	tokenLine := func(label string, t Dist, mean float64, exact bool, extra string) {
		var text string
		switch {
		case t.IsZero():
			text = "per class"
		case len(classes) > 0:
			text = t.String() + " tokens where a class sets none"
		default:
			text = t.String() + " tokens"
		}
		if exact {
			text += ", exact"
		}
		if len(classes) > 0 {
			text += fmt.Sprintf(" (mean %s over the mix)", numfmt.Thousands(mean))
		} else if t.Kind != DistFixed {
			text += fmt.Sprintf(" (mean %s)", numfmt.Thousands(mean))
		}
		d.line(label, "%s%s", text, extra)
	}
	pp := pins.Prompt
	promptExtra := fmt.Sprintf("; drift ≤ %s%% per request", num(pp.PromptTolerancePct()))
	if pp.SharedPrefixTokens > 0 {
		promptExtra = fmt.Sprintf("; first %s tokens shared (%d prefix group(s))%s",
			numfmt.Thousands(float64(pp.SharedPrefixTokens)), max(pp.PrefixGroups, 1), promptExtra)
	}
	outputExtra := ""
	if !pins.Output.Exact {
		outputExtra = fmt.Sprintf("; mean drift ≤ %s%%", num(pins.Output.OutputTolerancePct()))
	}
	if t := s.Workload.Trace; s.Workload.Replay() && t != nil {
		st := TraceStats(t)
		d.line("prompt", "from the trace: p50 %s, range [%s, %s] tokens (mean %s)", numfmt.Thousands(st.PromptP50),
			numfmt.Thousands(st.PromptMin), numfmt.Thousands(st.PromptMax), numfmt.Thousands(exp.MeanPromptTokens))
		d.line("output", "from the trace: p50 %s, range [%s, %s] tokens (mean %s), exact", numfmt.Thousands(st.OutputP50),
			numfmt.Thousands(st.OutputMin), numfmt.Thousands(st.OutputMax), numfmt.Thousands(exp.MeanOutputTokens))
		d.line("workload", "replay of %s: %d sessions, %d requests over %s, peak %d sessions at once; time scale %s",
			s.Workload.File, len(t.Sessions), t.Turns(), st.Span.Round(time.Second), st.PeakSessions, num(s.Workload.TimeScale))
	} else {
		tokenLine("prompt", pp.Tokens, exp.MeanPromptTokens, false, promptExtra)
		tokenLine("output", pins.Output.Tokens, exp.MeanOutputTokens, pins.Output.Exact, outputExtra)
	}

	c := pins.Concurrency
	switch c.Mode {
	case ModeClosed:
		what := "streams"
		if s.Workload.Agentic() {
			what = "concurrent agentic sessions"
		}
		d.line("concurrency", "closed loop, %d %s", c.Streams, what)
	case ModeOpen:
		arrival := c.Arrival + " arrivals"
		if c.Arrival == ArrivalGamma {
			arrival += " (burstiness " + num(c.Burstiness) + ")"
		}
		limit := "no in-flight cap"
		if c.MaxInFlight > 0 {
			limit = fmt.Sprintf("at most %d in flight", c.MaxInFlight)
		}
		d.line("concurrency", "open loop, %s req/s, %s, %s", num(c.Rate), arrival, limit)
	case ModeTrace:
		d.line("concurrency", "the trace's sessions at their recorded times")
	default:
		d.line("concurrency", "%q", c.Mode)
	}

	if w := s.Workload; w.Agentic() {
		text := fmt.Sprintf("agentic sessions of %s turns; each turn re-sends the history plus a %s-token tool result", w.Turns, w.GrowthTokens)
		if !w.ThinkSeconds.IsZero() {
			text += fmt.Sprintf(", after %s s of think time", w.ThinkSeconds)
		}
		if w.MaxContextTokens > 0 {
			text += fmt.Sprintf("; a session ends at %s tokens of context", numfmt.Thousands(float64(w.MaxContextTokens)))
		}
		if w.CostCapUSD > 0 {
			text += fmt.Sprintf(" or $%s", num(w.CostCapUSD))
		}
		text += "; on 429: " + w.On429
		if w.Sessions > 0 {
			text += fmt.Sprintf("; %d sessions in all", w.Sessions)
		}
		d.line("workload", "%s", text)
	}

	k := pins.KVCache
	var kv []string
	if k.MaxModelLen > 0 {
		kv = append(kv, fmt.Sprintf("max_model_len %d", k.MaxModelLen))
	}
	if k.GPUMemoryUtilization > 0 {
		kv = append(kv, "gpu_memory_utilization "+num(k.GPUMemoryUtilization))
	}
	if k.MaxNumSeqs > 0 {
		kv = append(kv, fmt.Sprintf("max_num_seqs %d", k.MaxNumSeqs))
	}
	if k.Batching != "" {
		kv = append(kv, k.Batching+" batching")
	}
	if k.PrefixCaching != nil {
		kv = append(kv, fmt.Sprintf("prefix_caching %t", *k.PrefixCaching))
	}
	if len(kv) == 0 {
		kv = []string{"undeclared"}
	}
	d.line("kv_cache", "%s", strings.Join(kv, ", "))

	mix := "one class"
	if len(classes) > 0 {
		mix = fmt.Sprintf("%d classes", len(classes))
	}
	mix += ", input:output " + ratio(exp.Ratio)
	if r := pins.Mix.InputOutputRatio; r > 0 {
		mix += " (declared " + num(r) + ")"
	}
	d.line("mix", "%s", mix)
	var total float64
	for _, cl := range classes {
		total += cl.Weight
	}
	for _, cl := range classes {
		prompt, output := "inherited", "inherited"
		if cl.Prompt != nil {
			prompt = cl.Prompt.Tokens.String()
		}
		if cl.Output != nil {
			output = cl.Output.Tokens.String()
			if cl.Output.Exact {
				output += " exact"
			}
		}
		d.F("  %-10s weight %s (%s%%): prompt %s, output %s\n",
			cl.Name, num(cl.Weight), ratio(100*cl.Weight/total), prompt, output)
	}

	var run []string
	switch {
	case s.Duration > 0 && s.Requests > 0:
		run = append(run, fmt.Sprintf("%s or %d requests, whichever comes first", s.Duration, s.Requests))
	case s.Duration > 0:
		run = append(run, s.Duration.String())
	default:
		run = append(run, fmt.Sprintf("%d requests", s.Requests))
	}
	if c.Mode == ModeOpen && s.Duration > 0 {
		run = append(run, fmt.Sprintf("%d arrivals planned", p.Len()))
	}
	run = append(run, "request_timeout "+s.RequestTimeout.String())
	d.line("run", "%s", strings.Join(run, "; "))

	win := s.Windows
	d.line("windows", "warmup %s, burst %s, steady %s", win.Warmup, win.Burst, win.Steady)

	var slo []string
	for _, b := range []struct {
		name string
		ms   float64
	}{{"ttft", s.SLO.TTFTMs}, {"tpot", s.SLO.TPOTMs}, {"e2e", s.SLO.E2EMs}} {
		if b.ms > 0 {
			slo = append(slo, fmt.Sprintf("%s ≤ %s ms", b.name, num(b.ms)))
		}
	}
	if s.SLO.MaxErrorRate > 0 {
		slo = append(slo, "error rate ≤ "+num(100*s.SLO.MaxErrorRate)+"%")
	}
	if len(slo) == 0 {
		slo = []string{"none"}
	}
	d.line("slo", "%s", strings.Join(slo, ", "))

	t := s.Target
	var target []string
	for _, f := range []struct{ name, v string }{{"profile", t.Profile}, {"endpoint", t.Endpoint}, {"model", t.Model}} {
		if f.v != "" {
			target = append(target, f.name+" "+f.v)
		}
	}
	if len(target) > 0 {
		d.line("target", "%s", strings.Join(target, ", "))
	}
	for _, wn := range s.Warnings {
		d.line("warning", "%s", wn)
	}
	return d.Err
}

// DescribeTrace writes a trace for `sixpin validate`: its file and format,
// sessions and requests, the prompt and output lengths it gives, its span
// and its peak concurrency.
func DescribeTrace(w io.Writer, t *trace.Trace) error {
	d := &describer{numfmt.Printer{W: w}}
	st := TraceStats(t)
	exp := expectedTrace(t)
	d.line("trace", "%s (%s format)", t.Source, t.Format)
	d.line("requests", "%s in %s over %s, peak %s at once", count(t.Turns(), "request"), count(len(t.Sessions), "session"),
		st.Span.Round(time.Second), count(st.PeakSessions, "session"))
	d.line("prompt", "p50 %s, range [%s, %s] tokens (mean %s)", numfmt.Thousands(st.PromptP50),
		numfmt.Thousands(st.PromptMin), numfmt.Thousands(st.PromptMax), numfmt.Thousands(exp.MeanPromptTokens))
	d.line("output", "p50 %s, range [%s, %s] tokens (mean %s)", numfmt.Thousands(st.OutputP50),
		numfmt.Thousands(st.OutputMin), numfmt.Thousands(st.OutputMax), numfmt.Thousands(exp.MeanOutputTokens))
	if b := t.BlockTokens(); b > 0 {
		d.line("prefixes", "shared prompt blocks of %d tokens (hash ids)", b)
	}
	return d.Err
}

// count formats n things: "1 session", "3 sessions".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return numfmt.Thousands(float64(n)) + " " + thing + "s"
}

// describer writes aligned lines and keeps the first write error.
type describer struct{ numfmt.Printer }

// line writes "label        text": labels in a 13-column gutter.
func (d *describer) line(label, format string, args ...any) {
	d.F("%-12s %s\n", label, fmt.Sprintf(format, args...))
}
