package harness

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/sim"
)

// loadingModel is llama-server's answer while it loads its model.
const loadingModel = `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`

// loadingServer is a server still loading its model for its first looks:
// until it has been looked at (GET /health, or a chat request when
// health is false and it has no health endpoint) loads times, every
// request is answered 503 Loading model, as llama-server does; then the
// simulator serves. chats counts the chat requests it refused.
type loadingServer struct {
	loads          int64
	health         bool
	looks, refused atomic.Int64
}

func (l *loadingServer) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
		if r.URL.Path == "/health" && !l.health {
			http.NotFound(w, r)
			return
		}
		loading := l.looks.Load() < l.loads
		if r.URL.Path == "/health" || chat && !l.health {
			loading = l.looks.Add(1) <= l.loads
		}
		if loading {
			io.Copy(io.Discard, r.Body)
			if chat {
				l.refused.Add(1)
			}
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, loadingModel)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Before load, a run waits for a server still loading its model, saying
// so on stderr: by its health endpoint (llama-server, vLLM, SGLang), or,
// without one, by the answer to a one-token request. Then no request of
// the run meets the 503 (before, the run measured it: the probe failed
// and requests were refused). A server that is not ready by the timeout
// fails the run before any request, saying why.
func TestWaitForTheServerToLoad(t *testing.T) {
	t.Parallel()
	simCfg := sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}
	for _, c := range []struct {
		name   string
		health bool
	}{{"health endpoint", true}, {"no health endpoint", false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ls := &loadingServer{loads: 3, health: c.health}
			cfg := quiet(t, Config{Endpoint: simServer(t, simCfg, ls.wrap), Model: "m", Tokenizer: "words", ReadyTimeout: time.Minute})
			cfg.Output = t.TempDir() + "/r.json"
			o, err := Run(t.Context(), t.Context(), cfg)
			if err != nil {
				t.Fatalf("%v\nstderr:\n%s", err, cfg.ErrOut)
			}
			if e := o.Run.Errors; e.Failed != 0 {
				t.Errorf("%d of %d requests failed (%v): the run did not wait for the server", e.Failed, e.Requests, e.ByClass)
			}
			if want := map[bool]int64{true: 0, false: 3}[c.health]; ls.refused.Load() != want {
				t.Errorf("%d chat requests refused while loading, want %d", ls.refused.Load(), want)
			}
			stderr := cfg.ErrOut.(interface{ String() string }).String()
			if !strings.Contains(stderr, "waiting up to 1m0s (--ready-timeout) for the server to be ready") ||
				!strings.Contains(stderr, "Loading model") || !strings.Contains(stderr, "the server is ready after") {
				t.Errorf("stderr does not say it waited, why, for how long at most, and when it was ready:\n%s", stderr)
			}
		})
	}
	t.Run("not ready by the timeout", func(t *testing.T) {
		t.Parallel()
		ls := &loadingServer{loads: 1 << 40, health: true}
		cfg := quiet(t, Config{Endpoint: simServer(t, simCfg, ls.wrap), Model: "m", Tokenizer: "words", ReadyTimeout: 300 * time.Millisecond})
		cfg.Output = t.TempDir() + "/r.json"
		_, err := Run(t.Context(), t.Context(), cfg)
		if !errors.Is(err, ErrRunFailed) || !strings.Contains(err.Error(), "not ready after 300ms") || !strings.Contains(err.Error(), "Loading model") ||
			!strings.Contains(err.Error(), "--ready-timeout") {
			t.Errorf("err %v; want the run failed: not ready after 300ms, Loading model, and the flag to wait longer", err)
		}
		if ls.refused.Load() != 0 {
			t.Errorf("%d chat requests sent to a server whose health says it is loading", ls.refused.Load())
		}
		if _, err := os.Stat(cfg.Output); err == nil {
			t.Errorf("results written for a run that never started")
		}
	})
}

