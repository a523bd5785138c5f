package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// quiet gives cfg buffers for output, an empty environment, and the
// defaults the tests use.
func quiet(t *testing.T, cfg Config) Config {
	t.Helper()
	cfg.Out, cfg.ErrOut = &bytes.Buffer{}, &bytes.Buffer{}
	if cfg.ScenarioPath == "" {
		cfg.ScenarioPath = "testdata/exact.yaml"
	}
	cfg.Getenv = func(string) string { return "" }
	return cfg
}

// run executes cfg quietly and returns its outcome and error.
func run(t *testing.T, cfg Config) (*Outcome, error) {
	t.Helper()
	if cfg.Output == "" {
		cfg.Output = filepath.Join(t.TempDir(), "r.json")
	}
	cfg = quiet(t, cfg)
	o, err := Run(context.Background(), context.Background(), cfg)
	if o == nil && err == nil {
		t.Fatal("no outcome and no error")
	}
	if t.Failed() || (err != nil && o == nil) {
		t.Logf("stdout:\n%s\nstderr:\n%s", cfg.Out, cfg.ErrOut)
	}
	return o, err
}

// simProfile writes a simulator profile whose server and client count
// with the named tokenizer.
func simProfile(t *testing.T, tok string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sim-"+tok+".yaml")
	src := "kind: simulator\noutput_control: ignore_eos\ntokenizer: " + tok + "\nsim: {model: m, timing: none, tokenizer: " + tok + "}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Prompts are exact by every tokenizer kind: the simulator counts with the
// same tokenizer the client built the prompts with (shared prefixes
// included), and the server's own /tokenize.
func TestExactPromptsPerTokenizer(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"words", "qwen2", "cl100k_base", "o200k_base"} {
		t.Run(tok, func(t *testing.T) {
			t.Parallel()
			o, err := run(t, Config{Profile: simProfile(t, tok)})
			if err != nil {
				t.Fatal(err)
			}
			checkExact(t, o.Run)
			if got := o.Run.Pins.Prompt.Declared.Tokenizer; got != tok {
				t.Errorf("tokenizer recorded as %q", got)
			}
		})
	}
	t.Run("server /tokenize", func(t *testing.T) {
		t.Parallel()
		s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "qwen2"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ts := httptest.NewServer(s)
		defer ts.Close()
		o, err := run(t, Config{Profile: "vllm", Endpoint: ts.URL + "/v1", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		checkExact(t, o.Run)
		if got := o.Run.Pins.Prompt.Declared.Tokenizer; got != "server (/tokenize)" {
			t.Errorf("tokenizer recorded as %q", got)
		}
	})
}

func checkExact(t *testing.T, r *results.Run) {
	t.Helper()
	pd, od := r.Pins.Prompt.Observed.Drift, r.Pins.Output.Observed.Drift
	if !r.Valid || pd == nil || pd.Exact != pd.Requests || pd.Requests != 16 || od.Exact != od.Requests {
		t.Errorf("valid %v %v; prompt drift %+v; output drift %+v", r.Valid, r.Invalid, pd, od)
	}
	if r.Pins.Prompt.Verified != results.Verified || r.Pins.Output.Verified != results.Verified {
		t.Errorf("prompt %s (%s), output %s (%s)", r.Pins.Prompt.Verified, r.Pins.Prompt.Reason, r.Pins.Output.Verified, r.Pins.Output.Reason)
	}
}

// A fallback tokenizer is only confirmed by usage: close enough to the
// server's (cl100k_base here) it is verified, and says so; far off (a
// word-counting server) the run is invalid.
func TestFallbackTokenizerConfirmedByUsage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		serverTok string
		valid     bool
	}{{"cl100k_base", true}, {"words", false}} {
		t.Run(c.serverTok, func(t *testing.T) {
			t.Parallel()
			s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: c.serverTok})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ts := httptest.NewServer(s)
			defer ts.Close()
			// ollama's profile names no tokenizer, and honours no ignore_eos:
			// the sim then stops at its natural length, so keep outputs loose.
			o, err := run(t, Config{Profile: "ollama", Endpoint: ts.URL + "/v1", Model: "m", ScenarioPath: "testdata/loose.yaml"})
			if c.valid != (err == nil) || o.Run.Valid != c.valid {
				t.Fatalf("err %v, valid %v %v; want valid %v", err, o.Run.Valid, o.Run.Invalid, c.valid)
			}
			p := o.Run.Pins.Prompt
			if p.Declared.Tokenizer != "o200k_base (fallback)" || !strings.Contains(strings.Join(o.Run.Notes, " "), "names no tokenizer") {
				t.Errorf("fallback not recorded: %q, notes %q", p.Declared.Tokenizer, o.Run.Notes)
			}
			if c.valid && !strings.Contains(p.Reason, "confirmed by the server's usage") {
				t.Errorf("reason %q", p.Reason)
			}
		})
	}
}

// A server that ignores max_tokens (and ignore_eos) breaks the output pin:
// the drift is detected, the run is marked invalid with the reason, its
// results are still written, and Run returns ErrInvalid (exit 1).
func TestInvalidWhenServerIgnoresMaxTokens(t *testing.T) {
	t.Parallel()
	s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "qwen2", NaturalOutputTokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			var body map[string]any
			data, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(data, &body)
			for _, k := range []string{"max_tokens", "max_completion_tokens", "ignore_eos", "min_tokens"} {
				delete(body, k)
			}
			data, _ = json.Marshal(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
		}
		s.ServeHTTP(w, r)
	}))
	defer ts.Close()
	path := filepath.Join(t.TempDir(), "invalid.json")
	o, err := run(t, Config{Profile: "llamacpp", Endpoint: ts.URL + "/v1", Model: "m", Output: path})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	saved, rerr := results.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if saved.Valid || len(saved.Invalid) == 0 || !strings.Contains(saved.Invalid[0], "output") ||
		saved.Pins.Output.Verified != results.Contradicted || o.Run.Pins.Prompt.Verified != results.Verified {
		t.Errorf("valid %v, invalid %q, output %s, prompt %s", saved.Valid, saved.Invalid, saved.Pins.Output.Verified, o.Run.Pins.Prompt.Verified)
	}
}
