package benchmarks

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/results"
)

// The yardsticks: the smallest Go client that streams chat completions —
// net/http, a bufio.Reader scanning lines, nothing else (no parsing, no
// records). What it costs is the machine's floor (kernel, loopback,
// scheduling, the simulator's write path, the Go runtime); sixpin is
// measured as a ratio to it, in the same run against the same simulator
// process, so every check holds on any machine.

// bareClient is the yardstick client for streams concurrent requests.
func bareClient(streams int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
}

// bareRequest is the body the yardstick sends: words words. (the
// simulator counts words), max_tokens out, exactly.
func bareRequest(model string, words, maxTokens int) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"` + strings.Repeat("word ", words) +
		`"}],"max_tokens":` + strconv.Itoa(maxTokens) + `,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`
}

// bareStream posts body and hands every line of the answer to line. It
// returns the number of SSE data lines.
func bareStream(client *http.Client, url, body string, line func([]byte)) (int, error) {
	resp, err := client.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	rd := bufio.NewReaderSize(resp.Body, 4096)
	data := 0
	for {
		l, err := rd.ReadSlice('\n')
		if err != nil {
			return data, nil
		}
		if bytes.HasPrefix(l, []byte("data:")) {
			data++
		}
		if line != nil {
			line(l)
		}
	}
}

// BenchmarkCPUPerToken: against the peer harnesses' kind of fake server
// (TTFT 50 ms, ITL 1 ms, 256 tokens), sixpin's CPU per streamed token —
// the whole `sixpin run` process: discovery, the probe, prompts, records,
// the results file — as a ratio to two yardsticks, at 64, 256 and 1,024
// streams: the floor client (floor_test.go: raw sockets, counting events)
// and a bare net/http client scanning lines; on Linux, a fourth, the
// event-loop client (eventloop_linux_test.go: the floor's work on one
// thread over epoll), is reported beside them, and so is sixpin with
// --no-event-loop (every stream on its own goroutine, as sixpin reads
// elsewhere and over TLS). Each client runs alone,
// all interleaved over five rounds (the machine's state drifts;
// interleaving spreads the drift over all of them), and the ratios are
// of the medians; min/median/max are logged. Claim: ≤ cpuFloorClaim× the
// floor at each concurrency; the ratios to the others are reported.
func BenchmarkCPUPerToken(b *testing.B) {
	const tokens, words, rounds = 256, 128, 5
	bin := binary(b)
	url := serveSim(b, bin, "sim-peer.yaml")
	for _, streams := range []int{64, 256, 1024} {
		requests := max(2048, 4*streams)
		b.Run(fmt.Sprintf("c=%d", streams), func(b *testing.B) {
			scenario := cpuScenario(b, streams, requests, words, tokens)
			body := bareRequest("sim-peer", words, tokens)
			for b.Loop() {
				var floor, six, bare, loop, gor []float64
				sixpin := func(flags ...string) float64 {
					res, u := run(b, bin, append([]string{scenario, "--profile", "llamacpp", "--endpoint", url, "--model", "sim-peer", "--tokenizer", "words"}, flags...)...)
					if res.Errors.Failed > 0 {
						b.Fatalf("%d of %d requests failed: %v", res.Errors.Failed, res.Errors.Requests, res.Errors.ByClass)
					}
					return float64(u.cpu.Nanoseconds()) / float64(res.Windows[results.WindowAll].OutputTokens)
				}
				for range rounds {
					floor = append(floor, floorCPUPerToken(b, url, streams, requests, body, tokens, nil, nil))
					if l := eventLoopCPUPerToken(b, url, streams, requests, body, tokens, nil); l > 0 {
						loop = append(loop, l)
					}
					six = append(six, sixpin())
					if runtime.GOOS == "linux" {
						gor = append(gor, sixpin("--no-event-loop"))
					}
					bare = append(bare, bareCPUPerToken(b, url, streams, requests, body, tokens))
				}
				f, s, n := spreadOf(floor), spreadOf(six), spreadOf(bare)
				b.Logf("CPU ns per token over %d rounds (min / median / max): floor %s, sixpin %s, bare net/http %s", rounds, f, s, n)
				b.ReportMetric(f.med, "floor_cpu_ns/token")
				b.ReportMetric(s.med, "sixpin_cpu_ns/token")
				b.ReportMetric(n.med, "bare_cpu_ns/token")
				b.ReportMetric(s.med/f.med, "x_floor")
				b.ReportMetric(s.med/n.med, "x_bare")
				if len(loop) > 0 {
					l := spreadOf(loop)
					b.Logf("the event-loop client (one thread, epoll; not a claim's yardstick): %s ns per token, %.2f× the floor's median; sixpin %.2f× it", l, l.med/f.med, s.med/l.med)
					b.ReportMetric(l.med, "eventloop_cpu_ns/token")
					b.ReportMetric(s.med/l.med, "x_eventloop")
				}
				if len(gor) > 0 {
					g := spreadOf(gor)
					b.Logf("sixpin --no-event-loop (every stream read on its goroutine): %s ns per token, %.2f× the floor's median; sixpin on its event loop %.2f× it", g, g.med/f.med, s.med/g.med)
					b.ReportMetric(g.med, "sixpin_goroutines_cpu_ns/token")
					b.ReportMetric(g.med/f.med, "goroutines_x_floor")
				}
				if s.med > cpuFloorClaim*f.med {
					b.Errorf("sixpin used %.0f ns of CPU per token, %.2f× the floor's %.0f ns (claim ≤ %.2f×)", s.med, s.med/f.med, f.med, cpuFloorClaim)
				}
			}
		})
	}
}

