package verdict

import (
	"math"
	"testing"

	"github.com/sixpin/sixpin/results"
)

// A figure reference reads the run's own figure, in its unit, or says why
// the run has none.
func TestFigureRefEstimate(t *testing.T) {
	run := load(t, fixBase)[0].Run
	steady := run.Windows[results.WindowSteady]
	for _, c := range []struct {
		key  string
		want float64 // NaN: the run has no such figure
		why  string
	}{
		{"steady.ttft_ms.p50", steady.TTFTMs.P50, ""},
		{"steady.tpot_ms.max", steady.TPOTMs.Max, ""},
		{"steady.aggregate_output_tok_s", steady.AggregateOutputTokS, ""},
		{"steady.requests", float64(steady.Requests), ""},
		{"errors.rate", float64(run.Errors.Failed) / float64(run.Errors.Requests), ""},
		{"steady.peak_aggregate_output_tok_s", math.NaN(), "not measured in the steady window"},
	} {
		t.Run(c.key, func(t *testing.T) {
			ref, err := ParseFigure(c.key)
			if err != nil {
				t.Fatal(err)
			}
			e, ok, why := ref.Estimate(run)
			switch {
			case math.IsNaN(c.want):
				if ok || why != c.why {
					t.Errorf("ok %v (%q), want no figure: %q", ok, why, c.why)
				}
			case !ok || math.Abs(e.Value-c.want) > 1e-9*math.Max(1, math.Abs(c.want)):
				t.Errorf("%v (ok %v, %q), want %v", e.Value, ok, why, c.want)
			}
		})
	}
}

// The registry finds a figure by its key, whatever its kind.
func TestFigureOf(t *testing.T) {
	for _, c := range []struct {
		key       string
		ok, dist  bool
		unit      string
		direction Direction
	}{
		{"ttft_ms", true, true, "ms", LowerIsBetter},
		{"effective_tok_s", true, true, "tok/s", HigherIsBetter},
		{"mean_in_flight", true, false, "", Neutral},
		{"errors.rate", true, false, "%", LowerIsBetter},
		{"ttft_s", false, false, "", Neutral},
	} {
		f, ok := FigureOf(c.key)
		if ok != c.ok || f.IsDist() != c.dist || f.Unit != c.unit || f.Better != c.direction {
			t.Errorf("%s: ok %v, distribution %v, unit %q, direction %d; want %v %v %q %d", c.key, ok, f.IsDist(), f.Unit, f.Better, c.ok, c.dist, c.unit, c.direction)
		}
	}
}
