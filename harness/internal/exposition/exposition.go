// Package exposition serves sixpin's own live figures to Prometheus.
//
// It is the client's side — what sixpin measures while a run goes on —
// in the Prometheus exposition format, with the official client library:
// requests by outcome and class, output and prompt tokens, requests in
// flight, and TTFT, ITL, E2E and schedule-lag histograms (native
// histograms, with classic buckets beside them for scrapers that read
// only those). The server's own /metrics, which sixpin reads, is
// endpoint.Scraper's.
package exposition

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sixpin/sixpin/internal/listen"
	"github.com/sixpin/sixpin/record"
)

// Path is where the exposition is served.
const Path = "/metrics"

// Labels identify a run's series. RunID and Shard are those of a
// distributed run ("" for a run on one machine).
type Labels struct {
	Scenario, Profile, RunID, Shard string
}

var runLabels = []string{"scenario", "profile", "run_id", "shard"}

func (l Labels) values() []string { return []string{l.Scenario, l.Profile, l.RunID, l.Shard} }

// Native histogram settings: buckets grow by at most 10% each, at most 160
// of them (the schema widens past that), reset at most hourly.
const (
	nativeFactor     = 1.1
	nativeMaxBuckets = 160
	nativeMinReset   = time.Hour
)

// Classic buckets, seconds.
var (
	latencyBuckets = prometheus.ExponentialBucketsRange(0.005, 600, 24) // TTFT, E2E: 5 ms … 10 min
	itlBuckets     = prometheus.ExponentialBucketsRange(0.0002, 5, 20)  // ITL: 0.2 ms … 5 s
	lagBuckets     = prometheus.ExponentialBucketsRange(0.00001, 10, 16)
)

// Server serves the exposition of every run started on it. Its methods
// are safe for concurrent use.
type Server struct {
	reg *prometheus.Registry
	srv *http.Server
	ln  net.Listener

	requests      *prometheus.CounterVec
	outputTokens  *prometheus.CounterVec
	promptTokens  *prometheus.CounterVec
	ttft, itl     *prometheus.HistogramVec
	e2e, lag      *prometheus.HistogramVec
	inFlight      *inFlight
	serveFinished chan struct{}
}

func histogram(name, help string, buckets []float64) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: name, Help: help, Buckets: buckets,
		NativeHistogramBucketFactor:     nativeFactor,
		NativeHistogramMaxBucketNumber:  nativeMaxBuckets,
		NativeHistogramMinResetDuration: nativeMinReset,
	}, runLabels)
}

// listener is the exposition's rule for its address (listen.Listen).
var listener = listen.Server{Flag: "--metrics-addr", RemoteFlag: "--metrics-remote", Shows: "the run's scenario, profile and figures"}

// Start listens on addr (host:port; ":0" picks a port) and serves the
// exposition at Path until Close. addr is taken by listen.Listen's rule:
// a loopback host, a bare ":port" being 127.0.0.1, unless remote (then a
// bare ":port" is every interface, as a Prometheus on another machine
// needs).
func Start(addr string, remote bool) (*Server, error) {
	ln, err := listen.Listen(listener, addr, remote)
	if err != nil {
		return nil, err
	}
	s := &Server{
		reg: prometheus.NewRegistry(),
		ln:  ln,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sixpin_requests_total",
			Help: "Requests that ended, by outcome (ok or error) and error class (\"\" for ok).",
		}, append(runLabels, "outcome", "class")),
		outputTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sixpin_output_tokens_total",
			Help: "Output tokens (reasoning included) of the requests that ended: the server's usage, else the chunks counted.",
		}, runLabels),
		promptTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sixpin_prompt_tokens_total",
			Help: "Prompt tokens of the requests that ended, as the server's usage reports them.",
		}, runLabels),
		ttft: histogram("sixpin_ttft_seconds", "Time to first token of successful requests, from the scheduled start.", latencyBuckets),
		itl:  histogram("sixpin_itl_seconds", "Inter-token latency: a chunk of k tokens after a gap g counts as k gaps of g/k.", itlBuckets),
		e2e:  histogram("sixpin_e2e_seconds", "End-to-end latency of successful requests, from the scheduled start.", latencyBuckets),
		lag:  histogram("sixpin_schedule_lag_seconds", "How late each request was sent after its scheduled start (open loop; about 0 in closed loop).", lagBuckets),
		inFlight: &inFlight{
			desc: prometheus.NewDesc("sixpin_in_flight", "Requests in flight now.", runLabels, nil),
			runs: map[Labels]func() int64{},
		},
		serveFinished: make(chan struct{}),
	}
	s.reg.MustRegister(s.requests, s.outputTokens, s.promptTokens, s.ttft, s.itl, s.e2e, s.lag, s.inFlight)
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.serveFinished)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed: scrapes fail, the run goes on
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the exposition's URL.
func (s *Server) URL() string { return "http://" + s.Addr() + Path }

