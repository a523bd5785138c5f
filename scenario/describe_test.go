package scenario

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		file string
		want []string // regexps, each matching a whole line of the output
	}{
		{"agentic-open.yaml", []string{
			`prompt       lognormal\(median 50000, σ 0\.6\) in \[11000, 120000\] tokens \(mean 5\d,\d{3}\); drift ≤ 2% per request`,
			`output       uniform \[150, 500\] tokens \(mean 3[23]\d\); mean drift ≤ 10%`,
			`concurrency  open loop, 2\.5 req/s, gamma arrivals \(burstiness 0\.5\), at most 64 in flight`,
			`run          10m or 1000 requests, whichever comes first; 1000 arrivals planned; request_timeout 10m`,
			`windows      warmup 1m, burst 10s, steady \[2m, 9m\)`,
			`model        qwen3\.8-27b, 27B params \(3B active\)`,
			`target       endpoint http://127\.0\.0\.1:8000/v1, model qwen3\.8-27b`,
		}},
		{"mix-classes.yaml", []string{
			`prompt       per class \(mean [\d,]+ over the mix\); drift ≤ 2% per request`,
			`output       200 tokens where a class sets none \(mean 1\d\d over the mix\); mean drift ≤ 10%`,
			`mix          2 classes, input:output [\d.]+`,
			`  chat       weight 0\.7 \(70%\): prompt normal\(mean 1000, stddev 200\) in \[500, 1500\], output inherited`,
			`  agent      weight 0\.3 \(30%\): prompt empirical\{8000: 3, 16000: 2, 32000: 1\}, output 50 exact`,
			`slo          none`,
			`warning      testdata/mix-classes\.yaml:5:40: pins\.concurrency\.streams: .*`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := s.Describe(&b); err != nil {
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

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestDescribeWriteError(t *testing.T) {
	s, err := Load(filepath.Join("testdata", "chat-8k-c16.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Describe(&failingWriter{n: 3}); err == nil || err.Error() != "disk full" {
		t.Errorf("Describe = %v, want the writer's error", err)
	}
}
