package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/record"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
	"github.com/sixpin/sixpin/results"
)

// t0 is 2026-10-01 12:00 UTC in Unix ms.
var t0 = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC).UnixMilli()

const sec = int64(1000)

// goldenReport is a small report with every section: two models, a tool
// cut, part timings, three context buckets, prices and limits.
func goldenReport(t *testing.T) *analyze.Report {
	d := oc.New(t, t.TempDir())
	for i := range 6 {
		at := t0 + int64(i)*20*sec
		ctx := 8000 + 12000*i
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_c%d", i), Session: "ses_c", Provider: "cerebras", Model: "qwen-3.8-27b",
			Created: at, Completed: at + 4*sec, Finish: "tool-calls", Input: ctx / 8, CacheRead: ctx - ctx/8, Output: 300 + 50*i, Reasoning: 100,
			Parts: []oc.Part{oc.Reasoning(at+300+int64(i)*50, at+500), oc.Text(at+500, at+700), oc.Tool(at+800+int64(i)*40, at+4*sec)}})
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_l%d", i), Session: "ses_l", Provider: "local", Model: "qwen-3.8-27b",
			Created: at, Completed: at + 3*sec + int64(i)*300, Finish: "stop", Input: ctx / 20, CacheRead: ctx - ctx/20, Output: 250 + 10*i,
			Parts: []oc.Part{oc.Text(at+400+int64(i)*30, at+3*sec+int64(i)*300)}})
	}
	d.Raw("msg_x", "ses_l", t0+500*sec, `{"role":"assistant"`)
	price := 0.2
	r, err := analyze.Analyze(context.Background(), analyze.Options{MinOutputTokens: analyze.DefaultMinOutputTokens, DBs: []string{d.Close()}, Profile: "test-cloud", Now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Since: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Models: []string{"qwen"},
		Pricing: &record.Pricing{InputPerMTok: 0.99, CachedInputPerMTok: &price, OutputPerMTok: 1.49},
		Limits:  &results.RateLimits{RequestsPerMinute: 3, TokensPerMinute: 150000, UncachedTokensPerMinute: 20000}})
	if err != nil {
		t.Fatal(err)
	}
	r.Databases[0].Path = "opencode.db"
	return r
}

func TestRenderGolden(t *testing.T) {
	r := goldenReport(t)
	for _, f := range AnalyzeFormats {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteAnalyze(&buf, r, f); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "analyze-"+f+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", f, golden, buf.String())
			}
		})
	}
	if err := WriteAnalyze(&bytes.Buffer{}, r, "html"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestRenderParses(t *testing.T) {
	r := goldenReport(t)
	var buf bytes.Buffer
	ar := analyzeReport{r}
	ar.writeJSON(&buf)
	var back analyze.Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not read back: %v", err)
	}
	if len(back.Models) != 2 || back.Models[0].EffectiveTokS.N != 6 || back.Counts.Skipped.MalformedMessages != 1 {
		t.Errorf("JSON read back: %+v", back)
	}
	buf.Reset()
	ar.writeCSV(&buf)
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 3 || len(recs[0]) != len(analyzeCSVHeader) || len(recs[1]) != len(analyzeCSVHeader) {
		t.Fatalf("CSV: %d records, err %v", len(recs), err)
	}
	buf.Reset()
	ar.writeMarkdown(&buf)
	for _, want := range []string{"| cerebras/qwen-3.8-27b | 6 |", "## Cost", "tokens_per_minute | 150,000"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
func TestAnalyzeCharts(t *testing.T) {
	r := goldenReport(t)
	dir := filepath.Join(t.TempDir(), "charts")
	files, err := WriteAnalyzeCharts(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || filepath.Base(files[0]) != ChartBoxPlot+".svg" || filepath.Base(files[1]) != ChartContext+".svg" {
		t.Fatalf("files %v, want the box plot and the context chart as SVG", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 1000 {
			t.Fatalf("%s: %d bytes, %v", f, len(data), err)
		}
		var doc struct {
			XMLName xml.Name
		}
		if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" {
			t.Errorf("%s is not an SVG document: %v", f, err)
		}
		for _, want := range []string{"cerebras/qwen-3.8-27b", "local/qwen-3.8-27b", "<style>", "effective"} {
			if !bytes.Contains(data, []byte(want)) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
		if bytes.Contains(data, []byte("<script")) || bytes.Contains(data, []byte("http://")) && !bytes.Contains(data, []byte(`xmlns="http://www.w3.org/2000/svg"`)) {
			t.Errorf("%s is not self-contained", f)
		}
	}
	if _, err := WriteAnalyzeCharts(dir, &analyze.Report{}); err == nil {
		t.Error("charts of no samples: no error")
	}
}

// TestAnalyzeReferenceReadings: the headline says how many generations
// had a token count taken as 0, and how many unreadable parts were
// ignored.
func TestAnalyzeReferenceReadings(t *testing.T) {
	r := goldenReport(t)
	r.Counts.MissingTokens = 2
	r.Counts.MalformedParts, r.Counts.MalformedPartMessages = 3, 1
	for _, f := range []string{"text", "md"} {
		var buf bytes.Buffer
		if err := WriteAnalyze(&buf, r, f); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"token counts missing (taken as 0, as throughput.py reads them): 2 generations",
			"unreadable parts ignored (as throughput.py ignores them): 3 parts in 1 message, kept without a first-token time"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s lacks %q:\n%s", f, want, buf.String())
			}
		}
	}
}
