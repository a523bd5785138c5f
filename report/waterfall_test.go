package report

import (
	"encoding/xml"
	"io"
	"slices"
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
				m[w] = map[string]float64{waterfall.MetricDecode: v * k, waterfall.MetricEffective: v * k * 0.4, waterfall.MetricAggregate: 2 * v, waterfall.MetricTTFT: 2345,
					waterfall.MeasurePrefillShare: 0.6}
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
	f := synthWaterfall(t, waterfall.Options{Orders: 1, Repeat: 3}, synthValues)
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
	c := stepsChart(f)
	if len(c.floats) != 8 || len(c.hlines) != 1 {
		t.Fatalf("%d bars, %d lines", len(c.floats), len(c.hlines))
	}
	for i, want := range []string{colTotal, colNoise, colLoss, colGain, colLoss, colLoss, colLoss, colTotal} {
		if c.floats[i].color != want {
			t.Errorf("step %d colour %s, want %s", i, c.floats[i].color, want)
		}
	}
	if fb := c.floats[2]; fb.lo != f.Steps[1].Value || fb.hi != f.Steps[0].Value {
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
	for _, want := range []string{"## Attribution: two orders", "| pin | in the default order | in the reverse order | the orders' range | Shapley (mean of the orders) | share |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// The plan printed before the first run says which attribution it runs
// and why: exact by default when its runs fit the budget, else the
// order and its reverse, plainly order-dependent.
func TestWaterfallPlanSaysAttribution(t *testing.T) {
	for _, c := range []struct {
		o    waterfall.Options
		want string
	}{
		{waterfall.Options{}, "attribution: exact Shapley values over every subset of the moved pins, which depend on no order — the default, as its 16 runs fit --max-runs 64"},
		{waterfall.Options{Repeat: 5}, "attribution: the order and its reverse — exact Shapley values would need 80 runs, more than --max-runs 64 — so the attribution DEPENDS ON THE ORDER, and the waterfall says by how much the two orders disagree"},
		{waterfall.Options{Orders: 1}, "attribution: one order (--orders 1): each step's change in this order; the attribution DEPENDS ON THE ORDER by an amount this waterfall does not measure (exact Shapley values need 16 runs)"},
		{waterfall.Options{Exact: true}, "attribution: exact Shapley values over every subset of the moved pins, which depend on no order (--exact: 16 runs)"},
	} {
		to, err := scenario.Load("../scenarios/agentic-120k.yaml")
		if err != nil {
			t.Fatal(err)
		}
		p, err := waterfall.NewPlan(waterfall.NewBrochure(to), to, c.o)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteWaterfallPlan(&b, p.File(waterfall.Brochure, to.Path), p.Runs(), "3m0s"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%+v: plan\n%s\nlacks %q", c.o, b.String(), c.want)
		}
	}
}

// twoOrderValues make prompt and concurrency interact so much that the
// orders disagree on concurrency's direction: alone it gains (1,800 →
// 1,900), after the prompt it loses (1,700 → 1,400).
var twoOrderValues = map[string]float64{
	"": 1800, "output": 1800, "output+prompt": 1700, "output+prompt+concurrency": 1400, "output+prompt+concurrency+workload": 1100,
	"workload": 1500, "concurrency+workload": 1600, "prompt+concurrency+workload": 1150,
}

// A waterfall whose attribution depends on the order says so plainly in
// its text and on its chart, with how much the orders disagree and on
// which pins they disagree even in direction; one measured in one order
// says it cannot tell; an exact one says it depends on no order and how
// far one order's story would stray.
func TestWaterfallOrderDependence(t *testing.T) {
	two := synthWaterfall(t, waterfall.Options{Orders: 2}, twoOrderValues)
	var b strings.Builder
	if err := WriteWaterfallText(&b, two, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Attribution DEPENDS ON THE ORDER: the default and reverse orders disagree by up to ×",
		"they disagree in direction (a gain in one order, a loss in the other) on concurrency",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("two orders: text lacks %q:\n%s", want, b.String())
		}
	}
	svg := chartSVG(waterfallChart(two))
	if !slices.ContainsFunc(svgTexts(t, svg), func(s string) bool {
		return strings.Contains(s, "DEPENDS ON THE ORDER") && strings.Contains(s, "disagree by up to ×")
	}) {
		t.Errorf("two orders: the chart does not say it depends on the order:\n%s", svg)
	}

	one := synthWaterfall(t, waterfall.Options{Orders: 1}, synthValues)
	b.Reset()
	if err := WriteWaterfallText(&b, one, false); err != nil {
		t.Fatal(err)
	}
	if want := "Attribution DEPENDS ON THE ORDER: each step is the pin's cost in this order alone; how much another order differs was not measured"; !strings.Contains(b.String(), want) {
		t.Errorf("one order: text lacks %q", want)
	}

	exactValues := map[string]float64{}
	for _, k := range []string{"", "output", "prompt", "concurrency", "workload"} {
		exactValues[k] = 1800
	}
	for k, v := range twoOrderValues {
		exactValues[k] = v
	}
	for _, k := range []string{"output+prompt+concurrency", "output+concurrency", "prompt+concurrency", "output+workload", "prompt+workload",
		"output+prompt+workload", "output+concurrency+workload", "concurrency+workload"} {
		if _, ok := exactValues[k]; !ok {
			exactValues[k] = 1500
		}
	}
	exactValues["output+prompt"], exactValues["concurrency"] = 1700, 1900
	exact := synthWaterfall(t, waterfall.Options{}, exactValues)
	if exact.Attribution.Method != waterfall.MethodExact {
		t.Fatalf("default attribution %s, want exact", exact.Attribution.Method)
	}
	b.Reset()
	if err := WriteWaterfallText(&b, exact, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Attribution: exact Shapley values", "depend on no order", "one order's steps would say anything from"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exact: text lacks %q:\n%s", want, b.String())
		}
	}
	if c := waterfallChart(exact); !strings.Contains(c.title, "exact Shapley") || len(c.floats) != len(exact.Order)+2 {
		t.Errorf("exact chart %q with %d bars, want the Shapley waterfall's %d", c.title, len(c.floats), len(exact.Order)+2)
	}
}

// The SVG draws a step measured on invalid runs hatched and labelled
// "invalid: …", the claim as a labelled line, and the metric switch with
// why it costs what it costs; the steps table marks the invalid steps.
func TestWaterfallSVG(t *testing.T) {
	f := synthWaterfall(t, waterfall.Options{Orders: 1, Repeat: 3}, synthValues)
	c := f.Configs[slices.IndexFunc(f.Configs, func(c waterfall.Config) bool { return c.Key == "output+prompt+concurrency" })]
	r := f.Runs[c.Runs[2]]
	r.Valid, r.Invalid = false, []string{"errors: 38.5% of requests failed (http_429 20)", "prompt: the served workload is not the requested one"}
	if err := waterfall.Fill(f); err != nil {
		t.Fatal(err)
	}
	svg := chartSVG(waterfallChart(f))
	texts := svgTexts(t, svg)
	has := func(sub string) bool {
		return slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, sub) })
	}
	if i := slices.Index(texts, "invalid:"); i < 0 || i+2 >= len(texts) || texts[i+1] != "errors," || texts[i+2] != "prompt" {
		t.Errorf("the chart does not label the invalid step \"invalid: errors, prompt\"; its texts: %q", texts)
	}
	for _, want := range []string{"claimed 1,500 · measured 1,800 at the start (+20%)",
		"prefill 60% of the time", "TTFT p50 2,345 ms", "at production pins"} {
		if !has(want) {
			t.Errorf("the chart lacks %q; its texts: %q", want, texts)
		}
	}
	// Exactly the concurrency step is hatched: a fill by pattern.
	hatched := strings.Count(svg, `fill="url(#`)
	if hatched != 1 || !strings.Contains(svg, "<pattern") {
		t.Errorf("%d hatched bars, want 1 (concurrency)", hatched)
	}
	var b strings.Builder
	if err := WriteWaterfallText(&b, f, false); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "concurrency ") && strings.Contains(l, "→") {
			row = l
		}
	}
	if !strings.Contains(row, "✗ invalid (1 of 3 runs): errors, prompt") {
		t.Errorf("the steps table's concurrency row %q is not marked invalid", row)
	}
}

