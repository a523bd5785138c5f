package harness

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// contentScenario is the content check's test scenario: short prompts,
// forced outputs, four streams, on a speculating 8B model.
const contentScenario = `name: content
seed: 3
pins:
  model: {name: sim-spec-healthy, params_b: 8}
  prompt: {tokens: 200}
  output: {tokens: 256, exact: true}
  concurrency: {mode: closed, streams: 4}
duration: 12s
windows: {warmup: 0s, burst: 2s, steady: auto}
`

// The claim: on sim-spec-healthy, whose drafter's acceptance per
// draft token is set per content class, each class's decode tok/s over
// prose's is the profile's tokens per verification step over prose's,
// within 5%, and the card marks the run content-sensitive; the same
// simulator without a drafter decodes every class alike, and the card
// verifies the content. The runs go one after another, before the
// parallel tests (time-scaled, they need the cores).
func TestContentCheckMatchesAcceptance(t *testing.T) {
	p, err := profiles.Embedded("sim-spec-healthy")
	if err != nil {
		t.Fatal(err)
	}
	simCfg, err := SimConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	path := scenarioFile(t, contentScenario)
	check := func(t *testing.T, profile string) *results.Run {
		t.Helper()
		// A quarter of real time: a token every 0.3–0.7 ms of wall time,
		// long beside what the client adds to it, under the race
		// detector too (at a tenth, a slice's decode once read 5% slow).
		o, err := run(t, Config{ScenarioPath: path, Profile: profile, TimeScale: 0.25, ContentCheck: true, ContentCheckSlice: 12 * time.Second})
		if o == nil || o.Run == nil || o.Run.ContentCheck == nil {
			t.Fatalf("no content check: %v", err)
		}
		cc := o.Run.ContentCheck
		if cc.Incomplete || len(cc.Classes) != len(scenario.ContentClasses) || cc.Base != scenario.ContentProse || cc.ThresholdPct != results.DefaultContentSpreadPct {
			t.Fatalf("content check %+v", cc)
		}
		for i, s := range cc.Classes {
			if s.Class != scenario.ContentClasses[i] || s.DecodeTokS == nil || s.Ratio == nil || s.Completed < 20 {
				t.Fatalf("slice %d: %+v", i, s)
			}
		}
		return o.Run
	}

	t.Run("speculating", func(t *testing.T) {
		r := check(t, "sim-spec-healthy")
		cc := r.ContentCheck
		d := simCfg.SpecDecode
		for _, s := range cc.Classes {
			want := sim.ExpectedTokensPerStep(d.Acceptance[s.Class], d.DraftTokens) / sim.ExpectedTokensPerStep(d.Acceptance[sim.ClassProse], d.DraftTokens)
			t.Logf("%-10s decode p50 %.4g tok/s, %.4g× prose's; the profile's acceptance gives %.4g×", s.Class, s.DecodeTokS.P50, *s.Ratio, want)
			if math.Abs(*s.Ratio-want) > 0.05*want {
				t.Errorf("%s: decode %.4g× prose's, the profile's acceptance gives %.4g×", s.Class, *s.Ratio, want)
			}
			if s.SpecDecode == nil {
				t.Errorf("%s: no speculative decoding counted", s.Class)
			}
		}
		if !cc.Sensitive || cc.Fastest != scenario.ContentRepetitive || cc.Slowest != scenario.ContentProse ||
			cc.SpreadLowPct == nil || cc.SpreadHighPct == nil || *cc.SpreadLowPct > *cc.SpreadPct || *cc.SpreadHighPct < *cc.SpreadPct {
			t.Errorf("sensitive %v, fastest %s, slowest %s, spread %v (interval %v to %v)", cc.Sensitive, cc.Fastest, cc.Slowest, cc.SpreadPct, cc.SpreadLowPct, cc.SpreadHighPct)
		}
		card := report.PinCard(r)
		row := card.Rows[len(card.Rows)-1]
		if row.Pin != "content" || row.N != 7 || row.Mark() != "!" || !strings.Contains(row.Reason, "CONTENT-SENSITIVE") || card.Sensitive == "" {
			t.Errorf("card's content row: %+v", row)
		}
	})
	t.Run("not speculating", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join("..", "profiles", "sim-spec-healthy.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		plain, _, ok := strings.Cut(string(src), "  spec_decode:")
		if !ok {
			t.Fatal("sim-spec-healthy.yaml has no spec_decode section")
		}
		prof := filepath.Join(t.TempDir(), "plain.yaml")
		if err := os.WriteFile(prof, []byte(strings.Replace(plain, "name: sim-spec-healthy", "name: sim-plain", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		r := check(t, prof)
		cc := r.ContentCheck
		for _, s := range cc.Classes {
			t.Logf("%-10s decode p50 %.4g tok/s", s.Class, s.DecodeTokS.P50)
		}
		switch {
		case cc.SpreadPct == nil:
			t.Errorf("without a drafter: no spread measured (sensitive %v)", cc.Sensitive)
		case cc.Sensitive || *cc.SpreadPct > results.DefaultContentSpreadPct/3:
			t.Errorf("without a drafter: sensitive %v, spread %v%% (%s over %s)", cc.Sensitive, *cc.SpreadPct, cc.Fastest, cc.Slowest)
		}
		card := report.PinCard(r)
		if row := card.Rows[len(card.Rows)-1]; row.Mark() != "✓" || !strings.Contains(row.Reason, "content-insensitive") || card.Sensitive != "" {
			t.Errorf("card's content row: %+v", row)
		}
	})
}

// A content check the scenario cannot take is refused before load, as
// bad input: agentic sessions (their turns are prose), a sweep, repeats,
// a shard, a negative slice or threshold.
func TestContentCheckRefused(t *testing.T) {
	t.Parallel()
	agentic := scenarioFile(t, `name: a
pins:
  model: {name: m}
  prompt: {tokens: 100}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 1}
workload: {kind: agentic, turns: 2, growth_tokens: 10}
duration: 5s
`)
	plain := scenarioFile(t, contentScenario)
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"agentic", Config{ScenarioPath: agentic}, "needs workload kind requests"},
		{"repeat", Config{ScenarioPath: plain, Repeat: 2}, "--repeat"},
		{"shard", Config{ScenarioPath: plain, Distributed: Distributed{RunID: "x"}}, "distributed"},
		{"slice", Config{ScenarioPath: plain, ContentCheckSlice: -time.Second}, "--content-check-slice"},
		{"spread", Config{ScenarioPath: plain, ContentSpreadPct: -1}, "--content-spread"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			cfg.ContentCheck, cfg.Profile, cfg.TimeScale = true, "sim-instant", 0.1
			o, err := run(t, cfg)
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) || (o != nil && o.Run != nil) {
				t.Errorf("err %v, want bad input naming %q and no run", err, c.want)
			}
		})
	}
}
