package harness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Calibration bounds: the load is short, whatever the scenario.
const (
	calibrateMaxStreams = 256
	calibrateMaxOutput  = 512
	calibrateMaxPrompt  = 8192
	// calibrateRounds rounds are recorded, one after the other, after a
	// warm-up round that is not; in each round every stream sends its
	// share of calibrateRoundRequests (at least one) and goes on sending
	// until the round has lasted calibrateRoundTime, so that a round's
	// p50 is not one moment of a busy machine.
	calibrateRounds        = 7
	calibrateRoundRequests = 32
	calibrateRoundTime     = 200 * time.Millisecond
	// CalibrateFlagPct flags a run whose client floor is more than this
	// share of its own TTFT p50, in percent.
	CalibrateFlagPct = 5
)

// calibrate measures sixpin's own floor before the measurement: the
// plan's concurrency (at most 256 streams) sends requests of the plan's
// mean lengths (at most 8,192 prompt and 512 output tokens) against an
// in-process simulator that answers at once over loopback (sim-instant:
// every token as fast as the connection takes it). Their TTFT and ITL are
// then what sixpin and the loopback add. The load comes in rounds of at
// least calibrateRoundTime, each ended before the next begins: a warm-up
// round (connections opened, code paths run once) that is not recorded,
// then calibrateRounds rounds whose TTFT p50s' median is the floor
// (calibrationFloor): a burst of other work on the machine moves one
// round, not the floor, and the rounds' spread says how steady it was.
func calibrate(ctx context.Context, sc *scenario.Scenario, plan *scenario.Plan) (*results.Calibration, error) {
	p, err := profiles.Resolve("sim-instant")
	if err != nil {
		return nil, err
	}
	sm, err := StartSimulator(p, "127.0.0.1:0", 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = sm.Close(time.Second) }()
	streams := plan.Streams()
	if sc.Pins.Concurrency.Mode == scenario.ModeOpen {
		streams = plan.MaxInFlight()
	}
	streams = min(max(streams, 1), calibrateMaxStreams)
	e := plan.Expected()
	prompt := min(max(int(e.MeanPromptTokens), 1), calibrateMaxPrompt)
	out := min(max(int(e.MeanOutputTokens), 2), calibrateMaxOutput)
	c, err := endpoint.New(endpoint.Target{BaseURL: sm.URL, Model: sm.Model, OutputControl: endpoint.ControlIgnoreEOS},
		endpoint.Options{Conns: streams, Exact: true})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	msgs := endpoint.UserMessage(strings.TrimSpace(strings.Repeat("word ", prompt)))
	clk := endpoint.Clock{Start: time.Now()}
	perStream := max((calibrateRoundRequests+streams-1)/streams, 1)
	rounds := make([]calibrationRound, 1+calibrateRounds)
	var index atomic.Int64
	for r := range rounds {
		round := calibrationRound{ttft: hdrhistogram.New(1, histMaxUS, 3), itl: hdrhistogram.New(1, histMaxUS, 3)}
		var mu sync.Mutex
		var wg sync.WaitGroup
		end := time.Now().Add(calibrateRoundTime)
		for range streams {
			wg.Go(func() {
				for k := 0; (k < perStream || time.Now().Before(end)) && ctx.Err() == nil; k++ {
					rec := c.Stream(ctx, endpoint.Call{Req: record.Request{Index: int(index.Add(1) - 1), PromptTokens: prompt, OutputTokens: out},
						Msgs: msgs, Scheduled: clk.Since(), Clock: clk, Cut: endpoint.ErrCutAtOnce})
					mu.Lock()
					round.sent++
					if d, ok := rec.TTFT(); ok && !rec.Failed() {
						_ = round.ttft.RecordValue(max(d.Microseconds(), 1))
						rec.ITLs(func(g time.Duration, k int) { _ = round.itl.RecordValues(max(g.Microseconds()/int64(k), 1), int64(k)) })
					} else {
						round.failed++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rounds[r] = round
	}
	cal := &results.Calibration{Streams: streams, PromptTokens: prompt, OutputTokens: out}
	calibrationFloor(cal, rounds)
	if cal.TTFTMs == nil {
		return nil, fmt.Errorf("calibration: none of its %d requests succeeded", cal.Requests)
	}
	return cal, nil
}

// calibrationRound is what one round of the calibration recorded: TTFT
// and ITL, µs, and its requests sent and failed.
type calibrationRound struct {
	ttft, itl    *hdrhistogram.Histogram
	sent, failed int
}

// calibrationFloor sets cal's figures from its rounds, rounds[0] being
// the warm-up, left out of all of them but WarmupRequests: Requests,
// Failed, TTFTMs and ITLMs pool the other rounds; RoundTTFTP50Ms are
// their TTFT p50s (a round without a success has none), FloorTTFTMs the
// median of those, and SpreadPct their range (max − min) as a percentage
// of that median.
func calibrationFloor(cal *results.Calibration, rounds []calibrationRound) {
	if len(rounds) < 2 {
		return
	}
	ttft, itl := hdrhistogram.New(1, histMaxUS, 3), hdrhistogram.New(1, histMaxUS, 3)
	cal.Rounds, cal.WarmupRequests, cal.Requests, cal.Failed, cal.RoundTTFTP50Ms = len(rounds)-1, rounds[0].sent, 0, 0, nil
	for _, r := range rounds[1:] {
		ttft.Merge(r.ttft)
		itl.Merge(r.itl)
		cal.Requests += r.sent
		cal.Failed += r.failed
		if d := results.Summarize(results.HistTTFT, r.ttft); d != nil {
			cal.RoundTTFTP50Ms = append(cal.RoundTTFTP50Ms, d.P50)
		}
	}
	cal.TTFTMs, cal.ITLMs = results.Summarize(results.HistTTFT, ttft), results.Summarize(results.HistITL, itl)
	p50s := slices.Sorted(slices.Values(cal.RoundTTFTP50Ms))
	if len(p50s) == 0 {
		return
	}
	cal.FloorTTFTMs = stats.Percentile(len(p50s), func(i int) float64 { return p50s[i] }, 50)
	if cal.FloorTTFTMs > 0 {
		cal.SpreadPct = 100 * (p50s[len(p50s)-1] - p50s[0]) / cal.FloorTTFTMs
	}
}

// judgeCalibration compares the floor with the run's own TTFT p50 in its
// headline window, and flags the run when the floor is more than
// CalibrateFlagPct of it. The floor is wall-clock time; in a compressed
// run (scale < 1) it counts 1/scale times in run time.
func judgeCalibration(run *results.Run, scale float64) {
	cal, w := run.Calibration, run.Windows[run.Headline]
	if cal == nil || cal.TTFTMs == nil || w == nil || w.TTFTMs == nil || w.TTFTMs.P50 <= 0 {
		return
	}
	floor := cal.Floor()
	if scale > 0 && scale < 1 {
		floor /= scale
	}
	cal.OverheadPctOfTTFT = 100 * floor / w.TTFTMs.P50
	cal.Flagged = cal.OverheadPctOfTTFT > CalibrateFlagPct
	if cal.Flagged {
		run.Notes = append(run.Notes, fmt.Sprintf("sixpin's own floor (--calibrate: TTFT p50 %.3g ms against a loopback server) is %.3g%% of this run's TTFT p50: the client's overhead is part of these figures",
			cal.Floor(), cal.OverheadPctOfTTFT))
	}
}
