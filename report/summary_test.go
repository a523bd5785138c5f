package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/verdict"
)

// A server that streams no usage leaves the prompt and mix unobserved;
// the card and the window lines say so instead of printing a ratio of 0.
func TestSummaryWithoutUsage(t *testing.T) {
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows:  map[string]*results.Window{results.WindowSteady: {Completed: 4, EndS: 10, PrefillShare: 0.25}},
	}
	run.Pins.Mix.Declared = scenario.MixDeclared{InputOutputRatio: 40}
	run.Pins.Mix.Observed = results.MixObserved{Window: results.WindowAll, PrefillShare: 0.25}
	card := PinCard(run)
	for _, row := range card.Rows {
		switch row.Pin {
		case "prompt":
			if row.Observed != "no successful request reported usage" {
				t.Errorf("prompt observed %q", row.Observed)
			}
		case "mix":
			if !strings.HasPrefix(row.Observed, "input:output unknown (no usage reported), prefill 25") {
				t.Errorf("mix observed %q", row.Observed)
			}
		}
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "mix (steady window): input:output unknown (no usage reported)") {
		t.Errorf("summary lacks the unknown mix:\n%s", b.String())
	}
	if strings.Contains(b.String(), "input:output 0") {
		t.Errorf("summary prints a ratio of 0:\n%s", b.String())
	}
}

// Every table of the text summary has its own header, and each row's
// figures are the statistics that header names: a TTFT split row reads
// mean, p50, p90, p99 and max under a header saying so, not under the
// per-stream header's mean, min, p10, p50 and p90.
func TestSummaryTablesHeaders(t *testing.T) {
	for _, file := range []string{fixBase, fixQueued} {
		t.Run(file, func(t *testing.T) {
			run, err := results.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := WriteSummary(&b, run); err != nil {
				t.Fatal(err)
			}
			checkSummaryTables(t, run, b.String())
		})
	}
}

// checkSummaryTables reads the distribution tables of summary (rows
// "  LABEL<padding> v1 v2 ...", the label in 30 columns) and checks each
// figure against the window's distribution under the statistic its
// table's header names in that column.
func checkSummaryTables(t *testing.T, run *results.Run, summary string) {
	t.Helper()
	isStat := map[string]bool{"mean": true, "min": true, "p10": true, "p50": true, "p90": true, "p99": true, "max": true}
	var w *results.Window
	var window string
	var header []string
	rows, tables := 0, 0
	for i, line := range strings.Split(summary, "\n") {
		for _, name := range results.WindowNames {
			if strings.HasPrefix(line, strings.ToUpper(name)+" ") {
				w, window, header = run.Windows[name], name, nil
			}
		}
		if w == nil || len(line) < 33 || !strings.HasPrefix(line, "  ") || line[2] == ' ' {
			continue
		}
		label, cells := strings.TrimSpace(line[2:32]), strings.Fields(line[32:])
		if len(cells) == 0 {
			continue
		}
		if isStat[cells[0]] {
			header = cells
			tables++
			continue
		}
		d, ok := map[string]*results.Dist{
			"TTFT ms": w.TTFTMs, "TTFT answer ms": w.TTFTAnswerMs, "ITL ms": w.ITLMs, "TPOT ms": w.TPOTMs, "E2E ms": w.E2EMs,
			"decode tok/s": w.DecodeTokS, "effective tok/s": w.EffectiveTokS,
			"server queue ms": w.ServerQueueMs, "server prefill ms": w.ServerPrefillMs, "rest ms (network, client)": w.TTFTRestMs,
		}[label]
		if !ok {
			continue
		}
		rows++
		if d == nil || len(cells) != len(header) {
			t.Errorf("line %d (%s window): %q has %d figures under the header %v", i+1, window, line, len(cells), header)
			continue
		}
		for k, stat := range header {
			if stat == "mean" && SkewedMean(d) && cells[k] == "–" {
				continue
			}
			if want := num(verdict.StatOf(d, stat)); cells[k] != want {
				t.Errorf("line %d (%s window): %s reads %s under %q, but its %s is %s", i+1, window, label, cells[k], stat, stat, want)
			}
		}
	}
	if rows == 0 || tables == 0 {
		t.Fatalf("no table rows found in the summary:\n%s", summary)
	}
}

