package endpoint

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// fixture reads testdata/discovery/name (see SOURCES.md there).
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "discovery", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// engine is a fake server that answers only its routes ("GET /props" →
// body) and 404s everything else, as a real engine answers the others'
// endpoints; it records every request.
type engine struct {
	routes map[string]string
	mu     sync.Mutex
	seen   []seenRequest
}

type seenRequest struct {
	method, path string
	header       http.Header
	body         string
}

func (e *engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, seenRequest{r.Method, r.URL.Path, r.Header.Clone(), string(body)})
	e.mu.Unlock()
	b, ok := e.routes[r.Method+" "+r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/metrics") {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	io.WriteString(w, b)
}

func (e *engine) requests() []seenRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.seen)
}

// discover runs Discover against base (the server root) for model.
func discover(t *testing.T, base, model string) (record.Discovery, record.Discovery) {
	t.Helper()
	tg := Target{BaseURL: base + "/v1/", Model: model, APIKey: "sk-d", Headers: map[string]string{"X-Tenant": "acme"}}
	d := Discover(context.Background(), newClient(t, tg))
	return d, d
}

func boolp(b bool) *bool        { return &b }
func floatp(v float64) *float64 { return &v }

// sourcesOK lists the sources that answered with their shape.
func sourcesOK(info record.Discovery) []string {
	var ok []string
	for _, s := range info.Sources {
		if s.OK {
			ok = append(ok, s.Name)
		}
	}
	return ok
}

