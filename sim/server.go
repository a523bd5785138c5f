package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sixpin/sixpin/tokenizer"
)

// maxBodyBytes bounds a request body; a 32K-token prompt of sixpin's words
// is about 200 KB, so this leaves room for long contexts.
const maxBodyBytes = 64 << 20

// Server is the simulated inference server: an http.Handler serving
//
//	POST /v1/chat/completions   streaming (SSE) and not
//	GET  /v1/models             vLLM's and llama.cpp's model metadata
//	GET  /health                200
//	GET  /metrics               vLLM-style metrics (requests running and
//	                            waiting, KV cache usage, preemptions,
//	                            prefix cache queries and hits,
//	                            cache_config_info)
//	GET  /props                 llama.cpp's server properties (slot
//	                            context, slots, model path)
//	POST /tokenize              vLLM's or llama.cpp's tokenizer, by the
//	                            shape of the body
//
// Token counts (chat usage, /tokenize) come from one tokenizer: by default
// one token per whitespace-separated word.
//
// With Config.TimeScale ≠ 1 every modelled delay and rate-limit window is
// scaled: what a client measures against it is in compressed time.
//
// With TimingRoofline one engine goroutine, started by New, times every
// request; Close stops it. A Server is safe for concurrent use.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	eng      *engine // nil unless TimingRoofline
	faults   []faultBand
	overhead int  // template tokens per message
	stamps   bool // add sixpin_sent_unix_ns
	created  int64
	tok      textTokenizer
	caching  bool     // prefix caching
	lim      *limiter // nil without rate limits

	// kv is the prefix cache when no engine keeps one (prefix caching
	// without TimingRoofline), guarded by kvMu.
	kvMu sync.Mutex
	kv   *kvCache

	done      chan struct{}
	closeOnce sync.Once
}

// New returns a Server for c after applying Defaults and Validate. With
// TimingRoofline it starts the engine goroutine; call Close to stop it.
func New(c Config) (*Server, error) {
	c = Defaults(c)
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("sim config: %w", err)
	}
	// Copy the map so the caller may not change faults under us.
	faults := make(map[string]float64, len(c.Faults))
	for k, v := range c.Faults {
		faults[k] = v
	}
	c.Faults = faults
	var tok textTokenizer = wordTokenizer{}
	if c.Tokenizer != "" && c.Tokenizer != "words" {
		t, err := tokenizer.Get(c.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("sim config: tokenizer: %w", err)
		}
		tok = t
	}
	s := &Server{
		cfg:      c,
		faults:   faultBands(c.Faults),
		overhead: *c.TemplateOverheadTokens,
		stamps:   *c.SendStamps,
		created:  time.Now().Unix(),
		tok:      tok,
		caching:  *c.PrefixCaching,
		lim:      newLimiter(c.RateLimits, c.TimeScale, time.Now),
		done:     make(chan struct{}),
	}
	switch {
	case c.Timing == TimingRoofline:
		s.eng = startEngine(c, s.done)
	case s.caching:
		s.kv = newKVCache(c.KVBudgetTokens, c.BlockSize, true)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	s.mux.HandleFunc("GET /v1/models", s.handleModels)
	s.mux.HandleFunc("GET /health", s.handleHealth)
	s.mux.HandleFunc("GET /metrics", s.handleMetrics)
	s.mux.HandleFunc("GET /props", s.handleProps)
	s.mux.HandleFunc("POST /tokenize", s.handleTokenize)
	return s, nil
}

// Config returns the effective configuration (defaults applied).
func (s *Server) Config() Config { return s.cfg }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Close stops the engine goroutine and ends every in-flight response: a
// stream stops where it is, without its finish chunk or [DONE]. Requests
// after Close get 503. Close is idempotent, safe for concurrent use, and
// returns once the engine goroutine has exited; it always returns nil.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		if s.eng != nil {
			<-s.eng.exited
		}
	})
	return nil
}

func (s *Server) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.closed() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

type modelMeta struct {
	NParams   int64 `json:"n_params"`
	NCtxTrain int   `json:"n_ctx_train"`
}

type modelCard struct {
	ID          string    `json:"id"`
	Object      string    `json:"object"`
	Created     int64     `json:"created"`
	OwnedBy     string    `json:"owned_by"`
	MaxModelLen int       `json:"max_model_len"`
	Meta        modelMeta `json:"meta"`
}

type modelList struct {
	Object string      `json:"object"`
	Data   []modelCard `json:"data"`
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, modelList{
		Object: "list",
		Data: []modelCard{{
			ID:          s.cfg.Model,
			Object:      "model",
			Created:     s.created,
			OwnedBy:     "sixpin-sim",
			MaxModelLen: s.cfg.MaxModelLen,
			Meta: modelMeta{
				NParams:   int64(s.cfg.Roofline.ParamsB * 1e9),
				NCtxTrain: s.cfg.MaxModelLen,
			},
		}},
	})
}

// handleMetrics serves a few vLLM metrics, in vLLM V1's shape: the
// request gauges, KV cache usage, preemptions, prefix cache queries and
// hits (in tokens), and vllm:cache_config_info, whose labels carry the KV
// cache's settings (block size, blocks, the KV budget in tokens,
// gpu_memory_utilization, prefix caching) for sixpin's discovery.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	var running, waiting, preemptions, queries, hits, used int64
	blocks := int64(max(1, s.cfg.KVBudgetTokens/s.cfg.BlockSize))
	switch {
	case s.eng != nil:
		st := &s.eng.stats
		running, waiting = st.running.Load(), st.waiting.Load()
		preemptions, queries, hits = st.preemptions.Load(), st.queries.Load(), st.hits.Load()
		used = st.blocksUsed.Load()
	case s.kv != nil:
		s.kvMu.Lock()
		queries, hits, used = s.kv.queries, s.kv.hits, int64(s.kv.used)
		s.kvMu.Unlock()
	}
	model := promQuote(s.cfg.Model)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	metric := func(name, typ, help string, v any) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s{engine=\"0\",model_name=%s} %v\n", name, help, name, typ, name, model, v)
	}
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", running)
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", waiting)
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", min(1, float64(used)/float64(blocks)))
	metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", preemptions)
	metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", queries)
	metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", hits)
	fmt.Fprintf(w, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n")
	fmt.Fprintf(w, "# TYPE vllm:cache_config_info gauge\n")
	fmt.Fprintf(w, "vllm:cache_config_info{%s} 1.0\n", s.metricsLabels())
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
