package harness

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/report"
)

// A run in compressed time says so in its results, on its pin card and
// in its summary: which figures the unscaled time distorts and by how
// much TTFT reads high, measured by the simulator's own timings (its
// TTFT rest is the time outside its model, divided by the scale like
// the rest). A real-time run says none of it.
//
// The figures of the two scales are not compared here: the distortion
// is the wall time nobody models divided by the scale, and that wall
// time is whatever the machine's load makes it, so a tolerance that
// holds on an idle machine fails on a busy one. What is deterministic is
// that the run measures it and says so.
func TestCompressedTimeSaysSo(t *testing.T) {
	t.Parallel()
	prof := fixedProfile(t, "fixed", "200ms", "2ms")
	o, err := run(t, Config{Profile: prof, TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Run.Compressed
	if c == nil || c.Scale != 0.1 || !(c.UnscaledTTFTMs > 0) || c.UnscaledWallMs != c.UnscaledTTFTMs*0.1 || len(c.Distorted) == 0 {
		t.Fatalf("compressed %+v", c)
	}
	if w := o.Run.Windows[o.Run.Headline]; c.UnscaledTTFTMs != w.TTFTRestMs.P50 {
		t.Errorf("unscaled TTFT %v, the window's TTFT rest P50 %v", c.UnscaledTTFTMs, w.TTFTRestMs.P50)
	}
	if card := report.PinCard(o.Run); !strings.Contains(card.Window, "COMPRESSED TIME (10× faster): time outside the simulator's model is not scaled") {
		t.Errorf("pin card: %q", card.Window)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, o.Run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "is not scaled, so it weighs 10× what it would in real time") {
		t.Errorf("summary lacks the compressed-time note:\n%s", b.String())
	}

	o, err = run(t, Config{Profile: prof, Requests: 4})
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Compressed != nil || strings.Contains(strings.Join(o.Run.Notes, " "), "compressed") {
		t.Errorf("real time: %+v %q", o.Run.Compressed, o.Run.Notes)
	}
}