// TestDiscoverEngines serves each engine's documented answers (fixtures)
// from a server that has only that engine's endpoints, and checks every
// fact discovery should read, with its source.
func TestDiscoverEngines(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		routes map[string]string // fixture file by route
		want   headline
		info   record.Discovery // Sources, From and Notes are checked separately
		ok     []string         // sources that answer
		from   map[string]string
		notes  []string // substrings, one note each
	}{
		{
			name: "vLLM", model: "Qwen/Qwen3-14B",
			routes: map[string]string{"GET /v1/models": "vllm_models.json", "GET /metrics": "vllm_metrics.txt"},
			want:   headline{ModelIDs: []string{"Qwen/Qwen3-14B"}, MaxModelLen: 32768, Source: "/v1/models max_model_len"},
			info: record.Discovery{Engine: "vllm", Model: record.ModelFacts{ID: "Qwen/Qwen3-14B"},
				KV: record.KVFacts{MaxModelLen: 32768, BudgetTokens: 9271 * 16, BlockSize: 16, NumGPUBlocks: 9271, CacheDtype: "auto",
					GPUMemoryUtilization: 0.65, PrefixCaching: boolp(true), Batching: "continuous"},
				RequestsRunning: floatp(2), RequestsWaiting: floatp(1)},
			ok: []string{SourceModels, SourceVLLM},
			from: map[string]string{
				"kv_cache.budget_tokens":          "/metrics vllm:cache_config_info num_gpu_blocks × block_size",
				"kv_cache.gpu_memory_utilization": "/metrics vllm:cache_config_info gpu_memory_utilization",
				"kv_cache.prefix_caching":         "/metrics vllm:cache_config_info enable_prefix_caching",
				"requests_running":                "/metrics vllm:num_requests_running",
			},
		},
		{
			name: "llama.cpp", model: "llama",
			routes: map[string]string{"GET /v1/models": "llamacpp_models.json", "GET /props": "llamacpp_props.json"},
			want: headline{ModelIDs: []string{"../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"}, MaxModelLen: 1024,
				ParamsB: 8.030261312, Source: "/props default_generation_settings.n_ctx"},
			info: record.Discovery{Engine: "llama.cpp", Version: "b(build number)-(build commit hash)",
				Model: record.ModelFacts{ID: "../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", Path: "../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf",
					ParamsB: 8.030261312, Quantization: "Q4_K_M", ContextTrain: 131072, VocabSize: 128256, SizeBytes: 4912898304, ChatTemplate: boolp(true)},
				KV: record.KVFacts{MaxModelLen: 1024, MaxNumSeqs: 1}},
			ok: []string{SourceModels, SourceLlamaCpp},
			from: map[string]string{
				"model.params_b":        "/v1/models meta.n_params",
				"model.context_train":   "/v1/models meta.n_ctx_train",
				"model.quantization":    "/props model_path (file name)",
				"kv_cache.max_num_seqs": "/props total_slots",
			},
		},
		{
			name: "SGLang", model: "qwen/qwen2.5-0.5b-instruct",
			routes: map[string]string{"GET /v1/models": "sglang_models.json", "GET /get_server_info": "sglang_server_info.json"},
			want:   headline{ModelIDs: []string{"qwen/qwen2.5-0.5b-instruct"}, MaxModelLen: 32768, Source: "/v1/models max_model_len"},
			info: record.Discovery{Engine: "sglang", Version: "0.0.0.dev1+g54b06f199",
				Model: record.ModelFacts{ID: "qwen/qwen2.5-0.5b-instruct", Path: "qwen/qwen2.5-0.5b-instruct", Dtype: "auto"},
				KV: record.KVFacts{MaxModelLen: 32768, BudgetTokens: 20480, BlockSize: 1, CacheDtype: "auto", GPUMemoryUtilization: 0.836,
					MaxNumSeqs: 128, PrefixCaching: boolp(true), ChunkedPrefillTokens: 8192, Batching: "continuous"}},
			ok: []string{SourceModels, SourceSGLang},
			from: map[string]string{
				"kv_cache.budget_tokens":          "/get_server_info max_total_num_tokens",
				"kv_cache.max_num_seqs":           "/get_server_info internal_states[0].max_running_requests",
				"kv_cache.gpu_memory_utilization": "/get_server_info internal_states[0].mem_fraction_static",
				"kv_cache.prefix_caching":         "/get_server_info internal_states[0].disable_radix_cache (radix cache)",
			},
		},
		{
			name: "Ollama, default context", model: "llava:latest",
			routes: map[string]string{"GET /v1/models": "ollama_models.json", "POST /api/show": "ollama_show.json"},
			want:   headline{ModelIDs: []string{"llava:latest"}, ParamsB: 8.030261248},
			info: record.Discovery{Engine: "ollama", Model: record.ModelFacts{ID: "llava:latest", ParamsB: 8.030261248, Quantization: "Q4_0",
				ContextTrain: 8192, VocabSize: 128256, ChatTemplate: boolp(true)}},
			ok: []string{SourceModels, SourceOllama},
			from: map[string]string{
				"model.params_b":      "/api/show model_info.general.parameter_count",
				"model.context_train": "/api/show model_info.llama.context_length",
				"model.quantization":  "/api/show details.quantization_level",
			},
			notes: []string{"no num_ctx"},
		},
		{
			name: "Ollama, num_ctx set", model: "llava:latest",
			routes: map[string]string{"GET /v1/models": "ollama_models.json", "POST /api/show": "ollama_show_num_ctx.json"},
			want:   headline{ModelIDs: []string{"llava:latest"}, ParamsB: 8.030261248, MaxModelLen: 16384, Source: "/api/show parameters num_ctx"},
			info: record.Discovery{Engine: "ollama", Model: record.ModelFacts{ID: "llava:latest", ParamsB: 8.030261248, Quantization: "Q4_0",
				ContextTrain: 8192, VocabSize: 128256, ChatTemplate: boolp(true)}, KV: record.KVFacts{MaxModelLen: 16384}},
			ok: []string{SourceModels, SourceOllama},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &engine{routes: map[string]string{}}
			for route, file := range c.routes {
				e.routes[route] = fixture(t, file)
			}
			ts := httptest.NewServer(e)
			defer ts.Close()
			d, info := discover(t, ts.URL, c.model)

			checkDiscovery(t, d, c.want)
			checkInfo(t, info, c.info)
			if got := sourcesOK(info); !slices.Equal(got, c.ok) {
				t.Errorf("sources answering %v, want %v (%+v)", got, c.ok, info.Sources)
			}
			for _, s := range info.Sources {
				if !s.OK && !strings.Contains(s.Err, "not served (HTTP 404)") {
					t.Errorf("source %s: %q, want a quiet 404", s.Name, s.Err)
				}
			}
			for k, v := range c.from {
				if info.From[k] != v {
					t.Errorf("From[%s] = %q, want %q", k, info.From[k], v)
				}
			}
			checkNotes(t, info.Notes, c.notes)

			reqs := e.requests()
			if len(reqs) != len(Sources()) {
				t.Errorf("the server saw %d requests, want one per source", len(reqs))
			}
			for _, r := range reqs {
				if r.header.Get("Authorization") != "Bearer sk-d" || r.header.Get("X-Tenant") != "acme" {
					t.Errorf("%s %s: headers %v", r.method, r.path, r.header)
				}
				if r.path == "/api/show" && r.body != `{"model":"`+c.model+`"}` {
					t.Errorf("/api/show body %s", r.body)
				}
			}
		})
	}
}

