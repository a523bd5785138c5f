package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

func fp(v float64) *float64 { return &v }

// serverRun is a run whose server was scraped: saturated and preempting
// in the steady window.
func serverRun() *results.Run {
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows: map[string]*results.Window{
			results.WindowSteady: {StartS: 0, EndS: 4, DurationS: 4, Completed: 4, AggregateOutputTokS: 200, InputOutputRatio: 9.5},
		},
		Series: results.Series{StepS: 1, OutputTokens: []int64{200, 200, 200, 200}, InFlight: []float64{4, 4, 4, 4}},
	}
	var series []results.ServerPoint
	for i := range 5 {
		series = append(series, results.ServerPoint{TS: float64(i), KVUsagePct: fp(float64(60 + 10*i)), Running: fp(4), Waiting: fp(float64(i)),
			GenerationTokS: fp(190), PromptTokS: fp(1900)})
	}
	run.Server = &results.Server{Source: "vllm GET /metrics", EveryS: 1, Scrapes: 5, Failures: 1, LastError: "GET /metrics: HTTP 500",
		Series: series,
		Windows: map[string]*results.ServerWindow{results.WindowSteady: {Scrapes: 5, KVUsagePct: &results.MeanPeak{Mean: 80, Peak: 100},
			Waiting: &results.MeanPeak{Mean: 2, Peak: 4}, Preemptions: fp(3), GenerationTokS: fp(190), PromptTokS: fp(1900),
			ClientOutputTokS: 200, PromptGenerationRatio: fp(10), ClientInputOutputRatio: 9.5, KVRegime: results.RegimePreempting,
			TTFTMs: &results.HistDelta{Count: 4, Mean: 120, P50: fp(110)}}},
	}
	return run
}

// The pin card's KV and mix rows, the window and the summary carry what
// the server reported; the HTML report draws its series.
func TestServerInReports(t *testing.T) {
	run := serverRun()
	for _, row := range PinCard(run).Rows {
		switch row.Pin {
		case "kv_cache":
			if !strings.Contains(row.Observed, "KV usage peak 100%, mean 80.0%, 3 preemptions, waiting peak 4.00 — preempting") {
				t.Errorf("kv observed %q", row.Observed)
			}
		case "mix":
			if !strings.Contains(row.Observed, "server prompt:generation 10.0 beside the client's 9.50 (steady window)") {
				t.Errorf("mix observed %q", row.Observed)
			}
		}
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"server (vllm GET /metrics, 5 scrapes in window): KV regime PREEMPTING",
		"server generation 190 tok/s beside the client's 200 tok/s",
		"server TTFT ms       n=4 mean 120, p50 110, p90 –",
		"Server metrics: vllm GET /metrics every 1.00 s, 5 scrapes, 1 failed (last: GET /metrics: HTTP 500)",
		"measured under KV saturation: steady (preempting)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if c := serverStateChart(run); c == nil || len(c.series) != 3 || len(c.bands) == 0 {
		t.Errorf("state chart %+v", c)
	}
	if c := serverThroughputChart(run); c == nil || len(c.series) != 3 { // the raw seconds, their rolling mean, the server's
		t.Errorf("throughput chart %+v", c)
	}
	run.Server = nil
	if serverStateChart(run) != nil || serverThroughputChart(run) != nil || serverKV(run) != "" || serverMix(run) != "" {
		t.Error("a run without server metrics shows some")
	}
}

// The preflight against llama-server, whose slots may share one cache
// (--kv-unified, its default) or each have their own, and which does not
// say which: both readings are said, and the smaller decides.
func TestKVFitLineUncertain(t *testing.T) {
	f := results.FitKV(8, 10_000, 0, 0, record.KVFacts{MaxModelLen: 32_768, MaxNumSeqs: 4}, map[string]string{"kv_cache.max_model_len": "GET /props default_generation_settings.n_ctx"})
	want := "8 streams × 10K tokens need 80K KV tokens; the server holds 32.8K if its 4 slots share one cache (llama-server's --kv-unified, its default) or 131K if each has its own — it does not say which: at most 3 fit in one shared cache (4 in caches per slot); expect queueing or preemption"
	if got := KVFitLine(f); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := kvFitShort(&results.Run{KVFit: f}); got != "preflight: at most 3 of 8 streams fit if the slots share one cache (4 if each has its own: the server does not say)" {
		t.Errorf("card: %s", got)
	}
}

// Agentic contexts deepen as a run goes: eight sessions whose mean
// context fits the cache fill it at their deepest, and the preflight
// says so beside the mean's fit.
func TestKVFitLineDeepest(t *testing.T) {
	t.Parallel()
	f := results.FitKV(8, 64400, 0, 0, record.KVFacts{BudgetTokens: 524288, MaxNumSeqs: 8}, nil)
	f.WithDeepest(120300)
	want := "8 streams × 64.4K tokens need 515K KV tokens; the server holds 524K and runs at most 8 sequences: they fit (up to 8 would); at their deepest (120K tokens each) at most 4 fit: expect the cache to fill as the sessions' contexts deepen"
	if got := KVFitLine(f); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if f.DeepestMaxFit != 4 || !f.Fits {
		t.Errorf("%+v", f)
	}
}
