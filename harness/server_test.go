package harness

import (
	"testing"
	"time"

	"github.com/sixpin/sixpin/results"
)

// TestServerMetricsRun: a run against the simulator scrapes its vLLM
// metrics throughout; the results carry the series and per-window
// figures beside the client's, and survive the results file.
func TestServerMetricsRun(t *testing.T) {
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
	f := func(v float64) *float64 { return &v }
	xs := []results.ServerSample{
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