// headline is the few facts the pins lean on most.
type headline struct {
	ModelIDs    []string
	MaxModelLen int
	ParamsB     float64
	Source      string // of MaxModelLen
	Err         string
}

func checkDiscovery(t *testing.T, d record.Discovery, want headline) {
	t.Helper()
	got := headline{d.ModelIDs, d.KV.MaxModelLen, d.Model.ParamsB, d.From["kv_cache.max_model_len"], d.Err}
	if !slices.Equal(got.ModelIDs, want.ModelIDs) || got.MaxModelLen != want.MaxModelLen ||
		math.Abs(got.ParamsB-want.ParamsB) > 1e-9 || got.Source != want.Source || got.Err != want.Err {
		t.Errorf("Discovery = %+v\nwant        %+v", got, want)
	}
}

// checkInfo compares the facts (not Sources, From or Notes).
func checkInfo(t *testing.T, got, want record.Discovery) {
	t.Helper()
	g, w := got, want
	g.Sources, g.From, g.Notes, g.ModelIDs, g.Err = nil, nil, nil, nil, ""
	w.Sources, w.From, w.Notes, w.ModelIDs, w.Err = nil, nil, nil, nil, ""
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if string(gj) != string(wj) {
		t.Errorf("record.Discovery facts\n got %s\nwant %s", gj, wj)
	}
	// Every fact has a source.
	for _, k := range factKeys(got) {
		if got.From[k] == "" {
			t.Errorf("fact %s has no source", k)
		}
	}
}

// factKeys lists the JSON paths of the facts set in info.
func factKeys(info record.Discovery) []string {
	var m map[string]any
	b, _ := json.Marshal(info)
	json.Unmarshal(b, &m)
	var keys []string
	for k, v := range m {
		switch k {
		case "sources", "from", "notes", "engine", "model_ids", "error":
			continue
		case "model", "kv_cache":
			for kk := range v.(map[string]any) {
				keys = append(keys, k+"."+kk)
			}
		default:
			keys = append(keys, k)
		}
	}
	return keys
}

// checkNotes wants one note containing each of want, and no others.
func checkNotes(t *testing.T, notes, want []string) {
	t.Helper()
	if len(notes) != len(want) {
		t.Errorf("notes %q, want %d", notes, len(want))
		return
	}
	for i, w := range want {
		if !strings.Contains(notes[i], w) {
			t.Errorf("note %q lacks %q", notes[i], w)
		}
	}
}

// TestDiscoverSimulator reads the simulator the way it reads a real
// engine: it answers as vLLM (/v1/models, /metrics) and llama.cpp
// (/props) at once, consistently.
func TestDiscoverSimulator(t *testing.T) {
	cfg := sim.Config{Timing: sim.TimingNone, Model: "qwen3.8-27b", MaxModelLen: 4096, MaxNumSeqs: 8,
		KVBudgetTokens: 65536, GPUMemoryUtilization: 0.8, Roofline: sim.Roofline{ParamsB: 27}, Batching: sim.BatchingStatic}
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	d, info := discover(t, ts.URL, "qwen3.8-27b")
	checkDiscovery(t, d, headline{ModelIDs: []string{"qwen3.8-27b"}, MaxModelLen: 4096, ParamsB: 27, Source: "/v1/models max_model_len"})
	checkInfo(t, info, record.Discovery{Engine: "sixpin-sim", Version: "sixpin-sim",
		Model: record.ModelFacts{ID: "qwen3.8-27b", Path: "qwen3.8-27b", ParamsB: 27, ContextTrain: 4096, ChatTemplate: boolp(true)},
		KV: record.KVFacts{MaxModelLen: 4096, BudgetTokens: 65536, BlockSize: 16, NumGPUBlocks: 4096, CacheDtype: "auto",
			GPUMemoryUtilization: 0.8, MaxNumSeqs: 8, PrefixCaching: boolp(false), Batching: "static"},
		RequestsRunning: floatp(0), RequestsWaiting: floatp(0)})
	if got := sourcesOK(info); !slices.Equal(got, []string{SourceModels, SourceVLLM, SourceLlamaCpp}) {
		t.Errorf("sources answering %v", got)
	}
	// /v1/models and /props agree on the context: nothing to note.
	checkNotes(t, info.Notes, nil)
}

