package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/capacity"
)

// Capacity files of real searches against the built-in simulator, made
// once by the commands in testdata/gen/README.md.
const (
	fixCapTwo   = "testdata/capacity-two.json"   // two tiers on a server of two sequences: tight N* = 2, loose N* ≥ 8
	fixCapThree = "testdata/capacity-three.json" // the same on a server of three: tight N* = 3
)

func loadCapacity(t *testing.T, path string) *capacity.File {
	t.Helper()
	f, err := capacity.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func capacityPage(t *testing.T, f *capacity.File) string {
	t.Helper()
	return string(render(t, func(w io.Writer) error { return RenderCapacity(w, FormatHTML, "c.json", f) }))
}

// svgsOf are the svg elements of class on page.
// (A chart's own </svg> starts a line; the svg that clips its lines to
// the plot area closes on the line it opens.)
func svgsOf(page, class string) []string {
	return regexp.MustCompile(`(?s)<svg [^>]*class="chart `+class+`".*?\n</svg>`).FindAllString(page, -1)
}

// The page is self-contained and well-formed, carries the answers, the
// plan, the points and the notes, and draws the curve twice (sixpin's
// per-stream figure and MLPerf's) with a mark per point, a ring per tier
// at its N*, and a staircase with no interpolation: every step of its
// path is horizontal or vertical.
func TestCapacityHTML(t *testing.T) {
	t.Parallel()
	f := loadCapacity(t, fixCapTwo)
	page := capacityPage(t, f)
	for _, bad := range []string{"<script", "src=", "@import", "url(", "https://", "<pre>", "NaN", "Inf"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	wellFormed(t, []byte(page))
	for _, want := range []string{"<h1>sixpin capacity: capacity against sim-two-seq", "SIMULATED", "N* per tier",
		"tight: 2 streams — at 3 the server queues", "confirmed: 2 passed 2 of 2 runs; 3 failed 2 of 2", "loose: N* ≥ 8 streams",
		"1 per GPU", "<th>varies</th>", "bracket by doubling or halving", "7 points, ", "tps_per_user", "TTFT p90 against the concurrency",
		"left off the chart of TTFT p90"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	curves := svgsOf(page, "curve")
	if len(curves) != 2 {
		t.Fatalf("%d curves, want 2", len(curves))
	}
	step := regexp.MustCompile(`^M[\d.]+ [\d.]+(H[\d.]+V[\d.]+)+$`)
	for i, svg := range curves {
		if n := strings.Count(svg, `<g class="pt"`); n != len(f.Points) {
			t.Errorf("curve %d: %d point marks, want %d", i, n, len(f.Points))
		}
		for _, tier := range []string{"tight", "loose"} {
			if !strings.Contains(svg, `<g class="nstar" data-tier="`+tier+`"`) {
				t.Errorf("curve %d: no N* mark for %s", i, tier)
			}
		}
		for _, l := range []string{">tight: N* = 2<", ">loose: N* ≥ 8<", `class="pl">8<`} {
			if !strings.Contains(svg, l) {
				t.Errorf("curve %d lacks the label %q", i, l)
			}
		}
		d := regexp.MustCompile(`<path class="frontier" d="([^"]*)"`).FindStringSubmatch(svg)
		if d == nil || !step.MatchString(d[1]) {
			t.Errorf("curve %d: the frontier is not a staircase: %q", i, d)
		}
	}
}

// The staircase joins the Pareto frontier only, across then down, from
// the y axis to the x axis: a dominated point is not on it, and nothing
// lies between two points but their corner.
func TestStaircase(t *testing.T) {
	t.Parallel()
	pts := [][2]float64{{24, 24}, {22, 45}, {12, 50}, {13, 51}, {6, 50}, {22, 44}}
	got := staircase(pts, 0, 0)
	want := [][2]float64{{0, 51}, {13, 45}, {22, 24}, {24, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("staircase %v, want %v", got, want)
	}
	if got := staircase([][2]float64{{5, 0}}, 0, 0); fmt.Sprint(got) != "[[0 0] [5 0]]" {
		t.Errorf("one point with no output: %v", got)
	}
}

// A point that produced no tokens, or whose figures are not numbers,
// breaks nothing: it stays off the curve (said under it), the page holds
// no NaN, and a file where no point has a per-stream figure says there is
// no curve.
func TestCapacityHTMLNoTokens(t *testing.T) {
	t.Parallel()
	f := loadCapacity(t, fixCapTwo)
	f.Points[2].Curve = capacity.Curve{}
	f.Points[6].Curve.EffectiveP50TokS, f.Points[6].Curve.AggregateTokS = math.NaN(), math.Inf(1)
	page := capacityPage(t, f)
	wellFormed(t, []byte(page))
	for _, bad := range []string{"NaN", "Inf"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"Not on the curve: point 3 (4 streams) has no per stream: effective tok/s p50",
		"Not on the curve: point 7 (8 streams) has no per stream: tps_per_user"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	curves := svgsOf(page, "curve")
	if len(curves) != 2 || strings.Count(curves[0], `<g class="pt"`) != 5 || strings.Count(curves[1], `<g class="pt"`) != 5 {
		t.Errorf("curves with the two points left off: %d", len(curves))
	}
	for i := range f.Points {
		f.Points[i].Curve = capacity.Curve{}
	}
	page = capacityPage(t, f)
	wellFormed(t, []byte(page))
	if len(svgsOf(page, "curve")) != 0 || !strings.Contains(page, "No point measured per stream: effective tok/s p50 (prefill included): no curve against it.") {
		t.Error("a file without per-stream figures draws a curve, or does not say it has none")
	}
}

// Each curve's labels as laid out (estimated boxes) lie inside the plot,
// overprint neither each other nor a mark, and none was left off.
func TestCapacityCurveLayout(t *testing.T) {
	t.Parallel()
	for _, path := range []string{fixCapTwo, fixCapThree} {
		f := loadCapacity(t, path)
		for _, ax := range curveAxes {
			c, off := capacityCurve(f, ax)
			if c == nil || len(off) > 0 || len(c.unplaced) > 0 {
				t.Fatalf("%s %s: off %v, unplaced %v", path, ax.key, off, c.unplaced)
			}
			if len(c.labels) != len(f.Points)+len(f.Answers) {
				t.Errorf("%s %s: %d labels, want %d", path, ax.key, len(c.labels), len(f.Points)+len(f.Answers))
			}
			for i, a := range c.labels {
				if !a.box.inside(c.plotRect()) {
					t.Errorf("%s %s: label %q outside the plot", path, ax.key, a.m.label)
				}
				for _, b := range c.labels[i+1:] {
					if a.box.overlaps(b.box) {
						t.Errorf("%s %s: labels %q and %q overlap", path, ax.key, a.m.label, b.m.label)
					}
				}
				for k := range c.marks {
					if c.markBox(&c.marks[k]).overlaps(a.box) {
						t.Errorf("%s %s: label %q overprints a mark", path, ax.key, a.m.label)
					}
				}
			}
		}
	}
}

// In headless Chromium the page renders without a console message, each
// curve has a mark per point and an N* mark per tier that has one, and no
// two texts of a curve — titles, ticks, axis labels, the legend, the
// points' and N*'s labels — overlap as drawn.
func TestCapacityHTMLInChromium(t *testing.T) {
	t.Parallel()
	b, ctx, dir := chromium(t)
	for _, path := range []string{fixCapTwo, fixCapThree} {
		f := loadCapacity(t, path)
		page := filepath.Join(dir, filepath.Base(path)+".html")
		if err := os.WriteFile(page, []byte(capacityPage(t, f)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Navigate(ctx, "file://"+page); err != nil {
			t.Fatal(err)
		}
		type box struct {
			S              string
			X0, Y0, X1, Y1 float64
		}
		var curves []struct {
			Points int
			NStar  []string
			Texts  []box
		}
		if err := b.Eval(ctx, `[...document.querySelectorAll("svg.curve")].map(svg => ({
			Points: svg.querySelectorAll("g.pt").length,
			NStar: [...svg.querySelectorAll("g.nstar")].map(g => g.dataset.tier),
			Texts: [...svg.querySelectorAll("text")].map(t => { const r = t.getBoundingClientRect();
				return {S: t.textContent, X0: r.left, Y0: r.top, X1: r.right, Y1: r.bottom}; }),
		}))`, &curves); err != nil {
			t.Fatal(err)
		}
		if len(curves) != 2 {
			t.Fatalf("%s: %d curves rendered, want 2", path, len(curves))
		}
		var tiers []string
		for _, a := range f.Answers {
			if f.NStarPoint(a) != nil {
				tiers = append(tiers, a.Tier)
			}
		}
		for i, c := range curves {
			if c.Points != len(f.Points) {
				t.Errorf("%s curve %d: %d point marks, want %d", path, i, c.Points, len(f.Points))
			}
			if fmt.Sprint(c.NStar) != fmt.Sprint(tiers) {
				t.Errorf("%s curve %d: N* marks %v, want %v", path, i, c.NStar, tiers)
			}
			if len(c.Texts) < len(f.Points)+len(tiers)+10 {
				t.Errorf("%s curve %d: only %d texts", path, i, len(c.Texts))
			}
			for j, a := range c.Texts {
				if a.X1-a.X0 <= 0 || a.Y1-a.Y0 <= 0 {
					t.Errorf("%s curve %d: %q has no box", path, i, a.S)
				}
				for _, o := range c.Texts[j+1:] {
					if a.X0 < o.X1 && o.X0 < a.X1 && a.Y0 < o.Y1 && o.Y0 < a.Y1 {
						t.Errorf("%s curve %d: %q %v and %q %v overlap", path, i, a.S, a, o.S, o)
					}
				}
			}
		}
	}
	for _, m := range b.Console() {
		t.Errorf("console: %s", m)
	}
}
