package h1

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tlsServer is an httptest TLS server offering HTTP/2 and HTTP/1.1 (as
// a cloud endpoint does), the connections opened to it counted, with an
// idle timeout (0: none); and a TLS config that trusts it.
func tlsServer(t *testing.T, idle time.Duration, h http.HandlerFunc) (*httptest.Server, *tls.Config, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.IdleTimeout = idle
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return srv, &tls.Config{RootCAs: roots, ClientSessionCache: tls.NewLRUClientSessionCache(4)}, &conns
}

// Given a TLS config the transport carries https itself, over HTTP/1.1
// though the server offers HTTP/2: a streamed answer reads whole, the
// answer says what was negotiated (resp.TLS), and the connection is
// reused: 5 requests, 1 connection, none through the fallback.
func TestStreamsOverTLS(t *testing.T) {
	srv, cfg, conns := tlsServer(t, 0, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			fmt.Fprintf(w, "data: %s %d %s\n\n", b, i, r.Proto)
			w.(http.Flusher).Flush()
		}
	})
	rec := &recorder{}
	tr := newTransport(rec)
	tr.TLS = cfg
	for i := range 5 {
		resp, text, reused := get(t, tr, http.MethodPost, srv.URL+"/v1/x", "hi")
		if want := "data: hi 0 HTTP/1.1\n\ndata: hi 1 HTTP/1.1\n\ndata: hi 2 HTTP/1.1\n\n"; text != want {
			t.Fatalf("body %q, want %q", text, want)
		}
		// httptest's server lists h2 alone in ALPN: no protocol is agreed,
		// which is HTTP/1.1.
		if resp.TLS == nil || resp.TLS.NegotiatedProtocol == "h2" || !resp.TLS.HandshakeComplete {
			t.Fatalf("resp.TLS %+v: want a complete handshake, not h2", resp.TLS)
		}
		if reused != (i > 0) {
			t.Errorf("request %d: reused = %v", i, reused)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests, want 1", n)
	}
	if len(rec.got) != 0 {
		t.Errorf("the fallback got %q", rec.got)
	}
}

// A server whose certificate is not trusted fails the request at the
// handshake, as a dial error would, with the verification error.
func TestTLSUntrusted(t *testing.T) {
	srv, _, _ := tlsServer(t, 0, func(w http.ResponseWriter, r *http.Request) {})
	tr := newTransport(nil)
	tr.TLS = &tls.Config{RootCAs: x509.NewCertPool()}
	tr.TLSHandshakeTimeout = 5 * time.Second
	req := mustRequest(t, http.MethodGet, srv.URL)
	_, err := tr.RoundTrip(req)
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		t.Fatalf("err %v: want a certificate verification error", err)
	}
}

// A TLS server that closes an idle connection sends close_notify before
// its end of stream: the pool passes it over and tells ClosedIdle, and the
// request goes out on a new connection.
func TestPassesOverClosedIdleTLSConnection(t *testing.T) {
	srv, cfg, conns := tlsServer(t, 20*time.Millisecond, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr := newTransport(nil)
	tr.TLS = cfg
	var closed []time.Duration
	tr.ClosedIdle = func(idle time.Duration) { closed = append(closed, idle) }
	get(t, tr, http.MethodGet, srv.URL, "")
	time.Sleep(200 * time.Millisecond)
	if _, text, reused := get(t, tr, http.MethodGet, srv.URL, ""); text != "ok" || reused {
		t.Errorf("body %q, reused %v: want a new connection", text, reused)
	}
	if len(closed) != 1 {
		t.Errorf("ClosedIdle was told %v; want once", closed)
	}
	if _, _, reused := get(t, tr, http.MethodGet, srv.URL, ""); !reused {
		t.Error("the new connection was not reused")
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// Without a TLS config, https goes to the fallback (TestFallback); with
// one, a proxied https URL still does.
func TestTLSProxiedGoesToFallback(t *testing.T) {
	rec := &recorder{}
	tr := newTransport(rec)
	tr.TLS = &tls.Config{}
	tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.example:3128") }
	if resp, err := tr.RoundTrip(mustRequest(t, http.MethodGet, "https://api.example/v1")); err != nil || resp.StatusCode != 299 {
		t.Fatalf("%v, %v: want the fallback's answer", resp, err)
	}
	if len(rec.got) != 1 || !strings.Contains(rec.got[0], "api.example") {
		t.Errorf("the fallback got %q", rec.got)
	}
}
