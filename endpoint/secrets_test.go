package endpoint

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sixpin/sixpin/record"
)

// echoServer reflects every credential a request carries — its
// Authorization header, its X-Api-Key header and its api-key query value —
// into whatever it answers: the model name of its chunks, the model id
// and path discovery reads, error messages. It records each request's
// path and query.
type echoServer struct {
	mu    sync.Mutex
	seen  []string // "METHOD path?query"
	chats atomic.Int64
}

func (e *echoServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
	e.mu.Unlock()
	echo := strings.Join([]string{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.URL.Query().Get("api-key")}, " ")
	js, _ := json.Marshal(echo)
	q := string(js[1 : len(js)-1]) // the echo inside a JSON string
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/v1/models"):
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"model %s","object":"model","owned_by":"llamacpp","meta":{"n_params":8000000000}}]}`, q)
	case r.URL.Path == "/props":
		fmt.Fprintf(w, `{"model_path":"/models/%s/m.gguf","total_slots":2,"default_generation_settings":{"n_ctx":4096}}`, q)
	case r.URL.Path == "/tokenize":
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"no tokenizer for %s"}}`, q)
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		switch e.chats.Add(1) % 3 {
		case 1: // a stream whose chunks name the model after the key
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"model\":\"m %s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" a\"},\"finish_reason\":\"%s\"}]}\n\n", q, q)
			io.WriteString(w, "data: [DONE]\n\n")
		case 2:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s"}}`, q)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"object\":\"error\",\"message\":\"credentials %s revoked\"}\n\n", q)
		}
	default:
		http.NotFound(w, r)
	}
}

func (e *echoServer) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// TestSecretsNeverEchoed has a server reflect the secrets sixpin holds in
// every string it sends back, and checks that none reaches a record, the
// discovery facts or an error — and that the base URL's query rides on
// every request, whatever its path.
func TestSecretsNeverEchoed(t *testing.T) {
	const (
		key      = "sk-live-0123456789abcdef"
		queryKey = "q-secret-9876543210"
		header   = "hdr-secret-24680"
		user     = "alice-admin"
		pass     = "p4ss/w0rd+=%"
	)
	basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	cases := []struct {
		name    string
		base    func(host string) string
		key     string
		secrets []string
	}{
		{"API key, header and query", func(h string) string { return "http://" + h + "/v1?api-key=" + queryKey }, key,
			[]string{key, queryKey, header}},
		{"user info in the URL", func(h string) string {
			return (&url.URL{Scheme: "http", User: url.UserPassword(user, pass), Host: h, Path: "/v1", RawQuery: "api-key=" + queryKey}).String()
		}, "", []string{basic, user, pass, url.QueryEscape(pass), queryKey, header}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &echoServer{}
			ts := serve(t, e, nil)
			host := strings.TrimPrefix(ts.URL, "http://")
			tg := Target{BaseURL: c.base(host), Model: "m", APIKey: c.key, Headers: map[string]string{"X-Api-Key": header}}
			cl := client(t, tg, Options{})
			info := Discover(context.Background(), cl)
			recs := []*record.Record{one(cl), one(cl), one(cl)}
			_, tokErr := NewServerTokenizer(tg).Count(context.Background(), "some text")

			var texts []string
			for _, rec := range recs {
				texts = append(texts, rec.Model, rec.ErrMsg, rec.FinishReason)
			}
			disc, _ := json.Marshal(info)
			texts = append(texts, string(disc), fmt.Sprint(tokErr))
			all := strings.Join(texts, "\n")
			for _, s := range c.secrets {
				if strings.Contains(all, s) {
					t.Errorf("%q reached the output:\n%s", s, all)
				}
			}
			// What the server said is kept, with the secrets taken out.
			for _, want := range []string{` [redacted] [redacted] [redacted]`, `"model_ids":["model `, `"path":"/models/`,
				"Incorrect API key provided", "revoked", "no tokenizer for"} {
				if !strings.Contains(all, want) {
					t.Errorf("output lacks %q:\n%s", want, all)
				}
			}
			if len(recs) != 3 || recs[0].Failed() || recs[1].Err != record.ErrHTTP4xx || recs[2].Err != record.ErrStreamError {
				t.Errorf("records %+v", recs)
			}
			for _, req := range e.requests() {
				if !strings.HasSuffix(req, "?api-key="+queryKey) {
					t.Errorf("request %q lost the base URL's query", req)
				}
			}
		})
	}
}

// TestUserInfo: the base URL's user name and password go as Basic
// credentials, never in the URL; with an API key too, the target is
// refused, naming api_key_env.
func TestUserInfo(t *testing.T) {
	var auth atomic.Value
	ts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		sse(roleEvent, contentEvent(" a"), finishEvent("stop"), doneEvent)(w, r)
	}), nil)
	base := "http://bob:s3cret@" + strings.TrimPrefix(ts.URL, "http://") + "/v1"
	if rec := one(client(t, Target{BaseURL: base, Model: "m"}, Options{})); rec.Failed() {
		t.Fatalf("record %+v", rec)
	}
	if got, want := auth.Load(), "Basic "+base64.StdEncoding.EncodeToString([]byte("bob:s3cret")); got != want {
		t.Errorf("Authorization %q, want %q", got, want)
	}
	_, err := New(Target{BaseURL: base, Model: "m", APIKey: "sk-x"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "api_key_env") || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("New with user info and a key: %v; want a refusal naming api_key_env, without the password", err)
	}
}
