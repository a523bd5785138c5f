//go:build linux

package benchmarks

import (
	"net"
	"runtime"
	"syscall"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/rusage"
)

// The event-loop client: the floor's work (prepared bytes, events
// counted, no HTTP or JSON parsing) done as wrk does it — one thread, one
// level-triggered epoll set over every stream's non-blocking socket, one
// read per readiness into one shared buffer — instead of a goroutine per
// stream parked on Go's poller. What it saves against the floor is what
// a goroutine per stream costs: the read that finds the socket empty
// before each park, and the park and wake themselves. It is a yardstick
// of what a different architecture would spend, not a client sixpin
// could be without one.

// eventLoopCPUPerToken runs requests requests of body on streams
// connections with the event-loop client and returns this process's CPU
// time per streamed token, in ns (as cpuPerToken counts it); the
// connections are opened before the clock starts. lags, if not nil,
// takes the client-added latency (eventCount.lags).
func eventLoopCPUPerToken(b *testing.B, base string, streams, requests int, body string, tokens int, lags *hdrhistogram.Histogram) float64 {
	host, req := floorRequest(b, base, body)
	addr, err := net.ResolveTCPAddr("tcp4", host)
	if err != nil {
		b.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: addr.Port}
	copy(sa.Addr[:], addr.IP.To4())
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(ep)
	type stream struct {
		fd int
		ec eventCount
	}
	conns := make([]stream, streams)
	for i := range conns {
		conns[i].fd, conns[i].ec.lags = -1, lags
	}
	defer func() {
		for _, c := range conns {
			if c.fd >= 0 {
				syscall.Close(c.fd)
			}
		}
	}()
	for i := range conns {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatalf("event-loop client: %v", err)
		}
		conns[i].fd = fd
		if err := syscall.Connect(fd, sa); err != nil {
			b.Fatalf("event-loop client: %v", err)
		}
		if err := syscall.SetNonblock(fd, true); err != nil {
			b.Fatal(err)
		}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(i)}); err != nil {
			b.Fatal(err)
		}
	}
	// The loop holds its thread: no other goroutine runs on it, and the
	// blocking epoll_wait gives the runtime's P back while it waits.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sent, active, lines, failed := 0, 0, 0, 0
	send := func(fd int) bool {
		if sent == requests {
			return false
		}
		sent++
		// The request fits the empty socket's send buffer: one write.
		if n, err := syscall.Write(fd, req); err != nil || n != len(req) {
			b.Fatalf("event-loop client: wrote %d of %d bytes: %v", n, len(req), err)
		}
		return true
	}
	cpu0 := rusage.CPU()
	for i := range conns {
		if send(conns[i].fd) {
			active++
		}
	}
	buf := make([]byte, 4096)
	events := make([]syscall.EpollEvent, 256)
	for active > 0 {
		n, err := syscall.EpollWait(ep, events, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			b.Fatalf("event-loop client: %v", err)
		}
		for _, e := range events[:n] {
			c := &conns[e.Fd]
			k, err := syscall.Read(c.fd, buf)
			if err == syscall.EAGAIN {
				continue
			}
			if k <= 0 {
				b.Fatalf("event-loop client: stream %d: read %d: %v", e.Fd, k, err)
			}
			if !c.ec.feed(buf[:k]) {
				continue
			}
			if c.ec.events != tokens+4 {
				failed++
			}
			lines += c.ec.events
			c.ec = eventCount{lags: lags}
			if !send(c.fd) {
				active--
			}
		}
	}
	cpu := rusage.CPU() - cpu0
	if failed > 0 {
		b.Fatalf("the event-loop client failed %d of %d requests", failed, requests)
	}
	return float64(cpu.Nanoseconds()) / float64(lines-4*requests)
}

// BenchmarkEventLoopLatency: is the event-loop client cheaper only by
// reading later? At 1,024 streams against sim-peer, the floor client and
// the event-loop client, each reading the clock on every read and taking
// the client-added latency (the read's time minus the simulator's send
// stamp of its last event), interleaved over three rounds: their CPU per
// token and their latency p50 and p99 (median over the rounds). Nothing
// is claimed: what it prints is what the architecture would buy.
func BenchmarkEventLoopLatency(b *testing.B) {
	const streams, tokens, words, rounds = 1024, 256, 128, 3
	url := serveSim(b, binary(b), "sim-peer.yaml")
	requests := 4 * streams
	body := bareRequest("sim-peer", words, tokens)
	newLags := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60e6, 3) }
	for b.Loop() {
		var fCPU, lCPU, fP50, fP99, lP50, lP99 []float64
		for range rounds {
			perStream := make([]*hdrhistogram.Histogram, streams)
			for i := range perStream {
				perStream[i] = newLags()
			}
			fCPU = append(fCPU, floorCPUPerToken(b, url, streams, requests, body, tokens, nil, perStream))
			f := newLags()
			for _, h := range perStream {
				f.Merge(h)
			}
			l := newLags()
			lCPU = append(lCPU, eventLoopCPUPerToken(b, url, streams, requests, body, tokens, l))
			fP50, fP99 = append(fP50, float64(f.ValueAtQuantile(50))), append(fP99, float64(f.ValueAtQuantile(99)))
			lP50, lP99 = append(lP50, float64(l.ValueAtQuantile(50))), append(lP99, float64(l.ValueAtQuantile(99)))
		}
		fc, lc := spreadOf(fCPU), spreadOf(lCPU)
		b.Logf("%d streams, %d tokens an answer, %d requests, %d rounds: CPU ns per token (min / median / max): floor %s, event loop %s (%.2f×)",
			streams, tokens, requests, rounds, fc, lc, lc.med/fc.med)
		b.Logf("client-added latency µs (receive − the simulator's send stamp, every stamped read), p50 / p99 (median over rounds): floor %.0f / %.0f, event loop %.0f / %.0f",
			spreadOf(fP50).med, spreadOf(fP99).med, spreadOf(lP50).med, spreadOf(lP99).med)
		b.ReportMetric(lc.med/fc.med, "x_floor_cpu")
		b.ReportMetric(spreadOf(fP99).med, "floor_lag_p99_us")
		b.ReportMetric(spreadOf(lP99).med, "eventloop_lag_p99_us")
	}
}
