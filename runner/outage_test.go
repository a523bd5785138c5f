package runner

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// dyingServer serves h on a loopback port and, once it has answered
// dieAfter chat requests, dies (listener and connections closed) and comes
// back on the same port down later.
type dyingServer struct {
	addr     string
	h        http.Handler
	dieAfter int64
	down     time.Duration
	chats    atomic.Int64
	mu       sync.Mutex
	srv      *http.Server
	back     chan struct{} // closed once it is serving again
	backAt   time.Time     // when it came back (read after back is closed)
}

func newDyingServer(t *testing.T, h http.Handler, dieAfter int64, down time.Duration) *dyingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dyingServer{addr: ln.Addr().String(), h: h, dieAfter: dieAfter, down: down, back: make(chan struct{})}
	s.serve(ln)
	t.Cleanup(func() {
		<-s.back
		s.mu.Lock()
		defer s.mu.Unlock()
		s.srv.Close()
	})
	return s
}

func (s *dyingServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.handle)}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	go srv.Serve(ln)
}

func (s *dyingServer) handle(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/chat/completions") && s.chats.Add(1) == s.dieAfter {
		go s.dieAndReturn()
	}
	s.h.ServeHTTP(w, r)
}

func (s *dyingServer) dieAndReturn() {
	s.mu.Lock()
	s.srv.Close()
	s.mu.Unlock()
	time.Sleep(s.down)
	for {
		ln, err := net.Listen("tcp", s.addr)
		if err == nil {
			s.serve(ln)
			s.backAt = time.Now()
			close(s.back)
			return
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			panic(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServerDiesMidRun closes the server mid-run and opens it again on the
// same port: closed-loop workers and agentic sessions back off instead of
// hammering the closed port, the run records when the endpoint went away
// and came back, and the load resumes.
func TestServerDiesMidRun(t *testing.T) {
	const down = 400 * time.Millisecond
	cases := []struct {
		name string
		yaml string
		n    int
	}{
		{"closed loop", `
seed: 3
pins:
  model: {name: sim-model}
  prompt: {tokens: 20}
  output: {tokens: 4, exact: true}
  concurrency: {mode: closed, streams: 4}
requests: 400
`, 400},
		{"agentic sessions", strings.Replace(sessionsPlan(t, "requests: 12", "requests: 80", "turns: 6", "turns: 40"),
			"streams: 2", "streams: 3", 1), 80},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newSim(t, sim.Config{Timing: sim.TimingNone})
			t.Cleanup(func() { srv.Close() })
			ds := newDyingServer(t, srv, int64(c.n/4), down)
			r := newRunner(t, mustPlan(t, c.yaml), endpoint.Target{BaseURL: "http://" + ds.addr + "/v1", Model: sim.DefaultModel, OutputControl: endpoint.ControlIgnoreEOS},
				WithTemplate(endpoint.Template{Overhead: simOverhead}))
			recs := runAll(t, r)
			if len(recs) != c.n {
				t.Fatalf("%d records, want %d", len(recs), c.n)
			}
			// refused: failed to connect on a new connection (those on a
			// kept-alive one the dying server closed are not the outage).
			connect, refused, succeededAfter := 0, 0, 0
			var lastFail time.Duration
			for _, rec := range recs {
				switch rec.Err {
				case record.ErrConnect:
					connect++
					if !strings.Contains(rec.ErrMsg, "kept-alive") {
						refused++
					}
					lastFail = max(lastFail, rec.Sent)
				case record.ErrStreamCut, record.OK:
				default:
					t.Errorf("request %d: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
			}
			for _, rec := range recs {
				if !rec.Failed() && rec.Sent > lastFail {
					succeededAfter++
				}
			}
			// Without backoff each worker fails thousands of times while
			// the port is closed; with it, a handful (50 ms doubling).
			if connect == 0 || connect > 40 {
				t.Errorf("%d requests failed to connect while the server was down; want a few", connect)
			}
			if succeededAfter == 0 {
				t.Errorf("no request succeeded after the server came back")
			}
			out := r.client.Outages()
			if len(out) != 1 {
				t.Fatalf("outages %+v, want one", out)
			}
			o := out[0]
			if !o.Recovered || o.FailedRequests != refused || o.EndS <= o.StartS || o.EndS-o.StartS < down.Seconds()/2 {
				t.Errorf("outage %+v; want recovered, %d failed requests, lasting about %v", o, refused, down)
			}
			// A session whose turn could not connect waits and sends it
			// again; only a turn cut when the server died may end one.
			for _, rec := range recs {
				if rec.SessionEnd == record.SessionEndError && rec.Err == record.ErrConnect {
					t.Errorf("session %d ended on a connect error (turn %d: %s)", rec.Session, rec.Turn, rec.ErrMsg)
				}
			}
		})
	}
}

// TestOutageOutlivesKeptAliveAnswers: a server going down stops accepting
// connections while a kept-alive one still answers (its listener closes
// first). The outage lasts until a new connection is accepted; answers on
// the old one do not end it, so one outage is recorded, not one per
// failed attempt.
func TestOutageOutlivesKeptAliveAnswers(t *testing.T) {
	const down = 400 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var chats atomic.Int64
	var isBack atomic.Bool
	back := make(chan struct{})
	simSrv := newSim(t, sim.Config{Timing: sim.TimingNone})
	t.Cleanup(func() { simSrv.Close() })
	srv := &http.Server{}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isBack.CompareAndSwap(true, false) {
			// Back: the kept-alive connection is closed after this
			// answer too, so both streams connect anew.
			w.Header().Set("Connection", "close")
		}
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && chats.Add(1) == 40 {
			// This stream's connection is closed after its answer and no
			// new one is accepted for a while; the other stream's
			// kept-alive connection goes on being served.
			w.Header().Set("Connection", "close")
			ln.Close()
			go func() {
				defer close(back)
				time.Sleep(down)
				for {
					l, err := net.Listen("tcp", addr)
					if err == nil {
						go srv.Serve(l)
						isBack.Store(true)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
		}
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			// Each answer holds its connection a while, so the two
			// streams' requests overlap: the stream that lost its
			// connection finds the other's busy and must dial.
			time.Sleep(2 * time.Millisecond)
		}
		simSrv.ServeHTTP(w, r)
	})
	go srv.Serve(ln)
	t.Cleanup(func() { <-back; srv.Close() })

	r := newRunner(t, mustPlan(t, `
seed: 3
pins:
  model: {name: sim-model}
  prompt: {tokens: 20}
  output: {tokens: 4, exact: true}
  concurrency: {mode: closed, streams: 2}
duration: 1.5s
`), endpoint.Target{BaseURL: "http://" + addr + "/v1", Model: sim.DefaultModel, OutputControl: endpoint.ControlIgnoreEOS},
		WithTemplate(endpoint.Template{Overhead: simOverhead}))
	recs := runAll(t, r)
	connect := 0
	for _, rec := range recs {
		if rec.Err == record.ErrConnect {
			connect++
		} else if rec.Failed() {
			t.Errorf("request %d: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
		}
	}
	if connect < 2 {
		t.Fatalf("%d requests failed to connect; the test wants the stream that lost its connection to retry a few times", connect)
	}
	out := r.client.Outages()
	if len(out) != 1 {
		t.Fatalf("%d outages %+v, want one", len(out), out)
	}
	if o := out[0]; !o.Recovered || o.FailedRequests != connect || o.EndS-o.StartS < down.Seconds()/2 {
		t.Errorf("outage %+v; want recovered, %d failed requests, lasting about %v", o, connect, down)
	}
}

// loading answers chat requests as llama-server does while it loads its
// model — 503 {"error":{"code":503,"message":"Loading model"}} — from
// when back is closed until loading has passed since *at, then serves h.
func loading(back <-chan struct{}, at *time.Time, loading time.Duration, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-back:
			if strings.HasSuffix(r.URL.Path, "/chat/completions") && time.Since(*at) < loading {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`))
				return
			}
		default:
		}
		h.ServeHTTP(w, r)
	})
}

// TestServerRestartsLoading: a server restarted mid-run answers 503
// Loading model for a while once it accepts connections again (as
// llama-server does). Workers and sessions back off from each 503 as
// from a 429 instead of sending the next request at once (1,153 × 503 in
// 1.5 s before), no session ends on one, and the outage lasts until the
// first real answer, not the first 503.
func TestServerRestartsLoading(t *testing.T) {
	const down, load = 300 * time.Millisecond, 700 * time.Millisecond
	cases := []struct {
		name    string
		yaml    string
		n       int
		streams int
	}{
		{"closed loop", `
seed: 3
pins:
  model: {name: sim-model}
  prompt: {tokens: 20}
  output: {tokens: 4, exact: true}
  concurrency: {mode: closed, streams: 4}
requests: 200
`, 200, 4},
		{"agentic sessions", strings.Replace(sessionsPlan(t, "requests: 12", "requests: 80", "turns: 6", "turns: 40"),
			"streams: 2", "streams: 3", 1), 80, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newSim(t, sim.Config{Timing: sim.TimingNone})
			t.Cleanup(func() { srv.Close() })
			var ds *dyingServer
			back := make(chan struct{})
			var at time.Time
			ds = newDyingServer(t, loading(back, &at, load, srv), int64(c.n/4), down)
			go func() { <-ds.back; at = ds.backAt; close(back) }()
			r := newRunner(t, mustPlan(t, c.yaml), endpoint.Target{BaseURL: "http://" + ds.addr + "/v1", Model: sim.DefaultModel, OutputControl: endpoint.ControlIgnoreEOS},
				WithTemplate(endpoint.Template{Overhead: simOverhead}))
			recs := runAll(t, r)
			if len(recs) != c.n {
				t.Fatalf("%d records, want %d", len(recs), c.n)
			}
			unavailable := 0
			var lastUnavailable time.Duration
			for _, rec := range recs {
				if rec.HTTPStatus == http.StatusServiceUnavailable {
					unavailable++
					lastUnavailable = max(lastUnavailable, rec.End)
				}
				if rec.SessionEnd == record.SessionEndError && rec.HTTPStatus == http.StatusServiceUnavailable {
					t.Errorf("session %d ended on a 503 (turn %d)", rec.Session, rec.Turn)
				}
			}
			// Backing off from 1 s (jittered to at least 0.5 s), each
			// stream meets the loading server a few times at most.
			if unavailable == 0 || unavailable > 3*c.streams {
				t.Errorf("%d requests answered 503 while the server loaded; want 1 to %d", unavailable, 3*c.streams)
			}
			out := r.client.Outages()
			if len(out) != 1 {
				t.Fatalf("outages %+v, want one", out)
			}
			if o := out[0]; !o.Recovered || o.EndS < lastUnavailable.Seconds() {
				t.Errorf("outage %+v ended before the last 503 (%.3f s): want it to last until the first real answer", o, lastUnavailable.Seconds())
			}
		})
	}
}
