package harness

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// looping makes every answer the simulator streams one word over and
// over, as a model stuck in a loop under ignore_eos answers; its token
// counts and timings stay the simulator's.
func looping(next http.Handler) http.Handler {
	word := regexp.MustCompile(`"content":" [^"]*"`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(rewriter{w, func(b []byte) []byte { return word.ReplaceAll(b, []byte(`"content":" again"`)) }}, r)
	})
}

// rewriter passes what is written through f, flushing as the simulator
// does.
type rewriter struct {
	http.ResponseWriter
	f func([]byte) []byte
}

func (w rewriter) Write(b []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(w.f(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w rewriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// A server whose answers loop makes the run invalid, saying how many of
// the sampled answers were degenerate and why that matters; the same
// server answering healthy text leaves the run valid, every sampled
// answer scored and none degenerate.
func TestDegenerateAnswersInvalidateTheRun(t *testing.T) {
	t.Parallel()
	path := scenarioFile(t, `name: loop
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 64}
  output: {tokens: 64, exact: true}
  concurrency: {mode: closed, streams: 2}
duration: 30s
windows: {warmup: 0s, burst: 1s, steady: {start: 0s}}
`)
	simCfg := sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}
	for _, c := range []struct {
		name string
		wrap func(http.Handler) http.Handler
	}{{"healthy", nil}, {"looping", looping}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, err := run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: simServer(t, simCfg, c.wrap), Model: "m", Tokenizer: "words", Requests: 24})
			if o == nil || o.Run == nil {
				t.Fatalf("no results: %v", err)
			}
			out := o.Run.Windows[o.Run.Headline].Output
			if out == nil || out.Scored == 0 {
				t.Fatalf("no sampled answer scored: %+v", out)
			}
			reasons := strings.Join(o.Run.Invalid, "; ")
			switch c.name {
			case "healthy":
				if err != nil || !o.Run.Valid || out.Degenerate != 0 {
					t.Errorf("healthy answers: err %v, valid %v (%s), %d of %d degenerate", err, o.Run.Valid, reasons, out.Degenerate, out.Scored)
				}
			case "looping":
				if !errors.Is(err, ErrInvalid) || o.Run.Valid || out.Degenerate != out.Scored ||
					!strings.Contains(reasons, "degenerate") || !strings.Contains(reasons, "ignore_eos") || !strings.Contains(reasons, "drafter") {
					t.Errorf("looping answers: err %v, valid %v, %d of %d degenerate; invalid: %s", err, o.Run.Valid, out.Degenerate, out.Scored, reasons)
				}
			}
			if all := o.Run.Windows[results.WindowAll].Output; all == nil || all.Scored != 24 {
				t.Errorf("the whole run scored %+v, want all 24 answers (the first 256 are sampled)", all)
			}
		})
	}
}

// The claim, on the simulator's speculative-decoding twins: the
// profile whose answers loop past their natural end (and whose drafter
// therefore runs about 2× faster) makes the run invalid, naming its
// degenerate answers, under every one of 20 seeds; its healthy twin
// never does. Its forty runs go one after another, before the parallel
// tests start (no t.Parallel): at once, they starved the time-scaled
// capacity tests beside them of the two cores.
func TestDegenerateTwinAcrossSeeds(t *testing.T) {
	for _, twin := range []string{"sim-spec-healthy", "sim-spec-degenerate"} {
		path := scenarioFile(t, `name: twin
pins:
  model: {name: `+twin+`, params_b: 8}
  prompt: {tokens: 200}
  output: {tokens: 256, exact: true}
  concurrency: {mode: closed, streams: 2}
duration: 10m
windows: {warmup: 0s, burst: 1s, steady: {start: 0s}}
`)
		for seed := range int64(20) {
			t.Run(fmt.Sprintf("%s/seed=%d", twin, seed+1), func(t *testing.T) {
				s := seed + 1
				o, _ := run(t, Config{ScenarioPath: path, Profile: twin, Seed: &s, Requests: 8, TimeScale: 0.05})
				if o == nil || o.Run == nil {
					t.Fatal("no results")
				}
				said := strings.Contains(strings.Join(o.Run.Invalid, "; "), "are degenerate")
				if out := o.Run.Windows[o.Run.Headline].Output; out == nil || said != (twin == "sim-spec-degenerate") {
					t.Errorf("degenerate named %v; sampled answers %+v; invalid: %v", said, out, o.Run.Invalid)
				}
			})
		}
	}
}