// TestDiscoverFailures: discovery never fails the run; the model list's
// failure is Discovery.Err, every source says what went wrong.
func TestDiscoverFailures(t *testing.T) {
	cases := []struct {
		name    string
		handler http.Handler // nil: nothing listens
		wantErr string       // in Discovery.Err
		srcErr  string       // in every source's Err
	}{
		{name: "404 everywhere", handler: http.NotFoundHandler(), wantErr: "GET /v1/models: not served (HTTP 404)", srcErr: "HTTP 404"},
		{name: "401 everywhere", handler: testserve.Status(401, "application/json", `{"error":"no"}`), wantErr: "GET /v1/models: HTTP 401", srcErr: "HTTP 401"},
		{name: "HTML everywhere", handler: testserve.Status(200, "text/html", "<html><body>login</body></html>"), wantErr: "not JSON"},
		{name: "connection refused", wantErr: "refused", srcErr: "refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := testserve.DeadURL(t)
			if c.handler != nil {
				ts := httptest.NewServer(c.handler)
				defer ts.Close()
				base = ts.URL
			}
			d, info := discover(t, base, "m")
			if !strings.Contains(d.Err, c.wantErr) {
				t.Errorf("Err = %q, want it to mention %q", d.Err, c.wantErr)
			}
			if d.KV.MaxModelLen != 0 || d.Model.ParamsB != 0 || d.From["kv_cache.max_model_len"] != "" || len(d.ModelIDs) != 0 {
				t.Errorf("Discovery = %+v", d)
			}
			if len(info.Sources) != len(Sources()) {
				t.Fatalf("sources %+v", info.Sources)
			}
			for _, s := range info.Sources {
				if s.OK || s.Err == "" || !strings.Contains(s.Err, c.srcErr) {
					t.Errorf("source %+v", s)
				}
				if strings.Contains(s.Err, "sk-d") {
					t.Errorf("source error leaks the key: %q", s.Err)
				}
			}
		})
	}
}

// TestDiscoverGarbage serves broken, truncated and wrongly typed bodies on
// every discovery endpoint: nothing panics, nothing that is not the
// documented shape is taken for it.
func TestDiscoverGarbage(t *testing.T) {
	full := map[string]string{
		"GET /v1/models":       fixture(t, "vllm_models.json"),
		"GET /metrics":         fixture(t, "vllm_metrics.txt"),
		"GET /props":           fixture(t, "llamacpp_props.json"),
		"GET /get_server_info": fixture(t, "sglang_server_info.json"),
		"POST /api/show":       fixture(t, "ollama_show.json"),
	}
	garbage := []string{"", " ", "null", "[]", "{}", "{", `"x"`, "42", "<html></html>", "\x00\xff\xfe{\"data\":",
		`{"data":5}`, `{"data":[5]}`, `{"data":null}`, `{"default_generation_settings":7}`, `{"model_info":[]}`,
		"vllm:cache_config_info{block_size=\"16\" 1", "vllm:cache_config_info{block_size=\"x\",num_gpu_blocks=\"-5\"} 1",
		"vllm:num_requests_running NaN", strings.Repeat("{", 10000)}
	for _, body := range full {
		for i := 1; i < 8; i++ { // truncations of the real answer
			garbage = append(garbage, body[:len(body)*i/8])
		}
	}
	for _, g := range garbage {
		routes := map[string]string{}
		for route := range full {
			routes[route] = g
		}
		e := &engine{routes: routes}
		ts := httptest.NewServer(e)
		d, info := discover(t, ts.URL, "Qwen/Qwen3-14B")
		ts.Close()
		if len(info.Sources) != len(Sources()) {
			t.Fatalf("%.40q: sources %+v", g, info.Sources)
		}
		for _, s := range info.Sources {
			if s.OK == (s.Err != "") {
				t.Errorf("%.40q: source %+v", g, s)
			}
		}
		if slices.Contains(d.ModelIDs, "") {
			t.Errorf("%.40q: an empty model id listed: %q", g, d.ModelIDs)
		}
		if d.KV.MaxModelLen < 0 || info.KV.BudgetTokens < 0 || info.KV.NumGPUBlocks < 0 {
			t.Errorf("%.40q: negative facts %+v %+v", g, d, info.KV)
		}
	}
}

