package analyze

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/scenario"
)

// DefaultScenarioDuration is the run length an exported scenario
// declares: the logs hold the workload's shape, not how long to run it.
const DefaultScenarioDuration = 10 * time.Minute

// ErrNoSessions is WriteScenario's error when no session was fitted.
var ErrNoSessions = errors.New("no sessions to fit a scenario from (no completed generations in the filters)")

// WriteScenario writes r.Scenario as a sixpin scenario named name: an
// agentic workload whose pins are the sessions' own (first prompt,
// growth per turn, output, turns, think time, concurrent sessions, the
// model), with comments saying where each came from and, in the header,
// which logs, filters and dates it was fitted from. It reads back with
// scenario.Load.
func (r *Report) WriteScenario(w io.Writer, name string) error {
	f := r.Scenario
	if f == nil {
		return ErrNoSessions
	}
	dist := func(d scenario.Dist) string {
		b, err := yaml.Marshal(d)
		if err != nil {
			return "null" // a Dist always marshals; Load would say so
		}
		return strings.TrimSpace(string(b))
	}
	n := func(v float64) string { return numfmt.Thousands(v) }
	ew := &numfmt.Printer{W: w}
	p := func(format string, args ...any) { ew.F(format+"\n", args...) }

	p("# Fitted by `sixpin analyze %s --export-scenario` from the user's own sessions.", r.Source)
	for _, l := range r.scenarioFrom() {
		p("# %s", l)
	}
	p("# Filters: %s.", r.filterWords())
	p("# Dates: %s.", r.Period())
	p("# Made %s from %s and %s.", r.GeneratedAt.UTC().Format(time.RFC3339), numfmt.Count(f.Sessions, "session", ""), numfmt.Count(f.Generations, "generation", ""))
	p("# A distribution of at most %d values is the values themselves (empirical); a larger one is a", MaxEmpirical)
	p("# lognormal fit (median e^mean(ln x), sigma sd(ln x)) bounded by the observed min and max.")
	p("name: %s", yamlString(name))
	p("description: >-")
	p("  %s's agentic workload as its logs show it, %s:", r.SourceName(), r.Period())
	turns := n(f.Turns.P50) + " turns"
	if turns == "1 turns" {
		turns = "1 turn"
	}
	p("  %s of %s, first prompts of %s tokens growing %s a turn,", numfmt.Count(f.Sessions, "session", ""), turns, n(f.FirstPrompt.P50), n(f.Growth.P50))
	p("  %s tokens out a turn (medians), %d at once.", n(f.Output.P50), max(f.MedianSessions, 1))
	p("seed: 1")
	p("pins:")
	model := f.Models[0]
	p("  # Models seen, by generations: %s.", modelWords(f.Models))
	p("  # The pin is the most used; params_b and dtype are not in the logs.")
	p("  model: {name: %s}", yamlString(model.Model))
	p("  # First-turn prompt (the whole context of a session's first call): %s.", fitWords(f.FirstPrompt, "tokens"))
	p("  prompt: {tokens: %s}", dist(f.FirstPrompt.Dist))
	p("  # Output per turn (output + reasoning tokens): %s; exact, so the endpoint generates them.", fitWords(f.Output, "tokens"))
	p("  output:")
	p("    tokens: %s", dist(f.Output.Dist))
	p("    exact: true")
	p("  # Concurrent sessions (first request to last answer): median %d, peak %d, over the time at", f.MedianSessions, f.PeakSessions)
	p("  # least one session ran. streams is the median.")
	p("  concurrency: {mode: %s, streams: %d}", scenario.ModeClosed, max(f.MedianSessions, 1))
	p("  # Cache reads were %s of the prompt tokens.", numfmt.Percent(f.CacheShare))
	p("  kv_cache: {prefix_caching: %t}", f.CacheShare > 0)
	p("workload:")
	p("  kind: agentic")
	p("  # Turns (generations) per session: %s.", fitWords(f.Turns, "turns"))
	p("  turns: %s", dist(f.Turns.Dist))
	growth := f.Growth
	switch {
	case growth.N == 0:
		p("  # No turn grew the context (no session had a second turn that did): growth is a placeholder.")
		growth.Dist = scenario.Fixed(1)
	default:
		p("  # Growth per turn (prompt − previous prompt − previous output, the tool results and the")
		p("  # user's words): %s.", fitWords(growth, "tokens"))
	}
	if f.Shrinks > 0 {
		p("  # %s whose context did not grow (compaction, a new context) are left out.", numfmt.Count(f.Shrinks, "turn", ""))
	}
	p("  growth_tokens: %s", dist(growth.Dist))
	if f.Think.N > 0 {
		p("  # Think time, a turn's answer to the next turn's request (tools running, the user): %s.", fitWords(f.Think, "s"))
		p("  think_seconds: %s", dist(f.Think.Dist))
	} else {
		p("  # Think time: no session had two turns.")
	}
	// At least the largest first prompt and output together, so that no
	// session's first turn is over the limit.
	maxCtx := int64(math.Ceil(max(float64(f.MaxContext), f.FirstPrompt.Max+f.Output.Max)/1000) * 1000)
	p("  # The largest context seen (prompt + output) was %s tokens; the limit is at least the largest", n(float64(f.MaxContext)))
	p("  # first prompt and output together, rounded up to a thousand.")
	p("  max_context_tokens: %d", maxCtx)
	p("# How long to run is not in the logs: the median session lasted %s.", f.MedianLifetime.Round(time.Second))
	p("duration: %s", scenario.Duration(DefaultScenarioDuration))
	return ew.Err
}

