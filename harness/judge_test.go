package harness

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// A ten-minute run whose TTFT breaks its abort_on from the first request
// stops after a handful of requests: marked stopped early (not
// incomplete), saying why and when, and failing (exit 1). The results
// file keeps it.
func TestAbortOnStopsTheRun(t *testing.T) {
	t.Parallel()
	o, err := run(t, Config{ScenarioPath: "testdata/abort.yaml", Profile: fixedProfile(t, "slow", "400ms", "1ms"), TimeScale: 0.05})
	if !errors.Is(err, ErrRunFailed) || !strings.Contains(err.Error(), "stopped early at") {
		t.Fatalf("err %v", err)
	}
	r := o.Run
	e := r.StoppedEarly
	if e == nil || !e.Aborted || r.Incomplete || !strings.HasPrefix(e.Reason, "tier abort_on broken at ") ||
		!strings.Contains(e.Reason, "ttft_ms.p90 <= 100: 3 of 3 above 100 ms (a p90 allows 10.0%)") {
		t.Fatalf("stopped early %+v, incomplete %v", e, r.Incomplete)
	}
	// Two streams, each request 0.4 s: the third judged request ends in
	// the first seconds of ten minutes. Counted in requests; the times
	// only bound it generously (a loaded machine stretches them: 2.55 s
	// once in CI, against 2.5 s asserted before).
	if e.AtS > 60 || r.Errors.Requests > 12 || r.Windows[results.WindowAll].EndS > 90 {
		t.Errorf("stopped at %v s after %d requests, run ended %v s", e.AtS, r.Errors.Requests, r.Windows[results.WindowAll].EndS)
	}
	back, err := results.ReadFile(o.Path)
	if err != nil || back.StoppedEarly == nil || back.StoppedEarly.Reason != e.Reason {
		t.Errorf("read back: %v %+v", err, back)
	}
}

// --abort-on adds to the scenario's; a condition that does not parse or
// names what the run cannot measure is refused before load, the
// scenario's at file:line:col.
func TestAbortOnRefusals(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	src, err := os.ReadFile("testdata/abort.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(strings.Replace(string(src), "ttft_ms.p90 <= 100", "ttft.p90 <= 100", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ScenarioPath: bad}, bad + `:10:12: abort_on[0]: unknown metric "ttft"`},
		{Config{ScenarioPath: "testdata/exact.yaml", AbortOn: []string{"ttft_ms.p90<=100, ttft_ms.p90"}}, "--abort-on: condition 2: "},
		{Config{ScenarioPath: "testdata/exact.yaml", AbortOn: []string{"lifetime_min.p50 >= 3"}}, "tier abort_on: lifetime_min.p50: this run cannot measure it"},
	} {
		c.cfg.Profile = fixedProfile(t, "fast", "1ms", "1ms")
		o, err := run(t, c.cfg)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) || o != nil {
			t.Errorf("%v, want bad input %q", err, c.want)
		}
	}
}

// A server past its cliff answers in minutes: a request still waiting
// for its first token past the TTFT bound counts as beyond it while in
// flight, so abort_on stops the run within a second or two, not when
// the first answers come (here 30 s, or when the run cuts them).
func TestAbortOnCountsRequestsInFlight(t *testing.T) {
	t.Parallel()
	sc := scenarioFile(t, `name: stuck
seed: 3
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 8, exact: true}
  concurrency: {mode: closed, streams: 4}
duration: 10m
windows: {warmup: 0s, burst: 1s}
abort_on: [ttft_ms.p90 <= 100]
`)
	// The run's requests (8 tokens out) wait 30 s before the simulator
	// sees them, or until they are cut; the probes pass at once.
	stuck := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"max_tokens":8`)) {
				select {
				case <-time.After(30 * time.Second):
				case <-r.Context().Done():
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
	url := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, stuck)
	began := time.Now()
	o, err := run(t, Config{ScenarioPath: sc, Endpoint: url, Model: "m", Tokenizer: "words", Grace: 100 * time.Millisecond})
	if !errors.Is(err, ErrRunFailed) || o == nil {
		t.Fatalf("err %v", err)
	}
	e := o.Run.StoppedEarly
	if e == nil || !e.Aborted || !strings.Contains(e.Reason, "3 of 3 above 100 ms") || e.AtS > 10 || time.Since(began) > 20*time.Second {
		t.Fatalf("stopped early %+v after %v", e, time.Since(began))
	}
}
