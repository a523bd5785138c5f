package results

import (
	"fmt"
	"strconv"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// Compressed is how a run in compressed time (`--time-scale`, against
// the built-in simulator) misreads time. The simulator scales the delays
// it models (its steps, its request overhead) by Scale and the client
// divides every time it measures by Scale; the time nobody models — the
// client building, sending and reading a request, the round trip, the
// simulator's own parsing and tokenizing, a goroutine waking — passes at
// its real speed and is divided too, so it weighs 1/Scale times what it
// would in real time.
type Compressed struct {
	// Scale is wall time per run time (0 < Scale < 1).
	Scale float64 `json:"scale"`
	// UnscaledTTFTMs is the P50 over the headline window of the part of
	// TTFT outside the simulator's model (TTFT less its own queue and
	// prefill: ttft_rest_ms), in run time; UnscaledWallMs is the same in
	// wall time (× Scale), what real time would count.
	UnscaledTTFTMs float64 `json:"unscaled_ttft_ms"`
	UnscaledWallMs float64 `json:"unscaled_wall_ms"`
	// TTFTOverPct is how far that puts TTFT P50 above real time:
	// UnscaledTTFTMs × (1 − Scale) / TTFT P50, in percent (an estimate:
	// P50s do not add).
	TTFTOverPct float64 `json:"ttft_over_pct"`
	// DecodeWallMs is how long a request's decode lasted in wall time:
	// TPOT P50 × (output tokens P50 − 1) × Scale. Unscaled handling of
	// the first token (its response's headers) is a larger part of a
	// shorter decode, which reads faster than it was.
	DecodeWallMs float64 `json:"decode_wall_ms"`
	// Distorted names the results' figures the unscaled time distorts.
	Distorted []string `json:"distorted"`
}

// CompressedDistorts are the figures compressed time distorts: every
// latency the client measures and every rate derived from one. The
// server's own timings (its queue and prefill) and token counts are
// not.
var CompressedDistorts = []string{"ttft_ms", "e2e_ms", "itl_ms", "tpot_ms", "effective_tok_s", "decode_tok_s", "aggregate_output_tok_s", "ttft_rest_ms"}

// Compress records, for a run made at scale (0 < scale < 1), how the
// unscaled time distorted its headline window (Compressed) and says so
// in a note. At scale 1 (or 0: real time) it does nothing.
func (run *Run) Compress(scale float64) {
	if !(scale > 0 && scale < 1) {
		return
	}
	c := &Compressed{Scale: scale, Distorted: CompressedDistorts}
	run.Compressed = c
	speed := strconv.FormatFloat(1/scale, 'g', 3, 64)
	note := fmt.Sprintf("compressed time (--time-scale %s: the simulator and the client ran %s× faster): the time the simulator does not model — the client's request and its reading, the round trip, the simulator's own parsing and tokenizing — is not scaled, so it weighs %s× what it would in real time",
		numfmt.Plain(scale), speed, speed)
	w := run.Windows[run.Headline]
	if w != nil && w.TTFTRestMs != nil && w.TTFTRestMs.Count > 0 && w.TTFTMs != nil && w.TTFTMs.P50 > 0 {
		c.UnscaledTTFTMs = w.TTFTRestMs.P50
		c.UnscaledWallMs = w.TTFTRestMs.P50 * scale
		c.TTFTOverPct = 100 * c.UnscaledTTFTMs * (1 - scale) / w.TTFTMs.P50
		note += fmt.Sprintf(": here %s ms of wall time per request before the first token (TTFT rest p50, %s window), read as %s ms, puts TTFT p50 about %s%% above real time",
			numfmt.Sig(c.UnscaledWallMs), run.Headline, numfmt.Sig(c.UnscaledTTFTMs), strconv.FormatFloat(c.TTFTOverPct, 'f', 0, 64))
	}
	note += "; TTFT, E2E, effective and aggregate tok/s are distorted"
	if w != nil && w.TPOTMs != nil && w.TPOTMs.Count > 0 && w.OutputPerReq != nil && w.OutputPerReq.P50 > 1 {
		c.DecodeWallMs = w.TPOTMs.P50 * (w.OutputPerReq.P50 - 1) * scale
		note += fmt.Sprintf(", and decode tok/s, TPOT and ITL of decodes this short (%s ms of wall time, p50) read faster than they were", numfmt.Sig(c.DecodeWallMs))
	}
	run.Notes = append(run.Notes, note+". Run without --time-scale for figures real time reproduces")
}