// scenarioFrom names the logs a scenario was fitted from.
func (r *Report) scenarioFrom() []string {
	var out []string
	for _, d := range r.Databases {
		out = append(out, fmt.Sprintf("From the opencode database %s (%s; %s opencode 1 rows, %s OpenCode 2 rows).",
			d.Path, d.Mode, numfmt.Thousands(float64(d.V1Messages)), numfmt.Thousands(float64(d.V2Messages))))
	}
	if len(r.Paths) > 0 {
		out = append(out, fmt.Sprintf("From %s's logs: %s (%s read).", r.SourceName(), strings.Join(r.Paths, ", "), numfmt.Count(r.Counts.Files, "file", "")))
	}
	return out
}

// filterWords says which generations were kept, "none" when all.
func (r *Report) filterWords() string {
	f := r.Filters
	var out []string
	if f.Since != nil {
		out = append(out, "since "+f.Since.Format(time.RFC3339))
	}
	if f.Until != nil {
		out = append(out, "until "+f.Until.Format(time.RFC3339))
	}
	if len(f.Providers) > 0 {
		out = append(out, "provider "+strings.Join(f.Providers, " or "))
	}
	if len(f.Models) > 0 {
		out = append(out, "model "+strings.Join(f.Models, " or "))
	}
	if len(out) == 0 {
		return "none (every completed generation)"
	}
	return strings.Join(out, ", ")
}

func modelWords(ms []ModelCount) string {
	var out []string
	for _, m := range ms {
		out = append(out, fmt.Sprintf("%s/%s %s", m.Provider, m.Model, numfmt.Thousands(float64(m.Generations))))
	}
	return strings.Join(out, ", ")
}

// fitWords says how a quantity was fitted, for a comment.
func fitWords(f Fitted, unit string) string {
	n := func(v float64) string {
		if unit == "s" {
			return numfmt.Sig(v)
		}
		return numfmt.Thousands(v)
	}
	var how string
	switch f.Method {
	case FitFixed:
		how = "always " + n(f.Min)
	case FitEmpirical:
		how = fmt.Sprintf("the %d values", f.N)
	case FitLognormal:
		how = fmt.Sprintf("lognormal fitted to %s values", numfmt.Thousands(float64(f.N)))
	}
	return fmt.Sprintf("%s; min %s, median %s, max %s %s", how, n(f.Min), n(f.P50), n(f.Max), unit)
}

// yamlString quotes s for YAML when it needs it.
func yamlString(s string) string {
	b, err := yaml.Marshal(s)
	if err != nil {
		return `""`
	}
	return strings.TrimSpace(string(b))
}

// Period is the time the generations span, in the report's zone:
// "2026-10-01 12:00 → 2026-10-03 18:00 (2 days)".
func (r *Report) Period() string {
	if r.First == nil {
		return "no generations"
	}
	const layout = "2006-01-02 15:04"
	d := r.Last.Sub(*r.First)
	span := ""
	switch {
	case d >= 48*time.Hour:
		span = fmt.Sprintf(" (%.0f days)", d.Hours()/24)
	case d >= time.Hour:
		span = fmt.Sprintf(" (%.0f hours)", d.Hours())
	}
	return r.First.Format(layout) + " → " + r.Last.Format(layout) + span
}

// SourceName names the agent the report is of, for people.
func (r *Report) SourceName() string {
	switch r.Source {
	case SourceClaudeCode:
		return "Claude Code"
	case SourceCodex:
		return "Codex"
	}
	return "opencode"
}
