package scenario

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanDeclared(t *testing.T) {
	load := func(t *testing.T, path string) *Plan {
		t.Helper()
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return NewPlan(s)
	}
	t.Run("classes, the ratio from the plan, wire facts", func(t *testing.T) {
		p := load(t, filepath.Join("testdata", "mix-classes.yaml"))
		d := p.Declared(Wire{Model: "served-as", OutputControl: "ignore_eos", Tokenizer: "qwen2"})
		exp := p.Expected()
		if d.Model.Name != "m" || d.Model.ParamsB != 8 || d.Model.Requested != "served-as" {
			t.Errorf("model %+v", d.Model)
		}
		if d.Prompt.Dist != "per class (see mix)" || d.Prompt.Mean != exp.MeanPromptTokens || d.Prompt.Tokenizer != "qwen2" {
			t.Errorf("prompt %+v", d.Prompt)
		}
		if d.Output.Dist != "200" || d.Output.Min != 200 || d.Output.Max != 200 || d.Output.Control != "ignore_eos" {
			t.Errorf("output %+v", d.Output)
		}
		if d.Mix.InputOutputRatio != exp.Ratio || len(d.Mix.Classes) != 2 || d.Mix.Classes[1] != (ClassWeights{Name: "agent", Weight: 0.3}) {
			t.Errorf("mix %+v, want the plan's ratio %v and two classes", d.Mix, exp.Ratio)
		}
		if d.Concurrency != (ConcurrencyDeclared{Mode: ModeClosed, Streams: 4}) || d.KVCache.MaxNumSeqs != 2 || d.CachePlanned {
			t.Errorf("concurrency %+v, kv %+v, cache planned %v", d.Concurrency, d.KVCache, d.CachePlanned)
		}
	})
	t.Run("open loop, the declared ratio kept, nothing resolved", func(t *testing.T) {
		d := load(t, filepath.Join("testdata", "agentic-open.yaml")).Declared(Wire{})
		want := ConcurrencyDeclared{Mode: ModeOpen, RateRPS: 2.5, Arrival: ArrivalGamma, Burstiness: 0.5, MaxInFlight: 64}
		if d.Concurrency != want || d.Mix.InputOutputRatio != 150 || d.Model.Requested != "" || d.Output.Control != "" {
			t.Errorf("declared %+v", d)
		}
	})
	t.Run("agentic sessions", func(t *testing.T) {
		d := load(t, filepath.Join("..", "scenarios", "agentic-120k.yaml")).Declared(Wire{})
		if !strings.HasPrefix(d.Prompt.Dist, "agentic history: first turn ") || !d.Concurrency.Sessions || !d.CachePlanned {
			t.Errorf("prompt %q, sessions %v, cache planned %v", d.Prompt.Dist, d.Concurrency.Sessions, d.CachePlanned)
		}
	})
}

// TestModeSpellings: one Mode for the concurrency pin and the plan, and
// the files' spellings as they were — the YAML's mode reads as itself,
// the plan's mode names its units, and the declared pin writes the mode
// as the scenario declared it (closed for agentic sessions, which say
// sessions instead).
func TestModeSpellings(t *testing.T) {
	load := func(path string) *Scenario {
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name     string
		s        *Scenario
		yaml     Mode
		plan     Mode
		declared string
	}{
		{"closed", load(filepath.Join("..", "scenarios", "smoke.yaml")), ModeClosed, ModeClosed, `{"mode":"closed","streams":4}`},
		{"open", load(filepath.Join("testdata", "agentic-open.yaml")), ModeOpen, ModeOpen, `{"mode":"open","rate_rps":2.5,`},
		{"agentic sessions", load(filepath.Join("..", "scenarios", "agentic-120k.yaml")), ModeClosed, ModeSessions, `{"mode":"closed","streams":`},
		{"trace", traceScenario(t, 3), ModeTrace, ModeTrace, `{"mode":"trace","streams":`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := NewPlan(c.s)
			js, err := json.Marshal(p.Declared(Wire{}).Concurrency)
			if err != nil {
				t.Fatal(err)
			}
			if c.s.Pins.Concurrency.Mode != c.yaml || p.Mode() != c.plan || !strings.HasPrefix(string(js), c.declared) {
				t.Errorf("pin mode %q, plan mode %q, declared %s; want %q, %q, %s…", c.s.Pins.Concurrency.Mode, p.Mode(), js, c.yaml, c.plan, c.declared)
			}
		})
	}
}
