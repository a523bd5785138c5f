package endpoint

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// connServer serves h and counts the TCP connections clients open to it
// (server-side, by http.Server.ConnState). onState, if not nil, sees every
// state change first, to misbehave on purpose.
type connServer struct {
	*httptest.Server
	opened  atomic.Int64
	handled atomic.Int64 // chat requests whose handler ran
}

func newConnServer(t *testing.T, h http.Handler, onState func(c net.Conn, s http.ConnState)) *connServer {
	t.Helper()
	return newConnServerCtx(t, h, onState, nil)
}

// newConnServerCtx is newConnServer with the server's ConnContext (nil:
// none), set before it starts.
func newConnServerCtx(t *testing.T, h http.Handler, onState func(c net.Conn, s http.ConnState),
	connCtx func(context.Context, net.Conn) context.Context) *connServer {
	t.Helper()
	cs := &connServer{}
	cs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			cs.handled.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	cs.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cs.opened.Add(1)
		}
		if onState != nil {
			onState(c, s)
		}
	}
	cs.Config.ConnContext = connCtx
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

// reuseLoad sends n requests of 20 prompt tokens for 8 exact output
// tokens to the simulator at cs, from 4 streams.
func reuseLoad(t *testing.T, cs *connServer, n int) []*record.Record {
	t.Helper()
	return simLoad(client(t, simTarget(cs.URL+"/v1"), Options{Conns: 4, Exact: true}), n, 4, fixed(20), fixed(8))
}

// TestConnectionReuse runs many requests on a few streams: the client must
// keep its connections alive, one per stream, instead of opening one (or
// two) per request — also when the end of the response (the chunked
// body's last chunk) arrives a moment after [DONE], as it does from
// servers that finish their work after the last event.
func TestConnectionReuse(t *testing.T) {
	cases := []struct {
		name string
		wrap func(http.Handler) http.Handler
	}{
		{"simulator", func(h http.Handler) http.Handler { return h }},
		{"end of body after [DONE]", func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				if strings.HasSuffix(r.URL.Path, "/chat/completions") {
					w.(http.Flusher).Flush()
					time.Sleep(2 * time.Millisecond)
				}
			})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newSim(t, sim.Config{Timing: sim.TimingNone})
			cs := newConnServer(t, c.wrap(srv), nil)
			recs := reuseLoad(t, cs, 200)
			checkIndexes(t, recs, 200)
			for _, rec := range recs {
				if rec.Failed() {
					t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
				}
			}
			// 4 streams: about 4 connections, with slack for connections the
			// transport opens while another is being returned to its pool
			// (a loaded machine makes a few); before, one per request.
			if n := cs.opened.Load(); n > 8 {
				t.Errorf("%d requests on 4 streams opened %d connections; want about 4", len(recs), n)
			}
		})
	}
}

// hangUpAfterResponse answers with h's whole response, then closes the
// connection at once, without "Connection: close": a server that hangs
// up on kept-alive connections after each response (llama-server on its
// keep-alive timeout, a proxy). The response goes out with a
// Content-Length and, where the connection can be corked, in one segment
// with the hang-up; corked reports whether every one could.
func hangUpAfterResponse(h http.Handler, corked *atomic.Bool) http.Handler {
	corked.Store(true)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		conn, bw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		if !cork(conn) {
			corked.Store(false)
		}
		body := rec.Body.Bytes()
		fmt.Fprintf(bw, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
			rec.Code, http.StatusText(rec.Code), rec.Header().Get("Content-Type"), len(body))
		bw.Write(body)
		bw.Flush()
	})
}

