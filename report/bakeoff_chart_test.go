package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
)

// The bake-off page draws effective tok/s per context bucket, one line
// per vendor on one chart, each point a mark titled with its vendor,
// bucket and value (from the vendor's own bucket p50).
func TestBakeoffContextChart(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoffAgentic).Set
	var b bytes.Buffer
	if err := WriteSetHTML(&b, set); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := strings.Index(page, "Effective throughput by context depth, one line per vendor")
	if at < 0 {
		t.Fatal("page lacks the by-context chart")
	}
	svg := page[at:]
	svg = svg[:strings.Index(svg, "\n</svg>")] // the chart's own end (its lines' clip svgs close on their line)
	for i, name := range set.Profiles {
		if !strings.Contains(svg, `stroke-width="2"><title>`+name+`</title>`) {
			t.Errorf("no line for %s", name)
		}
		for _, bk := range set.Runs[i].ByContext {
			if bk.Requests == 0 {
				if strings.Contains(svg, html.EscapeString(name+", "+bk.Name+":")) {
					t.Errorf("a point for %s's empty bucket %s", name, bk.Name)
				}
				continue
			}
			want := name + ", " + bk.Name + ": " + num(bk.EffectiveTokS.P50) + " tok/s"
			if !strings.Contains(svg, "<title>"+html.EscapeString(want)) {
				t.Errorf("no point titled %q", want)
			}
		}
	}
	if n := len(regexp.MustCompile(`<path [^>]*stroke-width="2"><title>`).FindAllString(svg, -1)); n != len(set.Profiles) {
		t.Errorf("%d lines, want one per vendor", n)
	}
}

// With repeats the page's throughput scatter has one point per vendor
// (the mean of its runs), not one per run whose labels overprint.
func TestBakeoffParetoOnePointPerVendor(t *testing.T) {
	t.Parallel()
	set := repeated(t)
	var b bytes.Buffer
	if err := WriteSetHTML(&b, set); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	at := strings.Index(page, "Aggregate vs per-stream throughput")
	if at < 0 {
		t.Fatal("page lacks the throughput scatter")
	}
	svg := page[at:]
	svg = svg[:strings.Index(svg, "\n</svg>")] // the chart's own end (its lines' clip svgs close on their line)
	labels := regexp.MustCompile(`<text [^>]*class="pl"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	var got []string
	for _, l := range labels {
		got = append(got, l[1])
	}
	if strings.Join(got, ",") != "profile sim-local-27b,profile sim-cerebras-27b" {
		t.Errorf("point labels %q, want one per vendor", got)
	}
}
