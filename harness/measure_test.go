package harness

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// scenarioFile writes a scenario and returns its path.
func scenarioFile(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// simServer serves the simulator over real HTTP; wrap, when not nil,
// stands in front of it.
func simServer(t *testing.T, cfg sim.Config, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = s
	if wrap != nil {
		h = wrap(s)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv.URL + "/v1"
}

// chatOnly hides every endpoint but chat completions: a server that
// tells nothing about its context.
func chatOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

const longAndShort = `name: long-short
seed: 4
pins:
  model: {name: m}
  prompt: {tokens: {dist: empirical, values: [100, 3000]}}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 2}
requests: 40
`

// Prompts from {100, 3000} against a 2,000-token server: every long one
// is refused. The pins compare what all issued requests asked for with
// what was served, so the run is invalid and says why — even when the
// server tells nothing of its context.
func TestFailedClassOfRequestsInvalidates(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words", MaxModelLen: 2000}, chatOnly)
	o, err := run(t, Config{ScenarioPath: scenarioFile(t, longAndShort), Endpoint: endpoint, Model: "m", Tokenizer: "words"})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v, want invalid", err)
	}
	p := o.Run.Pins.Prompt
	if p.Verified != results.Contradicted || !strings.Contains(p.Reason, "of 40 requests failed") || !strings.Contains(p.Reason, "prompts of 100 against") {
		t.Errorf("prompt pin %s: %s", p.Verified, p.Reason)
	}
	if s := p.Observed.Served; s == nil || s.Failed == 0 || s.MeanOK != 100 {
		t.Errorf("served: %+v", s)
	}
	if o.Run.Valid || !strings.Contains(strings.Join(o.Run.Invalid, "; "), "prompt: the served workload is not the requested one") {
		t.Errorf("invalid: %v", o.Run.Invalid)
	}
	if m := o.Run.Pins.Mix; m.Verified != results.Contradicted {
		t.Errorf("mix pin %s: %s", m.Verified, m.Reason)
	}
}

// A server that says its context is 2,000 tokens: sixpin says how many
// planned prompts will not fit before the first request, and marks the
// prompt pin ✗ — unless told to send them on purpose.
func TestOverContextIsSaidAtTheStart(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words", MaxModelLen: 2000}, nil)
	cfg := Config{ScenarioPath: scenarioFile(t, longAndShort), Endpoint: endpoint, Model: "m", Tokenizer: "words"}
	o, err := run(t, cfg)
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v, want invalid", err)
	}
	oc := o.Run.Pins.Prompt.Observed.OverContext
	if oc == nil || oc.Planned != 40 || oc.Exceeding == 0 || oc.ContextTokens != 2000 {
		t.Fatalf("over context: %+v", oc)
	}
	if p := o.Run.Pins.Prompt; p.Verified != results.Contradicted || !strings.Contains(p.Reason, "of 40 planned prompts exceed the server's 2,000-token context") {
		t.Errorf("prompt pin %s: %s", p.Verified, p.Reason)
	}
	cfg.AllowOverContext = true
	cfg = quiet(t, cfg)
	cfg.Output = filepath.Join(t.TempDir(), "r.json")
	o, err = Run(context.Background(), context.Background(), cfg)
	if o == nil {
		t.Fatal(err)
	}
	if got := cfg.ErrOut.(interface{ String() string }).String(); !strings.Contains(got, "of 40 planned prompts exceed the server's 2,000-token context") ||
		!strings.Contains(got, "sent on purpose") || strings.Count(got, "planned prompts exceed") != 1 {
		t.Errorf("stderr:\n%s", got)
	}
	// Sent on purpose, the refusals are measured; the served workload
	// still is not the declared one.
	if o.Run.Errors.ByClass["http_4xx"] != o.Run.Pins.Prompt.Observed.OverContext.Exceeding {
		t.Errorf("errors %v, %d over the context", o.Run.Errors.ByClass, o.Run.Pins.Prompt.Observed.OverContext.Exceeding)
	}
}

