package h1

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sixpin/sixpin/internal/rusage"
	"github.com/sixpin/sixpin/internal/stats"
)

// BenchmarkStream reads streamed answers of 256 events, each its own
// HTTP chunk, 32 at once, a line at a time as sixpin's SSE reader does,
// through net/http's transport (the yardstick) and through this one, from
// the same test server, and reports the process's CPU time per event
// (the server's share, the same in both, included). The two alternate
// over seven rounds of four batches each — run one after the other, as
// sub-benchmarks would, whichever ran second met a different machine —
// and the ratio is of the medians (h1_vs_net_http); each transport's
// min/median/max is logged.
func BenchmarkStream(b *testing.B) {
	const events, streams, rounds, batches = 256, 32, 7, 4
	event := "data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"}}]}` + "\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range events {
			w.Write([]byte(event))
			f.Flush()
		}
	}))
	defer srv.Close()
	std := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}
	clients := [2]*http.Client{{Transport: std}, {Transport: newTransport(std)}}
	for b.Loop() {
		var per [2][]float64 // CPU ns per event: net/http, h1
		for range rounds {
			for i, client := range clients {
				cpu0 := rusage.CPU()
				for range batches {
					var wg sync.WaitGroup
					for range streams {
						wg.Go(func() {
							if n := stream(client, srv.URL); n != events {
								b.Errorf("%d events, want %d", n, events)
							}
						})
					}
					wg.Wait()
				}
				per[i] = append(per[i], float64((rusage.CPU()-cpu0).Nanoseconds())/float64(batches*streams*events))
			}
		}
		sLo, sMed, sHi := stats.Spread(per[0])
		hLo, hMed, hHi := stats.Spread(per[1])
		b.Logf("CPU ns per event over %d rounds (min / median / max): net/http %.0f / %.0f / %.0f, h1 %.0f / %.0f / %.0f",
			rounds, sLo, sMed, sHi, hLo, hMed, hHi)
		b.ReportMetric(sMed, "net_http_cpu_ns/event")
		b.ReportMetric(hMed, "h1_cpu_ns/event")
		b.ReportMetric(hMed/sMed, "h1_vs_net_http")
	}
}

// stream posts to url and counts the answer's SSE data lines.
func stream(client *http.Client, url string) int {
	resp, err := client.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	rd := bufio.NewReaderSize(resp.Body, 4096)
	n := 0
	for {
		line, err := rd.ReadSlice('\n')
		if err != nil {
			return n
		}
		if strings.HasPrefix(string(line), "data:") {
			n++
		}
	}
}

// BenchmarkReuse sends requests one after another on one kept-alive
// connection, each answered with one event, and reports what a request
// allocates: the transport's share — taking the idle connection and
// looking at it, writing, reading the head, the body — beside the test
// server's and http.Client's, which no change here moves.
func BenchmarkReuse(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: x\n\n"))
	}))
	defer srv.Close()
	client := &http.Client{Transport: newTransport(nil)}
	if n := stream(client, srv.URL); n != 1 { // dials the connection
		b.Fatalf("%d events, want 1", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := stream(client, srv.URL); n != 1 {
			b.Fatalf("%d events, want 1", n)
		}
	}
}