// TestReconnect has servers close kept-alive connections behind the
// client's back. A request that failed before anything was written is sent
// again on a new connection and counted as a reconnect, never as a failure;
// a request the server may have read is never sent twice.
func TestReconnect(t *testing.T) {
	t.Run("server hangs up after every response", func(t *testing.T) {
		srv := newSim(t, sim.Config{Timing: sim.TimingNone})
		var corked atomic.Bool
		cs := newConnServer(t, hangUpAfterResponse(srv, &corked), nil)
		recs := reuseLoad(t, cs, 200)
		checkIndexes(t, recs, 200)
		succeeded, reconnects := 0, 0
		for _, rec := range recs {
			reconnects += rec.Reconnects
			switch {
			case !rec.Failed():
				succeeded++
				checkSuccess(t, rec)
			case corked.Load():
				t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
			case rec.Err != record.ErrConnect || !strings.Contains(rec.ErrMsg, "as the request was sent"):
				// Uncorked, the hang-up may come just after a request was
				// written; only such a request may fail.
				t.Errorf("request %d: %s: %q; want class connect, sent as the server hung up", rec.Index, rec.Err, rec.ErrMsg)
			}
		}
		if got := int(cs.handled.Load()); got != succeeded {
			t.Errorf("the server handled %d chat requests; %d succeeded (each must be handled exactly once)", got, succeeded)
		}
		t.Logf("corked %v: %d of 200 succeeded, %d reconnects, %d connections", corked.Load(), succeeded, reconnects, cs.opened.Load())
	})

	t.Run("server closes idle connections as the client reuses them", func(t *testing.T) {
		// The server closes each connection as soon as it is idle, racing
		// the client's next request on it: a request written before the
		// close may fail (class connect, never client) and is not sent
		// again; one the client could tell found the connection closed
		// is sent again; none is handled twice.
		srv := newSim(t, sim.Config{Timing: sim.TimingNone})
		cs := newConnServer(t, srv, func(c net.Conn, s http.ConnState) {
			if s == http.StateIdle {
				c.Close()
			}
		})
		recs := reuseLoad(t, cs, 200)
		checkIndexes(t, recs, 200)
		succeeded, reconnects := 0, 0
		for _, rec := range recs {
			reconnects += rec.Reconnects
			if !rec.Failed() {
				succeeded++
				checkSuccess(t, rec)
				continue
			}
			if rec.Err != record.ErrConnect || !strings.Contains(rec.ErrMsg, "kept-alive") {
				t.Errorf("request %d: %s: %q; want class connect, about the kept-alive connection", rec.Index, rec.Err, rec.ErrMsg)
			}
		}
		if got := int(cs.handled.Load()); got != succeeded {
			t.Errorf("the server handled %d chat requests; %d succeeded", got, succeeded)
		}
		t.Logf("%d of 200 succeeded, %d reconnects, %d connections", succeeded, reconnects, cs.opened.Load())
	})

	t.Run("server hangs up as the next request arrives", func(t *testing.T) {
		// The server reads the first bytes of the second request on a
		// connection and hangs up without answering: the request reached
		// the server, so it must fail (not class client) and never be sent
		// again.
		srv := newSim(t, sim.Config{Timing: sim.TimingNone})
		var mu sync.Mutex
		served := map[net.Conn]int{}
		cs := newConnServer(t, srv, func(c net.Conn, s http.ConnState) {
			mu.Lock()
			defer mu.Unlock()
			switch s {
			case http.StateActive:
				served[c]++
				if served[c] == 2 {
					c.Close()
				}
			case http.StateClosed, http.StateHijacked:
				delete(served, c)
			}
		})
		recs := reuseLoad(t, cs, 40)
		checkIndexes(t, recs, 40)
		failed := 0
		for _, rec := range recs {
			if !rec.Failed() {
				checkSuccess(t, rec)
				continue
			}
			failed++
			if rec.Err != record.ErrConnect || !strings.Contains(rec.ErrMsg, "kept-alive") {
				t.Errorf("request %d: %s: %q; want class connect, about the kept-alive connection", rec.Index, rec.Err, rec.ErrMsg)
			}
			if rec.Reconnects != 0 {
				t.Errorf("request %d reached the server and was sent again (%d reconnects)", rec.Index, rec.Reconnects)
			}
		}
		if failed == 0 {
			t.Errorf("no request failed; the server hung up on every second request of a connection")
		}
		// The server read every request, the failed ones too, and none twice.
		if got := cs.handled.Load(); got != 40 {
			t.Errorf("the server handled %d chat requests, want 40", got)
		}
	})
}

// connKey carries a request's connection, for handlers that close it.
type connKey struct{}

// TestServerHangsUpAfterStreamedAnswers serves as llama-server does: a
// streamed answer without "Connection: close", then the connection closed a
// moment later. A request written in that moment is lost and may not be
// sent again, so the client must learn (the probe shows it) and stop
// reusing connections: no request fails, each is handled once, and the run
// says connection reuse was off.
func TestServerHangsUpAfterStreamedAnswers(t *testing.T) {
	srv := newSim(t, sim.Config{Timing: sim.TimingNone})
	cs := newConnServerCtx(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r)
		if c, ok := r.Context().Value(connKey{}).(net.Conn); ok && strings.HasSuffix(r.URL.Path, "/chat/completions") {
			time.AfterFunc(time.Millisecond, func() { c.Close() })
		}
	}), nil, func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	})
	c := client(t, simTarget(cs.URL+"/v1"), Options{Conns: 4, Exact: true})
	if _, ok, msg := rawProbe(c); !ok {
		t.Fatalf("probe: %s", msg)
	}
	probed := cs.handled.Load()
	start := time.Now()
	recs := simLoad(c, 200, 4, fixed(20), fixed(8))
	checkIndexes(t, recs, 200)
	for _, rec := range recs {
		if rec.Failed() {
			t.Errorf("request %d failed: %s: %s", rec.Index, rec.Err, rec.ErrMsg)
		}
	}
	if got := cs.handled.Load() - probed; got != 200 {
		t.Errorf("the server handled %d chat requests, want 200 (each once)", got)
	}
	// The probe usually learns it (its second request finds the first's
	// connection closed); on a loaded machine the hang-up may come later
	// than the probe looks, and the first reused connection found closed
	// during load teaches it, still before any request is lost.
	if off, at, why := c.KeepAliveOff(); !off || why == "" {
		t.Errorf("KeepAliveOff() = %v, %v, %q; want off", off, at, why)
	} else if !at.Before(start) {
		t.Logf("learnt during load, %v after its start: %s", at.Sub(start), why)
	}
	if len(c.Outages()) != 0 {
		t.Errorf("outages %+v; the server never refused a connection", c.Outages())
	}
	if c.Connections() < 200 {
		t.Errorf("%d connections for 200 requests with reuse off", c.Connections())
	}
}
