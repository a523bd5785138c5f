package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/uplot"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

func htmlReport(t *testing.T, paths ...string) []byte {
	t.Helper()
	ins := load(t, paths...)
	return render(t, func(w io.Writer) error { return WriteHTML(w, ins) })
}

// The page is self-contained — its scripts inline (uPlot, vendored, and
// the charts' own), nothing fetched or linked — and well-formed as XML, so
// that every SVG parses.
func TestHTMLSelfContained(t *testing.T) {
	page := htmlReport(t, fixBase, fixInstant)
	s := string(page)
	if n := strings.Count(s, uplot.Script); n != 1 {
		t.Errorf("uPlot is in the page %d times, want once", n)
	}
	// uPlot's own banner names its home; nothing else may.
	rest := strings.Replace(s, uplot.Script, "", 1)
	for _, code := range []string{rest, uplot.Script} {
		for _, bad := range []string{"src=", "@import", "fetch(", "XMLHttpRequest", "WebSocket", "EventSource", "sendBeacon", "import(", "<link rel=\"stylesheet\""} {
			if strings.Contains(code, bad) {
				t.Errorf("page contains %q", bad)
			}
		}
	}
	for _, bad := range []string{"https://", "url(h", "url(/", "url(."} {
		if strings.Contains(rest, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "data:") && !strings.HasPrefix(m[1], "#") {
			t.Errorf("page links to %q", m[1])
		}
	}
	if n := strings.Count(s, "<svg xmlns="); n != 2*6 {
		t.Errorf("%d charts, want 6 per run", n)
	}
	for _, want := range []string{"Pin card", "✗", "Not verified: model, kv_cache", "TTFT by percentile", "ITL by percentile", "E2E by percentile",
		"Aggregate output tok/s over time", "steady window", "Per stream vs aggregate", "Errors over time", "SIMULATED", "99.9%"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	wellFormed(t, page)
}

func TestPercentileLabels(t *testing.T) {
	for x, want := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		if got := percentileLabel(float64(x)); got != want {
			t.Errorf("percentileLabel(%d) = %q, want %q", x, got, want)
		}
	}
}

// The HTML report renders in headless Chromium without a console message
// (script errors, bad SVG attributes, failed loads all log there): uPlot
// draws every interactive chart, hovering a chart gives its series'
// values, and no two texts of a chart — its title, legend entries, the
// windows' key, its caption — overlap; nor, with the scripts' charts put
// away, do the texts of the SVG each stands on (ticks, axis labels,
// legend, reference lines' labels). Pages: three closed-loop runs at
// once, an open loop, agentic sessions against a rate-limited cloud, and
// a thousand streams. With SIXPIN_SCREENSHOTS=DIR set, each page's
// screenshot is saved there (report-*.png), for a person to look at.
func TestHTMLRendersInChromium(t *testing.T) {
	t.Parallel()
	b, ctx, dir := chromium(t)
	shots := os.Getenv("SIXPIN_SCREENSHOTS")
	for i, fixes := range [][]string{{fixBase, fixInstant, fixC1}, {fixOpen}, {fixAgentic}, {fixC1000}} {
		names := strings.TrimSuffix(filepath.Base(fixes[0]), ".json")
		if len(fixes) > 1 {
			names = "three-runs"
		}
		page := filepath.Join(dir, fmt.Sprintf("report-%d.html", i))
		if err := os.WriteFile(page, htmlReport(t, fixes...), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Navigate(ctx, "file://"+page); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Figures, Live, Canvases int
			Hover                   []string
			Live_, SVG              []textBoxes
		}
		if err := b.Eval(ctx, `(() => {
			const boxes = (sel, root) => [...root.querySelectorAll(sel)].filter(e => e.getClientRects().length && e.textContent.trim())
				.map(e => { const r = e.getBoundingClientRect(); return {S: e.textContent.trim().slice(0, 60), X0: r.left, Y0: r.top, X1: r.right, Y1: r.bottom}; });
			const figs = [...document.querySelectorAll("figure.ufig")];
			// Hover the first chart's middle: its legend gives values.
			const over = figs[0].querySelector(".u-over"), r = over.getBoundingClientRect();
			over.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true}));
			const hover = [...figs[0].querySelectorAll(".u-legend .u-value")].map(e => e.textContent);
			const live = figs.map(f => ({Texts: boxes(".u-title, .u-legend th, .bandkey, figcaption", f)}));
			figs.forEach(f => f.classList.remove("live"));
			const svg = [...document.querySelectorAll("svg.chart")].map(s => ({Texts: boxes("text", s)}));
			return {Figures: figs.length, Live: document.querySelectorAll("figure.ufig.live").length,
				Canvases: document.querySelectorAll("figure.ufig .uplot canvas").length, Hover: hover, Live_: live, SVG: svg};
		})()`, &got); err != nil {
			t.Fatal(err)
		}
		name := strings.Join(fixes, ", ")
		if shots != "" {
			if err := b.Eval(ctx, `document.querySelectorAll("figure.ufig").forEach(f => f.classList.add("live"))`, nil); err != nil {
				t.Fatal(err)
			}
			saveScreenshot(t, ctx, b, "report-"+names+".png")
		}
		if got.Figures < 5*len(fixes) || got.Canvases != got.Figures {
			t.Errorf("%s: %d interactive figures, %d drawn by uPlot", name, got.Figures, got.Canvases)
		}
		if len(got.Hover) < 2 || !slices.ContainsFunc(got.Hover, func(v string) bool { return v != "–" && v != "" }) {
			t.Errorf("%s: hovering the first chart gives %q", name, got.Hover)
		}
		for k, f := range got.Live_ {
			noOverlap(t, fmt.Sprintf("%s, chart %d", name, k), f.Texts)
		}
		for k, f := range got.SVG {
			noOverlap(t, fmt.Sprintf("%s, SVG chart %d", name, k), f.Texts)
		}
	}
	for _, m := range b.Console() {
		t.Errorf("console: %s", m)
	}
}

