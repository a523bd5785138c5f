package harness

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/sim"
)

// echoWriter reflects a request's credentials into the model name of
// everything the simulator writes back.
type echoWriter struct {
	http.ResponseWriter
	echo []byte
}

func (w echoWriter) Write(b []byte) (int, error) {
	_, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, []byte(`"m"`), w.echo))
	return len(b), err
}

func (w echoWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// A server that reflects the API key and the base URL's query value in
// every model name and path it reports: neither reaches the output, the
// summary or the results file, which shows the endpoint with its query
// redacted.
func TestSecretsNeverReachTheResults(t *testing.T) {
	t.Parallel()
	const key, queryKey = "sk-live-5a6b7c8d9e0f1a2b", "qk-7f6e5d4c3b2a"
	s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := []byte(`"m ` + r.Header.Get("Authorization") + " " + r.URL.Query().Get("api-key") + `"`)
		if r.URL.Path == "/props" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"model_path":"/srv/` + key + `/` + queryKey + `.gguf","total_slots":2}`))
			return
		}
		s.ServeHTTP(echoWriter{w, echo}, r)
	}))
	defer ts.Close()
	var out, errOut bytes.Buffer
	path := filepath.Join(t.TempDir(), "r.json")
	cfg := Config{ScenarioPath: "testdata/exact.yaml", Profile: "llamacpp", Endpoint: ts.URL + "/v1?api-key=" + queryKey, Model: "m",
		Tokenizer: "words", Output: path, Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string {
			if k == "OPENAI_API_KEY" {
				return key
			}
			return ""
		}}
	o, err := Run(context.Background(), context.Background(), cfg)
	if o == nil {
		t.Fatalf("no outcome: %v\n%s", err, errOut.String())
	}
	data, _ := os.ReadFile(path)
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String(), "results": string(data)} {
		for _, sec := range []string{key, queryKey} {
			if strings.Contains(text, sec) {
				t.Errorf("%q appears in %s", sec, name)
			}
		}
	}
	if !strings.Contains(string(data), `"endpoint": "`+ts.URL+`/v1?api-key=[redacted]"`) {
		t.Errorf("results file lacks the redacted endpoint:\n%.600s", data)
	}
	if o.Run.Errors.Failed > 0 || !strings.Contains(string(data), "[redacted]") {
		t.Errorf("%d requests failed (%v); the echoes must be kept, redacted", o.Run.Errors.Failed, o.Run.Errors.Examples)
	}
}

// The Anthropic profile's x-api-key, reflected in every model name and
// error the server sends, is redacted like a bearer key: not in the
// output, the summary or the results file. The simulator takes only that
// key, in that header, so every request carried it; the results file and
// the pin card name the protocol.
func TestAnthropicKeyNeverReachesTheResults(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-5a6b7c8d9e0f1a2b"
	s, err := sim.New(sim.Config{Model: "m", Timing: sim.TimingNone, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(echoWriter{w, []byte(`"m ` + r.Header.Get("X-Api-Key") + `"`)}, r)
	}))
	defer ts.Close()
	var out, errOut bytes.Buffer
	path := filepath.Join(t.TempDir(), "r.json")
	cfg := Config{ScenarioPath: "testdata/exact.yaml", Profile: "anthropic", Endpoint: ts.URL, Model: "m",
		Tokenizer: "words", Output: path, Out: &out, ErrOut: &errOut,
		Getenv: func(k string) string {
			if k == "ANTHROPIC_API_KEY" {
				return key
			}
			return ""
		}}
	o, err := Run(context.Background(), context.Background(), cfg)
	if o == nil {
		t.Fatalf("no outcome: %v\n%s", err, errOut.String())
	}
	data, _ := os.ReadFile(path)
	for name, text := range map[string]string{"stdout": out.String(), "stderr": errOut.String(), "results": string(data)} {
		if strings.Contains(text, key) {
			t.Errorf("the key appears in %s", name)
		}
	}
	if o.Run.Errors.Failed > 0 || !strings.Contains(string(data), "[redacted]") {
		t.Errorf("%d requests failed (%v); the echoes must be kept, redacted", o.Run.Errors.Failed, o.Run.Errors.Examples)
	}
	if !strings.Contains(string(data), `"protocol": "messages"`) || !strings.Contains(out.String(), "spoken to in protocol messages") {
		t.Errorf("the results file or the pin card does not name the protocol:\n%s", out.String())
	}
}
