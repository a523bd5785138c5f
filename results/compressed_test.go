package results

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// A run in compressed time says what the unscaled time did to it, as
// arithmetic on its headline window: 20.9 ms of wall time per request
// outside the simulator's model (TTFT rest P50 209 ms in run time at
// scale 0.1) puts TTFT P50 (800 ms) 209 × 0.9 / 800 = 23.5% above what
// real time would read; a decode of 31 tokens at TPOT P50 0.5 ms lasted
// 1.55 ms of wall time. A real-time run says nothing.
func TestCompress(t *testing.T) {
	t.Parallel()
	mk := func() *Run {
		return &Run{Headline: WindowSteady, Windows: map[string]*Window{WindowSteady: {
			TTFTMs:       &Dist{Count: 17, P50: 800},
			TTFTRestMs:   &Dist{Count: 17, P50: 209},
			TPOTMs:       &Dist{Count: 17, P50: 0.5},
			OutputPerReq: &Dist{Count: 17, P50: 32},
		}}}
	}
	run := mk()
	run.Compress(0.1)
	c := run.Compressed
	if c == nil {
		t.Fatal("no compressed-time record")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if c.Scale != 0.1 || c.UnscaledTTFTMs != 209 || !near(c.UnscaledWallMs, 20.9) || !near(c.TTFTOverPct, 23.5125) || !near(c.DecodeWallMs, 1.55) {
		t.Errorf("compressed %+v", *c)
	}
	for _, m := range []string{"ttft_ms", "e2e_ms", "effective_tok_s", "decode_tok_s", "aggregate_output_tok_s"} {
		if !slices.Contains(c.Distorted, m) {
			t.Errorf("distorted %v lacks %s", c.Distorted, m)
		}
	}
	note := strings.Join(run.Notes, "\n")
	for _, want := range []string{"compressed time (--time-scale 0.1: the simulator and the client ran 10× faster)",
		"is not scaled", "20.9 ms of wall time per request", "read as 209 ms", "TTFT p50 about 24% above",
		"1.55 ms of wall time", "Run without --time-scale for figures real time reproduces"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	real := mk()
	real.Compress(1)
	if real.Compressed != nil || len(real.Notes) > 0 {
		t.Errorf("real time: %+v %q", real.Compressed, real.Notes)
	}
}
