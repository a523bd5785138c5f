package harness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Calibration bounds: the load is short, whatever the scenario.
const (
	calibrateMaxStreams = 256
	calibrateMaxOutput  = 512
	calibrateMaxPrompt  = 8192
	calibrateRounds     = 2
	// CalibrateFlagPct flags a run whose client floor is more than this
	// share of its own TTFT p50, in percent.
	CalibrateFlagPct = 5
)

// calibrate measures sixpin's own floor before the measurement: the
// plan's concurrency (at most 256 streams), each sending calibrateRounds
// requests of the plan's mean lengths (at most 8,192 prompt and 512
// output tokens), against an in-process simulator that answers at once
// over loopback (sim-instant: every token as fast as the connection
// takes it). Its TTFT and ITL are then what sixpin and the loopback add.
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
	var mu sync.Mutex
	ttft := hdrhistogram.New(1, histMaxUS, 3) // µs
	itl := hdrhistogram.New(1, histMaxUS, 3)
	var wg sync.WaitGroup
	failed := 0
	for s := range streams {
		wg.Go(func() {
			for k := range calibrateRounds {
				rec := c.Stream(ctx, endpoint.Call{Req: scenario.Request{Index: s*calibrateRounds + k, PromptTokens: prompt, OutputTokens: out},
					Msgs: msgs, Scheduled: clk.Since(), Clock: clk, Cut: endpoint.ErrCutAtOnce})
				mu.Lock()
				if d, ok := rec.TTFT(); ok && !rec.Failed() {
					_ = ttft.RecordValue(max(d.Microseconds(), 1))
					rec.ITLs(func(g time.Duration, k int) { _ = itl.RecordValues(max(g.Microseconds()/int64(k), 1), int64(k)) })
				} else {
					failed++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	cal := &results.Calibration{Streams: streams, Requests: streams * calibrateRounds, Failed: failed,
		PromptTokens: prompt, OutputTokens: out,
		TTFTMs: results.Summarize(results.MetricTTFT, ttft), ITLMs: results.Summarize(results.MetricITL, itl)}
	if cal.TTFTMs == nil {
		return nil, fmt.Errorf("calibration: none of its %d requests succeeded", cal.Requests)
	}
	return cal, nil
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
	floor := cal.TTFTMs.P50
	if scale > 0 && scale < 1 {
		floor /= scale
	}
	cal.OverheadPctOfTTFT = 100 * floor / w.TTFTMs.P50
	cal.Flagged = cal.OverheadPctOfTTFT > CalibrateFlagPct
	if cal.Flagged {
		run.Notes = append(run.Notes, fmt.Sprintf("sixpin's own floor (--calibrate: TTFT p50 %.3g ms against a loopback server) is %.3g%% of this run's TTFT p50: the client's overhead is part of these figures",
			cal.TTFTMs.P50, cal.OverheadPctOfTTFT))
	}
}
