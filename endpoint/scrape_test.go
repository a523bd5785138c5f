package endpoint

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TestParseServerMetricsFixtures reads the /metrics text real engines
// send: a recorded llama-server, SGLang's documented example, vLLM's.
func TestParseServerMetricsFixtures(t *testing.T) {
	type want struct {
		kv, running, waiting, prompt, gen, hits, hitRate float64
		ttftCount                                        float64
	}
	nan := math.NaN()
	cases := []struct {
		file, engine string
		want         want
	}{
		{"metrics/llamacpp.txt", SourceLlamaCpp, want{kv: nan, running: 0, waiting: 0, prompt: 13, gen: 20, hits: 20, hitRate: nan, ttftCount: nan}},
		{"metrics/sglang.txt", SourceSGLang, want{kv: 0.28, running: 162, waiting: 2826, prompt: 8.128902e+06, gen: 7.557572e+06, hits: nan, hitRate: 0.007507552643049313, ttftCount: 11008}},
		{"discovery/vllm_metrics.txt", SourceVLLM, want{kv: nan, running: nan, waiting: nan, prompt: nan, gen: nan, hits: nan, hitRate: nan, ttftCount: nan}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			x, engine, ok := parseServerMetrics(raw)
			if !ok || engine != c.engine {
				t.Fatalf("engine %q ok %v, want %q", engine, ok, c.engine)
			}
			if c.engine == SourceVLLM {
				// The vLLM fixture's gauges: read them from its own text.
				if x.Running == nil || x.Waiting == nil || x.KVUsage == nil || x.TTFT == nil {
					t.Fatalf("vLLM gauges or TTFT missing: %+v", x)
				}
				return
			}
			got := want{val(x.KVUsage), val(x.Running), val(x.Waiting), val(x.PromptTokens), val(x.GenerationTokens),
				val(x.PrefixHits), val(x.PrefixHitRate), nan}
			if x.TTFT != nil {
				got.ttftCount = x.TTFT.Count
			}
			eq := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || a == b }
			w := c.want
			if !eq(got.kv, w.kv) || !eq(got.running, w.running) || !eq(got.waiting, w.waiting) || !eq(got.prompt, w.prompt) ||
				!eq(got.gen, w.gen) || !eq(got.hits, w.hits) || !eq(got.hitRate, w.hitRate) || !eq(got.ttftCount, w.ttftCount) {
				t.Errorf("got %+v\nwant %+v", got, w)
			}
			if x.TTFT != nil {
				if n := len(x.TTFT.Bounds); !math.IsInf(x.TTFT.Bounds[n-1], 1) || x.TTFT.Counts[n-1] != x.TTFT.Count {
					t.Errorf("TTFT's last bucket %v/%v, count %v", x.TTFT.Bounds[n-1], x.TTFT.Counts[n-1], x.TTFT.Count)
				}
			}
		})
	}
	// SGLang counts a request's whole prompt in prompt_tokens_total,
	// its cached part too (TokenizerMetricsCollector.
	// observe_one_finished_request): the prefix cache's hit rate is
	// cached ÷ prompt, so the prompt counter is its queries. llama.cpp
	// counts only the computed part: it has no queries counter.
	sg := `sglang:prompt_tokens_total{model_name="m"} 1000
sglang:cached_tokens_total{model_name="m"} 250
sglang:num_running_reqs{model_name="m"} 1
`
	x, _, _ := parseServerMetrics([]byte(sg))
	if val(x.PrefixQueries) != 1000 || val(x.PrefixHits) != 250 {
		t.Errorf("SGLang's prefix cache: queries %v, hits %v; want 1000 (its prompt tokens), 250", val(x.PrefixQueries), val(x.PrefixHits))
	}
	raw, _ := os.ReadFile(filepath.Join("testdata", "metrics", "llamacpp.txt"))
	if x, _, _ := parseServerMetrics(raw); x.PrefixQueries != nil {
		t.Errorf("llama.cpp's prefix-cache queries %v, want none (its prompt counter is the computed part)", val(x.PrefixQueries))
	}
	if _, _, ok := parseServerMetrics([]byte("# nothing\nprocess_cpu_seconds_total 3\n")); ok {
		t.Error("a /metrics with no engine's names was taken")
	}
}

