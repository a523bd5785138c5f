package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
)

// The verdict line follows the figures: the vendor with the higher
// effective throughput is the fastest whichever it is, a throttled one
// loses its own share of requests, a vendor that fails the gate says so,
// and usable vendors come first.
func TestBakeoffVerdictFollowsTheFigures(t *testing.T) {
	t.Parallel()
	eff := func(r *results.Run) float64 { return r.Windows[r.Headline].EffectiveTokS.P50 }
	for _, c := range []struct {
		name string
		edit func(set *results.Set)
	}{
		{"as measured", func(*results.Set) {}},
		{"the other vendor faster", func(set *results.Set) {
			w := set.Runs[0].Windows[set.Runs[0].Headline]
			d := *w.EffectiveTokS
			d.P50 = 3 * eff(set.Runs[1])
			w.EffectiveTokS = &d
		}},
		{"the local vendor fails the gate", func(set *results.Set) { set.Gates[set.Profiles[0]] = "fail" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set := loadSet(t, fixBakeoffAgentic).Set
			c.edit(set)
			line := bakeoffVerdict(set, viewBakeoff(set))
			if want := fmt.Sprintf("for %s at %d agents: ", set.Scenario, set.Runs[0].Pins.Concurrency.Declared.Streams); !strings.HasPrefix(line, want) {
				t.Errorf("verdict %q, want it to start %q", line, want)
			}
			fast, slow := 0, 1
			if eff(set.Runs[1]) > eff(set.Runs[0]) {
				fast, slow = 1, 0
			}
			if !strings.Contains(line, set.Profiles[fast]+" is fastest") && !strings.Contains(line, set.Profiles[fast]+" is usable, fastest") {
				t.Errorf("verdict %q does not name %s fastest", line, set.Profiles[fast])
			}
			if strings.Contains(line, set.Profiles[slow]+" is fastest") {
				t.Errorf("verdict %q names the slower %s fastest", line, set.Profiles[slow])
			}
			cloud := set.Runs[1]
			share := float64(cloud.Errors.ByClass["http_429"]) / float64(cloud.Errors.Requests)
			if want := "loses " + pct(share) + " of its requests to its rate limit"; !strings.Contains(line, want) {
				t.Errorf("verdict %q lacks %q", line, want)
			}
			gateFailed := set.Gates[set.Profiles[0]] == "fail"
			if gateFailed != strings.Contains(line, "fails your intelligence gate") {
				t.Errorf("verdict %q: gate failed %v", line, gateFailed)
			}
			if first := strings.Index(line, set.Profiles[0]); !gateFailed && first > strings.Index(line, set.Profiles[1]) {
				t.Errorf("verdict %q: the usable vendor is not first", line)
			}
			if gateFailed && !strings.Contains(line, "no vendor is usable") {
				t.Errorf("verdict %q: neither vendor is usable and it does not say so", line)
			}
		})
	}
}

// The verdict comes first — right under the title — in the terminal, the
// Markdown memo and the page.
func TestBakeoffVerdictFirst(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoffAgentic).Set
	line := bakeoffVerdict(set, viewBakeoff(set))
	for _, c := range []struct {
		format Format
		want   string
	}{
		{FormatText, "\n\nVERDICT: " + line + "\n\n"},
		{FormatMarkdown, "\n\n**Verdict:** " + line + "\n\n"},
		{FormatHTML, "</p>\n<p class=\"verdict\"><b>Verdict:</b> " + strings.ReplaceAll(line, "'", "&#39;") + "</p>\n"},
	} {
		var b bytes.Buffer
		if err := RenderSet(&b, c.format, SetInput{Name: fixBakeoffAgentic, Set: set}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		at := strings.Index(out, c.want)
		if at < 0 || strings.Contains(out[:at], "PINS") || strings.Contains(out[:at], "<table") || strings.Contains(out[:at], "| pin |") {
			t.Errorf("%s: the verdict is not first under the title:\n%s", c.format, out[:min(len(out), 800)])
		}
	}
}