// A server that answers every request 429 (Retry-After: 1, the
// simulator's fault): sixpin backs off, so a 3 s run at c=4 sends at most
// c × 3 + c requests; the run is still invalid under the default error
// budget, and the summary says the server asked it to slow down, how
// often, and how long sixpin waited.
func TestRateLimitedRunSaysSo(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words",
		Faults: map[string]float64{sim.FaultHTTP429: 1}}, nil)
	cfg := quiet(t, Config{ScenarioPath: scenarioFile(t, `name: storm
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 50}
  output: {tokens: 20}
  concurrency: {mode: closed, streams: 4}
duration: 3s
`), Endpoint: endpoint, Model: "m", Tokenizer: "words"})
	cfg.Output = t.TempDir() + "/r.json"
	o, err := Run(t.Context(), t.Context(), cfg)
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "over the error budget of 1% (the default") {
		t.Fatalf("err %v, want invalid over the default error budget", err)
	}
	e := o.Run.Errors
	if e.Requests > 4*3+4 || e.SlowDowns["429"] != e.Requests || e.BackoffS["http_429"] <= 0 {
		t.Errorf("errors %+v: want at most 16 requests, each a 429, and the waits after them", e)
	}
	summary := cfg.Out.(interface{ String() string }).String()
	for _, want := range []string{
		"the server asked sixpin to slow down " + numfmt.Count(e.Requests, "time", "") + " (429 × ",
		"sixpin waited ", "(after http_429 ",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

// A server without a health endpoint that answers the one-token look
// "503, Retry-After: 5" is looked at again only when it asked: within a
// 4-second timeout, one look and the last one at the timeout — not one
// every 2 seconds.
func TestReadyHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	var looks atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		looks.Add(1)
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, loadingModel)
	}))
	defer srv.Close()
	_, err := run(t, Config{ScenarioPath: "testdata/exact.yaml", Endpoint: srv.URL + "/v1", Model: "m", Tokenizer: "words", ReadyTimeout: 4 * time.Second})
	if !errors.Is(err, ErrRunFailed) || !strings.Contains(err.Error(), "was not ready after 4s") {
		t.Fatalf("err %v, want not ready", err)
	}
	if n := looks.Load(); n > 2 {
		t.Errorf("%d looks in 4 s at a server that asked for 5 s between them", n)
	}
}

// A server that refuses a one-token request as it would refuse every
// request of the run (a wrong path: 404; a wrong key: 401; a body member
// it rejects: 400) gets no load: the run fails after the probe's attempts,
// saying what to check, and writes no results. Before, such a run sent
// its whole load into the refusals (563,045 requests at 19,660 a second
// against a base URL without /v1) and reported an invalid run.
func TestRefusedProbeSendsNoLoad(t *testing.T) {
	t.Parallel()
	simCfg := sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}
	for _, c := range []struct {
		status int
		body   string
		says   string
	}{
		{http.StatusNotFound, "404 page not found", "check --endpoint (an OpenAI-compatible base URL usually ends in /v1)"},
		{http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided"}}`, "check the API key"},
		{http.StatusBadRequest, `{"error":{"message":"Unrecognized request argument supplied: ignore_eos"}}`, "output control"},
	} {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			t.Parallel()
			var chats atomic.Int64
			refuse := func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
						next.ServeHTTP(w, r)
						return
					}
					chats.Add(1)
					io.Copy(io.Discard, r.Body)
					w.WriteHeader(c.status)
					io.WriteString(w, c.body)
				})
			}
			cfg := quiet(t, Config{Endpoint: simServer(t, simCfg, refuse), Model: "m", Tokenizer: "words"})
			cfg.Output = t.TempDir() + "/r.json"
			_, err := Run(t.Context(), t.Context(), cfg)
			if !errors.Is(err, ErrRunFailed) || !strings.Contains(err.Error(), "no load was sent") ||
				!strings.Contains(err.Error(), "HTTP "+strconv.Itoa(c.status)) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("err %v; want the run failed before load, naming HTTP %d and saying %q", err, c.status, c.says)
			}
			if n := chats.Load(); n > 3 {
				t.Errorf("%d chat requests sent to a server that refused the probe", n)
			}
			if _, err := os.Stat(cfg.Output); err == nil {
				t.Errorf("results written for a run that never started")
			}
		})
	}
}