// TestScrapeSimulator scrapes the simulator's live vLLM metrics over HTTP
// scrapedSim serves the simulator srv over HTTP and returns a client of
// it, a scraper of its /metrics every 20 ms, started, and the clock both
// run on.
func scrapedSim(t *testing.T, srv *sim.Server) (*Client, *Scraper, Clock) {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	c := newClient(t, Target{BaseURL: ts.URL + "/v1", Model: "m"})
	sc := c.NewScraper(20 * time.Millisecond)
	sc.Baseline(context.Background())
	clk := Clock{Start: time.Now()}
	sc.Start(context.Background(), clk)
	return c, sc, clk
}

// while requests run: counters rise by what was served, gauges are read,
// histograms are there.
func TestScrapeSimulator(t *testing.T) {
	on := true
	srv, err := sim.New(sim.Config{Timing: sim.TimingNone, Model: "m", MaxModelLen: 4096, MaxNumSeqs: 8,
		KVBudgetTokens: 65536, PrefixCaching: &on, Roofline: sim.Roofline{ParamsB: 8}})
	if err != nil {
		t.Fatal(err)
	}
	c, sc, clk := scrapedSim(t, srv)
	const n, out = 4, 16
	for i := range n {
		rec := c.Stream(context.Background(), Call{Req: record.Request{Index: i, PromptTokens: 50, OutputTokens: out},
			Msgs: UserMessage(strings.Repeat("hello ", 50)), Clock: clk, Cut: ErrCutAfterGrace})
		if rec.Err != record.OK {
			t.Fatalf("request %d: %s %s", i, rec.Err, rec.ErrMsg)
		}
	}
	got := sc.Stop()
	if got.Source != "vllm GET /metrics" || got.Failures != 0 || len(got.Samples) < 2 {
		t.Fatalf("source %q, %d samples, %d failures (%s)", got.Source, len(got.Samples), got.Failures, got.LastError)
	}
	first, last := got.Samples[0], got.Samples[len(got.Samples)-1]
	if d := val(last.GenerationTokens) - val(first.GenerationTokens); d != n*out {
		t.Errorf("generation tokens rose by %v, want %d", d, n*out)
	}
	if val(last.PromptTokens) <= val(first.PromptTokens) {
		t.Errorf("prompt tokens did not rise: %v → %v", val(first.PromptTokens), val(last.PromptTokens))
	}
	if last.KVUsage == nil || last.Running == nil || last.Waiting == nil || last.Preemptions == nil || last.PrefixQueries == nil {
		t.Errorf("a vLLM gauge or counter is missing: %+v", last)
	}
	if last.TTFT == nil || last.TTFT.Count-first.TTFT.Count != n {
		t.Errorf("TTFT histogram did not count the %d requests: %+v", n, last.TTFT)
	}
	for i := 1; i < len(got.Samples); i++ {
		if got.Samples[i].T < got.Samples[i-1].T {
			t.Fatalf("samples out of order at %d", i)
		}
	}
}

// TestScrapeFailures: a server without /metrics ends scraping after its
// first answer; one that fails is counted, never fatal.
func TestScrapeFailures(t *testing.T) {
	cases := []struct {
		name    string
		handler http.Handler
		want    string // in LastError
		maxFail int
	}{
		{"404", http.NotFoundHandler(), "HTTP 404", 1},
		{"500", testserve.Status(500, "text/plain", "down"), "HTTP 500", 1 << 20},
		{"not prometheus", testserve.Status(200, "text/html", "<html>hi</html>"), "no vllm:", 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(c.handler)
			defer ts.Close()
			cl := newClient(t, Target{BaseURL: ts.URL + "/v1", Model: "m"})
			sc := cl.NewScraper(20 * time.Millisecond)
			sc.Baseline(context.Background())
			sc.Start(context.Background(), Clock{Start: time.Now()})
			time.Sleep(70 * time.Millisecond)
			got := sc.Stop()
			if len(got.Samples) != 0 || got.Failures == 0 || got.Failures > c.maxFail || !strings.Contains(got.LastError, c.want) {
				t.Errorf("%d samples, %d failures, last %q (want %q)", len(got.Samples), got.Failures, got.LastError, c.want)
			}
		})
	}
}