// A mean its p50 contradicts by orders of magnitude is not printed (a
// real-time brochure run once printed a decode mean of 16,345 tok/s
// beside a p50 of 1,905, pulled by a few requests at 838,337); a note
// names it, and the percentiles stay.
func TestSkewedMeanNotPrinted(t *testing.T) {
	skewed := &results.Dist{Count: 100, Mean: 16_345, Min: 900, P10: 1_500, P50: 1_905, P90: 2_100, P99: 500_171, Max: 838_337}
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows: map[string]*results.Window{results.WindowSteady: {Completed: 100, EndS: 10,
			DecodeTokS: skewed, EffectiveTokS: &results.Dist{Count: 100, Mean: 90, P50: 88, Max: 120}}},
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "16,345") && !strings.Contains(out, "mean 16,345 against p50 1,905") || !strings.Contains(out, "a mean over 5× its p50") {
		t.Errorf("the skewed mean is printed, or unexplained:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "  decode tok/s") && !strings.Contains(line, " – ") {
			t.Errorf("decode row prints its mean: %q", line)
		}
		if strings.HasPrefix(line, "  effective tok/s") && !strings.Contains(line, "90") {
			t.Errorf("an ordinary mean is left out: %q", line)
		}
	}
	checkSummaryTables(t, run, out)
}

// The calibration line says how its floor was taken and how far its
// rounds spread, and calls a spread over 25% unsteady; a file from
// before rounds reads as it did.
func TestCalibrationLine(t *testing.T) {
	cal := results.Calibration{Streams: 4, Requests: 160, Rounds: 5, WarmupRequests: 32, PromptTokens: 500, OutputTokens: 64,
		TTFTMs: &results.Dist{P50: 1.2, P99: 3}, RoundTTFTP50Ms: []float64{1.0, 1.2, 0.9, 1.1, 1.15}, FloorTTFTMs: 1.1, SpreadPct: 27.3}
	for _, c := range []struct {
		spread float64
		want   string
	}{
		{27.3, "sixpin's own floor at 4 streams, 160 requests of 500 → 64 tokens in 5 rounds after 32 warm-up against a loopback server: " +
			"TTFT p50 1.10 ms (the median of the rounds' p50s, 0.9–1.20 ms: spread 27.3%), p99 3.00 ms" +
			" — UNSTEADY: its rounds spread over 25% of the floor (a busy machine?), so the floor and its flag are uncertain"},
		{12, "sixpin's own floor at 4 streams, 160 requests of 500 → 64 tokens in 5 rounds after 32 warm-up against a loopback server: " +
			"TTFT p50 1.10 ms (the median of the rounds' p50s, 0.9–1.20 ms: spread 12.0%), p99 3.00 ms"},
	} {
		cal.SpreadPct = c.spread
		if got := CalibrationLine(&cal); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	old := results.Calibration{Streams: 8, Requests: 16, PromptTokens: 900, OutputTokens: 100, TTFTMs: &results.Dist{P50: 2.3, P99: 9}}
	if got, want := CalibrationLine(&old), "sixpin's own floor at 8 streams, 16 requests of 900 → 100 tokens against a loopback server: TTFT p50 2.30 ms, p99 9.00 ms"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// The sessions line says how many joined mid-life (a stationary start),
// since the turn and lifetime figures beside it leave them out.
func TestSessionsLineCountsJoined(t *testing.T) {
	run := &results.Run{Sessions: &results.Sessions{All: []*results.Session{{Index: 0, FirstTurn: 7}, {Index: 1}, {Index: 2}},
		EndReasons: map[string]int{}}}
	var b strings.Builder
	writeSessions(&numfmt.Printer{W: &b}, run)
	if !strings.Contains(b.String(), "Agentic sessions (whole run): 3 sessions (1 joined mid-life: turns and lifetime over the 2 whole)") {
		t.Errorf("%s", b.String())
	}
	run.Sessions.All[0].FirstTurn = 0
	b.Reset()
	writeSessions(&numfmt.Printer{W: &b}, run)
	if strings.Contains(b.String(), "joined") {
		t.Errorf("%s", b.String())
	}
}
