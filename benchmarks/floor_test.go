package benchmarks

import (
	"bufio"
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BenchmarkClientLatencyFloor is the reference for BenchmarkClientLatency1k:
// the same simulator process, the same ~1,000 streams at 10 tok/s, read by
// the smallest possible Go client (net/http and bufio, no go-openai, no
// parsing beyond the send stamp, no records). What it measures is the
// machine's floor — kernel, loopback, scheduling, the simulator's own write
// path; sixpin's client-added latency minus this floor is sixpin's share.
func BenchmarkClientLatencyFloor(b *testing.B) {
	bin := binary(b)
	url := serveSim(b, bin, "sim-paced.yaml")
	const streams = 1000
	body := `{"model":"sim-paced","messages":[{"role":"user","content":"` + strings.Repeat("word ", 120) +
		`"}],"max_tokens":50,"ignore_eos":true,"stream":true}`
	stamp := []byte(`"sixpin_sent_unix_ns":`)
	for b.Loop() {
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}}
		var mu sync.Mutex
		hist := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
		stop := time.Now().Add(30 * time.Second)
		var wg sync.WaitGroup
		for i := 0; i < streams; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Stagger the starts over 5 s, as 200 arrivals/s would.
				time.Sleep(time.Duration(i) * 5 * time.Second / streams)
				local := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
				for time.Now().Before(stop) {
					resp, err := client.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					rd := bufio.NewReader(resp.Body)
					for {
						line, err := rd.ReadSlice('\n')
						if err != nil {
							break
						}
						now := time.Now().UnixNano()
						if j := bytes.Index(line, stamp); j >= 0 {
							rest := line[j+len(stamp):]
							if k := bytes.IndexAny(rest, ",}"); k > 0 {
								if sent, err := strconv.ParseInt(string(rest[:k]), 10, 64); err == nil {
									_ = local.RecordValue(max(now-sent, 0) / 1e3)
								}
							}
						}
					}
					resp.Body.Close()
				}
				mu.Lock()
				hist.Merge(local)
				mu.Unlock()
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(hist.ValueAtQuantile(50))/1e3, "floor_p50_ms")
		b.ReportMetric(float64(hist.ValueAtQuantile(99))/1e3, "floor_p99_ms")
		b.ReportMetric(float64(hist.TotalCount()), "chunks")
	}
}
