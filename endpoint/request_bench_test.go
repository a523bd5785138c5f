//go:build unix

package endpoint

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/rusage"
	"github.com/sixpin/sixpin/record"
)

// BenchmarkRequest measures what one short request costs the client, the
// open loop's unit of work: Client.Stream of a 2-token answer over a real
// kept-alive TCP connection through sixpin's own HTTP/1.1 transport — the
// body built, the request written, the head and the stream read and
// parsed, the record made — beside a yardstick in the same run: a raw
// client that writes the request's prepared bytes and counts the
// answer's events on a raw connection (the open-loop ceiling benchmark's
// raw client). Both talk to the same server, whose CPU the process time
// includes; allocs/request is the client's own (the yardstick allocates
// nothing per request; the server's allocations are measured and taken
// off). x_raw is sixpin's CPU per request ÷ the yardstick's.
func BenchmarkRequest(b *testing.B) {
	body := simStream(2)
	var first []byte // sixpin's first request, as the server read it
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first == nil {
			first, _ = httputil.DumpRequest(r, true)
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // chunked, as a streaming server's answer is
		w.Write(body)
	}))
	defer srv.Close()
	// A short answer is read on its goroutine: it ends before the event
	// loop would take it (this package's tests hand streams to the loop at
	// once).
	c, err := New(Target{BaseURL: srv.URL + "/v1", Model: "sim-model"}, Options{Exact: true, NoEventLoop: true})
	if err != nil {
		b.Fatal(err)
	}
	clk := Clock{Start: time.Now()}
	var live Counter
	req := record.Request{PromptTokens: 32, OutputTokens: 2, Seed: 1}
	msgs := UserMessage(strings.Repeat("word ", 32))
	ctx := context.Background()
	six := func() {
		rec := c.Stream(ctx, Call{Req: req, Msgs: msgs, Clock: clk, Cut: ErrCutAfterGrace, Live: &live})
		if rec.Failed() || len(rec.Chunks) != 2 {
			b.Fatalf("record: %s %s, %d chunks", rec.Err, rec.ErrMsg, len(rec.Chunks))
		}
	}
	nc, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	six() // the raw client sends what sixpin sent: the server's work is the same
	prepared := first
	br := bufio.NewReaderSize(nc, 4096)
	raw := func() {
		if _, err := nc.Write(prepared); err != nil {
			b.Fatal(err)
		}
		// The answer's events, to [DONE], then the chunked body's end.
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.HasPrefix(line, []byte("0\r")) {
				br.ReadSlice('\n')
				return
			}
		}
	}
	raw()
	const round = 200 // requests of each client per round, interleaved
	var sixCPU, rawCPU time.Duration
	var sixAllocs, rawAllocs uint64
	var n int
	b.ReportAllocs()
	for b.Loop() {
		for _, k := range []struct {
			do     func()
			cpu    *time.Duration
			allocs *uint64
		}{{six, &sixCPU, &sixAllocs}, {raw, &rawCPU, &rawAllocs}} {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			t0 := rusage.CPU()
			for range round {
				k.do()
			}
			*k.cpu += rusage.CPU() - t0
			runtime.ReadMemStats(&m1)
			*k.allocs += m1.Mallocs - m0.Mallocs
		}
		n += round
	}
	b.ReportMetric(float64(sixCPU.Nanoseconds())/float64(n), "sixpin_cpu_ns/request")
	b.ReportMetric(float64(rawCPU.Nanoseconds())/float64(n), "raw_cpu_ns/request")
	b.ReportMetric(float64(sixCPU)/float64(max(rawCPU, 1)), "x_raw")
	// The server's allocations are in both; the raw client makes none.
	b.ReportMetric(float64(sixAllocs-rawAllocs)/float64(n), "client_allocs/request")
}
