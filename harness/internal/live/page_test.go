package live

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/headless"
)

// In Chromium, the SIMULATED badge shows on a run against the built-in
// simulator and not on a run against a real endpoint; nothing the page
// marks hidden is drawn, whatever its style sheet says of it.
func TestPageBadgeInChromium(t *testing.T) {
	b, ctx := browser(t)
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

// With the server's series in the snapshot, the page charts them beside
// the client's — KV usage, requests running and waiting, the server's
// token rates — each line keyed above its plot with no text over another,
// and figures read with thousands separated. With SIXPIN_SCREENSHOTS=DIR
// set, the page's screenshot is saved there (live.png).
func TestPageServerChartsInChromium(t *testing.T) {
	b, ctx := browser(t)
	ramp := func(n int, f func(i int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	var secs []Second
	for i := range 30 {
		secs = append(secs, Second{AtS: float64(i + 1), AggregateTokS: 12000 + 100*float64(i), InFlight: 64, PerStreamTokS: 190})
	}
	s, err := Start("127.0.0.1:0", func() Snapshot {
		return Snapshot{State: "running", Scenario: "smoke", Target: "t", Seq: 1, Issued: 123456, Done: 123000, OutputTokens: 98765432,
			Seconds: secs, Errors: map[string]int64{},
			Server: []ServerSeries{
				{Name: "KV cache usage", Unit: "%", Values: ramp(30, func(i int) float64 { return float64(2 * i) })},
				{Name: "requests running", Unit: "requests", Values: ramp(30, func(int) float64 { return 48 })},
				{Name: "requests waiting", Unit: "requests", Values: ramp(30, func(i int) float64 { return float64(i % 7) })},
				{Name: "server generation", Unit: "tok/s", Values: ramp(29, func(i int) float64 { return 11900 + float64(i) })},
			}}
	}, WithInterval(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := b.Navigate(ctx, s.URL()); err != nil {
		t.Fatal(err)
	}
	type box struct {
		S              string
		X0, Y0, X1, Y1 float64
	}
	var page struct {
		Seq      string
		Charts   map[string]int // chart id → paths drawn, for those shown
		Texts    map[string][]box
		Tokens   string
		Requests string
	}
	deadline := time.Now().Add(time.Minute)
	for page.Seq == "" || page.Seq == "0" || len(page.Charts) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the page drew no server charts: %+v", page)
		}
		time.Sleep(20 * time.Millisecond)
		if err := b.Eval(ctx, `(() => { const charts = {}, texts = {};
			document.querySelectorAll("svg.chart").forEach((svg) => { if (svg.closest("figure").hidden) return;
				charts[svg.id] = svg.querySelectorAll("path").length;
				texts[svg.id] = [...svg.querySelectorAll("text")].map((t) => { const r = t.getBoundingClientRect();
					return {S: t.textContent, X0: r.left, Y0: r.top, X1: r.right, Y1: r.bottom}; }); });
			return {Seq: document.body.dataset.seq, Charts: charts, Texts: texts,
				Tokens: document.getElementById("tokens").textContent, Requests: document.getElementById("requests").textContent}; })()`, &page); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]int{"chart-kv": 1, "chart-queue": 2, "chart-server-rate": 1, "chart-agg": 1, "chart-stream": 2} {
		if page.Charts[id] != want {
			t.Errorf("%s: %d lines, want %d", id, page.Charts[id], want)
		}
	}
	for id, texts := range page.Texts {
		for j, a := range texts {
			for _, o := range texts[j+1:] {
				if a.X0 < o.X1 && o.X0 < a.X1 && a.Y0 < o.Y1 && o.Y0 < a.Y1 {
					t.Errorf("%s: %q and %q overlap", id, a.S, o.S)
				}
			}
		}
	}
	if page.Tokens != "98,765,432" || !strings.Contains(page.Requests, "123,000 done of 123,456") {
		t.Errorf("figures read %q and %q, want thousands separated", page.Tokens, page.Requests)
	}
	if dir := os.Getenv("SIXPIN_SCREENSHOTS"); dir != "" {
		png, err := b.Screenshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "live.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Navigate(ctx, "about:blank"); err != nil {
		t.Fatal(err)
	}
	if msgs := b.Console(); len(msgs) > 0 {
		t.Errorf("the live page logged to the console:\n%s", strings.Join(msgs, "\n"))
	}
}

// browser starts a headless Chromium for t (skipping t without one); it
// ends with t.
func browser(t *testing.T) (*headless.Browser, context.Context) {
	t.Helper()
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b, err := headless.Start(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, ctx
}
