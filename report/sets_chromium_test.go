package report

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A set's page — a sweep, repeats, a bake-off — renders in headless
// Chromium without a console message, and no two texts of one of its
// charts (ticks, axis labels, legend, the points' labels) overlap. With
// SIXPIN_SCREENSHOTS=DIR set, each page's screenshot is saved there.
func TestSetHTMLInChromium(t *testing.T) {
	t.Parallel()
	b, ctx, dir := chromium(t)
	for _, fix := range []string{fixSweep, fixRepeat, fixBakeoff, fixBakeoffAgentic} {
		name := strings.TrimSuffix(filepath.Base(fix), ".json")
		page := filepath.Join(dir, name+".html")
		html := render(t, func(w io.Writer) error { return RenderSet(w, FormatHTML, loadSet(t, fix)) })
		if err := os.WriteFile(page, html, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := b.Navigate(ctx, "file://"+page); err != nil {
			t.Fatal(err)
		}
		var charts []textBoxes
		if err := b.Eval(ctx, `[...document.querySelectorAll("svg.chart")].map((s) => ({Texts: [...s.querySelectorAll("text")]
			.filter((e) => e.getClientRects().length && e.textContent.trim())
			.map((e) => { const r = e.getBoundingClientRect(); return {S: e.textContent.trim(), X0: r.left, Y0: r.top, X1: r.right, Y1: r.bottom}; })}))`, &charts); err != nil {
			t.Fatal(err)
		}
		if len(charts) == 0 {
			t.Errorf("%s: no chart drawn", name)
		}
		for k, c := range charts {
			noOverlap(t, name+" chart "+string(rune('0'+k)), c.Texts)
		}
		saveScreenshot(t, ctx, b, "set-"+name+".png")
	}
	for _, m := range b.Console() {
		t.Errorf("console: %s", m)
	}
}
