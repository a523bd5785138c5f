package harness

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// specTotals reads the simulator's own speculative-decoding counters
// from its /metrics, summed over label sets: drafts, draft tokens,
// accepted tokens.
func specTotals(t *testing.T, base string) (drafts, draftTokens, accepted float64) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(base, "/v1") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), "{")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		_, v, _ := strings.Cut(rest, "} ")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		switch name {
		case "vllm:spec_decode_num_drafts_total":
			drafts += x
		case "vllm:spec_decode_num_draft_tokens_total":
			draftTokens += x
		case "vllm:spec_decode_num_accepted_tokens_total":
			accepted += x
		}
	}
	return drafts, draftTokens, accepted
}

// specSim is the simulator of a built-in profile's sim: section, ten
// times faster.
func specSim(t *testing.T, name string) sim.Config {
	t.Helper()
	p, err := profiles.Embedded(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := SimConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg.TimeScale = 0.1
	return cfg
}

// specScenario is the speculative-decoding tests' scenario: four
// streams of 200-token prompts and 128 tokens out on sim-spec-healthy.
const specScenario = `name: spec
seed: 1
pins:
  model: {name: sim-spec-healthy}
  prompt: {tokens: 200}
  output: {tokens: 128, exact: true}
  concurrency: {mode: closed, streams: 4}
duration: 10m
windows: {warmup: 0s, burst: 1s, steady: {start: 0s}}
`

// within1Pct reports whether got is within 1% of want (the bar).
func within1Pct(got, want float64) bool { return want > 0 && math.Abs(got-want) <= 0.01*want }

// countWithin1Pct reports whether count is known and within 1% of want.
func countWithin1Pct(count *int64, want float64) bool {
	return count != nil && within1Pct(float64(*count), want)
}

// Over real HTTP, against the simulator of sim-spec-healthy (which
// speaks both servers' dialects), the whole run's speculative decoding
// equals the server's own count of it: the sum of llama.cpp's
// per-request draft counts in the window, and the rise of vLLM's
// counters in the server's window, each against the simulator's
// counters read after the run; the card says so. A server that does not
// speculate leaves both unknown, and the card says that.
func TestSpecDecodeMatchesServer(t *testing.T) {
	t.Parallel()
	path := scenarioFile(t, specScenario)
	t.Run("speculating", func(t *testing.T) {
		t.Parallel()
		base := simServer(t, specSim(t, "sim-spec-healthy"), nil)
		o, err := run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: base, Model: "sim-spec-healthy", Tokenizer: "words", Requests: 16})
		if err != nil || o == nil || o.Run == nil {
			t.Fatalf("run: %v", err)
		}
		drafts, draftTokens, accepted := specTotals(t, base)
		t.Logf("the server counted %v drafts, %v draft tokens, %v accepted", drafts, draftTokens, accepted)
		w := o.Run.Windows[results.WindowAll]
		if s := w.SpecDecode; s == nil || s.State != results.SpecOn || s.Source != results.SpecSourceLlamaCpp ||
			s.Requests != w.Completed || !countWithin1Pct(s.DraftTokens, draftTokens) || !countWithin1Pct(s.AcceptedTokens, accepted) {
			t.Errorf("by the requests' timings: %+v; the server counted %v draft tokens, %v accepted", s, draftTokens, accepted)
		}
		if o.Run.Server == nil {
			t.Fatal("no server metrics")
		}
		s := o.Run.Server.Windows[results.WindowAll].SpecDecode
		if s == nil || s.Source != results.SpecSourceVLLM || s.Drafts == nil || !within1Pct(float64(*s.Drafts), drafts) ||
			!countWithin1Pct(s.DraftTokens, draftTokens) || !countWithin1Pct(s.AcceptedTokens, accepted) ||
			len(s.PerPositionAcceptancePct) != 4 {
			t.Fatalf("by /metrics: %+v; the server counted %v drafts, %v draft tokens, %v accepted", s, drafts, draftTokens, accepted)
		}
		if want := 100 * accepted / draftTokens; math.Abs(*s.AcceptanceRatePct-want) > 1 {
			t.Errorf("acceptance %v%%, the server's %v%%", *s.AcceptanceRatePct, want)
		}
		if want := 1 + accepted/drafts; math.Abs(*s.MeanAcceptanceLength-want) > 0.01*want {
			t.Errorf("mean acceptance length %v, the server's %v", *s.MeanAcceptanceLength, want)
		}
		card := report.PinCard(o.Run)
		if got := card.Rows[0].Observed; !strings.Contains(got, "speculative decoding: on, ") ||
			!strings.Contains(got, " tokens per step, acceptance ") || !strings.Contains(got, "vllm /metrics)") {
			t.Errorf("card's model row: %s", got)
		}
	})
	t.Run("not speculating", func(t *testing.T) {
		t.Parallel()
		cfg := specSim(t, "sim-spec-healthy")
		cfg.SpecDecode = nil
		base := simServer(t, cfg, nil)
		o, err := run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: base, Model: "sim-spec-healthy", Tokenizer: "words", Requests: 8})
		if err != nil || o == nil || o.Run == nil {
			t.Fatalf("run: %v", err)
		}
		if s := o.Run.Windows[results.WindowAll].SpecDecode; s == nil || s.State != results.SpecUnknown {
			t.Errorf("window: %+v, want unknown", s)
		}
		if o.Run.Server == nil || o.Run.Server.Windows[results.WindowAll].SpecDecode != nil {
			t.Errorf("server window says %+v", o.Run.Server)
		}
		if got := report.PinCard(o.Run).Rows[0].Observed; !strings.HasSuffix(got, "speculative decoding: unknown (the server exposes no counters)") {
			t.Errorf("card's model row: %s", got)
		}
	})
}

