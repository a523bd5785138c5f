package h1

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStream reads streamed answers of 256 events, each its own
// HTTP chunk, 32 at once, a line at a time as sixpin's SSE reader does,
// through net/http's transport (the yardstick) and through this one, from
// the same test server in one run, and reports the process's CPU time per
// event (cpu_ns/event: the server's share, the same in both, included).
func BenchmarkStream(b *testing.B) {
	const events, streams = 256, 32
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
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"net-http", std}, {"h1", newTransport(std)}} {
		b.Run(tc.name, func(b *testing.B) {
			client := &http.Client{Transport: tc.rt}
			cpu0 := cpuTime(b)
			for b.Loop() {
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
			perEvent := float64(b.N * streams * events)
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/perEvent, "cpu_ns/event")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perEvent, "ns/event")
		})
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

// cpuTime is this process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
