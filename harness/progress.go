package harness

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// progressEvery is how often the progress line is redrawn.
const progressEvery = 250 * time.Millisecond

// rateSpan is the trailing span (wall-clock time) the progress line's
// token rate is measured over.
const rateSpan = 3 * time.Second

// progress draws one status line on the error stream while a run goes on
// and leaves a final one when it ends. It reads the run's watch (the
// runner's live counters), never the hot path: the token rate counts
// tokens as they stream, and what is left is the scenario's own clock —
// its duration, or the requests it has still to issue — never a guess.
type progress struct {
	w    *watch
	out  io.Writer
	quit chan struct{}
	done chan struct{}
}

// progressState is what one progress line says.
type progressState struct {
	Step string
	// Elapsed is the run's own clock (run time).
	Elapsed time.Duration
	// Duration and Requests are the run's bounds (0: none); Sessions an
	// agentic run's.
	Duration time.Duration
	Requests int
	Sessions int
	Issued   int64
	Done     int64
	Failed   int64
	InFlight int64
	Tokens   int64
	// RateTokS is the aggregate output rate over the last rateSpan,
	// tokens as they stream; negative until it is measured.
	RateTokS float64
}

func startProgress(cfg Config, w *watch) *progress {
	p := &progress{w: w, out: cfg.ErrOut, quit: make(chan struct{}), done: make(chan struct{})}
	if !cfg.Progress {
		close(p.done)
		return p
	}
	go p.loop()
	return p
}

// sample is one reading of the live token count.
type sample struct {
	wall   time.Time
	run    time.Duration
	tokens int64
}

func (p *progress) loop() {
	defer close(p.done)
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	var ring []sample
	width := termWidth(p.out)
	for {
		select {
		case <-p.quit:
			fmt.Fprintf(p.out, "\r\x1b[K%s\n", finalLine(p.state(-1)))
			return
		case now := <-tick.C:
			s := sample{wall: now, run: p.w.elapsed(), tokens: p.w.stats.LiveOutputTokens()}
			ring = append(ring, s)
			for len(ring) > 2 && now.Sub(ring[1].wall) >= rateSpan {
				ring = ring[1:]
			}
			rate := -1.0
			if first := ring[0]; len(ring) > 1 && s.run > first.run {
				rate = max(float64(s.tokens-first.tokens), 0) / (s.run - first.run).Seconds()
			}
			fmt.Fprintf(p.out, "\r%s\x1b[K", fit(progressLine(p.state(rate)), width))
		}
	}
}

// state reads the run's counters now.
func (p *progress) state(rate float64) progressState {
	w := p.w
	st := w.stats
	return progressState{Step: w.step, Elapsed: w.elapsed(), Duration: w.duration, Requests: w.requests, Sessions: w.sessions,
		Issued: st.Issued.Load(), Done: st.Done.Load(), Failed: st.Failed.Load(), InFlight: st.InFlight.Load(),
		Tokens: st.LiveOutputTokens(), RateTokS: rate}
}

// finish stops the line and leaves the final one.
func (p *progress) finish() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.quit)
	<-p.done
}

// progressLine is the live line: where the run is on its own clock, how
// much is left, the aggregate token rate as tokens stream, and the
// counts.
func progressLine(s progressState) string {
	var b strings.Builder
	if s.Step != "" {
		b.WriteString(s.Step + " · ")
	}
	frac := -1.0
	switch {
	case s.Duration > 0:
		fmt.Fprintf(&b, "%s of %s", clock(s.Elapsed), clock(s.Duration))
		frac = s.Elapsed.Seconds() / s.Duration.Seconds()
	case s.Requests > 0:
		fmt.Fprintf(&b, "%s of %s requests done · %s", numfmt.Int(s.Done), numfmt.Int(s.Requests), clock(s.Elapsed))
		frac = float64(s.Done) / float64(s.Requests)
	default:
		b.WriteString(clock(s.Elapsed))
	}
	if frac >= 0 {
		frac = min(frac, 1)
		const cells = 20
		full := int(frac * cells)
		fmt.Fprintf(&b, " [%s%s] %d%%", strings.Repeat("█", full), strings.Repeat("░", cells-full), int(frac*100))
	}
	switch {
	case s.Duration > 0:
		fmt.Fprintf(&b, " · %s left", clock(max(s.Duration-s.Elapsed, 0)))
	case s.Requests > 0:
		fmt.Fprintf(&b, " · %s to issue", numfmt.Int(max(int64(s.Requests)-s.Issued, 0)))
	case s.Sessions > 0:
		fmt.Fprintf(&b, " · until %s", numfmt.Count(s.Sessions, "session ends", "sessions end"))
	}
	if s.RateTokS >= 0 {
		fmt.Fprintf(&b, " · %s tok/s aggregate", numfmt.Thousands(s.RateTokS))
	}
	fmt.Fprintf(&b, " · %s in flight · %s done · %s", numfmt.Int(s.InFlight), numfmt.Int(s.Done), numfmt.Count(s.Failed, "error", "errors"))
	return b.String()
}

// finalLine is the line the run leaves: its elapsed time, requests,
// output tokens and errors.
func finalLine(s progressState) string {
	var b strings.Builder
	if s.Step != "" {
		b.WriteString(s.Step + " · ")
	}
	fmt.Fprintf(&b, "done in %s: %s, %s, %s", clock(s.Elapsed), numfmt.Count(s.Done, "request", "requests"),
		numfmt.Count(s.Tokens, "output token", "output tokens"), numfmt.Count(s.Failed, "error", "errors"))
	return b.String()
}

// clock is d as 42s, 3m07s or 1h02m03s.
func clock(d time.Duration) string {
	t := int64(d.Round(time.Second) / time.Second)
	h, m, sec := t/3600, t/60%60, t%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, sec)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// termWidth is out's terminal width, 0 when it is not a terminal.
func termWidth(out io.Writer) int {
	f, ok := out.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// fit cuts s to less than width characters (0: as it is), so that the
// line never wraps and \r redraws it whole.
func fit(s string, width int) string {
	if width <= 1 || utf8.RuneCountInString(s) < width {
		return s
	}
	r := []rune(s)
	return string(r[:width-2]) + "…"
}
