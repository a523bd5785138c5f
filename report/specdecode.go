package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// This file words what the server's speculative decoding did: on the pin
// card's model row, in the server section of the summary and under each
// window.

// specUnknown says why the server counted no speculative decoding:
// "off" only when the server says it was started without it (llama.cpp's
// /props), else unknown, as a server that says nothing may speculate all
// the same.
func specUnknown(run *results.Run) string {
	if d := run.Discovery; d != nil && d.Speculative != "" {
		from := d.From["speculative"]
		if d.Speculative == record.SpeculativeNone {
			return fmt.Sprintf("off (%s: %s)", from, d.Speculative)
		}
		return fmt.Sprintf("unknown (%s: %s, but no draft counts arrived)", from, d.Speculative)
	}
	if run.Server == nil {
		return "unknown (no draft counts in the server's timings; its /metrics was not scraped)"
	}
	return "unknown (the server exposes no counters)"
}

// specObserved is the card's condition for the headline window:
// "speculative decoding: on, 2.6 tokens per step, acceptance 41%
// (steady window, vllm /metrics)".
func specObserved(run *results.Run) string {
	s := run.SpecDecodeIn(run.Headline)
	if s == nil {
		return "speculative decoding: " + specUnknown(run)
	}
	return fmt.Sprintf("speculative decoding: %s (%s window, %s)", specFigures(s), run.Headline, s.Source)
}

// specFigures is "on, 2.6 tokens per step, acceptance 41%", or what is
// known of it.
func specFigures(s *results.SpecDecode) string {
	parts := []string{"on"}
	if s.MeanAcceptanceLength != nil {
		parts = append(parts, numfmt.Sig(*s.MeanAcceptanceLength)+" tokens per step")
	}
	switch {
	case s.AcceptanceRatePct != nil:
		parts = append(parts, "acceptance "+wholePct(*s.AcceptanceRatePct))
	case s.DraftTokens != nil && *s.DraftTokens == 0, s.Drafts != nil && *s.Drafts == 0:
		parts = append(parts, "nothing drafted")
	default:
		parts = append(parts, "acceptance unknown")
	}
	return strings.Join(parts, ", ")
}

// specDetail adds what the figures come from: "1,234 of 3,000 draft
// tokens accepted in 750 drafts; by position 70% 45% 30% 15%", or for
// SGLang's gauge "mean of 12 scrapes of its spec_accept_length".
func specDetail(s *results.SpecDecode) string {
	if s.Source == results.SpecSourceSGLangGauge {
		return fmt.Sprintf("mean of %s of its spec_accept_length (each over its last decode-log interval)", numfmt.Count(s.Scrapes, "scrape", ""))
	}
	var d string
	switch {
	case s.AcceptedTokens != nil && s.DraftTokens != nil:
		d = fmt.Sprintf("%s of %s draft tokens accepted", numfmt.Int(*s.AcceptedTokens), numfmt.Int(*s.DraftTokens))
	case s.AcceptedTokens != nil:
		d = fmt.Sprintf("%s draft tokens accepted", numfmt.Int(*s.AcceptedTokens))
	default:
		d = "accepted draft tokens unknown"
	}
	if s.Drafts != nil {
		if s.Source == results.SpecSourceSGLang {
			d += " in " + numfmt.Count(*s.Drafts, "verification step", "")
		} else {
			d += " in " + numfmt.Count(*s.Drafts, "draft", "")
		}
	}
	if s.Requests > 0 {
		if s.Source == results.SpecSourceSGLang {
			d += " of " + numfmt.Count(s.Requests, "request", "") + " finished"
		} else {
			d += " over " + numfmt.Count(s.Requests, "request", "")
		}
	}
	if len(s.PerPositionAcceptancePct) > 0 {
		ps := make([]string, len(s.PerPositionAcceptancePct))
		for i, v := range s.PerPositionAcceptancePct {
			ps[i] = wholePct(v)
		}
		d += "; by draft position " + strings.Join(ps, " ")
	}
	return d
}

// wholePct is a percentage rounded to a whole one: 41%.
func wholePct(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) + "%" }

// writeSpecWindow writes, under a window, what each source said of
// speculative decoding in it (nothing when none said anything).
func writeSpecWindow(p *numfmt.Printer, run *results.Run, name string) {
	var all []*results.SpecDecode
	if sw := serverWindow(run, name); sw != nil && sw.SpecDecode != nil {
		all = append(all, sw.SpecDecode)
	}
	if w := run.Windows[name]; w != nil && w.SpecDecode != nil && w.SpecDecode.State == results.SpecOn {
		all = append(all, w.SpecDecode)
	}
	for _, s := range all {
		p.F("  speculative decoding (%s window, %s): %s; %s\n", name, s.Source, specFigures(s), specDetail(s))
	}
}

// writeSpecSummary writes the headline window's speculative decoding,
// or why it is unknown, for the server section.
func writeSpecSummary(p *numfmt.Printer, run *results.Run) {
	s := run.SpecDecodeIn(run.Headline)
	if s == nil {
		p.F("Speculative decoding: %s\n", specUnknown(run))
		return
	}
	p.F("Speculative decoding (%s window, %s): %s; %s\n", run.Headline, s.Source, specFigures(s), specDetail(s))
}
