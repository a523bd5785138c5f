package harness

import (
	"bufio"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

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
	path := scenarioFile(t, `name: spec
seed: 1
pins:
  model: {name: sim-spec-healthy}
  prompt: {tokens: 200}
  output: {tokens: 128, exact: true}
  concurrency: {mode: closed, streams: 4}
duration: 10m
windows: {warmup: 0s, burst: 1s, steady: {start: 0s}}
`)
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