// A server that dies mid-run: its requests fail at once. The run is
// invalid over its error budget (exit 1), and the concurrency pin is not
// verified by streams busy failing.
// Not parallel: the verdict of a run this short is read off its steady
// window, which a test beside it shifts (slowed, the six requests served
// fill most of the 1.5 s).
func TestServerDyingMidRunIsInvalid(t *testing.T) {
	var served atomic.Int64
	dies := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") && served.Add(1) > 6 {
				http.Error(w, `{"error":{"message":"gone"}}`, http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond},
		Tokenizer: "words"}, dies)
	o, err := run(t, Config{ScenarioPath: scenarioFile(t, `name: dies
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 20}
  concurrency: {mode: closed, streams: 2}
duration: 1500ms
`), Endpoint: endpoint, Model: "m", Tokenizer: "words"})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err %v, want invalid", err)
	}
	if !strings.Contains(strings.Join(o.Run.Invalid, "; "), "over the error budget of 1% (the default") {
		t.Errorf("invalid: %v", o.Run.Invalid)
	}
	if c := o.Run.Pins.Concurrency; c.Verified == results.Verified {
		t.Errorf("concurrency verified by failing requests: %s (served in flight %v)", c.Reason, c.Observed.MeanServedInFlight)
	}
}

// Interrupted before any request completed: the reason says so, not that
// the client could not keep its streams busy.
func TestInterruptBeforeAnyRequestCompleted(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	stop := make(chan struct{})
	hang := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/chat/completions") || n.Add(1) == 1 { // the template probe
				next.ServeHTTP(w, r)
				return
			}
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, hang)
	t.Cleanup(func() { close(stop) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	cfg := quiet(t, Config{ScenarioPath: "testdata/loose.yaml", Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Grace: 50 * time.Millisecond, Output: filepath.Join(t.TempDir(), "r.json")})
	o, err := Run(ctx, context.Background(), cfg)
	if !errors.Is(err, ErrInterrupted) || o == nil {
		t.Fatalf("err %v", err)
	}
	got := strings.Join(o.Run.Invalid, "; ")
	if o.Run.Valid || !strings.Contains(got, "interrupted before any request completed") || strings.Contains(got, "keep its streams busy") {
		t.Errorf("valid %v, invalid: %s", o.Run.Valid, got)
	}
	if card := cardText(t, o.Run); !strings.Contains(card, "Little's law unknown") || !strings.Contains(card, "prefill unknown") {
		t.Errorf("no successful request, yet figures:\n%s", card)
	}
}

// A second interrupt cuts the requests in flight before their grace
// period runs out, and every text says so: the requests' message and the
// run's reason for being incomplete, never "after the grace period".
func TestSecondInterruptSaysWhatHappened(t *testing.T) {
	t.Parallel()
	hanging := make(chan struct{}, 64)
	stop := make(chan struct{})
	hang := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The scenario's prompts are 200 words or more; the probes'
			// are a few.
			if !strings.HasSuffix(r.URL.Path, "/chat/completions") || r.ContentLength < 1000 {
				next.ServeHTTP(w, r)
				return
			}
			hanging <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, hang)
	t.Cleanup(func() { close(stop) })
	ctx, cancel := context.WithCancel(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	go func() {
		<-hanging // a request is in flight: interrupt twice
		cancel()
		cancelHard()
	}()
	cfg := quiet(t, Config{ScenarioPath: "testdata/loose.yaml", Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Grace: time.Hour, Output: filepath.Join(t.TempDir(), "r.json")})
	o, err := Run(ctx, hard, cfg)
	if !errors.Is(err, ErrInterrupted) || o == nil {
		t.Fatalf("err %v", err)
	}
	ex := strings.Join(o.Run.Errors.Examples[string(record.ErrInterrupted)], "; ")
	if o.Run.Errors.ByClass[string(record.ErrInterrupted)] == 0 || !strings.Contains(ex, "second interrupt") || strings.Contains(ex, "after the grace period") {
		t.Errorf("interrupted %d, messages %q; want the second interrupt named (errors %+v)", o.Run.Errors.ByClass[string(record.ErrInterrupted)], ex, o.Run.Errors)
	}
	if r := o.Run.IncompleteReason; !strings.Contains(r, "second interrupt") || strings.Contains(r, "had 1h0m0s to finish") {
		t.Errorf("incomplete reason %q; want the second interrupt named", r)
	}
}

// A sweep interrupted mid-point writes a set marked incomplete that names
// its partial and missing points.
func TestInterruptedSweepIsIncomplete(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	cancelling := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") && n.Add(1) == 18 { // within the second point
				cancel()
			}
			next.ServeHTTP(w, r)
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, cancelling)
	path := filepath.Join(t.TempDir(), "set.json")
	cfg := quiet(t, Config{ScenarioPath: "testdata/sweep.yaml", Endpoint: endpoint, Model: "m", Tokenizer: "words", Output: path})
	o, err := Run(ctx, context.Background(), cfg)
	if !errors.Is(err, ErrInterrupted) || o == nil {
		t.Fatalf("err %v", err)
	}
	set := readSet(t, path)
	for _, want := range []string{`"incomplete": true`, `"partial": [`, `"concurrency.streams = 2"`, `"missing": [`, `"concurrency.streams = 4"`} {
		if !strings.Contains(string(set), want) {
			t.Errorf("set file lacks %s", want)
		}
	}
	if !strings.Contains(cfg.Out.(interface{ String() string }).String(), "INCOMPLETE: interrupted: 1 of 3 points measured whole") {
		t.Errorf("summary:\n%s", cfg.Out)
	}
}