// textBoxes are a chart's texts as drawn.
type textBoxes struct {
	Texts []struct {
		S              string
		X0, Y0, X1, Y1 float64
	}
}

// noOverlap fails for each two texts whose boxes intersect.
func noOverlap(t *testing.T, where string, texts []struct {
	S              string
	X0, Y0, X1, Y1 float64
}) {
	t.Helper()
	for j, a := range texts {
		for _, o := range texts[j+1:] {
			if a.X0 < o.X1 && o.X0 < a.X1 && a.Y0 < o.Y1 && o.Y0 < a.Y1 {
				t.Errorf("%s: %q and %q overlap", where, a.S, o.S)
			}
		}
	}
}

// A results file without histograms says so in the HTML, where the
// percentile curves would be.
func TestHTMLSaysWhatTheFileLacks(t *testing.T) {
	data, err := os.ReadFile(fixBase)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "histograms")
	bare, _ := json.Marshal(m)
	run, err := results.Read("bare.json", bare)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteHTML(&b, []Input{{Name: "bare.json", Run: run}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), results.NoteNoHistograms) {
		t.Error("the HTML does not say that the file holds no histograms")
	}
}

// wellFormed fails unless page, past its doctype, parses as XML (so that
// every SVG in it does).
func wellFormed(t *testing.T, page []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(bytes.TrimPrefix(page, []byte("<!DOCTYPE html>\n"))))
	dec.Strict = true
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("page is not well-formed: %v", err)
		}
	}
}

