package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
)

// servedScenario writes a closed-loop scenario of streams streams
// against a simulator (over real HTTP, in compressed time) that runs at
// most 2 sequences at once, and returns its path and the profile's.
func servedScenario(t *testing.T, streams, declaredSeqs int, extra string) (scenarioPath, profilePath string) {
	t.Helper()
	dir := t.TempDir()
	profilePath = filepath.Join(dir, "seq2.yaml")
	prof := "kind: simulator\noutput_control: ignore_eos\ntokenizer: words\nsim: {model: m, timing: roofline, tokenizer: words, max_model_len: 32768, max_num_seqs: 2}\n"
	scenarioPath = filepath.Join(dir, "served.yaml")
	sc := `name: served
seed: 5
pins:
  model: {name: m}
  prompt: {tokens: 2000}
  output: {tokens: 200, exact: true}
  concurrency: {mode: closed, streams: ` + strconv.Itoa(streams) + extra + `}
  kv_cache: {max_num_seqs: ` + strconv.Itoa(declaredSeqs) + `}
duration: 40s
windows: {warmup: 5s, burst: 10s, steady: {start: 5s}}
`
	for path, src := range map[string]string{profilePath: prof, scenarioPath: sc} {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return scenarioPath, profilePath
}

// The concurrency pin is the concurrency the server served: 8 streams
// kept in flight against a server that runs 2 at once and queues the
// rest break it (the run is invalid, naming both figures and where the
// server's came from); 2 streams against it do not; a queueing study
// that declares queueing: allowed is told, not judged.
func TestServedConcurrency(t *testing.T) {
	t.Parallel()
	t.Run("8 streams, 2 served", func(t *testing.T) {
		t.Parallel()
		sc, prof := servedScenario(t, 8, 16, "")
		o, err := run(t, Config{ScenarioPath: sc, Profile: prof, TimeScale: 0.1, ServerMetrics: 2 * time.Second})
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("err %v, want the run invalid; concurrency: %s", err, o.Run.Pins.Concurrency.Reason)
		}
		c := o.Run.Pins.Concurrency
		if c.Verified != results.Contradicted || o.Run.Valid {
			t.Fatalf("verdict %s (%s), valid %v", c.Verified, c.Reason, o.Run.Valid)
		}
		s := c.Observed.Server
		if s == nil || s.Served > 2 || s.Queued < 2 || s.MaxNumSeqs != 2 || s.RunningMean == nil || *s.RunningPeak > 2 || s.QueuedTTFTShare == nil {
			w := o.Run.Windows[results.WindowSteady]
			t.Fatalf("served %+v (%s); TTFT %+v queue %+v E2E %+v", *s, s, w.TTFTMs, w.ServerQueueMs, w.E2EMs)
		}
		for _, want := range []string{"the server ran ", "max_num_seqs 2", "of their TTFT", "waiting"} {
			if !strings.Contains(c.Reason, want) {
				t.Errorf("reason lacks %q: %s", want, c.Reason)
			}
		}
		if !strings.Contains(strings.Join(o.Run.Invalid, "\n"), "concurrency: ") {
			t.Errorf("invalid reasons %q lack the concurrency pin", o.Run.Invalid)
		}
	})
	t.Run("2 streams, 2 served", func(t *testing.T) {
		t.Parallel()
		sc, prof := servedScenario(t, 2, 2, "")
		o, err := run(t, Config{ScenarioPath: sc, Profile: prof, TimeScale: 0.1, ServerMetrics: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if c := o.Run.Pins.Concurrency; c.Verified != results.Verified || c.Observed.Server == nil {
			t.Errorf("verdict %s (%s), server %+v", c.Verified, c.Reason, c.Observed.Server)
		}
	})
	t.Run("a queueing study", func(t *testing.T) {
		t.Parallel()
		sc, prof := servedScenario(t, 8, 2, ", queueing: allowed")
		o, err := run(t, Config{ScenarioPath: sc, Profile: prof, TimeScale: 0.1, ServerMetrics: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if c := o.Run.Pins.Concurrency; c.Verified != results.Verified || !strings.Contains(c.Reason, "queueing: allowed") {
			t.Errorf("verdict %s (%s)", c.Verified, c.Reason)
		}
	})
}

// Every ✗ makes a run invalid, the kv_cache pin's too (a server that runs
// 2 sequences where 16 were declared), naming the pin; a user who accepts
// that pin's mismatch knowingly keeps the run valid, and the results and
// the card say so.
func TestEveryContradictedPinInvalidates(t *testing.T) {
	t.Parallel()
	sc, prof := servedScenario(t, 2, 16, "")
	o, err := run(t, Config{ScenarioPath: sc, Profile: prof, TimeScale: 0.1, Duration: 20 * time.Second})
	if !errors.Is(err, ErrInvalid) || o.Run.Valid || o.Run.Pins.KVCache.Verified != results.Contradicted {
		t.Fatalf("err %v, valid %v, kv_cache %s", err, o.Run.Valid, o.Run.Pins.KVCache.Verified)
	}
	if got := strings.Join(o.Run.Invalid, "\n"); !strings.Contains(got, "kv_cache: max_num_seqs declared 16, server 2") {
		t.Errorf("invalid reasons %q lack the kv_cache pin", got)
	}

	o, err = run(t, Config{ScenarioPath: sc, Profile: prof, TimeScale: 0.1, Duration: 20 * time.Second, AllowPinMismatch: []string{"kv_cache"}})
	if err != nil || !o.Run.Valid || o.Run.Pins.KVCache.Verified != results.Contradicted {
		t.Fatalf("allowed: err %v, valid %v (%q), kv_cache %s", err, o.Run.Valid, o.Run.Invalid, o.Run.Pins.KVCache.Verified)
	}
	back, err := results.ReadFile(o.Path)
	if err != nil || !slices.Equal(back.AllowPinMismatch, []string{"kv_cache"}) {
		t.Fatalf("results file: %v, allow_pin_mismatch %q", err, back.AllowPinMismatch)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, back); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "accepted knowingly (--allow-pin-mismatch kv_cache)") {
		t.Errorf("the card does not say the mismatch was accepted:\n%s", b.String())
	}
	if err := CheckPinNames("--allow-pin-mismatch", []string{"kv"}); err == nil || !strings.Contains(err.Error(), "kv_cache") {
		t.Errorf("a wrong pin name: %v", err)
	}
}
