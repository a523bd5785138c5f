package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// This file words the seventh line of the pin card, content: what the
// prompts asked for, and whether the content check found the figures
// depend on it.

// verdictSensitive is the content row's verdict when the content check
// found the run content-sensitive: measured, not contradicted, but the
// figures hold for the declared content only.
const verdictSensitive results.Verdict = "sensitive"

// contentPin is the card's content row: declared content, and what the
// content check observed (or that it did not run).
func contentPin(run *results.Run) (declared, observed string, v results.Verdict, reason string) {
	declared = run.Pins.Prompt.Declared.Content
	if declared == "" {
		declared = "prose" // the default, and an agentic session's and a trace's turns
	}
	cc := run.ContentCheck
	if cc == nil {
		return declared, "not checked", results.Unverifiable,
			"run with --content-check to measure decode tok/s in each content class at these pins (a speculative drafter's depends on what the model writes)"
	}
	observed = contentSpread(cc)
	switch {
	case cc.SpreadPct == nil:
		return declared, observed, results.Unverifiable, "fewer than two content classes measured decode: no spread to judge"
	case cc.WithinNoise:
		return declared, observed, results.Unverifiable, fmt.Sprintf("the spread passes %s%%, but its 95%% interval reaches below it: within the slices' noise (longer slices, --content-check-slice, would tell)",
			numfmt.Short(cc.ThresholdPct))
	case cc.Sensitive:
		why := "a speculative drafter guesses %s better than %s"
		if !slices.ContainsFunc(cc.Classes, func(s results.ContentSlice) bool { return s.SpecDecode != nil }) {
			why = "the server counted no speculative decoding; a drafter would guess %s better than %s"
		}
		return declared, observed, verdictSensitive, fmt.Sprintf("CONTENT-SENSITIVE: decode tok/s spreads %s across content classes, past %s%%: the server's speed depends on what the model writes ("+why+"); these figures hold for %s prompts only",
			pctShort(*cc.SpreadPct), numfmt.Short(cc.ThresholdPct), cc.Fastest, cc.Slowest, declared)
	}
	return declared, observed, results.Verified, fmt.Sprintf("content-insensitive: decode tok/s within %s%% across content classes (spread %s)", numfmt.Short(cc.ThresholdPct), pctShort(*cc.SpreadPct))
}

// contentSpread is the check's observed line: "decode tok/s p50 (per
// stream, steady windows of 30 s slices): prose 348, code 459, json 560,
// tool-calls 561, repetitive 750; spread 116% (repetitive ÷ prose)".
func contentSpread(cc *results.ContentCheck) string {
	parts := make([]string, 0, len(cc.Classes))
	for _, s := range cc.Classes {
		if s.DecodeTokS == nil {
			parts = append(parts, s.Class+" unmeasured")
			continue
		}
		parts = append(parts, s.Class+" "+group(s.DecodeTokS.P50))
	}
	s := fmt.Sprintf("decode tok/s p50 per stream (%s): %s", sliceWords(cc), strings.Join(parts, ", "))
	if cc.SpreadPct != nil {
		s += fmt.Sprintf("; spread %s (%s ÷ %s", pctShort(*cc.SpreadPct), cc.Fastest, cc.Slowest)
		if cc.SpreadLowPct != nil && cc.SpreadHighPct != nil {
			s += fmt.Sprintf("; 95%% interval %s to %s", pctShort(*cc.SpreadLowPct), pctShort(*cc.SpreadHighPct))
		}
		s += ")"
	}
	if len(cc.Missing) > 0 {
		s += "; not measured: " + strings.Join(cc.Missing, ", ")
	}
	return s
}

// sliceWords is how each slice was bounded: "slices of 30 s".
func sliceWords(cc *results.ContentCheck) string {
	s := "slices of " + numfmt.Short(cc.SliceS) + " s"
	if cc.SliceRequests > 0 {
		s += " or " + numfmt.Count(cc.SliceRequests, "request", "")
	}
	return s
}

// pctShort is a percentage to 3 significant figures: "116%".
func pctShort(v float64) string { return numfmt.Sig(v) + "%" }

// writeContentCheck is the summary's content-check section: a line per
// class with its decode, its ratio to the base class, the server's
// acceptance and the degenerate share, then the verdict.
func writeContentCheck(p *numfmt.Printer, run *results.Run) {
	cc := run.ContentCheck
	if cc == nil {
		return
	}
	p.F("Content check (%s, one after another at the run's pins; each slice's headline window; ratios to %s):\n", sliceWords(cc), cc.Base)
	for _, s := range cc.Classes {
		line := fmt.Sprintf("  %-10s %s window, %s requests", s.Class, s.Window, numfmt.Int(s.Completed))
		if d := s.DecodeTokS; d != nil {
			line += fmt.Sprintf(": decode p50 %s tok/s per stream", group(d.P50))
		} else {
			line += ": decode unmeasured"
		}
		if s.Ratio != nil {
			line += " (" + numfmt.Sig(*s.Ratio) + "×)"
		}
		line += fmt.Sprintf(", aggregate %s tok/s, TTFT p50 %s ms", group(s.AggregateOutputTokS), num(s.TTFTMsP50))
		if sd := s.SpecDecode; sd != nil {
			line += "; speculative decoding " + specFigures(sd)
		}
		if s.DegenerateShare != nil && *s.DegenerateShare > 0 {
			line += "; " + pct(*s.DegenerateShare) + " of sampled answers degenerate"
		}
		if !s.Valid {
			line += "; slice INVALID: " + clip.Cut(strings.Join(s.Invalid, "; "))
		}
		p.F("%s\n", line)
	}
	for _, m := range cc.Missing {
		p.F("  %-10s not measured (interrupted or failed)\n", m)
	}
	_, _, v, reason := contentPin(run)
	if v == verdictSensitive || v == results.Verified {
		p.F("  %s\n", reason)
	}
}