// TestDiscoverOddShapes covers answers that are the right shape with
// something unusual inside.
func TestDiscoverOddShapes(t *testing.T) {
	cases := []struct {
		name   string
		model  string
		routes map[string]string
		check  func(t *testing.T, d record.Discovery, info record.Discovery)
	}{
		{
			name: "several models, the target not last", model: "b",
			routes: map[string]string{"GET /v1/models": `{"object":"list","data":[{"id":"a","max_model_len":8192},{"id":"b","max_model_len":32768},{"id":"c","max_model_len":4096}]}`},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{ModelIDs: []string{"a", "b", "c"}, MaxModelLen: 32768, Source: "/v1/models max_model_len"})
			},
		},
		{
			name: "several models, the target not listed", model: "z",
			routes: map[string]string{"GET /v1/models": `{"data":[{"id":"a","max_model_len":8192},{"id":"b","max_model_len":32768}]}`},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{ModelIDs: []string{"a", "b"}})
				checkNotes(t, info.Notes, []string{`lists 2 models but not "z"`})
			},
		},
		{
			name: "llama.cpp meta null while loading", model: "m",
			routes: map[string]string{"GET /v1/models": `{"object":"list","data":[{"id":"m","object":"model","owned_by":"llamacpp","meta":null}]}`},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{ModelIDs: []string{"m"}})
				if info.Engine != "llama.cpp" {
					t.Errorf("engine %q", info.Engine)
				}
			},
		},
		{
			name: "a field of the wrong type costs only itself", model: "m",
			routes: map[string]string{
				"GET /v1/models": `{"data":[{"id":"m","max_model_len":"32768"}]}`,
				"GET /props":     `{"default_generation_settings":{"n_ctx":2048},"total_slots":"four","model_path":"/m/qwen2.5-7b-instruct-q5_k_m-00001-of-00002.gguf"}`,
			},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{ModelIDs: []string{"m"}, MaxModelLen: 2048, Source: "/props default_generation_settings.n_ctx"})
				if info.KV.MaxNumSeqs != 0 || info.Model.Quantization != "Q5_K_M" {
					t.Errorf("facts %+v %+v", info.KV, info.Model)
				}
				checkNotes(t, info.Notes, []string{"/v1/models: data.max_model_len is a JSON string", "/props: total_slots is a JSON string"})
			},
		},
		{
			// As llama-server b1-de3ff81 answers, started with -md and
			// --spec-type draft-simple (trimmed to the fields read).
			name: "llama.cpp says how it speculates", model: "m",
			routes: map[string]string{
				"GET /v1/models": `{"data":[{"id":"m","owned_by":"llamacpp"}]}`,
				"GET /props":     `{"default_generation_settings":{"params":{"temperature":0.8,"speculative.types":"draft-simple","timings_per_token":false},"n_ctx":2048},"total_slots":2}`,
			},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				if info.Speculative != "draft-simple" || info.From["speculative"] != "/props default_generation_settings.params.speculative.types" {
					t.Errorf("speculative %q from %q", info.Speculative, info.From["speculative"])
				}
			},
		},
		{
			name: "sources disagree: the first is kept, the other noted", model: "m",
			routes: map[string]string{
				"GET /v1/models": `{"data":[{"id":"m","max_model_len":32768}]}`,
				"GET /props":     `{"default_generation_settings":{"n_ctx":8192},"total_slots":4}`,
			},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{ModelIDs: []string{"m"}, MaxModelLen: 32768, Source: "/v1/models max_model_len"})
				checkNotes(t, info.Notes, []string{"kv_cache.max_model_len: /v1/models max_model_len says 32768, /props default_generation_settings.n_ctx says 8192"})
			},
		},
		{
			name: "llama.cpp with only the top-level n_ctx", model: "m",
			routes: map[string]string{"GET /props": `{"n_ctx":16384,"total_slots":2,"chat_template":""}`},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{MaxModelLen: 16384, Source: "/props n_ctx", Err: "GET /v1/models: not served (HTTP 404)"})
				if info.KV.MaxNumSeqs != 2 || info.Model.ChatTemplate == nil || *info.Model.ChatTemplate {
					t.Errorf("facts %+v %+v", info.KV, info.Model)
				}
			},
		},
		{
			name: "vLLM data parallel: two engines' caches add up", model: "m",
			routes: map[string]string{"GET /metrics": `# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",enable_prefix_caching="False",engine="0",gpu_memory_utilization="0.9",kv_cache_size_tokens="16000",num_gpu_blocks="1000"} 1.0
vllm:cache_config_info{block_size="16",enable_prefix_caching="False",engine="1",gpu_memory_utilization="0.9",kv_cache_size_tokens="16000",num_gpu_blocks="1000"} 1.0
vllm:cache_config_info{block_size="16",enable_prefix_caching="False",engine="1",gpu_memory_utilization="0.9",kv_cache_size_tokens="16000",num_gpu_blocks="1000"} 1.0
vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:num_requests_running{engine="1",model_name="m"} 4
`},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				if info.KV.NumGPUBlocks != 2000 || info.KV.BudgetTokens != 32000 || *info.KV.PrefixCaching ||
					info.RequestsRunning == nil || *info.RequestsRunning != 7 || info.RequestsWaiting != nil {
					t.Errorf("facts %+v running %v", info.KV, info.RequestsRunning)
				}
				if got := info.From["kv_cache.budget_tokens"]; got != "/metrics vllm:cache_config_info kv_cache_size_tokens, summed over 2 engines" {
					t.Errorf("budget from %q", got)
				}
			},
		},
		{
			name: "vLLM gauges without cache_config_info", model: "m",
			routes: map[string]string{"GET /metrics": "vllm:num_requests_waiting{model_name=\"m\"} 5\n"},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				if info.RequestsWaiting == nil || *info.RequestsWaiting != 5 || info.Engine != "" {
					t.Errorf("waiting %v, engine %q", info.RequestsWaiting, info.Engine)
				}
				checkNotes(t, info.Notes, []string{"no vllm:cache_config_info"})
			},
		},
		{
			name: "two engines' endpoints and no owner named", model: "m",
			routes: map[string]string{
				"GET /v1/models": `{"data":[{"id":"m","owned_by":"proxy"}]}`,
				"GET /props":     `{"total_slots":2}`,
				"GET /metrics":   "vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"10\"} 1\n",
			},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				if info.Engine != "" || info.KV.BudgetTokens != 160 || info.KV.MaxNumSeqs != 2 {
					t.Errorf("engine %q, facts %+v", info.Engine, info.KV)
				}
				checkNotes(t, info.Notes, []string{"several engines (vllm, llama.cpp)"})
			},
		},
		{
			name: "llama.cpp metrics are not vLLM's", model: "m",
			routes: map[string]string{"GET /metrics": "# HELP llamacpp:requests_processing Number of requests processing.\n# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 0\n"},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				if slices.Contains(sourcesOK(info), SourceVLLM) {
					t.Errorf("llama.cpp metrics taken for vLLM's: %+v", info.Sources)
				}
			},
		},
		{
			name: "SGLang without internal_states, parameter size only", model: "m",
			routes: map[string]string{
				"GET /get_server_info": `{"model_path":"/w/Qwen3-32B-FP8","context_length":40960,"mem_fraction_static":0.88,"max_running_requests":null,"max_total_num_tokens":500000,"disable_radix_cache":true,"quantization":"fp8","chunked_prefill_size":-1}`,
				"POST /api/show":       `{"details":{"parameter_size":"494.03M","quantization_level":"F16"}}`,
			},
			check: func(t *testing.T, d record.Discovery, info record.Discovery) {
				checkDiscovery(t, d, headline{MaxModelLen: 40960, ParamsB: 0.49403, Source: "/get_server_info context_length", Err: "GET /v1/models: not served (HTTP 404)"})
				kv := info.KV
				if kv.BudgetTokens != 500000 || kv.MaxNumSeqs != 0 || kv.ChunkedPrefillTokens != 0 || *kv.PrefixCaching ||
					info.Model.Quantization != "fp8" || info.From["model.params_b"] != "/api/show details.parameter_size" {
					t.Errorf("facts %+v %+v", kv, info.Model)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(&engine{routes: c.routes})
			defer ts.Close()
			d, info := discover(t, ts.URL, c.model)
			c.check(t, d, info)
		})
	}
}

