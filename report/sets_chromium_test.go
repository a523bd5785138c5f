package report

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/headless"
)

// A set's page — a sweep, repeats, a bake-off — renders in headless
// Chromium without a console message, and no two texts of one of its
// charts (ticks, axis labels, legend, the points' labels) overlap. With
// SIXPIN_SCREENSHOTS=DIR set, each page's screenshot is saved there.
func TestSetHTMLInChromium(t *testing.T) {
	t.Parallel()
	bin := headless.Find()
	if bin == "" {
		t.Skip("no chromium binary (apt-get install chromium; .ci/run installs it)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := headless.Start(ctx, bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	shots := os.Getenv("SIXPIN_SCREENSHOTS")
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
		if shots != "" {
			png, err := b.Screenshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(shots, "set-"+name+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range b.Console() {
		t.Errorf("console: %s", m)
	}
}
