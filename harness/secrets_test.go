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
