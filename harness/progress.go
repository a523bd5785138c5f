package harness

import (
	"fmt"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sixpin/sixpin/runner"
	"github.com/sixpin/sixpin/scenario"
)

// progress draws a live bar on the error stream while a run goes on: by
// elapsed time for a duration-bounded run, by requests otherwise. It reads
// the runner's counters every 250 ms and never touches the hot path.
type progress struct {
	done chan struct{}
	quit chan struct{}
}

func startProgress(cfg Config, sc *scenario.Scenario, rn *runner.Runner) *progress {
	p := &progress{done: make(chan struct{}), quit: make(chan struct{})}
	if !cfg.Progress {
		close(p.done)
		return p
	}
	byTime := sc.Duration > 0
	total := int64(sc.Requests)
	if byTime {
		total = int64(sc.Duration.D() / time.Second)
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(cfg.ErrOut),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(250*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
	)
	go func() {
		defer close(p.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var lastTokens int64
		last := time.Now()
		var rate float64
		for {
			select {
			case <-p.quit:
				_ = bar.Finish()
				return
			case now := <-tick.C:
				st := rn.Stats()
				tokens := st.OutputTokens.Load()
				if dt := now.Sub(last).Seconds(); dt >= 2 {
					rate = float64(tokens-lastTokens) / dt
					lastTokens, last = tokens, now
				}
				bar.Describe(describe(st, rate))
				if byTime {
					_ = bar.Set64(min(int64(time.Since(rn.Start())/time.Second), total))
				} else {
					_ = bar.Set64(st.Done.Load())
				}
			}
		}
	}()
	return p
}

// describe is the bar's label: live counts, and the recent aggregate token
// rate, labelled as what it is (completed requests' tokens, all streams).
func describe(st *runner.Stats, rate float64) string {
	return fmt.Sprintf("%d done, %d failed, %d in flight, ~%.0f tok/s aggregate (completed)",
		st.Done.Load(), st.Failed.Load(), st.InFlight.Load(), rate)
}

func (p *progress) finish() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.quit)
	<-p.done
}
