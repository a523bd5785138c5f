package harness

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
)

// TestServerMetricsRun: a run against the simulator scrapes its vLLM
// metrics throughout; the results carry the series and per-window
// figures beside the client's, and survive the results file.
func TestServerMetricsRun(t *testing.T) {
	t.Parallel()
	o, err := run(t, Config{ScenarioPath: "testdata/server.yaml", TimeScale: 0.01, ServerMetrics: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s := o.Run.Server
	if s == nil {
		t.Fatal("no server section")
	}
	if s.Source != "vllm GET /metrics" || s.Scrapes < 5 || s.Failures != 0 || len(s.Series) != s.Scrapes {
		t.Fatalf("source %q scrapes %d failures %d (%s) series %d", s.Source, s.Scrapes, s.Failures, s.LastError, len(s.Series))
	}
	st := s.Windows[results.WindowSteady]
	if st == nil || st.Scrapes == 0 || st.GenerationTokS == nil || *st.GenerationTokS <= 0 || st.KVUsagePct == nil || st.KVRegime == "" {
		t.Fatalf("steady: %+v", st)
	}
	if st.ClientOutputTokS != o.Run.Windows[results.WindowSteady].AggregateOutputTokS {
		t.Errorf("client figure beside the server's: %v, window says %v", st.ClientOutputTokS, o.Run.Windows[results.WindowSteady].AggregateOutputTokS)
	}
	// The server's generation rate is the client's, within what one
	// scrape interval at each edge can shift.
	if c := st.ClientOutputTokS; *st.GenerationTokS < 0.7*c || *st.GenerationTokS > 1.3*c {
		t.Errorf("server %v tok/s against the client's %v", *st.GenerationTokS, c)
	}
	back, err := results.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if back.Server == nil || len(back.Server.Series) != len(s.Series) || back.Server.Windows[results.WindowSteady].KVRegime != st.KVRegime {
		t.Errorf("the results file lost the server section")
	}

	o, err = run(t, Config{ScenarioPath: "testdata/server.yaml", TimeScale: 0.01, ServerMetrics: ServerMetricsOff, Duration: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if o.Run.Server != nil {
		t.Error("--server-metrics off scraped")
	}
}

// The live page's server series: gauges as read, counters as rates
// between scrapes, what the server does not expose left out.
func TestServerSeriesLive(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	xs := []record.ServerSample{
		{T: 0, KVUsage: f(0.25), Running: f(2), GenerationTokens: f(100)},
		{T: 2 * time.Second, KVUsage: f(0.5), Running: f(4), GenerationTokens: f(500)},
	}
	got := serverSeries(xs)
	if len(got) != 3 || got[0].Name != "KV cache usage" || got[0].Values[1] != 50 || got[1].Values[1] != 4 ||
		got[2].Name != "server generation" || len(got[2].Values) != 1 || got[2].Values[0] != 200 {
		t.Errorf("%+v", got)
	}
	if s := serverSeries(nil); s == nil || len(s) != 0 {
		t.Errorf("no scrape: %#v, want an empty list", s)
	}
}

// The KV-fit preflight, against a simulator whose KV cache holds 4,096
// tokens: 8 streams × 1,000 tokens do not fit. warn says so before load
// and goes on; the results and the card carry it, and the windows their
// regime; strict refuses with bad input (exit 2) before any request.
func TestKVFitPreflight(t *testing.T) {
	t.Parallel()
	prof := filepath.Join(t.TempDir(), "small-kv.yaml")
	src := "kind: simulator\noutput_control: ignore_eos\ntokenizer: words\nsim: {model: m, timing: none, tokenizer: words, max_model_len: 4096, kv_budget_tokens: 4096, max_num_seqs: 16}\n"
	if err := os.WriteFile(prof, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := quiet(t, Config{ScenarioPath: "testdata/kvfit.yaml", Profile: prof, Output: filepath.Join(t.TempDir(), "r.json")})
	o, err := Run(context.Background(), context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "sixpin: warning: KV fit: 8 streams × 1K tokens need 8K KV tokens; the server holds 4.1K and runs at most 16 sequences: at most 4 fit; expect queueing or preemption"
	if errOut := cfg.ErrOut.(*bytes.Buffer).String(); !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if f := o.Run.KVFit; f == nil || f.Fits || f.MaxFit != 4 || f.BudgetTokens != 4096 || f.BudgetFrom == "" {
		t.Errorf("kv_fit %+v", f)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, o.Run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "preflight: at most 4 of 8 streams fit") {
		t.Errorf("the pin card lacks the preflight:\n%s", b.String())
	}

	cfg = quiet(t, Config{ScenarioPath: "testdata/kvfit.yaml", Profile: prof, KVFit: KVFitStrict, Output: filepath.Join(t.TempDir(), "r.json")})
	o, err = Run(context.Background(), context.Background(), cfg)
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "at most 4 fit") || o != nil {
		t.Errorf("strict: %v, outcome %v", err, o)
	}
}

// --calibrate measures sixpin's floor against a loopback server before
// the run and sets it beside the run's TTFT.
func TestCalibrate(t *testing.T) {
	t.Parallel()
	o, err := run(t, Config{ScenarioPath: "testdata/kvfit.yaml", Profile: "sim-instant", Calibrate: true, KVFit: KVFitWarn})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Run.Calibration
	// 8 streams send at least 4 requests each in a warm-up round, then in
	// each of 7 recorded rounds: at least 32 requests a round.
	if c == nil || c.Streams != 8 || c.Requests < 7*32 || c.WarmupRequests < 32 || c.Rounds != 7 || len(c.RoundTTFTP50Ms) != 7 ||
		c.Failed != 0 || c.TTFTMs == nil || c.TTFTMs.Count != int64(c.Requests) || c.ITLMs == nil || c.FloorTTFTMs <= 0 || c.OverheadPctOfTTFT <= 0 {
		t.Fatalf("calibration %+v", c)
	}
	// Against sim-instant the run is itself a floor: far above 5%.
	if !c.Flagged || !strings.Contains(strings.Join(o.Run.Notes, "\n"), "sixpin's own floor (--calibrate") {
		t.Errorf("not flagged: %v%%, notes %q", c.OverheadPctOfTTFT, o.Run.Notes)
	}
}

// The flag is arithmetic: the floor's TTFT p50 against the run's, the
// floor counted in run time when the run was compressed.
func TestJudgeCalibration(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		floor, ttft, scale, pct float64
		flagged                 bool
	}{{2, 100, 0, 2, false}, {6, 100, 0, 6, true}, {0.2, 100, 0.1, 2, false}} {
		run := &results.Run{Headline: results.WindowSteady, Windows: map[string]*results.Window{results.WindowSteady: {TTFTMs: &results.Dist{P50: c.ttft}}},
			Calibration: &results.Calibration{TTFTMs: &results.Dist{P50: c.floor}}}
		judgeCalibration(run, c.scale)
		if got := run.Calibration; math.Abs(got.OverheadPctOfTTFT-c.pct) > 1e-9 || got.Flagged != c.flagged || (len(run.Notes) > 0) != c.flagged {
			t.Errorf("%+v: %v%% flagged %v", c, got.OverheadPctOfTTFT, got.Flagged)
		}
	}
}
