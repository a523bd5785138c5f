package runner

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

const discoverYAML = `
pins:
  model: {name: sim-model}
  prompt: {tokens: 10}
  output: {tokens: 2}
  concurrency: {mode: closed, streams: 1}
requests: 1
`

// TestDiscover reads /v1/models as the simulator, vLLM and llama.cpp
// serve it, and fails gracefully (Discovery.Err, no panic) otherwise.
func TestDiscover(t *testing.T) {
	json := func(body string) http.Handler { return status(http.StatusOK, "application/json", body) }
	cases := []struct {
		name    string
		handler http.Handler // nil: the simulator with simCfg
		simCfg  sim.Config
		model   string
		dead    bool
		want    results.Discovery
		wantErr string // in Discovery.Err
	}{
		{name: "simulator defaults", simCfg: sim.Config{Timing: sim.TimingNone}, model: sim.DefaultModel,
			want: results.Discovery{ModelIDs: []string{sim.DefaultModel}, MaxModelLen: sim.DefaultMaxModelLen, ParamsB: 8}},
		{name: "simulator configured", model: "qwen3.8-27b",
			simCfg: sim.Config{Timing: sim.TimingNone, Model: "qwen3.8-27b", MaxModelLen: 4096, Roofline: sim.Roofline{ParamsB: 27}},
			want:   results.Discovery{ModelIDs: []string{"qwen3.8-27b"}, MaxModelLen: 4096, ParamsB: 27}},
		// The target is not the last model listed: its figures must not be
		// overwritten by the others'.
		{name: "vLLM, several models", model: "b",
			handler: json(`{"object":"list","data":[{"id":"a","max_model_len":8192},{"id":"b","max_model_len":32768},{"id":"c","max_model_len":4096}]}`),
			want:    results.Discovery{ModelIDs: []string{"a", "b", "c"}, MaxModelLen: 32768}},
		{name: "llama.cpp meta", model: "x.gguf",
			handler: json(`{"object":"list","data":[{"id":"x.gguf","meta":{"n_params":7241732096,"n_ctx_train":32768,"n_vocab":32000}}]}`),
			want:    results.Discovery{ModelIDs: []string{"x.gguf"}, MaxModelLen: 32768, ParamsB: 7.241732096}},
		{name: "404", handler: http.NotFoundHandler(), model: "m", wantErr: "HTTP 404"},
		{name: "not JSON", handler: json(`<html>`), model: "m", wantErr: "GET /models"},
		{name: "connection refused", dead: true, model: "m", wantErr: "refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base string
			var cp *capture
			switch {
			case c.dead:
				base = deadURL(t)
			case c.handler != nil:
				cp = &capture{next: c.handler}
				base = serve(t, cp, nil).URL
			default:
				ts, _ := serveSim(t, c.simCfg, func(h http.Handler) http.Handler { cp = &capture{next: h}; return cp })
				base = ts.URL
			}
			tg := Target{BaseURL: base + "/v1/", Model: c.model, APIKey: "sk-d", Headers: map[string]string{"X-Tenant": "acme"}}
			r := newRunner(t, mustPlan(t, discoverYAML), tg)
			d := r.Discover(context.Background())

			if d.Source != "/v1/models" {
				t.Errorf("Source = %q", d.Source)
			}
			if c.wantErr != "" {
				if !strings.Contains(d.Err, c.wantErr) {
					t.Errorf("Err = %q, want it to mention %q", d.Err, c.wantErr)
				}
				return
			}
			if d.Err != "" {
				t.Fatalf("Err = %q", d.Err)
			}
			if !slices.Equal(d.ModelIDs, c.want.ModelIDs) || d.MaxModelLen != c.want.MaxModelLen || d.ParamsB != c.want.ParamsB {
				t.Errorf("got ids %q max_model_len %d params %gB; want %q %d %gB",
					d.ModelIDs, d.MaxModelLen, d.ParamsB, c.want.ModelIDs, c.want.MaxModelLen, c.want.ParamsB)
			}
			reqs := cp.requests()
			if len(reqs) != 1 {
				t.Fatalf("the server saw %d requests, want 1", len(reqs))
			}
			if got := reqs[0].header.Get("Authorization"); got != "Bearer sk-d" {
				t.Errorf("Authorization = %q", got)
			}
			if got := reqs[0].header.Get("X-Tenant"); got != "acme" {
				t.Errorf("X-Tenant = %q", got)
			}
		})
	}
}

// TestProbe measures the chat template's overhead against servers with
// known overheads, and reports why it cannot when it cannot.
func TestProbe(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name    string
		handler http.Handler // nil: the simulator with simCfg
		simCfg  sim.Config
		want    int
		wantOK  bool
		wantMsg string
	}{
		{name: "simulator default (5 per message + 3)", simCfg: sim.Config{Timing: sim.TimingNone}, want: 8, wantOK: true},
		{name: "simulator, 2 per message", simCfg: sim.Config{Timing: sim.TimingNone, TemplateOverheadTokens: intp(2)}, want: 5, wantOK: true},
		{name: "simulator, no template", simCfg: sim.Config{Timing: sim.TimingNone, TemplateOverheadTokens: intp(0)}, want: 3, wantOK: true},
		{name: "no usage", handler: sse(roleEvent, contentEvent(" hi"), finishEvent("length"), doneEvent), wantMsg: "no usage"},
		{name: "server error", handler: status(500, "application/json", `{"error":{"message":"down"}}`), wantMsg: "http_5xx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var base string
			if c.handler != nil {
				base = serve(t, c.handler, nil).URL
			} else {
				ts, _ := serveSim(t, c.simCfg, nil)
				base = ts.URL
			}
			r := newRunner(t, mustPlan(t, discoverYAML), Target{BaseURL: base + "/v1", Model: sim.DefaultModel, OutputControl: ControlIgnoreEOS})
			got, ok, msg := r.Probe(context.Background())
			if got != c.want || ok != c.wantOK || !strings.Contains(msg, c.wantMsg) {
				t.Errorf("Probe = %d, %v, %q; want %d, %v, a message mentioning %q", got, ok, msg, c.want, c.wantOK, c.wantMsg)
			}
			if r.Stats().Issued.Load() != 0 {
				t.Errorf("the probe counted as an issued request")
			}
		})
	}
}
