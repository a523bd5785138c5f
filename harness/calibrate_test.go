package harness

import (
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/results"
)

// The floor is the median of the recorded rounds' TTFT p50s, the warm-up
// round left out of every figure, and the spread is their range over
// that median: arithmetic on given numbers, not on timing.
func TestCalibrationFloor(t *testing.T) {
	t.Parallel()
	round := func(failed int, ttftUS ...int64) calibrationRound {
		r := calibrationRound{ttft: hdrhistogram.New(1, histMaxUS, 3), itl: hdrhistogram.New(1, histMaxUS, 3), sent: len(ttftUS) + failed, failed: failed}
		for _, v := range ttftUS {
			_ = r.ttft.RecordValue(v)
			_ = r.itl.RecordValue(10)
		}
		return r
	}
	rounds := []calibrationRound{
		round(3, 50_000, 60_000, 70_000), // the warm-up: slow, and its failures
		round(0, 900, 1_000, 1_100),      // p50 1.0 ms
		round(0, 1_100, 1_200, 1_300),    // 1.2 ms
		round(1, 800, 900, 1_000),        // 0.9 ms
		round(0, 4_000, 5_000, 6_000),    // 5.0 ms: a burst of other work
		round(0, 1_000, 1_100, 1_200),    // 1.1 ms
		round(2),                         // no success: no p50
	}
	cal := &results.Calibration{}
	calibrationFloor(cal, rounds)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.001*b }
	if cal.Rounds != 6 || cal.WarmupRequests != 6 || cal.Requests != 18 || cal.Failed != 3 {
		t.Errorf("%d rounds, %d warm-up requests, %d requests, %d failed; want 6 rounds, 6 warm-up, 18 recorded of which 3 failed",
			cal.Rounds, cal.WarmupRequests, cal.Requests, cal.Failed)
	}
	want := []float64{1.0, 1.2, 0.9, 5.0, 1.1}
	if len(cal.RoundTTFTP50Ms) != len(want) {
		t.Fatalf("round p50s %v, want %v", cal.RoundTTFTP50Ms, want)
	}
	for i, w := range want {
		if !near(cal.RoundTTFTP50Ms[i], w) {
			t.Errorf("round p50s %v, want %v", cal.RoundTTFTP50Ms, want)
		}
	}
	if !near(cal.FloorTTFTMs, 1.1) || !near(cal.Floor(), 1.1) {
		t.Errorf("floor %v ms, want the median of the rounds' p50s, 1.1", cal.FloorTTFTMs)
	}
	if wantSpread := 100 * (5.0 - 0.9) / 1.1; !near(cal.SpreadPct, wantSpread) {
		t.Errorf("spread %v%%, want (max − min) / median = %v%%", cal.SpreadPct, wantSpread)
	}
	if cal.TTFTMs == nil || cal.TTFTMs.Count != 15 || cal.TTFTMs.Max > 7 || cal.ITLMs == nil || cal.ITLMs.Count != 15 {
		t.Errorf("pooled TTFT %+v, ITL %+v: want the 15 recorded requests, none of the warm-up's", cal.TTFTMs, cal.ITLMs)
	}
}