// A results file that cannot be written after the run (a full disk): the
// summary is printed first, the results go to a fallback directory, and
// the output says where; when nothing takes them, the spill stays.
// Not parallel: a test beside it can slow the client until its 12
// requests to an instant server no longer keep 2 streams busy, and the
// run is invalid.
func TestFailingWriteFallsBack(t *testing.T) {
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, nil)
	dir, fallback := t.TempDir(), t.TempDir()
	primary := filepath.Join(dir, "r.json")
	full := func(path string, run *results.Run) error {
		if path == primary {
			return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return results.WriteFile(path, run)
	}
	cfg := quiet(t, Config{ScenarioPath: "testdata/loose.yaml", Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Output: primary, WriteResults: full, FallbackDirs: []string{fallback}})
	o, err := Run(context.Background(), context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(fallback, "r.json"); o.Path != want {
		t.Errorf("written to %s, want %s", o.Path, want)
	}
	if _, err := results.ReadFile(o.Path); err != nil {
		t.Error(err)
	}
	if e := cfg.ErrOut.(interface{ String() string }).String(); !strings.Contains(e, "the results went to "+o.Path) {
		t.Errorf("stderr:\n%s", e)
	}
	if _, err := os.Stat(primary + ".spill"); err == nil {
		t.Error("spill left behind after the results were written")
	}

	// Nowhere to write: the summary is out, the spill kept for recover.
	cfg = quiet(t, cfg)
	cfg.WriteResults = func(path string, _ *results.Run) error {
		return &os.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
	}
	cfg.FallbackDirs = []string{}
	if _, err := Run(context.Background(), context.Background(), cfg); err == nil {
		t.Fatal("no error")
	}
	if out := cfg.Out.(interface{ String() string }).String(); !strings.Contains(out, "PIN CARD") {
		t.Errorf("no summary before the failed write:\n%s", out)
	}
	if _, err := os.Stat(primary + ".spill"); err != nil {
		t.Errorf("spill not kept: %v", err)
	}
	if out := cfg.Out.(interface{ String() string }).String(); !strings.Contains(out, "the run's 12 requests stay in "+primary+".spill: `sixpin recover "+primary+".spill") {
		t.Errorf("the summary does not say where the requests are:\n%s", out)
	}
}

// Two runs of one scenario and seed against one prefix-caching server:
// each gets a fresh prompt salt, so the second is not served from the
// first's cache; reusing the salt sends the same prompts on purpose, and
// the unplanned cache hits are flagged on the prompt pin.
func TestPromptSaltAvoidsCacheHitsAcrossRuns(t *testing.T) {
	t.Parallel()
	on := true
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words", PrefixCaching: &on}, nil)
	cfg := Config{ScenarioPath: "testdata/loose.yaml", Endpoint: endpoint, Model: "m", Tokenizer: "words"}
	first, err := run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	second, err := run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := second.Run.Tokens.CachedInput; c > second.Run.Tokens.Input/100 {
		t.Errorf("second run: %d of %d prompt tokens cached", c, second.Run.Tokens.Input)
	}
	if first.Run.Scenario.PromptSalt == second.Run.Scenario.PromptSalt || len(first.Run.Scenario.PromptSalt) != 16 {
		t.Errorf("salts %q and %q", first.Run.Scenario.PromptSalt, second.Run.Scenario.PromptSalt)
	}
	// The plan is the same: lengths and order.
	if a, b := first.Run.Pins.Prompt.Observed.PerRequest, second.Run.Pins.Prompt.Observed.PerRequest; a.Mean != b.Mean || a.Max != b.Max {
		t.Errorf("the salt changed the lengths: %+v vs %+v", a, b)
	}
	cfg.PromptSalt = first.Run.Scenario.PromptSalt
	warm, err := run(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := warm.Run.Tokens.CachedInput; c < warm.Run.Tokens.Input/2 {
		t.Errorf("reused salt: only %d of %d prompt tokens cached", c, warm.Run.Tokens.Input)
	}
	p := warm.Run.Pins.Prompt
	if p.Observed.UnplannedCache == nil || !strings.Contains(p.Reason, "prefix cache served") {
		t.Errorf("unplanned cache hits not flagged: %s", p.Reason)
	}
}

// Lengths are shown exactly: a server that counts 4,096 three times shows
// 4,096, not a 3-significant-figure bucket's 4,099.
func TestExactLengthsShownExactly(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, nil)
	o, err := run(t, Config{ScenarioPath: scenarioFile(t, `name: exact-4096
seed: 2
pins:
  model: {name: m}
  prompt: {tokens: 4096}
  output: {tokens: 4}
  concurrency: {mode: closed, streams: 1}
requests: 3
`), Endpoint: endpoint, Model: "m", Tokenizer: "words"})
	if o == nil { // the lengths are what is tested: an instant server's one stream may be judged idle on a busy machine
		t.Fatal(err)
	}
	d := o.Run.Pins.Prompt.Observed.PerRequest
	if d.P50 != 4096 || d.Min != 4096 || d.Max != 4096 || d.Mean != 4096 {
		t.Errorf("prompt lengths %+v, want 4,096 throughout", d)
	}
	if card := cardText(t, o.Run); !strings.Contains(card, "p50 4,096, mean 4,096, range [4,096, 4,096]") {
		t.Errorf("pin card:\n%s", card)
	}
}

func cardText(t *testing.T, run *results.Run) string {
	t.Helper()
	var b strings.Builder
	if err := report.WritePinCard(&b, report.PinCard(run)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Little's law counts over the window it names: on a short run whose
// requests outlast the window's end it does not overshoot the streams.
func TestLittlesLawOverItsWindow(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed,
		Fixed: sim.Fixed{TTFT: 100 * time.Millisecond, ITL: 10 * time.Millisecond}, Tokenizer: "words"}, nil)
	o, err := run(t, Config{ScenarioPath: scenarioFile(t, `name: short
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 40}
  concurrency: {mode: closed, streams: 4}
duration: 1s
`), Endpoint: endpoint, Model: "m", Tokenizer: "words"})
	if err != nil {
		t.Fatal(err)
	}
	c := o.Run.Pins.Concurrency.Observed
	if c.LittlesLaw <= 0 || c.LittlesLaw > float64(c.MaxInFlight)+1e-9 {
		t.Errorf("Little's law %v with at most %d in flight (mean %v)", c.LittlesLaw, c.MaxInFlight, c.MeanInFlight)
	}
}

// A long run rewrites its results file, marked incomplete, every
// checkpoint once it has gone on long enough; the last write is the
// finished run.
func TestCheckpointsRewriteTheResults(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed,
		Fixed: sim.Fixed{TTFT: 20 * time.Millisecond, ITL: 10 * time.Millisecond}, Tokenizer: "words"}, nil)
	var mu sync.Mutex
	var writes []*results.Run
	record := func(path string, run *results.Run) error {
		mu.Lock()
		writes = append(writes, run)
		mu.Unlock()
		return results.WriteFile(path, run)
	}
	_, err := run(t, Config{ScenarioPath: scenarioFile(t, `name: ck
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 20}
  concurrency: {mode: closed, streams: 2}
duration: 2s
`), Endpoint: endpoint, Model: "m", Tokenizer: "words", Checkpoint: 200 * time.Millisecond, CheckpointAfter: 500 * time.Millisecond,
		WriteResults: record})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// At least one checkpoint and the final write: how many checkpoints fit
	// in the run depends on how long assembling one takes on a loaded
	// machine (-race), so the test does not count them.
	if len(writes) < 2 {
		t.Fatalf("%d writes, want a checkpoint and the final one", len(writes))
	}
	for _, w := range writes[:len(writes)-1] {
		if !w.Incomplete || !strings.Contains(w.IncompleteReason, "checkpoint") || w.Errors.Requests == 0 {
			t.Errorf("checkpoint: incomplete %v (%s), %d requests", w.Incomplete, w.IncompleteReason, w.Errors.Requests)
		}
		// The simulator serves /metrics: a checkpoint keeps what was
		// scraped so far.
		if w.Server == nil || len(w.Server.Series) == 0 {
			t.Errorf("checkpoint without the server's metrics: %+v", w.Server)
		}
	}
	if last := writes[len(writes)-1]; last.Incomplete {
		t.Errorf("the final write is marked incomplete: %s", last.IncompleteReason)
	}
}