// Where is the exposition's URL as this machine opens it, and who can
// reach it (listen.Where).
func (s *Server) Where() (url, reach string) { return listen.Where(s.ln, Path) }

// Close stops serving.
func (s *Server) Close() error {
	err := s.srv.Close()
	<-s.serveFinished
	return err
}

// Run is one run's series. Observe and End are safe for concurrent use.
type Run struct {
	s      *Server
	labels Labels

	outputTokens, promptTokens prometheus.Counter
	ttft, itl, e2e, lag        prometheus.Observer
}

// Run begins the series of a run labelled l; inFlight reads its requests
// in flight (at each scrape) until End. A later run with the same labels
// adds to the same series.
func (s *Server) Run(l Labels, inFlight func() int64) *Run {
	v := l.values()
	r := &Run{s: s, labels: l,
		outputTokens: s.outputTokens.WithLabelValues(v...),
		promptTokens: s.promptTokens.WithLabelValues(v...),
		ttft:         s.ttft.WithLabelValues(v...),
		itl:          s.itl.WithLabelValues(v...),
		e2e:          s.e2e.WithLabelValues(v...),
		lag:          s.lag.WithLabelValues(v...),
	}
	s.inFlight.set(l, inFlight)
	return r
}

// End stops reading the run's in-flight count: it reads 0 from then on.
func (r *Run) End() { r.s.inFlight.set(r.labels, func() int64 { return 0 }) }

// Observe counts one finished record. Its chunks' token counts must be
// assigned (results.Collector.Add does).
func (r *Run) Observe(rec *record.Record) {
	outcome, class := "ok", ""
	if rec.Failed() {
		outcome, class = "error", string(rec.Err)
	}
	r.s.requests.WithLabelValues(append(r.labels.values(), outcome, class)...).Inc()
	r.outputTokens.Add(float64(rec.OutputTokens()))
	if rec.HasUsage {
		r.promptTokens.Add(float64(rec.Usage.PromptTokens))
	}
	r.lag.Observe(max(rec.Lag(), 0).Seconds())
	if rec.Failed() {
		return
	}
	r.e2e.Observe(rec.E2E().Seconds())
	if ttft, ok := rec.TTFT(); ok {
		r.ttft.Observe(ttft.Seconds())
	}
	if !rec.DecodeMeasured() {
		return // gaps inside one read are the client's parse, not the server's
	}
	rec.ITLs(func(gap time.Duration, k int) {
		per := (gap / time.Duration(k)).Seconds()
		for range k {
			r.itl.Observe(per)
		}
	})
}

// inFlight is the sixpin_in_flight gauge, read from each run's counter at
// scrape time.
type inFlight struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	runs map[Labels]func() int64
}

func (g *inFlight) set(l Labels, fn func() int64) {
	g.mu.Lock()
	g.runs[l] = fn
	g.mu.Unlock()
}

func (g *inFlight) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *inFlight) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for l, fn := range g.runs {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(fn()), l.values()...)
	}
}
