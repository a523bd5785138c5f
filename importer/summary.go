package importer

import (
	"fmt"
	"io"
	"math"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/scenario"
)

// WriteSummary writes what an import did, for a person: the source it
// followed, the files written, the totals the peer's invocation should
// make a server count and what sixpin's plan sends, and every note.
// scenarioPath and profilePath are where the files went (profilePath ""
// when none was written).
func (r *Result) WriteSummary(w io.Writer, scenarioPath, profilePath string) {
	fmt.Fprintf(w, "sixpin import %s: following %s %s (%s)\n", r.Peer.Name, r.Peer.Command, r.Peer.Version, r.Peer.Source)
	if profilePath != "" {
		fmt.Fprintf(w, "wrote %s (the scenario) and %s (a profile of the endpoint it addressed)\n", scenarioPath, profilePath)
	} else {
		fmt.Fprintf(w, "wrote %s (the scenario)\n", scenarioPath)
	}
	t := r.Totals
	kind := "expected"
	if t.Exact {
		kind = "exact"
	}
	count := numfmt.Int(t.Requests)
	if t.RequestsExpected {
		count = "about " + count
	}
	fmt.Fprintf(w, "\nWhat %s's invocation should make the server count (%s; prompt tokens as the server counts them):\n", r.Peer.Command, kind)
	fmt.Fprintf(w, "  requests        %s\n", count)
	fmt.Fprintf(w, "  input tokens    %s\n", tokens(t.Input, t.Exact))
	fmt.Fprintf(w, "  cached input    %s\n", tokens(t.Cached, t.Exact))
	fmt.Fprintf(w, "  output tokens   %s\n", tokens(t.Output, t.Exact))
	for _, why := range t.Why {
		fmt.Fprintf(w, "    %s\n", why)
	}
	if !t.Exact {
		fmt.Fprintf(w, "  The exact totals depend on the peer's own draw for its seed (numpy's or Python's generator), which sixpin does not reproduce: it draws the same distributions.\n")
	}
	if wu := t.Warmup; wu.Requests > 0 {
		fmt.Fprintf(w, "  Before it measures, %s sends %s warm-up requests (%s): %s input and %s output tokens more, which the scenario leaves out.\n",
			r.Peer.Command, numfmt.Int(wu.Requests), wu.Setting, tokens(wu.Input, t.Exact), tokens(wu.Output, t.Exact))
	}
	if p := t.Plan; p.Requests > 0 {
		fmt.Fprintf(w, "\nWhat sixpin sends for the scenario's seed (exact; the results file's parity.planned):\n")
		fmt.Fprintf(w, "  requests %s, input %s, cached input %s, output %s tokens\n",
			numfmt.Int(p.Requests), numfmt.Int(p.InputTokens), numfmt.Int(p.CachedInputTokens), numfmt.Int(p.OutputTokens))
		fmt.Fprintf(w, "  sequence sha256 %s (%s)\n", p.SHA256, scenario.SequenceEncoding)
	} else {
		fmt.Fprintf(w, "\nsixpin's requests are counted as it issues them (a duration, not a count, bounds the scenario): the results file's parity.planned holds them.\n")
	}
	if len(r.Notes) > 0 {
		fmt.Fprintf(w, "\nWhere the translation differs from the peer, or only a default does (also in the scenario's comments):\n")
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	fmt.Fprintf(w, "\nRun it: sixpin run %s\n", scenarioPath)
}

// tokens formats a total: exact as it is, expected as "≈ N".
func tokens(v float64, exact bool) string {
	if exact {
		return numfmt.Int(int64(math.Round(v)))
	}
	return "≈ " + numfmt.Thousands(v)
}
