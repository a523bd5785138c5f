package waterfall

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// withContent is a copy of s whose prompts are of content c.
func withContent(s *scenario.Scenario, c scenario.Content) *scenario.Scenario {
	w := *s
	w.Pins.Prompt.Content = c
	return &w
}

// The content pin moves the top-level content and nothing else; the
// prompt pin moves the prompt's shape and keeps the content; a mix
// class's own content moves with the mix. Equal contents are equal in
// their shares (unset is prose), not in their spelling; prompts that
// differ only in content are equal prompts.
func TestMoveAndEqualContent(t *testing.T) {
	from := load(t, "../scenarios/smoke.yaml")
	to := withContent(from, scenario.Content{scenario.ContentCode: 1})
	to.Pins.Prompt.Tokens = scenario.Fixed(900)
	to.Pins.Prompt.SharedPrefixTokens = 100
	to.Pins.Mix.Classes = []scenario.Class{
		{Name: "chat", Weight: 3},
		{Name: "call", Weight: 1, Prompt: &scenario.PromptPin{Content: scenario.Content{scenario.ContentToolCalls: 1}}},
	}

	s := *from
	move(&s, to, PinContent)
	if s.Pins.Prompt.Content.String() != "code" || s.Pins.Prompt.Tokens.String() != from.Pins.Prompt.Tokens.String() || s.Pins.Prompt.SharedPrefixTokens != 0 || s.Pins.Mix.Classes != nil {
		t.Errorf("content moved: prompt %+v mix %+v", s.Pins.Prompt, s.Pins.Mix)
	}
	s = *from
	move(&s, to, PinPrompt)
	if s.Pins.Prompt.Content != nil || s.Pins.Prompt.Tokens.String() != to.Pins.Prompt.Tokens.String() || s.Pins.Prompt.SharedPrefixTokens != 100 {
		t.Errorf("prompt moved: %+v", s.Pins.Prompt)
	}
	move(&s, to, PinMix)
	if len(s.Pins.Mix.Classes) != 2 || s.Pins.Mix.Classes[1].Prompt.Content.String() != "tool-calls" || s.Pins.Prompt.Content != nil {
		t.Errorf("mix moved: %+v, top-level content %v", s.Pins.Mix, s.Pins.Prompt.Content)
	}
	move(&s, to, PinContent)
	if !equal(PinPrompt, &s, to) || !equal(PinContent, &s, to) || !equal(PinMix, &s, to) {
		t.Errorf("after prompt, mix and content moved: %+v", s.Pins.Prompt)
	}

	prose := withContent(from, scenario.Content{scenario.ContentProse: 1})
	for _, c := range []struct {
		pin  string
		a, b *scenario.Scenario
		want bool
	}{
		{PinContent, from, prose, true}, // unset is prose
		{PinContent, withContent(from, scenario.Content{"code": 3, "prose": 1}), withContent(from, scenario.Content{"prose": 2, "code": 6}), true},
		{PinContent, from, to, false},
		{PinContent, withContent(from, scenario.Content{"code": 1}), withContent(from, scenario.Content{"code": 1, "json": 1}), false},
		{PinPrompt, from, withContent(from, scenario.Content{"code": 1}), true},
		{PinPrompt, from, to, false},
	} {
		if got := equal(c.pin, c.a, c.b); got != c.want {
			t.Errorf("equal(%s, %v, %v) = %v", c.pin, c.a.Pins.Prompt.Content, c.b.Pins.Prompt.Content, got)
		}
	}
}

// A content pin's value is its classes' words, prose when unset; a
// workload that is not independent requests says whose prose it is.
func TestValueContent(t *testing.T) {
	smoke := load(t, "../scenarios/smoke.yaml")
	for _, c := range []struct {
		s    *scenario.Scenario
		want string
	}{
		{smoke, "prose"},
		{withContent(smoke, scenario.Content{"code": 1}), "code"},
		{withContent(smoke, scenario.Content{"code": 3, "prose": 1}), "code 75%, prose 25%"},
		{load(t, "../scenarios/agentic-120k.yaml"), "prose, agentic turns"},
		{load(t, "../scenarios/mlperf-agentic-sample.yaml"), "the trace's"},
	} {
		if got := Value(PinContent, c.s); got != c.want {
			t.Errorf("%s: %q, want %q", c.s.Name, got, c.want)
		}
	}
}