// chartSVG renders c alone.
func chartSVG(c *chart) string {
	var b strings.Builder
	c.render(&b)
	return b.String()
}

// svgTexts parses svg and returns every <text> element's text (its
// tspans joined by a space).
func svgTexts(t *testing.T, svg string) []string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	var out []string
	depth, cur := 0, []string(nil)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the chart is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "text" {
				depth, cur = depth+1, nil
			}
		case xml.CharData:
			if depth > 0 && strings.TrimSpace(string(e)) != "" {
				cur = append(cur, strings.TrimSpace(string(e)))
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				depth--
				out = append(out, strings.Join(cur, " "))
			}
		}
	}
}

// A waterfall run in compressed time says so beside its figures, with
// how far the unscaled time moved TTFT across its runs.
func TestWaterfallCompressed(t *testing.T) {
	f := synthWaterfall(t, waterfall.Options{Orders: 1}, synthValues)
	for i, r := range f.Runs {
		r.Compressed = &results.Compressed{Scale: 0.1, TTFTOverPct: float64(3 + 7*i)}
	}
	var b strings.Builder
	if err := WriteWaterfallText(&b, f, false); err != nil {
		t.Fatal(err)
	}
	want := "COMPRESSED TIME (10× faster): time outside the simulator's model is not scaled, so TTFT p50 reads 3–31% high across the runs"
	if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "Run without --time-scale for figures real time reproduces") {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
}

