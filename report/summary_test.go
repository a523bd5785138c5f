package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// A server that streams no usage leaves the prompt and mix unobserved;
// the card and the window lines say so instead of printing a ratio of 0.
func TestSummaryWithoutUsage(t *testing.T) {
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows:  map[string]*results.Window{results.WindowSteady: {Completed: 4, EndS: 10, PrefillShare: 0.25}},
	}
	run.Pins.Mix.Declared = scenario.MixDeclared{InputOutputRatio: 40}
	run.Pins.Mix.Observed = results.MixObserved{Window: results.WindowAll, PrefillShare: 0.25}
	card := PinCard(run)
	for _, row := range card.Rows {
		switch row.Pin {
		case "prompt":
			if row.Observed != "no successful request reported usage" {
				t.Errorf("prompt observed %q", row.Observed)
			}
		case "mix":
			if !strings.HasPrefix(row.Observed, "input:output unknown (no usage reported), prefill 25") {
				t.Errorf("mix observed %q", row.Observed)
			}
		}
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mix (steady window): input:output unknown (no usage reported)") {
		t.Errorf("summary lacks the unknown mix:\n%s", b.String())
	}
	if strings.Contains(b.String(), "input:output 0") {
		t.Errorf("summary prints a ratio of 0:\n%s", b.String())
	}
}
