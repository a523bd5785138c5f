package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/waterfall"
)

// synthWaterfall is the brochure → agentic-120k waterfall filled with
// given values per configuration (burst decode; steady is 0.9 of it,
// effective 0.4 of decode), each run 0.2% off in a pattern of three.
func synthWaterfall(t *testing.T, o waterfall.Options, value map[string]float64) *waterfall.File {
	t.Helper()
	to, err := scenario.Load("../scenarios/agentic-120k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := waterfall.NewPlan(waterfall.NewBrochure(to), to, o)
	if err != nil {
		t.Fatal(err)
	}
	f := p.File(waterfall.Brochure, to.Path)
	for i, c := range f.Configs {
		for r := range p.Repeat {
			v := value[c.Key] * (1 + 0.002*float64((r+i)%3-1))
			m := waterfall.Measure{}
			for w, k := range map[string]float64{results.WindowBurst: 1, results.WindowSteady: 0.9, results.WindowAll: 0.95} {
				m[w] = map[string]float64{waterfall.MetricDecode: v * k, waterfall.MetricEffective: v * k * 0.4, waterfall.MetricAggregate: 2 * v, waterfall.MetricTTFT: 100}
			}
			f.Configs[i].Meas = append(f.Configs[i].Meas, m)
			f.Configs[i].Runs = append(f.Configs[i].Runs, len(f.Runs))
			f.Configs[i].Seeds = append(f.Configs[i].Seeds, int64(42+r))
			f.Runs = append(f.Runs, &results.Run{Target: results.TargetInfo{Profile: "sim-cerebras-27b", Simulated: true}, Valid: true})
		}
	}
	f.Claim = &waterfall.Claim{Value: 1500}
	if err := waterfall.Fill(f); err != nil {
		t.Fatal(err)
	}
	return f
}

var synthValues = map[string]float64{
	"": 1800, "output": 1800 * 1.002, "output+prompt": 1700, "output+prompt+concurrency": 1750, "output+prompt+concurrency+workload": 1100,
}

// The terminal waterfall draws a loss as ░ and a gain as ▓ beyond what
// the step kept, says which steps are within noise, and the chart floats
// each step from the value before it to the value after.
func TestWaterfallRenders(t *testing.T) {
	f := synthWaterfall(t, waterfall.Options{Repeat: 3}, synthValues)
	var b strings.Builder
	if err := WriteWaterfallText(&b, f, false); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if fs := strings.Fields(l); len(fs) > 1 && strings.ContainsAny(l, "█░▓") {
			lines[fs[0]] = l
		}
	}
	for pin, want := range map[string]string{"prompt": "░", "concurrency": "▓", "metric": "░", "output": "within noise"} {
		if !strings.Contains(lines[pin], want) {
			t.Errorf("%s: %q lacks %q", pin, lines[pin], want)
		}
	}
	if !strings.Contains(b.String(), "Claimed 1,500; measured at the start's pins 1,800 (+20%).") {
		t.Errorf("claim line missing:\n%s", b.String())
	}
	c := waterfallChart(f)
	if len(c.bars) != 2 || len(c.floats) != 6 || len(c.hlines) != 1 {
		t.Fatalf("%d bars, %d floats, %d lines", len(c.bars), len(c.floats), len(c.hlines))
	}
	for i, want := range []string{colNoise, colLoss, colGain, colLoss, colLoss, colLoss} {
		if c.floats[i].color != want {
			t.Errorf("step %d colour %s, want %s", i, c.floats[i].color, want)
		}
	}
	if fb := c.floats[1]; fb.lo != f.Steps[1].Value || fb.hi != f.Steps[0].Value {
		t.Errorf("prompt bar [%v, %v], want [%v, %v]", fb.lo, fb.hi, f.Steps[1].Value, f.Steps[0].Value)
	}
	// Two orders add the attribution table.
	two := synthWaterfall(t, waterfall.Options{Orders: 2}, map[string]float64{
		"": 1800, "output": 1800, "output+prompt": 1700, "output+prompt+concurrency": 1600, "output+prompt+concurrency+workload": 1100,
		"workload": 1500, "concurrency+workload": 1400, "prompt+concurrency+workload": 1200,
	})
	b.Reset()
	if err := WriteWaterfallText(&b, two, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Attribution: two orders", "| pin | in the default order | in the reverse order | Shapley (mean of the orders) | share |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
