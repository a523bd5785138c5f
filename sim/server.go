package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sixpin/sixpin/tokenizer"
)

// maxBodyBytes bounds a request body; a 32K-token prompt of sixpin's words
// is about 200 KB, so this leaves room for long contexts.
const maxBodyBytes = 64 << 20

// Server is the simulated inference server: an http.Handler serving
//
//	POST /v1/chat/completions   OpenAI chat completions, streaming (SSE)
//	                            and not (chat.go)
//	POST /v1/completions        OpenAI legacy completions (completions.go)
//	POST /v1/messages           Anthropic's Messages API (messages.go)
//	POST /v1/responses          OpenAI's Responses API (responses.go)
//	GET  /v1/models             vLLM's and llama.cpp's model metadata
//	GET  /health                200
//	GET  /metrics               vLLM V1's metrics, live (metrics.go)
//	GET  /props                 llama.cpp's server properties (slot
//	                            context, slots, model path)
//	POST /tokenize              vLLM's or llama.cpp's tokenizer, by the
//	                            shape of the body
//
// Every protocol shares one generation path (gen.go): the same timing,
// batching, KV budget, prefix cache, rate limits, faults, time scale and
// send stamps. Token counts (usage, /tokenize) come from one tokenizer:
// by default one token per whitespace-separated word. Every response
// carries an X-Request-Id header: the request's own, or one the Server
// made up.
//
// With Config.TimeScale ≠ 1 every modelled delay and rate-limit window is
// scaled: what a client measures against it is in compressed time. Time
// outside the model (parsing, tokenizing, the round trip) is not.
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
	m        *serverMetrics
	ids      atomic.Uint64 // request ids made up so far
	log      *requestLog   // nil without Config.RequestLog

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
		m:        newServerMetrics(),
		log:      newRequestLog(c.RequestLog),
		done:     make(chan struct{}),
	}
	switch {
	case c.Timing == TimingRoofline:
		s.eng = startEngine(c, s.done, s.m)
	case s.caching:
		s.kv = newKVCache(c.KVBudgetTokens, c.BlockSize, true)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST /v1/chat/completions", s.serve(chatProto{}))
	s.mux.HandleFunc("POST /v1/completions", s.serve(completionsProto{}))
	s.mux.HandleFunc("POST /v1/messages", s.serve(messagesProto{}))
	s.mux.HandleFunc("POST /v1/responses", s.serve(responsesProto{}))
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
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		id = s.requestID()
	}
	w.Header().Set("X-Request-Id", id)
	s.mux.ServeHTTP(w, r)
}

// requestID makes up a request id: "sim-" and 16 hex digits, unique
// within the Server.
func (s *Server) requestID() string {
	b := make([]byte, 0, 20)
	b = append(b, "sim-"...)
	return string(appendHex(b, mix(s.ids.Add(1)^uint64(s.created))))
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