// From the brochure to a scenario of code, the content is a step of its
// own, right after the prompt's length: the prompt's step keeps the
// brochure's prose, the content's sets code at the production length.
// --order content moves it first, before the prompt's length; the plan's
// words are "prose → code".
func TestPlanContentStep(t *testing.T) {
	smoke := load(t, "../scenarios/smoke.yaml")
	to := withContent(smoke, scenario.Content{scenario.ContentCode: 1})
	from := NewBrochure(to)
	if from.Pins.Prompt.Content != nil {
		t.Fatalf("brochure content %v, want unset (prose)", from.Pins.Prompt.Content)
	}
	p, err := NewPlan(from, to, Options{Orders: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{PinOutput, PinPrompt, PinContent, PinConcurrency, PinWindow, PinMetric}; !slices.Equal(p.Order, want) {
		t.Fatalf("order %v, want %v", p.Order, want)
	}
	f := p.File(Brochure, to.Path)
	if f.Start.Pins[PinContent] != "prose" || f.End.Pins[PinContent] != "code" {
		t.Errorf("content pins %q → %q", f.Start.Pins[PinContent], f.End.Pins[PinContent])
	}
	byKey := map[string]*scenario.Scenario{}
	for _, c := range p.Configs {
		sc, err := p.Scenario(c, 0)
		if err != nil {
			t.Fatal(err)
		}
		byKey[c.Key] = sc
	}
	if sc := byKey["output+prompt"]; sc.Pins.Prompt.Content != nil || sc.Pins.Prompt.Tokens.String() != to.Pins.Prompt.Tokens.String() {
		t.Errorf("prompt moved: %+v", sc.Pins.Prompt)
	}
	if sc := byKey["output+prompt+content"]; sc.Pins.Prompt.Content.String() != "code" || sc.Pins.Prompt.Tokens.String() != to.Pins.Prompt.Tokens.String() {
		t.Errorf("content moved: %+v", sc.Pins.Prompt)
	}
	if end := byKey[Key(p.Order)]; end.Name != to.Name || !equal(PinContent, end, to) || end.Pins.Mix.InputOutputRatio != to.Pins.Mix.InputOutputRatio {
		t.Errorf("end %s %+v", end.Name, end.Pins)
	}

	first, err := NewPlan(from, to, Options{Order: []string{PinContent}, Orders: 1})
	if err != nil {
		t.Fatal(err)
	}
	if first.Order[0] != PinContent || first.Configs[1].Key != "content" {
		t.Fatalf("--order content: order %v, configs %+v", first.Order, first.Configs)
	}
	sc, err := first.Scenario(first.Configs[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Pins.Prompt.Content.String() != "code" || sc.Pins.Prompt.Tokens.String() != "128" {
		t.Errorf("content first: prompt %+v", sc.Pins.Prompt)
	}
	// A scenario equal but for its content moves the content alone.
	only, err := NewPlan(smoke, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{PinContent, PinWindow, PinMetric}; !slices.Equal(only.Order, want) || len(only.Configs) != 2 {
		t.Errorf("content alone: order %v, %d configs", only.Order, len(only.Configs))
	}
}

// Only independent requests have a content class: from a scenario of
// code to an agentic one (or back, or to a trace), the content moves
// with the workload, skipped with that reason, so that no configuration
// of the exact attribution pairs an agentic (or trace) workload with a
// content, which Validate refuses.
func TestContentMovesWithTheWorkload(t *testing.T) {
	smoke := load(t, "../scenarios/smoke.yaml")
	// smoke declares its requests' input:output ratio, which moves with
	// the workload (TestDeclaredRatioMovesWithTheWorkload).
	code := withContent(smoke, scenario.Content{scenario.ContentCode: 1})
	agentic := load(t, "../scenarios/agentic-120k.yaml")
	trace := load(t, "../scenarios/mlperf-agentic-sample.yaml")
	traceStart := withContent(NewBrochure(trace), scenario.Content{scenario.ContentJSON: 1})
	for _, c := range []struct {
		name     string
		from, to *scenario.Scenario
	}{
		{"code to agentic", code, agentic},
		{"agentic to code", agentic, code},
		{"json to a trace", traceStart, trace},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.from, c.to, Options{Exact: true})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(p.Order, PinContent) || !slices.Contains(p.Order, PinWorkload) {
				t.Errorf("order %v", p.Order)
			}
			i := slices.IndexFunc(p.Skipped, func(s Skipped) bool { return s.Pin == PinContent })
			if i < 0 || !strings.Contains(p.Skipped[i].Reason, "moves with the workload") || p.Skipped[i].Value != Value(PinContent, c.to) {
				t.Errorf("skipped %+v", p.Skipped)
			}
			for _, cf := range p.Configs {
				sc, err := p.Scenario(cf, 0)
				if err != nil {
					t.Fatalf("configuration %q: %v", cf.Key, err)
				}
				want := c.from
				if slices.Contains(cf.Moved, PinWorkload) {
					want = c.to
				}
				if !equal(PinContent, sc, want) || len(sc.Pins.Prompt.Content) != len(want.Pins.Prompt.Content) {
					t.Errorf("configuration %q: content %v, want %v", cf.Key, sc.Pins.Prompt.Content, want.Pins.Prompt.Content)
				}
			}
		})
	}
	// What the fold prevents: the agentic workload beside code.
	bad := *agentic
	bad.Pins.Prompt.Content = scenario.Content{scenario.ContentCode: 1}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "pins.prompt.content") {
		t.Errorf("an agentic scenario with a content pin: %v", err)
	}
	// Both agentic: neither has a content, so nothing folds.
	p, err := NewPlan(NewBrochure(agentic), agentic, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.fold != nil {
		t.Errorf("fold %v", p.fold)
	}
}

// A file with a content step reads back and rebuilds; a file written
// before the content pin existed (no content among its start and end
// pins, none in its order) still reads, renders its steps and rebuilds.
func TestReadContentFile(t *testing.T) {
	smoke := load(t, "../scenarios/smoke.yaml")
	to := withContent(smoke, scenario.Content{scenario.ContentRepetitive: 1})
	p, err := NewPlan(NewBrochure(to), to, Options{Orders: 2})
	if err != nil {
		t.Fatal(err)
	}
	f := p.File(Brochure, to.Path)
	rng := rand.New(rand.NewPCG(1, 1))
	s := synth{factor: map[string]float64{PinOutput: 1.1, PinPrompt: 0.9, PinContent: 1.8, PinConcurrency: 0.7, PinWindow: 0.95, PinMetric: 0.5}}
	for i := range f.Configs {
		f.Configs[i].Meas = append(f.Configs[i].Meas, s.measure(f.Configs[i].Moved, 0, rng))
		f.Configs[i].Runs = append(f.Configs[i].Runs, len(f.Runs))
		f.Runs = append(f.Runs, &results.Run{Schema: results.Schema, Valid: true})
	}
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Read("content.json", data)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(g.Steps, func(st Step) bool { return st.Pin == PinContent })
	if i < 0 || g.Steps[i].From != "prose" || g.Steps[i].To != "repetitive" || !near(g.Steps[i].Ratio, 1.8) || g.Steps[i].Config != "output+prompt+content" {
		t.Errorf("content step %+v", g.Steps)
	}
	if _, err := Rebuild(g, MetricTTFT); err != nil {
		t.Error(err)
	}

	old := filled(t, Options{Orders: 2}, cloud, 1)
	delete(old.Start.Pins, PinContent)
	delete(old.End.Pins, PinContent)
	data, err = json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read("old.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Steps) != len(old.Steps) || back.End.Value != old.End.Value {
		t.Errorf("old file read back: %d steps, end %v", len(back.Steps), back.End.Value)
	}
	if _, err := Rebuild(back, MetricDecode); err != nil {
		t.Error(err)
	}
}