// TestDiscoverFrom asks only the named sources.
func TestDiscoverFrom(t *testing.T) {
	e := &engine{routes: map[string]string{"GET /metrics": fixture(t, "vllm_metrics.txt")}}
	ts := httptest.NewServer(e)
	defer ts.Close()
	d := DiscoverFrom(context.Background(), newClient(t, Target{BaseURL: ts.URL + "/v1", Model: "m"}), SourceVLLM, "bogus")
	info := d
	if len(info.Sources) != 2 || !info.Sources[0].OK || info.Sources[0].Endpoint != "GET /metrics" ||
		info.Sources[1].OK || info.Sources[1].Err != "unknown discovery source" {
		t.Errorf("sources %+v", info.Sources)
	}
	if d.Err != "" || d.ModelIDs != nil || info.KV.NumGPUBlocks != 9271 {
		t.Errorf("Discovery %+v, KV %+v", d, info.KV)
	}
	if reqs := e.requests(); len(reqs) != 1 || reqs[0].path != "/metrics" {
		t.Errorf("requests %+v", reqs)
	}
}

// TestDiscoverHost: {host} is the base URL less /v1, kept under a prefix.
func TestDiscoverHost(t *testing.T) {
	e := &engine{routes: map[string]string{
		"GET /proxy/v1/models": `{"data":[{"id":"m"}]}`,
		"GET /proxy/props":     `{"total_slots":3}`,
	}}
	ts := httptest.NewServer(e)
	defer ts.Close()
	d, info := discover(t, ts.URL+"/proxy", "m")
	if !slices.Equal(d.ModelIDs, []string{"m"}) || info.KV.MaxNumSeqs != 3 {
		t.Errorf("Discovery %+v, info %+v", d, info)
	}
	if info.Sources[0].Endpoint != "GET /proxy/v1/models" || info.Sources[3].Endpoint != "GET /proxy/props" {
		t.Errorf("endpoints %+v", info.Sources)
	}
}