// cpuScenario writes the scenario of the CPU-per-token benchmarks: streams
// streams, requests requests of words prompt tokens (the simulator counts
// words) and exactly tokens output tokens, against sim-peer.
func cpuScenario(b *testing.B, streams, requests, words, tokens int) string {
	return scenarioFile(b, fmt.Sprintf(`name: bench-cpu-c%d
description: The peer harness's CPU benchmark, %d streams.
seed: 1
pins:
  model: {name: sim-peer}
  prompt: {tokens: %d}
  output: {tokens: %d, exact: true}
  concurrency: {mode: closed, streams: %d}
requests: %d
`, streams, streams, words, tokens, streams, requests))
}

// cpuFloorClaim is what BenchmarkCPUPerToken holds sixpin to against the
// floor client: measured 1.17–1.19× (README, Speed); the goal is 1.15×.
const cpuFloorClaim = 1.3

// bareCPUPerToken runs requests requests of body on streams concurrent
// streams with the yardstick client and returns this process's CPU time
// per streamed token, in ns (cpuPerToken).
func bareCPUPerToken(b *testing.B, url string, streams, requests int, body string, tokens int) float64 {
	return clientCPUPerToken(b, bareClient(streams), url, streams, requests, body, tokens)
}

// clientCPUPerToken is bareCPUPerToken through client, closed after.
func clientCPUPerToken(b *testing.B, client *http.Client, url string, streams, requests int, body string, tokens int) float64 {
	defer client.CloseIdleConnections()
	return cpuPerToken(b, "the yardstick client", streams, requests, tokens, func(int) func() (int, error) {
		return func() (int, error) { return bareStream(client, url, body, nil) }
	})
}

// BenchmarkClientLatency1k: at about 1,000 concurrent streams (10 tok/s
// each) sixpin's client-added latency — receive time minus the
// simulator's send stamp — has a p99 within 1.2× the yardstick's, read
// one after the other in the same run from the same simulator process
// (both at once would be 2,000 streams, another regime). The yardstick
// reads the stamp and nothing else; its latency is the machine's floor.
func BenchmarkClientLatency1k(b *testing.B) {
	bin := binary(b)
	url := serveSim(b, bin, "sim-paced.yaml")
	const streams = 1000
	body := bareRequest("sim-paced", 120, 50)
	stamp := []byte(`"sixpin_sent_unix_ns":`)
	for b.Loop() {
		client := bareClient(streams)
		var mu sync.Mutex
		floor := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		stop := time.Now().Add(30 * time.Second)
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				// Stagger the starts over 5 s, as 200 arrivals/s would.
				time.Sleep(time.Duration(i) * 5 * time.Second / streams)
				local := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
				for time.Now().Before(stop) {
					_, err := bareStream(client, url, body, func(line []byte) {
						now := time.Now().UnixNano()
						if j := bytes.Index(line, stamp); j >= 0 {
							var sent int64
							for _, d := range line[j+len(stamp):] {
								if d < '0' || d > '9' {
									break
								}
								sent = sent*10 + int64(d-'0')
							}
							if sent > 0 {
								_ = local.RecordValue(max(now-sent, 0) / 1e3)
							}
						}
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
				mu.Lock()
				floor.Merge(local)
				mu.Unlock()
			})
		}
		wg.Wait()
		client.CloseIdleConnections()
		floorP99 := float64(floor.ValueAtQuantile(99)) / 1e3

		res, _ := run(b, bin, "c1k-latency.yaml", "--profile", "llamacpp", "--endpoint", url, "--model", "sim-paced", "--tokenizer", "words")
		lat := res.ClientAddedLatencyMs
		if lat == nil {
			b.Fatal("no client-added latency: the simulator's send stamps are missing")
		}
		b.ReportMetric(float64(floor.ValueAtQuantile(50))/1e3, "floor_p50_ms")
		b.ReportMetric(floorP99, "floor_p99_ms")
		b.ReportMetric(lat.P50, "client_p50_ms")
		b.ReportMetric(lat.P99, "client_p99_ms")
		b.ReportMetric(lat.P99/floorP99, "p99_ratio")
		b.ReportMetric(res.Windows[results.WindowSteady].MeanInFlight, "in_flight")
		b.ReportMetric(float64(res.Errors.Failed), "failed")
		if lat.P99 > 1.2*floorP99 {
			b.Errorf("client-added latency p99 %.3f ms, %.2f× the yardstick's %.3f ms (claim ≤ 1.2×)", lat.P99, lat.P99/floorP99, floorP99)
		}
	}
}
