package benchmarks

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/rusage"
	"github.com/sixpin/sixpin/internal/stats"
)

// The floor: the least a client can do and still stream chat completions
// — one TCP connection per stream, kept open, a request written as
// prepared bytes, the answer read into one buffer and its SSE events
// counted with bytes.Count; no HTTP parsing past finding the end of the
// answer, no JSON, no timestamps, no records. What it spends per token is
// the kernel's and the runtime's share (the system time of reading a
// socket, the scheduler waking a goroutine per read), which no client
// can avoid; sixpin's excess over it is its own work.

// floorRequest is the HTTP/1.1 request the floor client writes for body,
// to the chat completions path under base (http://host:port/v1).
func floorRequest(b *testing.B, base, body string) (host string, req []byte) {
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	req = fmt.Appendf(nil, "POST %s/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		u.Path, u.Host, len(body), body)
	return u.Host, req
}

var (
	sseData = []byte("data:")
	sseDone = []byte("data: [DONE]")
	// chunkedEnd ends a chunked answer: the last, empty chunk.
	chunkedEnd = []byte("\r\n0\r\n\r\n")
)

// floorStream writes req on conn and reads its answer to the end of the
// chunked body after `data: [DONE]`, into buf. It returns the number of
// SSE data lines. ec counts them (its lag sample, if any, kept).
func floorStream(conn net.Conn, req, buf []byte, ec *eventCount) (int, error) {
	if _, err := conn.Write(req); err != nil {
		return 0, err
	}
	*ec = eventCount{lags: ec.lags}
	for {
		n, err := conn.Read(buf)
		if n > 0 && ec.feed(buf[:n]) {
			return ec.events, nil
		}
		if err != nil {
			return ec.events, err
		}
	}
}

// eventCount counts an answer's SSE data lines over the reads that bring
// it, and finds its end: the end of the chunked body after
// `data: [DONE]`. A pattern split across two reads is found at the seam:
// the previous read's last bytes (tail) and the next read's first.
type eventCount struct {
	events int
	done   bool
	tail   [16]byte
	nt     int
	// lags, when set, takes the client-added latency of every read whose
	// last stamp arrived whole: the read's time minus that send stamp,
	// in µs (the yardsticks' CPU
	// benchmarks leave it unset: no clock is read).
	lags *hdrhistogram.Histogram
}

// feed counts what one read brought, and reports whether the answer
// ended with it.
func (ec *eventCount) feed(p []byte) bool {
	if ec.lags != nil {
		if sent := lastStamp(p); sent > 0 {
			_ = ec.lags.RecordValue(max((time.Now().UnixNano()-sent)/1e3, 1))
		}
	}
	ec.events += bytes.Count(p, sseData) + seam(ec.tail[:ec.nt], p, sseData)
	ec.done = ec.done || bytes.Contains(p, sseDone) || seam(ec.tail[:ec.nt], p, sseDone) > 0
	// The rolling last bytes of the answer, for the seam and its end.
	if len(p) >= len(ec.tail) {
		ec.nt = copy(ec.tail[:], p[len(p)-len(ec.tail):])
	} else {
		keep := min(ec.nt, len(ec.tail)-len(p))
		copy(ec.tail[:], ec.tail[ec.nt-keep:ec.nt])
		ec.nt = keep + copy(ec.tail[keep:], p)
	}
	return ec.done && bytes.HasSuffix(ec.tail[:ec.nt], chunkedEnd)
}

// stampKey is the simulator's send stamp, the last member of a chunk.
var stampKey = []byte(`"sixpin_sent_unix_ns":`)

// lastStamp returns the send stamp, in ns since the epoch, of p's last
// stamped event, or 0 when there is none or the read's end cut it.
func lastStamp(p []byte) int64 {
	i := bytes.LastIndex(p, stampKey)
	if i < 0 {
		return 0
	}
	var v int64
	j := i + len(stampKey)
	for ; j < len(p) && '0' <= p[j] && p[j] <= '9'; j++ {
		v = v*10 + int64(p[j]-'0')
	}
	if j == len(p) || p[j] != '}' {
		return 0 // cut by the read's end
	}
	return v
}

// seam counts pattern's occurrences that begin in prev's last bytes and
// end in next (0 or 1: none of the patterns overlaps itself).
func seam(prev, next, pattern []byte) int {
	for k := 1; k < len(pattern) && k <= len(prev); k++ {
		if len(pattern)-k <= len(next) && bytes.HasSuffix(prev, pattern[:k]) && bytes.HasPrefix(next, pattern[k:]) {
			return 1
		}
	}
	return 0
}

// floorCPUPerToken runs requests requests of body on streams connections
// with the floor client and returns this process's CPU time per streamed
// token, in ns (cpuPerToken); the connections are opened with dial (nil:
// TCP) before the clock starts. lags, if not nil, holds a histogram per
// stream for its client-added latency (eventCount.lags).
func floorCPUPerToken(b *testing.B, base string, streams, requests int, body string, tokens int, dial func(host string) (net.Conn, error), lags []*hdrhistogram.Histogram) float64 {
	host, req := floorRequest(b, base, body)
	if dial == nil {
		dial = func(host string) (net.Conn, error) { return net.Dial("tcp", host) }
	}
	conns := make([]net.Conn, streams)
	for i := range conns {
		c, err := dial(host)
		if err != nil {
			b.Fatalf("floor client: %v", err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	lagsOf := func(i int) *hdrhistogram.Histogram {
		if lags == nil {
			return nil
		}
		return lags[i]
	}
	return cpuPerToken(b, "the floor client", streams, requests, tokens, func(i int) func() (int, error) {
		conn, buf, ec := conns[i], make([]byte, 4096), &eventCount{lags: lagsOf(i)}
		return func() (int, error) { return floorStream(conn, req, buf, ec) }
	})
}

// cpuPerToken runs requests requests on streams workers — worker i
// sending each with the function stream(i) returns, which reports the
// SSE data lines of the answer — and returns this process's CPU time per
// streamed token, in ns. Each answer must carry tokens tokens: role,
// tokens, finish, usage and [DONE] lines.
func cpuPerToken(b *testing.B, who string, streams, requests, tokens int, stream func(i int) func() (int, error)) float64 {
	workers := make([]func() (int, error), streams)
	for i := range workers {
		workers[i] = stream(i)
	}
	var next, lines, failed atomic.Int64
	var wg sync.WaitGroup
	cpu0 := rusage.CPU()
	for _, one := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(requests) {
				n, err := one()
				if err != nil || n != tokens+4 {
					failed.Add(1)
					return
				}
				lines.Add(int64(n))
			}
		})
	}
	wg.Wait()
	cpu := rusage.CPU() - cpu0
	if failed.Load() > 0 {
		b.Fatalf("%s failed %d of %d requests", who, failed.Load(), requests)
	}
	return float64(cpu.Nanoseconds()) / float64(lines.Load()-4*int64(requests))
}

// spread is a repeated measurement's min, median and max.
type spread struct{ min, med, max float64 }

func spreadOf(xs []float64) spread {
	lo, med, hi := stats.Spread(xs)
	return spread{lo, med, hi}
}

func (s spread) String() string { return fmt.Sprintf("%.0f / %.0f / %.0f", s.min, s.med, s.max) }

// The floor client counts every event of an answer however the reads cut
// it — one byte at a time included — and stops at the answer's end.
func TestFloorStreamCounts(t *testing.T) {
	answer := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"f\r\ndata: {\"a\":1}\n\n\r\nf\r\ndata: {\"a\":2}\n\n\r\ne\r\ndata: [DONE]\n\n\r\n0\r\n\r\n"
	for _, cut := range []int{1, 2, 3, 5, 7, 4096} {
		server, client := net.Pipe()
		go func() {
			_, _ = io.ReadFull(server, make([]byte, 3))
			for s := answer; len(s) > 0; {
				n := min(cut, len(s))
				_, _ = server.Write([]byte(s[:n]))
				s = s[n:]
			}
		}()
		n, err := floorStream(client, []byte("req"), make([]byte, cut), &eventCount{})
		if err != nil || n != 3 {
			t.Errorf("reads of %d bytes: %d events, %v", cut, n, err)
		}
		client.Close()
		server.Close()
	}
}

// lastStamp takes a read's last send stamp, and none when the read's end
// cut it.
func TestLastStamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{`data: {"a":1,"sixpin_sent_unix_ns":17}` + "\n\ndata: {\"sixpin_sent_unix_ns\":42}\n\n", 42},
		{`data: {"sixpin_sent_unix_ns":17}` + "\n\ndata: {\"sixpin_sent_unix_ns\":4", 0},
		{"data: [DONE]\n\n", 0},
	} {
		if got := lastStamp([]byte(c.in)); got != c.want {
			t.Errorf("lastStamp(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