func TestGGUFQuant(t *testing.T) {
	for in, want := range map[string]string{
		"../models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf":                "Q4_K_M",
		`C:\models\DeepSeek-V4-Flash-0731-UD-IQ2_XXS-00001-of-00003.gguf`: "IQ2_XXS",
		"/m/qwen2.5-7b-instruct-q8_0.gguf":                                "Q8_0",
		"/m/gemma-3-27b-it-BF16.gguf":                                     "BF16",
		"/m/gpt-oss-20b-mxfp4.gguf":                                       "MXFP4",
		"/m/Qwen3-30B-A3B-UD-Q4_K_XL.gguf":                                "Q4_K_XL",
		"/m/bitnet-b1.58-TQ1_0.gguf":                                      "TQ1_0",
		"/m/Qwen3-8B.gguf":                                                "",
		"/m/Qwen3.8-27b":                                                  "",
		"/m/model-Q4_.gguf":                                               "",
		"":                                                                "",
		"/m/Q9_0.gguf":                                                    "",
	} {
		if got := ggufQuant(in); got != want {
			t.Errorf("ggufQuant(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseParamSize(t *testing.T) {
	for in, want := range map[string]float64{
		"8.0B": 8, "70.6B": 70.6, "494.03M": 0.49403, "1.5b": 1.5, "1.2T": 1200, "350K": 0.00035,
		"": 0, "B": 0, "8.0": 0, "-3B": 0, "xB": 0,
	} {
		got, ok := parseParamSize(in)
		if ok != (want > 0) || math.Abs(got-want) > 1e-9 {
			t.Errorf("parseParamSize(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
}
