package harness

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// The progress line says where the run is on its own clock and what is
// left of it, the streaming rate once measured, and the counts; the final
// line keeps the elapsed time, requests, tokens and errors.
func TestProgressLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		s     progressState
		line  string
		final string
	}{
		{"by duration", progressState{Elapsed: 62 * time.Second, Duration: 5 * time.Minute, Issued: 40, Done: 30, Failed: 1, InFlight: 10, Tokens: 12345, RateTokS: 1234.4},
			"1m02s of 5m00s [████░░░░░░░░░░░░░░░░] 20% · 3m58s left · 1,234 tok/s aggregate · 10 in flight · 30 done · 1 error",
			"done in 1m02s: 30 requests, 12,345 output tokens, 1 error"},
		{"by requests, rate not yet measured", progressState{Elapsed: 3 * time.Second, Requests: 200, Issued: 60, Done: 50, InFlight: 10, RateTokS: -1},
			"50 of 200 requests done · 3s [█████░░░░░░░░░░░░░░░] 25% · 140 to issue · 10 in flight · 50 done · 0 errors",
			"done in 3s: 50 requests, 0 output tokens, 0 errors"},
		{"agentic sessions, step of a bake-off", progressState{Step: "step 2 of 3: profile b", Elapsed: time.Hour + 2*time.Minute + 3*time.Second, Sessions: 4, Done: 1, Failed: 2, Tokens: 1, RateTokS: 0},
			"step 2 of 3: profile b · 1h02m03s · until 4 sessions end · 0 tok/s aggregate · 0 in flight · 1 done · 2 errors",
			"step 2 of 3: profile b · done in 1h02m03s: 1 request, 1 output token, 2 errors"},
		{"past its duration (in-flight requests finishing)", progressState{Elapsed: 70 * time.Second, Duration: time.Minute, RateTokS: -1},
			"1m10s of 1m00s [████████████████████] 100% · 0s left · 0 in flight · 0 done · 0 errors",
			"done in 1m10s: 0 requests, 0 output tokens, 0 errors"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := progressLine(c.s); got != c.line {
				t.Errorf("line\n got %q\nwant %q", got, c.line)
			}
			if got := finalLine(c.s); got != c.final {
				t.Errorf("final\n got %q\nwant %q", got, c.final)
			}
		})
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"abcdef", 0, "abcdef"},
		{"abcdef", 7, "abcdef"},
		{"abcdef", 6, "abcd…"},
		{"██████", 4, "██…"},
	} {
		if got := fit(c.s, c.width); got != c.want {
			t.Errorf("fit(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

// A run with progress on leaves its final line on the error stream.
func TestProgressLeavesItsFinalLine(t *testing.T) {
	t.Parallel()
	cfg := quiet(t, Config{Output: filepath.Join(t.TempDir(), "r.json")})
	cfg.Progress = true
	if _, err := Run(context.Background(), context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	errOut := cfg.ErrOut.(*bytes.Buffer).String()
	if !regexp.MustCompile(`\r\x1b\[Kdone in \d+s: 16 requests, [0-9,]+ output tokens, 0 errors\n`).MatchString(errOut) {
		t.Errorf("no final progress line in:\n%q", errOut)
	}
}

// A run's watch stops its sampler whatever watches it: none is left
// running after Run returns (with no live page or metrics, nothing else
// would stop it).
// Not parallel: it looks at every goroutine of the process.
func TestWatchStops(t *testing.T) {
	cfg := quiet(t, Config{Output: filepath.Join(t.TempDir(), "r.json")})
	if _, err := Run(context.Background(), context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	if strings.Contains(b.String(), "(*watch).sample") {
		t.Errorf("a watch's sampler is still running after Run returned:\n%s", b.String())
	}
}
