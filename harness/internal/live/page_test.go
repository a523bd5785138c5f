package live

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/headless"
)

// In Chromium, the SIMULATED badge shows on a run against the built-in
// simulator and not on a run against a real endpoint; nothing the page
// marks hidden is drawn, whatever its style sheet says of it.
func TestPageBadgeInChromium(t *testing.T) {
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := headless.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, c := range []struct {
		name      string
		simulated bool
	}{{"built-in simulator", true}, {"real endpoint", false}} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Start("127.0.0.1:0", func() Snapshot {
				return Snapshot{State: "running", Scenario: "smoke", Target: c.name, Simulated: c.simulated}
			}, WithInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := b.Navigate(ctx, s.URL()); err != nil {
				t.Fatal(err)
			}
			var page struct {
				Seq     string
				Hidden  bool
				Display string
				Width   float64
				Drawn   []string // elements marked hidden yet drawn
			}
			deadline := time.Now().Add(time.Minute)
			for page.Seq == "" || page.Seq == "0" {
				if time.Now().After(deadline) {
					t.Fatal("the page rendered no snapshot")
				}
				time.Sleep(20 * time.Millisecond)
				if err := b.Eval(ctx, `(() => { const e = document.getElementById("sim");
					return {Seq: document.body.dataset.seq, Hidden: e.hidden, Display: getComputedStyle(e).display,
						Width: e.getBoundingClientRect().width,
						Drawn: [...document.querySelectorAll("[hidden]")].filter((x) => getComputedStyle(x).display !== "none").map((x) => x.id || x.tagName)}; })()`, &page); err != nil {
					t.Fatal(err)
				}
			}
			shown := page.Display != "none" && page.Width > 0
			if shown != c.simulated || page.Hidden == c.simulated {
				t.Errorf("SIMULATED badge shown %v (hidden attribute %v, display %q, width %v), want shown %v",
					shown, page.Hidden, page.Display, page.Width, c.simulated)
			}
			if len(page.Drawn) > 0 {
				t.Errorf("elements marked hidden but drawn: %s", strings.Join(page.Drawn, ", "))
			}
			// Leave the page before its server closes: its event stream
			// would log the refused reconnection.
			if err := b.Navigate(ctx, "about:blank"); err != nil {
				t.Fatal(err)
			}
		})
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("the live page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}
