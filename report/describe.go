package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/trace"
)

// describer writes `sixpin validate`'s aligned lines and keeps the first
// write error.
type describer struct{ numfmt.Printer }

// line writes "label        text": labels in a 13-column gutter.
func (d *describer) line(label, format string, args ...any) {
	d.F("%-12s %s\n", label, fmt.Sprintf(format, args...))
}

// DescribeScenario writes the resolved scenario for `sixpin validate`:
// name, seed, the six declared pins in the words every report uses
// (DeclaredPins, before a target is resolved) with what validate adds of
// each (tolerances, shared prefixes, the workload, the classes), then the
// run bounds, windows, SLO, target and warnings. s should be valid (as
// scenario.Load returns it).
func DescribeScenario(w io.Writer, s *scenario.Scenario) error {
	d := &describer{numfmt.Printer{W: w}}
	plan := scenario.NewPlan(s)
	exp := plan.Expected()
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

	extra := map[string]string{}
	pp := pins.Prompt
	extra["prompt"] = fmt.Sprintf("; drift ≤ %s%% per request", numfmt.Plain(pp.PromptTolerancePct()))
	if s.Workload.MLPerfReplay() {
		extra["prompt"] = "" // the dataset's texts: no length to drift from
	}
	if pp.SharedPrefixTokens > 0 {
		extra["prompt"] = fmt.Sprintf("; first %s tokens shared (%d prefix group(s))%s",
			group(float64(pp.SharedPrefixTokens)), max(pp.PrefixGroups, 1), extra["prompt"])
	}
	if !pins.Output.Exact && !s.Workload.Replay() {
		extra["output"] = fmt.Sprintf("; mean drift ≤ %s%%", numfmt.Plain(pins.Output.OutputTolerancePct()))
	}
	if r := pins.Mix.InputOutputRatio; r > 0 && numfmt.Short(r) != numfmt.Short(exp.Ratio) {
		extra["mix"] = "; the plan's requests average " + numfmt.Short(exp.Ratio)
	}
	for _, p := range DeclaredPins(plan.Declared(scenario.Wire{})) {
		d.line(p.Pin, "%s%s", p.Text, extra[p.Pin])
		if p.Pin == "concurrency" {
			describeWorkload(d, s)
		}
	}
	var total float64
	for _, cl := range pins.Mix.Classes {
		total += cl.Weight
	}
	for _, cl := range pins.Mix.Classes {
		prompt, output, content := "inherited", "inherited", ""
		if cl.Prompt != nil && !cl.Prompt.Tokens.IsZero() {
			prompt = cl.Prompt.Tokens.String()
		}
		if cl.Prompt != nil && len(cl.Prompt.Content) > 0 {
			content = ", content " + cl.Prompt.Content.String()
		}
		if cl.Output != nil {
			output = cl.Output.Tokens.String()
			if cl.Output.Exact {
				output += " exact"
			}
		}
		d.F("  %-10s weight %s (%s%%): prompt %s, output %s%s\n",
			cl.Name, numfmt.Plain(cl.Weight), numfmt.Short(100*cl.Weight/total), prompt, output, content)
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
	if pins.Concurrency.Mode == scenario.ModeOpen && s.Duration > 0 {
		run = append(run, fmt.Sprintf("%d arrivals planned", plan.Len()))
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
			slo = append(slo, fmt.Sprintf("%s ≤ %s ms", b.name, numfmt.Plain(b.ms)))
		}
	}
	if s.SLO.MaxErrorRate > 0 {
		slo = append(slo, "error rate ≤ "+numfmt.Plain(100*s.SLO.MaxErrorRate)+"%")
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

// describeWorkload writes the workload line of a replay or of agentic
// sessions (none for independent requests).
func describeWorkload(d *describer, s *scenario.Scenario) {
	w := s.Workload
	if w.MLPerfReplay() && w.MLPerf != nil {
		n := w.Sessions
		if n == 0 {
			n = len(w.MLPerf.Conversations)
		}
		d.line("workload", "MLPerf agentic replay of %s: %s; %s, salted per repeat and conversation, each request with X-Session-ID; delay_seconds at time scale %s",
			w.File, w.MLPerf.Describe(), numfmt.Count(n, "trajectory", "trajectories"), numfmt.Plain(w.TimeScale))
		return
	}
	if t := w.Trace; w.Replay() && t != nil {
		st := t.Summary()
		d.line("workload", "replay of %s: %d sessions, %d requests over %s, peak %d sessions at once; time scale %s",
			w.File, st.Sessions, st.Requests, st.Span.Round(time.Second), st.PeakSessions, numfmt.Plain(w.TimeScale))
	}
	if !w.Agentic() {
		return
	}
	text := fmt.Sprintf("agentic sessions of %s turns; each turn re-sends the history plus a %s-token tool result", w.Turns, w.GrowthTokens)
	if !w.ThinkSeconds.IsZero() {
		text += fmt.Sprintf(", after %s s of think time", w.ThinkSeconds)
	}
	if w.MaxContextTokens > 0 {
		text += fmt.Sprintf("; a session ends at %s tokens of context", group(float64(w.MaxContextTokens)))
	}
	if w.CostCapUSD > 0 {
		text += " or " + numfmt.Money(w.CostCapUSD)
	}
	text += "; on 429: " + w.On429
	if w.Stationary() {
		text += "; the sessions running at the start join mid-life (start: stationary)"
	}
	if w.Sessions > 0 {
		text += fmt.Sprintf("; %d sessions in all", w.Sessions)
	}
	d.line("workload", "%s", text)
}

// DescribeTrace writes a trace for `sixpin validate`: its file and format,
// sessions and requests, the prompt and output lengths it gives, its span
// and its peak concurrency.
func DescribeTrace(w io.Writer, st trace.Summary) error {
	d := &describer{numfmt.Printer{W: w}}
	exp := scenario.TraceMeans(st)
	d.line("trace", "%s (%s format)", st.Source, st.Format)
	d.line("requests", "%s in %s over %s, peak %s at once", numfmt.Count(st.Requests, "request", ""), numfmt.Count(st.Sessions, "session", ""),
		st.Span.Round(time.Second), numfmt.Count(st.PeakSessions, "session", ""))
	d.line("prompt", "p50 %s, range [%s, %s] tokens (mean %s)", group(float64(st.Prompt.P50)),
		group(float64(st.Prompt.Min)), group(float64(st.Prompt.Max)), group(exp.MeanPromptTokens))
	d.line("output", "p50 %s, range [%s, %s] tokens (mean %s)", group(float64(st.Output.P50)),
		group(float64(st.Output.Min)), group(float64(st.Output.Max)), group(exp.MeanOutputTokens))
	if b := st.BlockTokens; b > 0 {
		d.line("prefixes", "shared prompt blocks of %d tokens (hash ids)", b)
	}
	return d.Err
}

// Simulator is what a simulator profile serves, as the simulator's
// defaults resolve it. The caller reads it from the simulator (report
// does not link the simulator).
type Simulator struct {
	Model       string
	Timing      string
	MaxModelLen int
}

// DescribeProfile writes a profile for `sixpin validate`: where it came
// from, its kind and endpoint (userinfo and query values redacted), the
// model, the API-key variable, how output lengths are enforced and prompts
// counted, and what it declares beyond (context, pricing, limits, power,
// request extensions). sim describes a simulator profile's server (nil:
// not resolved).
func DescribeProfile(w io.Writer, p *profiles.Profile, sim *Simulator) error {
	d := &describer{numfmt.Printer{W: w}}
	d.line("profile", "%s (%s)", p.Name, p.Source)
	switch {
	case p.Simulated() && sim != nil:
		d.line("kind", "simulator: model %q, timing %s, max_model_len %s", sim.Model, sim.Timing, group(float64(sim.MaxModelLen)))
	case p.Simulated():
		d.line("kind", "simulator")
	default:
		ep := p.BaseURL
		if ep == "" {
			ep = "none (give --endpoint)"
		}
		d.line("kind", "%s at %s", p.Kind, redact.URL(ep))
		d.line("api key", "from $%s", p.KeyEnv())
	}
	if p.Model != "" {
		d.line("model", "%s", p.Model)
	}
	d.line("output", "%s is set; don't-stop-early control: %s", p.MaxTokensField, p.OutputControl)
	tok := p.Tokenizer
	if tok == "" {
		tok = "none named (runs fall back to o200k_base and verify by usage)"
	}
	d.line("tokenizer", "%s", tok)
	var extra []string
	if p.ContextWindow > 0 {
		extra = append(extra, "context "+group(float64(p.ContextWindow))+" tokens")
	}
	if p.Pricing.Set() {
		extra = append(extra, "pricing")
	}
	if p.RateLimits != nil {
		extra = append(extra, "rate limits")
	}
	if p.PowerWatts > 0 {
		extra = append(extra, fmt.Sprintf("%s W at %s/kWh", num(p.PowerWatts), numfmt.Money(p.USDPerKWh)))
	}
	if len(p.ExtraBody) > 0 {
		extra = append(extra, fmt.Sprintf("%d request extension(s)", len(p.ExtraBody)))
	}
	if len(p.Headers) > 0 {
		extra = append(extra, fmt.Sprintf("%d header(s)", len(p.Headers)))
	}
	if len(extra) > 0 {
		d.line("declares", "%s", strings.Join(extra, ", "))
	}
	return d.Err
}
