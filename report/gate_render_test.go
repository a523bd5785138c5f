package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// The words of comparisons and gates; verdict's tests pin the verdicts.

// A gate whose rules could not be evaluated says so in its verdict line.
func TestGateTextNotEvaluated(t *testing.T) {
	ins := load(t, fixBase, fixNoise)
	bare := *ins[1].Run
	bare.Histograms, bare.Series = nil, results.Series{}
	g, err := verdict.Gate(ins[0], Input{Name: "bare.json", Run: &bare}, verdict.DefaultRules(), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteGateText(&text, g); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "RESULT: NOT EVALUATED — 5 of 7 rules could not be evaluated") {
		t.Errorf("text:\n%s", text.String())
	}
}

// tpotRuns is a sample of copies of the base fixture, named PREFIX-N.json,
// whose steady TPOT p50 is 7 ms moved by each change (a fraction) and
// whose aggregate is 400 tok/s; without histograms or series (a rule
// judged between runs reads one value per run).
func tpotRuns(t *testing.T, prefix string, changes ...float64) verdict.Sample {
	t.Helper()
	s := verdict.Sample{Name: prefix + "-*.json"}
	for i, ch := range changes {
		in := load(t, fixBase)[0]
		w := in.Run.Windows[results.WindowSteady]
		d := *w.TPOTMs
		d.P50 = 7 * (1 + ch)
		w.TPOTMs, w.AggregateOutputTokS = &d, 400
		in.Run.Histograms, in.Run.Series = nil, results.Series{}
		in.Name = fmt.Sprintf("%s-%d.json", prefix, i+1)
		s.Runs = append(s.Runs, in)
	}
	return s
}

// The verdict line names the baseline's runs and the spread between them.
func TestGateHeadlineNamesTheSpread(t *testing.T) {
	rule := func(key, kind string, limit float64) verdict.Rule {
		r, err := verdict.NewRule(key, kind, limit)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	g, err := verdict.GateRuns(tpotRuns(t, "base", 0, 0.005, -0.004, 0.003, -0.002), tpotRuns(t, "cur", 0.12),
		[]verdict.Rule{rule("steady.tpot_ms.p50", verdict.MaxIncrease, 0.05), rule("steady.aggregate_output_tok_s", verdict.MaxDecrease, 0.05)}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	// The aggregate is 400 in every run: no spread at all.
	want := "FAIL — 1 of 2 rules regressed: steady.tpot_ms.p50 +12.0% (between-run sd 0.4%); baseline 5 runs, between-run sd 0.0–0.4% of the mean, by rule"
	if got := gateHeadline(g); got != want {
		t.Errorf("headline\n got %s\nwant %s", got, want)
	}
}

// Several baseline sets of one sweep: the verdict line counts the runs
// per point.
func TestSetGateHeadline(t *testing.T) {
	base := []SetInput{loadSet(t, fixSweep), loadSet(t, fixSweepNoise)}
	g, err := verdict.GateSets("sweep*.json", base, loadSet(t, fixSweepSlow), verdict.DefaultRules(), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if h := setGateHeadline(g); !strings.HasPrefix(h, "FAIL — 2 of 2 points regressed") || !strings.Contains(h, "; baseline 2 sets (2 runs per point), between-run sd ") {
		t.Errorf("headline %q", h)
	}
}

// Mismatch lines name the runs in the order of their values: A's first.
func TestCompareMismatchLinesNameRunsInOrder(t *testing.T) {
	c, err := verdict.Compare(load(t, fixBase, fixNoise, fixC1), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	var text, md strings.Builder
	if err := WriteCompareText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), md.String()} {
		if !strings.Contains(out, "A vs C: concurrency: 4 vs 1") {
			t.Errorf("mismatch lines name the runs in another order than their values:\n%s", out)
		}
	}
}