// metricSums reads a /metrics text's samples summed over label sets, by
// name.
func metricSums(t *testing.T, body io.Reader) map[string]float64 {
	t.Helper()
	sums := map[string]float64{}
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		x, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			continue
		}
		name, _, _ := strings.Cut(line[:i], "{")
		sums[name] += x
	}
	return sums
}

// simMetrics is the simulator's own /metrics, read past any wrapper.
func simMetrics(t *testing.T, s http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return metricSums(t, rec.Body)
}

// withoutVerifyCounter hides SGLang's spec_verify_calls_total: an SGLang
// from before May 2026, which has only the acceptance-length gauge.
func withoutVerifyCounter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for _, line := range strings.SplitAfter(rec.Body.String(), "\n") {
			if !strings.Contains(line, "sglang:spec_verify_calls_total") {
				io.WriteString(w, line)
			}
		}
	})
}

// Over real HTTP, against the simulator of sim-spec-healthy serving
// SGLang's /metrics: the whole run's speculative decoding by SGLang's
// counters equals the simulator's own — verification steps, accepted
// draft tokens (generated less one per request and one per step, against
// the sum of the requests' own draft_n_accepted too), tokens per step,
// acceptance at K = 4 — within 1%, and the card says sglang /metrics.
// An SGLang with only the acceptance-length gauge (scraped often, as a
// reading is of the last 40 decode steps only) gets the mean of its
// readings over the run, near the simulator's own (within 5%), and the
// acceptance (L − 1) ÷ K by the spec_num_draft_tokens gauge. An SGLang
// that does not speculate leaves it unknown.
func TestSpecDecodeSGLang(t *testing.T) {
	t.Parallel()
	path := scenarioFile(t, specScenario)
	sglangSim := func(t *testing.T, spec bool, wrap func(http.Handler) http.Handler) (base string, s http.Handler) {
		cfg := specSim(t, "sim-spec-healthy")
		cfg.Metrics = sim.MetricsSGLang
		if !spec {
			cfg.SpecDecode = nil
		}
		srv, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = srv
		if wrap != nil {
			h = wrap(srv)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(func() { ts.Close(); srv.Close() })
		return ts.URL + "/v1", srv
	}
	measure := func(t *testing.T, base string, requests int, every time.Duration) *results.Run {
		o, err := run(t, Config{ScenarioPath: path, Profile: "sglang", Endpoint: base, Model: "sim-spec-healthy", Tokenizer: "words",
			Requests: requests, ServerMetrics: every})
		if err != nil || o == nil || o.Run == nil {
			t.Fatalf("run: %v", err)
		}
		if o.Run.Server == nil || !strings.HasPrefix(o.Run.Server.Source, "sglang ") {
			t.Fatalf("server metrics: %+v", o.Run.Server)
		}
		return o.Run
	}
	t.Run("counters", func(t *testing.T) {
		t.Parallel()
		base, s := sglangSim(t, true, nil)
		r := measure(t, base, 16, 0)
		m := simMetrics(t, s)
		verify := m["sglang:spec_verify_calls_total"]
		accepted := m["sglang:generation_tokens_total"] - m["sglang:num_requests_total"] - verify
		t.Logf("the server counted %v verification steps, %v accepted", verify, accepted)
		timed := r.Windows[results.WindowAll].SpecDecode
		if timed == nil || !countWithin1Pct(timed.AcceptedTokens, accepted) {
			t.Errorf("the requests' own draft_n_accepted: %+v; the server's counters make %v accepted", timed, accepted)
		}
		sd := r.Server.Windows[results.WindowAll].SpecDecode
		if sd == nil || sd.State != results.SpecOn || sd.Source != results.SpecSourceSGLang || !countWithin1Pct(sd.Drafts, verify) ||
			!countWithin1Pct(sd.AcceptedTokens, accepted) || !countWithin1Pct(sd.DraftTokens, 4*verify) || sd.Requests != 16 {
			t.Fatalf("by /metrics: %+v; the server counted %v steps, %v accepted", sd, verify, accepted)
		}
		if want := 1 + accepted/verify; !within1Pct(*sd.MeanAcceptanceLength, want) {
			t.Errorf("mean acceptance length %v, the server's %v", *sd.MeanAcceptanceLength, want)
		}
		if want := 100 * accepted / (4 * verify); math.Abs(*sd.AcceptanceRatePct-want) > 1 {
			t.Errorf("acceptance %v%%, the server's %v%%", *sd.AcceptanceRatePct, want)
		}
		if got := report.PinCard(r).Rows[0].Observed; !strings.Contains(got, "speculative decoding: on, ") ||
			!strings.Contains(got, " tokens per step, acceptance ") || !strings.Contains(got, "sglang /metrics)") {
			t.Errorf("card's model row: %s", got)
		}
	})
	t.Run("gauge only", func(t *testing.T) {
		t.Parallel()
		base, s := sglangSim(t, true, withoutVerifyCounter)
		r := measure(t, base, 64, 10*time.Millisecond)
		m := simMetrics(t, s)
		verify := m["sglang:spec_verify_calls_total"]
		own := (m["sglang:generation_tokens_total"] - m["sglang:num_requests_total"]) / verify
		sd := r.Server.Windows[results.WindowAll].SpecDecode
		if sd == nil || sd.State != results.SpecOn || sd.Source != results.SpecSourceSGLangGauge || sd.Scrapes == 0 || sd.MeanAcceptanceLength == nil {
			t.Fatalf("by the gauge: %+v", sd)
		}
		t.Logf("gauge mean %v over %d scrapes, the server's own %v", *sd.MeanAcceptanceLength, sd.Scrapes, own)
		if math.Abs(*sd.MeanAcceptanceLength-own) > 0.05*own {
			t.Errorf("gauge mean %v, the server's own %v: more than 5%% apart", *sd.MeanAcceptanceLength, own)
		}
		if sd.Drafts != nil || sd.AcceptedTokens != nil || sd.AcceptanceRatePct == nil ||
			math.Abs(*sd.AcceptanceRatePct-100*(*sd.MeanAcceptanceLength-1)/4) > 1e-9 {
			t.Errorf("counts %v %v, acceptance %v: want no counts and (L − 1) ÷ 4", sd.Drafts, sd.AcceptedTokens, sd.AcceptanceRatePct)
		}
		if got := report.PinCard(r).Rows[0].Observed; !strings.Contains(got, "sglang /metrics gauge)") {
			t.Errorf("card's model row: %s", got)
		}
	})
	t.Run("not speculating", func(t *testing.T) {
		t.Parallel()
		base, _ := sglangSim(t, false, nil)
		r := measure(t, base, 8, 0)
		if s := r.Windows[results.WindowAll].SpecDecode; s == nil || s.State != results.SpecUnknown {
			t.Errorf("window: %+v, want unknown", s)
		}
		if s := r.Server.Windows[results.WindowAll].SpecDecode; s != nil {
			t.Errorf("server window says %+v", s)
		}
		if got := report.PinCard(r).Rows[0].Observed; !strings.HasSuffix(got, "speculative decoding: unknown (the server exposes no counters)") {
			t.Errorf("card's model row: %s", got)
		}
	})
}