// A set's page is self-contained and well-formed like a run's, shows its
// tables as HTML (not Markdown in a <pre>, as it once did) and labels
// every point of its charts; a sweep's latency–throughput curve puts
// each point's TTFT p90 at the aggregate it reached.
func TestSetHTML(t *testing.T) {
	t.Run("latency-throughput", func(t *testing.T) {
		set := loadSet(t, fixSweep).Set
		c := latencyThroughputChart(verdict.Points(set))
		if c == nil || len(c.series) != 2 || c.y2 == nil {
			t.Fatalf("sweep curve %+v", c)
		}
		for i, r := range set.Runs {
			w := r.Windows[r.Headline]
			if p := c.series[0].pts[i]; p[0] != w.AggregateOutputTokS || p[1] != w.TTFTMs.P90 {
				t.Errorf("point %d at %v, want (%v, %v)", i, p, w.AggregateOutputTokS, w.TTFTMs.P90)
			}
			if p := c.series[1].pts[i]; p[1] != w.AggregatePerStreamTokS {
				t.Errorf("point %d per stream %v, want %v", i, p[1], w.AggregatePerStreamTokS)
			}
		}
	})
	for _, c := range []struct {
		file   string
		charts int
		labels []string
	}{
		{fixSweep, 2, []string{"concurrency.streams = 1", "concurrency.streams = 4"}}, // and the latency–throughput curve
		{fixRepeat, 1, []string{"seed 7", "seed 8"}},
		{fixBakeoff, 1, []string{"profile sim-local-27b", "profile sim-local-27b-slow"}},
	} {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			page := render(t, func(w io.Writer) error { return RenderSet(w, FormatHTML, loadSet(t, c.file)) })
			s := string(page)
			for _, bad := range []string{"<script", "src=", "@import", "url(", "https://", "<pre>", "| --- |"} {
				if strings.Contains(s, bad) {
					t.Errorf("page contains %q", bad)
				}
			}
			wellFormed(t, page)
			if n := strings.Count(s, "<svg xmlns="); n != c.charts {
				t.Errorf("%d charts, want %d", n, c.charts)
			}
			for _, l := range c.labels {
				if !strings.Contains(s, `class="pl">`+l+"<") && !strings.Contains(s, `class="pl" text-anchor="end">`+l+"<") {
					t.Errorf("no chart point labelled %q", l)
				}
			}
			if !strings.Contains(s, "<table class=\"pins\">") || !strings.Contains(s, "<thead><tr><th>") {
				t.Error("page lacks its tables")
			}
		})
	}
}

// The window table splits TTFT by the server's own timings when it gave
// them, and has no such rows when it did not.
func TestHTMLTTFTSplit(t *testing.T) {
	run, err := results.ReadFile(fixBase)
	if err != nil {
		t.Fatal(err)
	}
	page := func() string {
		var b strings.Builder
		if err := WriteHTML(&b, []Input{{Name: "base.json", Run: run}}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if strings.Contains(page(), "TTFT: server prefill ms") {
		t.Error("TTFT split rows for a run without server timings")
	}
	w := run.Windows[results.WindowSteady]
	w.ServerPrefillMs, w.TTFTRestMs = &results.Dist{Count: 3, P50: 123.4, P90: 150}, &results.Dist{Count: 3, P50: 7.5, P90: 9}
	s := page()
	for _, want := range []string{"TTFT: server prefill ms p50</td>", ">123<", "TTFT: the rest ms", ">7.50<", "TTFT: server queue ms p50"} {
		if !strings.Contains(s, want) {
			t.Errorf("the HTML lacks %q", want)
		}
	}
}

// Every block of the text summary is in the page, in the summary's words
// and order — the windows it details, then each section the run has —
// from a run of each workload kind: a closed loop, one whose server
// queues, an open loop, and agentic sessions against a rate-limited,
// priced cloud.
func TestHTMLHasEverySummarySection(t *testing.T) {
	t.Parallel()
	for _, fix := range []string{fixBase, fixQueued, fixOpen, fixAgentic} {
		in := load(t, fix)[0]
		run := in.Run
		page := string(htmlReport(t, fix))
		var blocks []string // each block's text, in the summary's order
		for _, name := range summaryWindows(run) {
			var b strings.Builder
			writeWindow(&numfmt.Printer{W: &b}, run, name, run.Windows[name])
			blocks = append(blocks, b.String())
		}
		for _, sec := range SummarySections {
			var b strings.Builder
			if err := sec.Write(&b, run); err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, b.String())
		}
		var text bytes.Buffer
		if err := WriteSummary(&text, run); err != nil {
			t.Fatal(err)
		}
		at, sections := 0, 0
		for _, block := range blocks {
			if block == "" {
				continue
			}
			sections++
			if !strings.Contains(text.String(), block) {
				t.Errorf("%s: the text summary does not print the block %q whole", fix, firstLine(block))
			}
			for _, line := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
				want := html.EscapeString(strings.TrimPrefix(line, "Note: "))
				i := strings.Index(page[at:], want)
				if i < 0 {
					t.Errorf("%s: the page lacks, or has out of the summary's order, %q", fix, line)
					continue
				}
				at += i + len(want)
			}
		}
		if want := map[string]int{fixAgentic: 11}[fix]; want > 0 && sections < want {
			t.Errorf("%s: %d blocks, want at least %d (sessions, context depths, rate limits and cost among them)", fix, sections, want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
