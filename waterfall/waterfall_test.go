package waterfall

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

func load(t *testing.T, path string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// From the brochure to agentic-120k, the pins that differ move in the
// default order; the model, KV-cache, mix and content pins, equal in
// both, are skipped and say so (the brochure's prose is an agentic
// session's); every configuration is a valid scenario.
func TestPlanBrochureToAgentic(t *testing.T) {
	to := load(t, "../scenarios/agentic-120k.yaml")
	p, err := NewPlan(NewBrochure(to), to, Options{Orders: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{PinOutput, PinPrompt, PinConcurrency, PinWorkload, PinWindow, PinMetric}
	if !slices.Equal(p.Order, want) {
		t.Errorf("order %v, want %v", p.Order, want)
	}
	var skipped []string
	for _, s := range p.Skipped {
		skipped = append(skipped, s.Pin)
		if s.Reason != "equal in both" {
			t.Errorf("skipped %s: %q", s.Pin, s.Reason)
		}
	}
	if !slices.Equal(skipped, []string{PinModel, PinKVCache, PinMix, PinContent}) {
		t.Errorf("skipped %v", skipped)
	}
	if c := p.Skipped[3]; c.Value != "prose, agentic turns" {
		t.Errorf("skipped content %+v", c)
	}
	// One order: the start and one configuration per scenario pin; the
	// views read the last one again.
	if len(p.Configs) != 5 || p.Configs[0].Key != "" || p.Configs[4].Key != "output+prompt+concurrency+workload" {
		t.Errorf("configs %+v", p.Configs)
	}
	for _, c := range p.Configs {
		sc, err := p.Scenario(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Seed != to.Seed+1 {
			t.Errorf("seed %d", sc.Seed)
		}
	}
	start, _ := p.Scenario(p.Configs[0], 0)
	if start.Pins.Concurrency.Streams != 1 || start.Pins.Prompt.Tokens.String() != "128" || start.Pins.Output.Tokens.String() != "32" || start.Workload.Agentic() {
		t.Errorf("brochure pins %+v workload %+v", start.Pins, start.Workload)
	}
	end, _ := p.Scenario(p.Configs[4], 0)
	if !end.Workload.Agentic() || end.Pins.Concurrency != to.Pins.Concurrency || end.Name != to.Name {
		t.Errorf("end %s %+v", end.Name, end.Workload)
	}
}

// A declared input:output ratio changes no request: from the brochure to
// smoke.yaml (one class, input_output_ratio 7.8) the mix pin is skipped,
// not measured as a step of pure noise, and the last configuration still
// declares the ratio: it is exactly the --to scenario's pins.
func TestPlanDeclaredRatioIsNoStep(t *testing.T) {
	to := load(t, "../scenarios/smoke.yaml")
	if to.Pins.Mix.InputOutputRatio == 0 || len(to.Pins.Mix.Classes) != 0 {
		t.Fatalf("smoke.yaml's mix %+v: the test wants one class with a declared ratio", to.Pins.Mix)
	}
	p, err := NewPlan(NewBrochure(to), to, Options{Orders: 1})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Order, PinMix) {
		t.Errorf("order %v moves the mix pin; only its declared ratio differs", p.Order)
	}
	end, err := p.Scenario(p.Configs[len(p.Configs)-1], 0)
	if err != nil {
		t.Fatal(err)
	}
	if end.Pins.Mix.InputOutputRatio != to.Pins.Mix.InputOutputRatio {
		t.Errorf("end mix %+v, want --to's %+v", end.Pins.Mix, to.Pins.Mix)
	}
}

// A declared input:output ratio is of the workload it was declared
// with: from smoke.yaml (requests, ratio 7.8) to agentic-120k, whose
// contexts snowball, a configuration with the agentic workload and
// smoke's prompt and output derives its ratio instead of keeping 7.8,
// which Validate would refuse; every configuration validates.
func TestDeclaredRatioMovesWithTheWorkload(t *testing.T) {
	from, to := load(t, "../scenarios/smoke.yaml"), load(t, "../scenarios/agentic-120k.yaml")
	if from.Pins.Mix.InputOutputRatio == 0 {
		t.Fatal("smoke.yaml declares no input:output ratio: the test wants one")
	}
	p, err := NewPlan(from, to, Options{Exact: true, MaxRuns: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Configs {
		sc, err := p.Scenario(c, 0)
		if err != nil {
			t.Errorf("configuration %q: %v", c.Key, err)
			continue
		}
		moved := slices.Contains(c.Moved, PinWorkload)
		if r := sc.Pins.Mix.InputOutputRatio; moved && r != 0 && r != to.Pins.Mix.InputOutputRatio {
			t.Errorf("configuration %q keeps the ratio %v declared for requests", c.Key, r)
		}
	}
}

// What agentic sessions take none of moves with the workload: from
// requests in open loop, of two mix classes sharing a prefix, to
// agentic-120k (and back), the prompt, concurrency and mix pins are
// skipped, each saying why, and every configuration validates.
func TestAgenticRefusalsMoveWithTheWorkload(t *testing.T) {
	req := *load(t, "../scenarios/smoke.yaml")
	req.Pins.Concurrency = scenario.ConcurrencyPin{Mode: scenario.ModeOpen, Rate: 2, Arrival: scenario.ArrivalPoisson}
	req.Pins.Prompt.SharedPrefixTokens = 100
	req.Pins.Mix = scenario.MixPin{Classes: []scenario.Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 3}}}
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	agentic := load(t, "../scenarios/agentic-120k.yaml")
	for _, c := range []struct {
		name     string
		from, to *scenario.Scenario
	}{{"requests to agentic", &req, agentic}, {"agentic to requests", agentic, &req}} {
		t.Run(c.name, func(t *testing.T) {
			p, err := NewPlan(c.from, c.to, Options{Exact: true, MaxRuns: 1 << 10})
			if err != nil {
				t.Fatal(err)
			}
			for _, pin := range []string{PinPrompt, PinConcurrency, PinMix} {
				i := slices.IndexFunc(p.Skipped, func(s Skipped) bool { return s.Pin == pin })
				if i < 0 || !strings.Contains(p.Skipped[i].Reason, "agentic") || !strings.Contains(p.Skipped[i].Reason, "moves with the workload") {
					t.Errorf("%s: skipped %+v", pin, p.Skipped)
				}
			}
			for _, cf := range p.Configs {
				if _, err := p.Scenario(cf, 0); err != nil {
					t.Errorf("configuration %q: %v", cf.Key, err)
				}
			}
		})
	}
}

// --order moves the named pins first; the rest follow in the default
// order. Unknown or repeated names are refused; --metric holds one metric
// and skips the metric step.
func TestPlanOrderAndMetric(t *testing.T) {
	to := load(t, "../scenarios/agentic-120k.yaml")
	from := NewBrochure(to)
	p, err := NewPlan(from, to, Options{Order: []string{PinMetric, PinConcurrency}, Metric: ""})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{PinMetric, PinConcurrency, PinOutput, PinPrompt, PinWorkload, PinWindow}; !slices.Equal(p.Order, want) {
		t.Errorf("order %v, want %v", p.Order, want)
	}
	p, _ = NewPlan(from, to, Options{Metric: MetricTTFT})
	if slices.Contains(p.Order, PinMetric) || !slices.ContainsFunc(p.Skipped, func(s Skipped) bool { return s.Pin == PinMetric && strings.Contains(s.Reason, "held") }) {
		t.Errorf("held metric: order %v skipped %v", p.Order, p.Skipped)
	}
	for _, o := range []Options{{Order: []string{"speed"}}, {Order: []string{PinPrompt, PinPrompt}}, {Metric: "tok/s"}, {Orders: 3}} {
		if _, err := NewPlan(from, to, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	// Two orders add the reverse's prefixes; exact adds every subset of
	// the four scenario pins.
	p2, _ := NewPlan(from, to, Options{Orders: 2})
	if len(p2.Configs) != 8 {
		t.Errorf("two orders: %d configs", len(p2.Configs))
	}
	px, _ := NewPlan(from, to, Options{Exact: true})
	if len(px.Configs) != 16 {
		t.Errorf("exact: %d configs", len(px.Configs))
	}
}

// game is a synthetic waterfall: each scenario pin multiplies the value by
// its factor, prompt and concurrency interact (their product costs more
// together), the window and the metric switch are factors of their own,
// and each repeat adds noise of the given size.
type synth struct {
	factor map[string]float64
	noise  float64
}

func (s synth) measure(moved []string, rep int, rng *rand.Rand) Measure {
	base := 1500.0
	for _, p := range moved {
		base *= s.factor[p]
	}
	if slices.Contains(moved, PinPrompt) && slices.Contains(moved, PinConcurrency) {
		base *= 0.8
	}
	noisy := func(v float64) float64 { return v * (1 + s.noise*(rng.Float64()-0.5)) }
	m := Measure{}
	for _, w := range measured {
		wf := 1.0
		if w == results.WindowSteady {
			wf = s.factor[PinWindow]
		}
		m[w] = map[string]float64{
			MetricDecode:    noisy(base * wf),
			MetricEffective: noisy(base * wf * s.factor[PinMetric]),
			MetricAggregate: noisy(base * wf * 1.7),
			MetricTTFT:      noisy(1000 / (base * wf)),
		}
	}
	return m
}

// filled plans o from the brochure to agentic-120k and fills every
// configuration with s's measures, repeat runs each.
func filled(t *testing.T, o Options, s synth, seed uint64) *File {
	t.Helper()
	to := load(t, "../scenarios/agentic-120k.yaml")
	p, err := NewPlan(NewBrochure(to), to, o)
	if err != nil {
		t.Fatal(err)
	}
	f := p.File(Brochure, to.Path)
	rng := rand.New(rand.NewPCG(seed, 1))
	for i := range f.Configs {
		for r := range p.Repeat {
			f.Configs[i].Meas = append(f.Configs[i].Meas, s.measure(f.Configs[i].Moved, r, rng))
			f.Configs[i].Runs = append(f.Configs[i].Runs, len(f.Runs))
			f.Runs = append(f.Runs, &results.Run{Schema: results.Schema, Valid: true})
		}
	}
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	return f
}

var cloud = synth{factor: map[string]float64{
	PinOutput: 0.98, PinPrompt: 0.9, PinConcurrency: 0.85, PinWorkload: 0.6, PinWindow: 0.9, PinMetric: 0.35,
}}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// The product of the step ratios is the end-to-end ratio, the shares sum
// to one, and the last step's value is the end value itself: for any
// measures, any order, any metric.
func TestStepsMultiplyToTheEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 200 {
		s := synth{factor: map[string]float64{}, noise: rng.Float64()}
		for _, p := range DefaultOrder {
			s.factor[p] = 0.1 + 2*rng.Float64()
		}
		order := slices.Clone(DefaultOrder)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		metric := []string{"", MetricEffective, MetricDecode, MetricAggregate, MetricTTFT}[trial%5]
		f := filled(t, Options{Order: order[:trial%4], Metric: metric, Repeat: 1 + trial%3}, s, uint64(trial))
		prod, shares := f.Start.Value, 0.0
		for _, st := range f.Steps {
			prod *= st.Ratio
			shares += st.Share
		}
		if !near(prod, f.End.Value) || f.Steps[len(f.Steps)-1].Value != f.End.Value {
			t.Fatalf("trial %d: start × Π ratios = %v, end %v (last step %v)", trial, prod, f.End.Value, f.Steps[len(f.Steps)-1].Value)
		}
		if math.Abs(shares-1) > 1e-9 {
			t.Fatalf("trial %d: shares sum to %v", trial, shares)
		}
	}
}

// Two orders: each pin's ratio in the order and in the reverse, and
// their geometric mean; pins that interact (prompt and concurrency) cost
// differently in the two orders, pins that don't cost the same. Exact
// Shapley values split the interaction evenly between the two, and the
// factors multiply to the end-to-end ratio.
func TestAttribution(t *testing.T) {
	two := filled(t, Options{Orders: 2}, cloud, 1)
	if two.Attribution.Method != MethodTwoOrder || len(two.Attribution.Orders) != 2 || two.Attribution.Orders[1].Name != "reverse" {
		t.Fatalf("attribution %+v", two.Attribution)
	}
	cost := func(f *File, pin string) PinCost {
		i := slices.IndexFunc(f.Attribution.Pins, func(p PinCost) bool { return p.Pin == pin })
		return f.Attribution.Pins[i]
	}
	out := cost(two, PinOutput)
	if !near(out.Ratios[0], 0.98) || !near(out.Ratios[1], 0.98) || !near(out.Shapley, 0.98) {
		t.Errorf("output: %+v", out)
	}
	pr, cc := cost(two, PinPrompt), cost(two, PinConcurrency)
	// In the default order prompt comes first (alone: 0.9), concurrency
	// then carries the interaction; in reverse the other way round.
	if !near(pr.Ratios[0], 0.9) || !near(pr.Ratios[1], 0.9*0.8) || !near(cc.Ratios[0], 0.85*0.8) || !near(cc.Ratios[1], 0.85) {
		t.Errorf("prompt %+v, concurrency %+v", pr, cc)
	}
	if !near(pr.Shapley, math.Sqrt(0.9*0.9*0.8)) {
		t.Errorf("prompt's two-order estimate %v", pr.Shapley)
	}

	exact := filled(t, Options{Exact: true}, cloud, 1)
	prod := 1.0
	for _, pc := range exact.Attribution.Pins {
		prod *= pc.Shapley
	}
	if !near(prod, exact.End.Value/exact.Start.Value) {
		t.Errorf("Π Shapley %v, end/start %v", prod, exact.End.Value/exact.Start.Value)
	}
	if p := cost(exact, PinPrompt).Shapley; !near(p, 0.9*math.Sqrt(0.8)) {
		t.Errorf("exact prompt %v, want %v", p, 0.9*math.Sqrt(0.8))
	}
	if w := cost(exact, PinMetric).Shapley; !near(w, 0.35) {
		t.Errorf("exact metric %v", w)
	}
}

// With repeats, each step has a confidence interval; a step whose change
// is within noise (output: 2% against 10% noise) says so, one far beyond
// it (the metric switch) does not.
func TestNoiseOnlyStep(t *testing.T) {
	s := cloud
	s.noise = 0.1
	f := filled(t, Options{Repeat: 4}, s, 3)
	for _, st := range f.Steps {
		if st.CI == nil || st.ValueCI == nil {
			t.Fatalf("step %s has no interval", st.Pin)
		}
		if !st.CI.Contains(st.Delta) {
			t.Errorf("step %s: delta %v outside its CI %+v", st.Pin, st.Delta, *st.CI)
		}
		switch st.Pin {
		case PinOutput:
			if !st.Noise {
				t.Errorf("output step (2%% in 10%% noise) not marked noise: %+v", st)
			}
		case PinMetric:
			if st.Noise {
				t.Errorf("metric step marked noise: %+v", st)
			}
		}
	}
	if f.Start.CI == nil || !f.Start.CI.Contains(f.Start.Value) {
		t.Errorf("start CI %+v", f.Start.CI)
	}
	one := filled(t, Options{}, s, 3)
	if one.Steps[0].CI != nil || one.Steps[0].Noise {
		t.Errorf("one run: step %+v", one.Steps[0])
	}
}

// A file re-renders for another metric without running: held TTFT drops
// the metric step, back to the default restores it; both equal a fresh
// fill with those options.
func TestRebuild(t *testing.T) {
	f := filled(t, Options{Orders: 2}, cloud, 5)
	held, err := Rebuild(f, MetricTTFT)
	if err != nil {
		t.Fatal(err)
	}
	fresh := filled(t, Options{Orders: 2, Metric: MetricTTFT}, cloud, 5)
	if held.End.Value != fresh.End.Value || len(held.Steps) != len(fresh.Steps) || held.Attribution.Pins[0].Shapley != fresh.Attribution.Pins[0].Shapley {
		t.Errorf("rebuilt %+v\nfresh %+v", held.Steps, fresh.Steps)
	}
	back, err := Rebuild(held, "")
	if err != nil {
		t.Fatal(err)
	}
	if back.End.Value != f.End.Value || !slices.Equal(back.Order, f.Order) || !slices.Equal(back.Attribution.Orders[1].Pins, f.Attribution.Orders[1].Pins) {
		t.Errorf("back: %v %v", back.Order, back.Attribution.Orders)
	}
	if f.Metric != "" || len(f.Steps) != 6 {
		t.Error("Rebuild changed its input")
	}
	if _, err := Rebuild(f, "speed"); err == nil {
		t.Error("unknown metric accepted")
	}
}

// A configuration not measured (an interrupted waterfall) ends the steps
// there and marks the file incomplete.
func TestIncomplete(t *testing.T) {
	f := filled(t, Options{}, cloud, 1)
	f.Configs[3].Meas = nil
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || len(f.Steps) != 2 || f.Attribution.Pins != nil || !strings.Contains(f.IncompleteReason, "2 of 6 steps") {
		t.Errorf("incomplete %v %q steps %d", f.Incomplete, f.IncompleteReason, len(f.Steps))
	}
}

// Read takes back what WriteFile wrote, and refuses damage at its field.
func TestReadFile(t *testing.T) {
	f := filled(t, Options{}, cloud, 1)
	f.Claim = &Claim{Value: 1500}
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	if f.Claim.Measured != f.Start.Value || f.Claim.DeltaPct != 0 {
		t.Errorf("claim %+v", f.Claim)
	}
	path := t.TempDir() + "/w.json"
	if err := WriteFile(path, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.End.Value != f.End.Value || len(g.Configs) != len(f.Configs) {
		t.Error("round trip lost figures")
	}
	data, _ := json.MarshalIndent(f, "", "  ")
	for _, c := range []struct{ from, to, want string }{
		{`"schema": "sixpin/waterfall/v1"`, `"schema": "sixpin/set/v1"`, "w.json:2:13: schema: want \"sixpin/waterfall/v1\""},
		{`"order": [` + "\n    \"output\"", `"order": [` + "\n    \"speed\"", `order.0: unknown pin "speed"`},
		{`"config": "output+prompt"`, `"config": "nowhere"`, `config: configuration "nowhere" is not in configs`},
	} {
		bad := strings.Replace(string(data), c.from, c.to, 1)
		if bad == string(data) {
			t.Fatalf("fixture lacks %s", c.from)
		}
		if _, err := Read("w.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.to, err, c.want)
		}
	}
}

// Exact Shapley attribution is the default whenever its runs fit the
// budget: from the brochure to agentic-120k four scenario pins move, 16
// configurations. Over the budget (5 repeats: 80 runs against 64) the
// default is the order and its reverse, and the file says what exact
// would have needed. --orders and --exact given explicitly are kept;
// --exact over the budget is refused.
func TestDefaultAttribution(t *testing.T) {
	to := load(t, "../scenarios/agentic-120k.yaml")
	from := NewBrochure(to)
	for _, c := range []struct {
		o          Options
		method     string
		auto       bool
		configs    int
		exactRuns  int
		maxRunsArg int
	}{
		{Options{}, MethodExact, true, 16, 16, DefaultMaxRuns},
		{Options{Repeat: 4}, MethodExact, true, 16, 64, DefaultMaxRuns},
		{Options{Repeat: 5}, MethodTwoOrder, true, 8, 80, DefaultMaxRuns},
		{Options{MaxRuns: 15}, MethodTwoOrder, true, 8, 16, 15},
		{Options{Orders: 1}, MethodOrder, false, 5, 16, DefaultMaxRuns},
		{Options{Orders: 2}, MethodTwoOrder, false, 8, 16, DefaultMaxRuns},
		{Options{Exact: true, Repeat: 4}, MethodExact, false, 16, 64, DefaultMaxRuns},
	} {
		p, err := NewPlan(from, to, c.o)
		if err != nil {
			t.Fatalf("%+v: %v", c.o, err)
		}
		f := p.File(Brochure, to.Path)
		a := f.Attribution
		if a.Method != c.method || a.Auto != c.auto || len(p.Configs) != c.configs || a.ExactRuns != c.exactRuns || a.MaxRuns != c.maxRunsArg {
			t.Errorf("%+v: method %s auto %v, %d configs, exact needs %d of %d; want %s %v %d %d %d",
				c.o, a.Method, a.Auto, len(p.Configs), a.ExactRuns, a.MaxRuns, c.method, c.auto, c.configs, c.exactRuns, c.maxRunsArg)
		}
	}
	if _, err := NewPlan(from, to, Options{Exact: true, MaxRuns: 8}); err == nil || !strings.Contains(err.Error(), "--exact needs 16 runs") {
		t.Errorf("exact over the budget: %v", err)
	}
}

// How much the orders disagree is measured, not assumed: with two orders
// each pin's factor ranges over its two ratios, and the file names the
// pin whose orders disagree most (prompt and concurrency interact: ×0.8
// goes to whichever moves second). Exact attribution knows every order:
// a pin's range is over every subset it could join. Pins that interact
// with nothing cost the same in every order.
func TestOrderDisagreement(t *testing.T) {
	cost := func(f *File, pin string) PinCost {
		i := slices.IndexFunc(f.Attribution.Pins, func(p PinCost) bool { return p.Pin == pin })
		return f.Attribution.Pins[i]
	}
	two := filled(t, Options{Orders: 2}, cloud, 1)
	pr := cost(two, PinPrompt)
	if !near(pr.Lo, 0.9*0.8) || !near(pr.Hi, 0.9) {
		t.Errorf("two orders, prompt ranges [%v, %v], want [0.72, 0.9]", pr.Lo, pr.Hi)
	}
	if out := cost(two, PinOutput); !near(out.Lo, 0.98) || !near(out.Hi, 0.98) {
		t.Errorf("output ranges [%v, %v]", out.Lo, out.Hi)
	}
	a := two.Attribution
	if !near(a.Spread, 1/0.8) || (a.SpreadPin != PinPrompt && a.SpreadPin != PinConcurrency) {
		t.Errorf("spread %v at %q, want 1.25 at prompt or concurrency", a.Spread, a.SpreadPin)
	}
	exact := filled(t, Options{Exact: true}, cloud, 1)
	if cc := cost(exact, PinConcurrency); !near(cc.Lo, 0.85*0.8) || !near(cc.Hi, 0.85) {
		t.Errorf("exact, concurrency ranges [%v, %v]", cc.Lo, cc.Hi)
	}
	if !near(exact.Attribution.Spread, 1/0.8) {
		t.Errorf("exact spread %v", exact.Attribution.Spread)
	}
	// One order alone cannot say how much another would differ.
	one := filled(t, Options{Orders: 1}, cloud, 1)
	if one.Attribution.Spread != 0 {
		t.Errorf("one order: spread %v, want 0 (unknown)", one.Attribution.Spread)
	}
}

// A step measured on invalid runs carries their reasons (and a view step
// that reads those runs again does too); the start and end points say
// the same of their own runs.
func TestInvalidSteps(t *testing.T) {
	f := filled(t, Options{Orders: 1, Repeat: 2}, cloud, 1)
	bad := slices.IndexFunc(f.Configs, func(c Config) bool { return c.Key == Key([]string{PinOutput, PinPrompt, PinConcurrency, PinWorkload}) })
	r := f.Runs[f.Configs[bad].Runs[1]]
	r.Valid, r.Invalid = false, []string{"errors: 38.5% of requests failed (http_429 20)", "prompt: the served workload is not the requested one"}
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	for _, st := range f.Steps {
		want := 0
		if st.Pin == PinWorkload || st.Pin == PinWindow || st.Pin == PinMetric {
			want = 1
		}
		if st.InvalidRuns != want || (want > 0) != (len(st.Invalid) == 2) {
			t.Errorf("step %s: %d invalid runs %q, want %d", st.Pin, st.InvalidRuns, st.Invalid, want)
		}
	}
	if f.Start.InvalidRuns != 0 || f.End.InvalidRuns != 1 || !strings.HasPrefix(f.End.Invalid[0], "errors:") {
		t.Errorf("start %d invalid, end %d %q", f.Start.InvalidRuns, f.End.InvalidRuns, f.End.Invalid)
	}
}

// The metric switch's cost is explained where it is measured: at the
// production pins, in the end's window, the prefill share of the time
// (Σ TTFT / Σ E2E) and TTFT, each the mean over the repeats.
func TestPrefillAtProductionPins(t *testing.T) {
	f := filled(t, Options{Orders: 1, Repeat: 2}, cloud, 1)
	end := f.Configs[slices.IndexFunc(f.Configs, func(c Config) bool { return c.Key == f.End.Config })]
	end.Meas[0][WindowTo][MeasurePrefillShare], end.Meas[1][WindowTo][MeasurePrefillShare] = 0.3, 0.4
	if err := Fill(f); err != nil {
		t.Fatal(err)
	}
	ttft := (end.Meas[0][WindowTo][MetricTTFT] + end.Meas[1][WindowTo][MetricTTFT]) / 2
	if p := f.Prefill; p == nil || !near(p.Share, 0.35) || !near(p.TTFTMs, ttft) || p.Window != WindowTo {
		t.Errorf("prefill %+v, want share 0.35 TTFT %v in %s", p, ttft, WindowTo)
	}
	held, err := Rebuild(f, MetricTTFT)
	if err != nil {
		t.Fatal(err)
	}
	if held.Prefill != nil {
		t.Errorf("no metric step, yet prefill %+v", held.Prefill)
	}
}

// A file written before the attribution recorded each pin's range (its
// pins' lo and hi absent) is filled again from its configurations when
// read, so that it renders what its measures say.
func TestReadOlderFile(t *testing.T) {
	f := filled(t, Options{Orders: 2}, cloud, 1)
	data, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var old map[string]any
	if err := json.Unmarshal(data, &old); err != nil {
		t.Fatal(err)
	}
	a := old["attribution"].(map[string]any)
	delete(a, "spread")
	delete(a, "spread_pin")
	for _, pc := range a["pins"].([]any) {
		delete(pc.(map[string]any), "lo")
		delete(pc.(map[string]any), "hi")
	}
	data, _ = json.Marshal(old)
	g, err := Read("old.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if g.Attribution.Spread != f.Attribution.Spread || g.Attribution.Pins[1].Lo != f.Attribution.Pins[1].Lo || g.Attribution.Pins[1].Hi == 0 {
		t.Errorf("read back %+v, want %+v", g.Attribution, f.Attribution)
	}
}
