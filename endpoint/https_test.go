package endpoint

import (
	"crypto/x509"
	"net/http/httptest"
	"testing"

	"github.com/sixpin/sixpin/sim"
)

// Over https the client speaks the HTTP the target asks for, though the
// server offers both (ALPN h2 and http/1.1): HTTP/1.1 through sixpin's own
// transport, a connection per stream; HTTP/2 through net/http, the
// streams sharing one connection. Either way every request streams its
// exact tokens, a chunk a token, and the client says what was spoken.
func TestHTTPS(t *testing.T) {
	for _, tc := range []struct {
		v                  HTTPVersion
		wire               string
		minConns, maxConns int64
	}{
		{HTTP1, "HTTP/1.1 over TLS 1.3", 4, 8},
		{HTTP2, "HTTP/2.0 over TLS 1.3", 1, 1},
	} {
		t.Run(tc.v.String(), func(t *testing.T) {
			ts := httptest.NewUnstartedServer(newSim(t, sim.Config{Timing: sim.TimingNone}))
			ts.EnableHTTP2 = true
			ts.StartTLS()
			t.Cleanup(ts.Close)
			roots := x509.NewCertPool()
			roots.AddCert(ts.Certificate())
			tg := simTarget(ts.URL + "/v1")
			tg.HTTP, tg.RootCAs = tc.v, roots
			c := client(t, tg, Options{Conns: 4, Exact: true})
			if c.Wire() != "" {
				t.Errorf("Wire() = %q before any request", c.Wire())
			}
			// One request first, as the probe sends before load: net/http
			// dials a connection for each request that finds none, before
			// the first says it speaks HTTP/2.
			if rec := one(c); rec.Failed() {
				t.Fatalf("first request: %s %s", rec.Err, rec.ErrMsg)
			}
			recs := simLoad(c, 40, 4, fixed(20), fixed(8))
			checkIndexes(t, recs, 40)
			for _, rec := range recs {
				if rec.Failed() || rec.Usage.CompletionTokens != 8 || rec.Usage.PromptTokens != 20 || len(rec.Chunks) != 8 {
					t.Fatalf("request %d: %s %s, usage %+v, %d chunks: want 20 in, 8 out, 8 chunks", rec.Index, rec.Err, rec.ErrMsg, rec.Usage, len(rec.Chunks))
				}
				checkTimeline(t, rec, true)
			}
			if c.Wire() != tc.wire {
				t.Errorf("Wire() = %q, want %q", c.Wire(), tc.wire)
			}
			if n := c.Connections(); n < tc.minConns || n > tc.maxConns {
				t.Errorf("%d connections for 4 streams, want %d to %d", n, tc.minConns, tc.maxConns)
			}
		})
	}
}