// A content step (the brochure's prose → the production scenario's
// code) is labelled with its pin and both contents wherever a step is
// words: the plan, the terminal bars and steps table, the chart's bar
// and the CSV row.
func TestWaterfallContentStep(t *testing.T) {
	to, err := scenario.Load("../scenarios/smoke.yaml")
	if err != nil {
		t.Fatal(err)
	}
	to.Pins.Prompt.Content = scenario.Content{scenario.ContentCode: 1}
	p, err := waterfall.NewPlan(waterfall.NewBrochure(to), to, waterfall.Options{Orders: 1})
	if err != nil {
		t.Fatal(err)
	}
	f := p.File(waterfall.Brochure, to.Path)
	var plan strings.Builder
	if err := WriteWaterfallPlan(&plan, f, p.Runs(), "8 requests"); err != nil {
		t.Fatal(err)
	}
	if want := "6 steps, in order: output, prompt, content, concurrency, window, metric"; !strings.Contains(plan.String(), want) {
		t.Errorf("plan lacks %q:\n%s", want, plan.String())
	}
	// The drafter guesses code better: the content step gains ×1.6.
	for i, c := range f.Configs {
		v := 300.0
		if slices.Contains(c.Moved, waterfall.PinContent) {
			v *= 1.6
		}
		m := waterfall.Measure{}
		for _, w := range []string{results.WindowBurst, results.WindowSteady, results.WindowAll} {
			m[w] = map[string]float64{waterfall.MetricDecode: v, waterfall.MetricEffective: v / 2, waterfall.MetricAggregate: v, waterfall.MetricTTFT: 100}
		}
		f.Configs[i].Meas, f.Configs[i].Runs, f.Configs[i].Seeds = []waterfall.Measure{m}, []int{len(f.Runs)}, []int64{7}
		f.Runs = append(f.Runs, &results.Run{Target: results.TargetInfo{Profile: "sim-spec-healthy", Simulated: true}, Valid: true})
	}
	if err := waterfall.Fill(f); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteWaterfallText(&text, f, false); err != nil {
		t.Fatal(err)
	}
	var bar, row string
	for _, l := range strings.Split(text.String(), "\n") {
		switch fs := strings.Fields(l); {
		case len(fs) == 0 || fs[0] != waterfall.PinContent:
		case strings.Contains(l, "→"):
			row = l
		default:
			bar = l
		}
	}
	if !strings.Contains(bar, "▓") || !strings.Contains(bar, "×1.60 (+60%)") || !strings.Contains(row, "prose → code") {
		t.Errorf("the content step's bar %q, row %q:\n%s", bar, row, text.String())
	}
	var page strings.Builder
	if err := WriteWaterfallHTML(&page, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "content: prose → code") {
		t.Error("the chart's content bar is not labelled \"content: prose → code\"")
	}
	var csv strings.Builder
	if err := WriteWaterfallCSV(&csv, f); err != nil {
		t.Fatal(err)
	}
	if want := `3,content,"prose","code","output+prompt+content"`; !strings.Contains(csv.String(), want) {
		t.Errorf("CSV lacks %q:\n%s", want, csv.String())
	}
}
