package report

import (
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/scenario"
)

func TestDescribeScenario(t *testing.T) {
	tests := []struct {
		file string
		want []string // regexps, each matching a whole line of the output
	}{
		{"agentic-open.yaml", []string{
			`prompt       lognormal\(median 50000, σ 0\.6\) in \[11000, 120000\] tokens \(mean 5\d,\d{3}\), content prose; drift ≤ 2% per request`,
			`output       uniform \[150, 500\] tokens \(mean 3[23]\d\); mean drift ≤ 10%`,
			`concurrency  open loop, 2\.5 req/s gamma arrivals \(burstiness 0\.5\), at most 64 in flight`,
			`mix          input:output 150; the plan's requests average 1\d\d`,
			`run          10m or 1000 requests, whichever comes first; 1000 arrivals planned; request_timeout 10m`,
			`windows      warmup 1m, burst 10s, steady \[2m, 9m\)`,
			`model        qwen3\.8-27b, 27B params \(3B active\)`,
			`kv_cache     max_model_len 131,072`,
			`target       endpoint http://127\.0\.0\.1:8000/v1, model qwen3\.8-27b`,
		}},
		{"mix-classes.yaml", []string{
			`prompt       per class \(see mix\): mean [\d,]+ tokens over the mix, content prose; drift ≤ 2% per request`,
			`output       200 tokens \(mean 1\d\d\); mean drift ≤ 10%`,
			`concurrency  closed loop, 4 concurrent streams`,
			`mix          input:output [\d.]+; classes chat×0\.7 agent×0\.3`,
			`  chat       weight 0\.7 \(70%\): prompt normal\(mean 1000, stddev 200\) in \[500, 1500\], output inherited`,
			`  agent      weight 0\.3 \(30%\): prompt empirical\{8000: 3, 16000: 2, 32000: 1\}, output 50 exact`,
			`slo          none`,
			`warning      .*testdata/mix-classes\.yaml:5:40: pins\.concurrency\.streams: .*`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := scenario.Load(filepath.Join("..", "scenario", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := DescribeScenario(&b, s); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !regexp.MustCompile(`(?m)^` + w + `$`).MatchString(b.String()) {
					t.Errorf("no line matches %s in\n%s", w, b.String())
				}
			}
		})
	}
}

// validate's pin lines are the pin card's declared column, word for word.
func TestDescribeSharesTheCardsWords(t *testing.T) {
	run := load(t, fixBase)[0].Run
	s, err := scenario.Load(filepath.Join("testdata", "gen", "smoke.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := DescribeScenario(&b, s); err != nil {
		t.Fatal(err)
	}
	for _, row := range PinCard(run).Rows[:6] { // the seventh, content, is the content check's
		text := row.Declared
		// What the run resolved and validate cannot know yet.
		text = strings.TrimSuffix(text, `; requested as "sim-local-27b"`)
		text = strings.TrimSuffix(text, ", built by tokenizer qwen2")
		text = strings.Replace(text, "exact via ignore_eos", "exact", 1)
		if !strings.Contains(b.String(), row.Pin+strings.Repeat(" ", 13-len(row.Pin))+text) {
			t.Errorf("validate words %s otherwise than the card (%q):\n%s", row.Pin, text, b.String())
		}
	}
}

// Every ready scenario and test scenario describes without error.
func TestDescribeEveryScenario(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "scenario", "testdata", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("..", "scenarios", "*.yaml"))
	for _, f := range append(files, more...) {
		s, err := scenario.Load(f)
		if err != nil {
			continue // the invalid ones are scenario's to test
		}
		if err := DescribeScenario(io.Discard, s); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestDescribeWriteError(t *testing.T) {
	s, err := scenario.Load(filepath.Join("..", "scenario", "testdata", "chat-8k-c16.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := DescribeScenario(&failingWriter{n: 3}, s); err == nil || err.Error() != "disk full" {
		t.Errorf("DescribeScenario = %v, want the writer's error", err)
	}
}
