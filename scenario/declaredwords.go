package scenario

import (
	"fmt"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// The words of declared pin values that more than one reader prints: the
// pin card (report's DeclaredPins composes them) and the mismatches that
// keep two runs from being compared (verdict.PinMismatches names the two
// values with them). One wording, beside the types it words.

// TokensWords words a token-count pin as declared: "uniform [400, 600]
// tokens (mean 500)", "64 tokens" (a fixed length), an agentic history's
// mean over turns, a mix's mean over its classes; the tokenizer the
// prompts are built to, once known; and their content ("content prose").
func TokensWords(d TokensDeclared) string {
	var s string
	switch {
	case strings.HasPrefix(d.Dist, "agentic"):
		s = fmt.Sprintf("%s (mean %s tokens over turns)", d.Dist, numfmt.Thousands(d.Mean))
	case d.Dist == PerClass:
		s = fmt.Sprintf("%s: mean %s tokens over the mix", d.Dist, numfmt.Thousands(d.Mean))
	case d.Min == d.Max && d.Min > 0 && d.Mean == d.Min && d.Dist == numfmt.Plain(d.Min):
		s = d.Dist + " tokens"
	default:
		s = fmt.Sprintf("%s tokens (mean %s)", d.Dist, numfmt.Thousands(d.Mean))
	}
	if d.Tokenizer != "" {
		s += ", built by tokenizer " + d.Tokenizer
	}
	if d.Content != "" {
		s += ", content " + d.Content
	}
	if r := d.PreserveReasoning; r != nil {
		s += "; " + ReasoningWords(*r)
	}
	return s
}

// ReasoningWords words preserve_reasoning: whether later turns re-send
// earlier answers' reasoning.
func ReasoningWords(keep bool) string {
	if keep {
		return "earlier turns' reasoning re-sent (preserve_reasoning: true)"
	}
	return "earlier turns' reasoning dropped (preserve_reasoning: false)"
}

// ConcurrencyWords words pin 4 as declared: "closed loop, 16 concurrent
// streams", "open loop, 2.5 req/s gamma arrivals (burstiness 0.5), at most
// 64 in flight", agentic sessions, a trace's sessions; and the session
// affinity headers when there are any (AffinityWords).
func ConcurrencyWords(d ConcurrencyDeclared) string {
	s := concurrencyWords(d)
	if d.SessionAffinity != "" || d.SessionEcho != "" {
		s += "; " + AffinityWords(d)
	}
	return s
}

// AffinityWords words the session-affinity headers
// (ConcurrencyDeclared.SessionAffinity and SessionEcho): "each session's
// id in header X-Session-Id", "each session sends back header
// X-Session-Token", both, or "no session affinity header".
func AffinityWords(d ConcurrencyDeclared) string {
	plural := func(names string) string {
		if strings.Contains(names, ",") {
			return "headers " + names
		}
		return "header " + names
	}
	var parts []string
	if d.SessionAffinity != "" {
		parts = append(parts, "each session's id in "+plural(d.SessionAffinity))
	}
	if d.SessionEcho != "" {
		parts = append(parts, "each session sends back "+plural(d.SessionEcho))
	}
	if len(parts) == 0 {
		return "no session affinity header"
	}
	return strings.Join(parts, "; ")
}

func concurrencyWords(d ConcurrencyDeclared) string {
	switch {
	case d.Mode == ModeTrace:
		return fmt.Sprintf("the trace's sessions at their recorded times (up to %d at once)", d.Streams)
	case d.Mode == ModeOpen:
		s := fmt.Sprintf("open loop, %s req/s %s", numfmt.Plain(d.RateRPS), ArrivalWords(d))
		if d.MaxInFlight > 0 {
			return s + fmt.Sprintf(", at most %d in flight", d.MaxInFlight)
		}
		return s + ", no in-flight cap"
	case d.Sessions:
		return "closed loop, " + numfmt.Count(d.Streams, "concurrent agentic session", "concurrent agentic sessions") + " (think time between turns)"
	case d.Streams == 1:
		return "closed loop, a single stream: per-stream = aggregate"
	case d.Queueing == QueueingAllowed:
		return fmt.Sprintf("closed loop, %d concurrent streams; the server may queue them (queueing: allowed)", d.Streams)
	}
	return fmt.Sprintf("closed loop, %d concurrent streams", d.Streams)
}

// ArrivalWords names an open loop's arrival process: "poisson arrivals",
// "gamma arrivals (burstiness 0.5)", or "not declared".
func ArrivalWords(d ConcurrencyDeclared) string {
	switch d.Arrival {
	case "":
		return "not declared"
	case ArrivalGamma:
		return d.Arrival + " arrivals (burstiness " + numfmt.Plain(d.Burstiness) + ")"
	}
	return d.Arrival + " arrivals"
}

// ClassesWords names a mix's classes with their weights: "chat×0.7
// agent×0.3", or "one class".
func ClassesWords(cs []ClassWeights) string {
	if len(cs) == 0 {
		return "one class"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + "×" + numfmt.Plain(c.Weight)
	}
	return strings.Join(parts, " ")
}

// SwitchWords is a declared switch (prefix caching): on, off or not
// declared (nil).
func SwitchWords(b *bool) string {
	switch {
	case b == nil:
		return "not declared"
	case *b:
		return "on"
	}
	return "off"
}
