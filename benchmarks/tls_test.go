package benchmarks

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/results"
)

// BenchmarkCPUPerTokenTLS: BenchmarkCPUPerToken over https, at 64 and
// 256 streams, against `sixpin sim --tls-cert` offering HTTP/2 and
// HTTP/1.1 as a cloud endpoint does. Over the rounds, each alone and
// interleaved: the floor over TLS (floor_test.go's client on tls.Conn,
// one connection per stream, sessions resumed), a bare Go client forced
// to HTTP/1.1 and one speaking HTTP/2 (net/http, lines scanned), and
// sixpin with `http: 1.1` (the default) and `http: 2`; and sixpin over
// plain http, for what TLS adds. The yardsticks open their connections
// before their clock starts (the bare HTTP/2 client sends one request
// first, as sixpin's probe does, so that its streams share a
// connection); sixpin's whole process is counted, handshakes included.
// Claims: sixpin ≤ tlsBareClaim× the bare client speaking the same HTTP,
// and its HTTP/1.1 ≤ tlsFloorClaim× the TLS floor; client-added latency
// p99 over TLS is reported beside plain http's.
func BenchmarkCPUPerTokenTLS(b *testing.B) {
	const tokens, words, rounds = 256, 128, 3
	bin := binary(b)
	dir := b.TempDir()
	certFile, keyFile := testserve.SelfSigned(b, dir)
	pem, err := os.ReadFile(certFile)
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	plain := serveSim(b, bin, "sim-peer.yaml")
	secure := serveSim(b, bin, "sim-peer.yaml", "--tls-cert", certFile, "--tls-key", keyFile)
	h2Profile := filepath.Join(dir, "h2.yaml")
	if err := os.WriteFile(h2Profile, []byte("name: llamacpp-h2\nkind: llamacpp\noutput_control: ignore_eos\nhttp: \"2\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + certFile}
	for _, streams := range []int{64, 256} {
		requests := max(2048, 4*streams)
		b.Run(fmt.Sprintf("c=%d", streams), func(b *testing.B) {
			scenario := cpuScenario(b, streams, requests, words, tokens)
			body := bareRequest("sim-peer", words, tokens)
			sixpin := func(url, profile string) (float64, *results.Run) {
				res, u := startRun(b, bin, env, scenario, "--profile", profile, "--endpoint", url, "--model", "sim-peer", "--tokenizer", "words")()
				if res.Errors.Failed > 0 {
					b.Fatalf("%d of %d requests failed: %v", res.Errors.Failed, res.Errors.Requests, res.Errors.ByClass)
				}
				return float64(u.cpu.Nanoseconds()) / float64(res.Windows[results.WindowAll].OutputTokens), res
			}
			for b.Loop() {
				var floor, bare1, bare2, six1, six2, sixPlain, lat1, lat2, latPlain []float64
				for range rounds {
					floor = append(floor, floorCPUPerToken(b, secure, streams, requests, body, tokens, tlsDialer(roots, streams), nil))
					v, res := sixpin(secure, "llamacpp")
					six1, lat1 = append(six1, v), append(lat1, clientLagP99(b, res, "HTTP/1.1 over TLS 1.3"))
					bare1 = append(bare1, clientCPUPerToken(b, tlsClient(roots, streams, false), secure, streams, requests, body, tokens))
					v, res = sixpin(secure, h2Profile)
					six2, lat2 = append(six2, v), append(lat2, clientLagP99(b, res, "HTTP/2.0 over TLS 1.3"))
					c2 := tlsClient(roots, streams, true)
					if _, err := bareStream(c2, secure, body, nil); err != nil {
						b.Fatal(err)
					}
					bare2 = append(bare2, clientCPUPerToken(b, c2, secure, streams, requests, body, tokens))
					v, res = sixpin(plain, "llamacpp")
					sixPlain, latPlain = append(sixPlain, v), append(latPlain, clientLagP99(b, res, "HTTP/1.1"))
				}
				f, b1, b2, s1, s2, sp := spreadOf(floor), spreadOf(bare1), spreadOf(bare2), spreadOf(six1), spreadOf(six2), spreadOf(sixPlain)
				b.Logf("CPU ns per token over %d rounds (min / median / max): TLS floor %s; HTTP/1.1: bare %s, sixpin %s; HTTP/2: bare %s, sixpin %s; sixpin over plain http %s",
					rounds, f, b1, s1, b2, s2, sp)
				b.Logf("client-added latency p99, ms (min / median / max): HTTP/1.1 over TLS %s, HTTP/2 over TLS %s, plain http %s",
					spreadMs(lat1), spreadMs(lat2), spreadMs(latPlain))
				b.ReportMetric(s1.med/f.med, "h1_x_floor")
				b.ReportMetric(s1.med/b1.med, "h1_x_bare")
				b.ReportMetric(s2.med/b2.med, "h2_x_bare")
				b.ReportMetric(s2.med/f.med, "h2_x_floor")
				b.ReportMetric(s1.med/sp.med, "h1_x_plain")
				if s1.med > tlsBareClaim*b1.med {
					b.Errorf("sixpin over HTTP/1.1 and TLS used %.0f ns of CPU per token, %.2f× the bare client's %.0f (claim ≤ %.2f×)", s1.med, s1.med/b1.med, b1.med, tlsBareClaim)
				}
				if s2.med > tlsBareClaim*b2.med {
					b.Errorf("sixpin over HTTP/2 used %.0f ns of CPU per token, %.2f× the bare client's %.0f (claim ≤ %.2f×)", s2.med, s2.med/b2.med, b2.med, tlsBareClaim)
				}
				if s1.med > tlsFloorClaim*f.med {
					b.Errorf("sixpin over HTTP/1.1 and TLS used %.0f ns of CPU per token, %.2f× the TLS floor's %.0f (claim ≤ %.2f×)", s1.med, s1.med/f.med, f.med, tlsFloorClaim)
				}
			}
		})
	}
}

// The claims of BenchmarkCPUPerTokenTLS. Measured (README, Speed):
// 1.04× / 1.18× the bare client over HTTP/1.1 and 1.22× / 1.23× over
// HTTP/2 at 64 / 256 streams (the goal is 1.1×); 1.21× the TLS floor at
// both (the goal, 1.3×, met).
const (
	tlsBareClaim  = 1.3
	tlsFloorClaim = 1.3
)

// tlsDialer opens the TLS floor's connections: HTTP/1.1 in ALPN,
// sessions resumed as sixpin's are.
func tlsDialer(roots *x509.CertPool, streams int) func(host string) (net.Conn, error) {
	cfg := &tls.Config{RootCAs: roots, NextProtos: []string{"http/1.1"}, ClientSessionCache: tls.NewLRUClientSessionCache(streams)}
	return func(host string) (net.Conn, error) { return tls.Dial("tcp", host, cfg) }
}

// tlsClient is the bare client over TLS: HTTP/2 where h2, else HTTP/1.1
// alone.
func tlsClient(roots *x509.CertPool, streams int, h2 bool) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true, ForceAttemptHTTP2: h2,
		TLSClientConfig: &tls.Config{RootCAs: roots, ClientSessionCache: tls.NewLRUClientSessionCache(streams)}}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr}
}

// clientLagP99 is a run's client-added latency p99, in ms, after checking
// that it spoke wire.
func clientLagP99(b *testing.B, res *results.Run, wire string) float64 {
	if res.Client.Wire != wire {
		b.Fatalf("the run spoke %q, want %q", res.Client.Wire, wire)
	}
	if res.ClientAddedLatencyMs == nil {
		b.Fatal("no client-added latency: the simulator's send stamps are missing")
	}
	return res.ClientAddedLatencyMs.P99
}

// spreadMs prints a spread of milliseconds.
func spreadMs(xs []float64) string {
	s := spreadOf(xs)
	return fmt.Sprintf("%.2f / %.2f / %.2f", s.min, s.med, s.max)
}
