package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/headless"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

func htmlReport(t *testing.T, paths ...string) []byte {
	t.Helper()
	ins := load(t, paths...)
	return render(t, func(w io.Writer) error { return WriteHTML(w, ins) })
}

// The page is self-contained (no scripts, no fetches) and well-formed as
// XML, so that every SVG parses.
func TestHTMLSelfContained(t *testing.T) {
	page := htmlReport(t, fixBase, fixInstant)
	s := string(page)
	for _, bad := range []string{"<script", "src=", "@import", "url(", "https://", "<link rel=\"stylesheet\""} {
		if strings.Contains(s, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(s, -1) {
		if !strings.HasPrefix(m[1], "data:") && !strings.HasPrefix(m[1], "#") {
			t.Errorf("page links to %q", m[1])
		}
	}
	if n := strings.Count(s, "<svg "); n != 2*6 {
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
// (script errors, bad SVG attributes, failed loads all log there).
func TestHTMLRendersInChromium(t *testing.T) {
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, htmlReport(t, fixBase, fixInstant, fixC1), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(headless.Flags(dir), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errOut.String())
	}
	for _, line := range strings.Split(errOut.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") || strings.Contains(line, "Failed to load") {
			t.Errorf("console: %s", line)
		}
	}
	dom := out.String()
	if n := strings.Count(dom, "<svg "); n != 3*6 {
		t.Errorf("rendered DOM has %d charts, want 18", n)
	}
	for _, want := range []string{"<h1>sixpin report: 3 runs</h1>", "Pin card", "smoke-c1-8k"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
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
// every point of its charts.
func TestSetHTML(t *testing.T) {
	for _, c := range []struct {
		file   string
		charts int
		labels []string
	}{
		{fixSweep, 1, []string{"concurrency.streams = 1", "concurrency.streams = 4"}},
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
			if n := strings.Count(s, "<svg "); n != c.charts {
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
