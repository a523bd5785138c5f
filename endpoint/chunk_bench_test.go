package endpoint

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// memTransport answers every request with one in-memory SSE body: the
// network taken out of the client path.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"text/event-stream"}},
		Body:          io.NopCloser(bytes.NewReader(m.body)),
		ContentLength: -1,
		Request:       req,
	}, nil
}

// simStream is a response of n one-token content chunks byte-for-byte in
// the simulator's shape: the role chunk, the tokens (each stamped with
// sixpin_sent_unix_ns), the finish chunk, usage and [DONE].
func simStream(n int) []byte {
	words := []string{"the", "of", "and", "through", "which", "would", "about", "many"}
	prefix := `data: {"id":"chatcmpl-3f9a1c0e5b7d2468","object":"chat.completion.chunk","created":1764518400,"model":"sim-model","choices":[`
	stamp := time.Now().UnixNano()
	var b bytes.Buffer
	event := func(body string) {
		b.WriteString(prefix)
		b.WriteString(body)
		b.WriteString(`,"sixpin_sent_unix_ns":`)
		b.WriteString(strconv.FormatInt(stamp, 10))
		b.WriteString("}\n\n")
	}
	event(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`)
	for i := 0; i < n; i++ {
		event(`{"index":0,"delta":{"content":" ` + words[i%len(words)] + `"},"finish_reason":null}]`)
	}
	event(`{"index":0,"delta":{},"finish_reason":"length"}]`)
	event(`],"usage":{"prompt_tokens":64,"completion_tokens":` + strconv.Itoa(n) + `,"total_tokens":` + strconv.Itoa(64+n) +
		`,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// perChunk reports ns/chunk and allocs/chunk for a benchmark whose every
// op handles n chunks; ms0 was read just before the loop.
func perChunk(b *testing.B, n int, ms0 *runtime.MemStats) {
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	chunks := float64(b.N) * float64(n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/chunks, "ns/chunk")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/chunks, "allocs/chunk")
}

// BenchmarkChunkPath measures the whole per-chunk client path on one
// goroutine, so ns/chunk is CPU per chunk (target ≤ 5 µs): the client's
// request (the JSON body with ignore_eos and extra_body, net/http through
// the client's send), the SSE line reading (sseReader), parseChunk, the
// monotonic timestamp and client lag, the stall watchdog reset, and the
// append to the record. Only the network is replaced, by an in-memory
// response of n simulator-shaped chunks. One op is one request;
// per-request costs are spread over n chunks.
//
// The sse sub-benchmarks read the same body with sseReader alone (no
// request, no parse, no record), to show how much of the path is line
// reading.
func BenchmarkChunkPath(b *testing.B) {
	for _, n := range []int{64, 512, 4096} {
		body := simStream(n)
		for _, keep := range []bool{false, true} {
			name := "client"
			if keep {
				name = "client-keeptext" // a sampled request: its answer's text kept
			}
			b.Run(fmt.Sprintf("%s/chunks=%d", name, n), func(b *testing.B) {
				benchClient(b, body, n, keep)
			})
		}
		b.Run(fmt.Sprintf("sse/chunks=%d", n), func(b *testing.B) {
			rd := bytes.NewReader(body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var ms0 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for b.Loop() {
				rd.Reset(body)
				s := newSSEReader(rd, 0)
				events := 0
				for {
					if _, err := s.next(); err != nil {
						break
					}
					events++
				}
				if events != n+4 { // role, tokens, finish, usage, [DONE]
					b.Fatalf("%d events, want %d", events, n+4)
				}
			}
			perChunk(b, n, &ms0)
		})
	}
}

// benchClient streams body (n chunks) through a client, keeping the
// answer's text when keep is set.
func benchClient(b *testing.B, body []byte, n int, keep bool) {
	c, err := New(Target{
		BaseURL: "http://sim.invalid/v1", Model: "sim-model", APIKey: "sk-bench",
		ExtraBody: map[string]any{"top_k": 20}, OutputControl: ControlIgnoreEOS,
	}, Options{Exact: true})
	if err != nil {
		b.Fatal(err)
	}
	c.httpc.Transport = memTransport{body}
	clk := Clock{Start: time.Now()}
	var live Counter
	req := record.Request{PromptTokens: 64, OutputTokens: n, Seed: 1}
	msgs := UserMessage(strings.Repeat("word ", 64))
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for b.Loop() {
		rec := c.Stream(ctx, Call{Req: req, Msgs: msgs, Clock: clk, Cut: ErrCutAfterGrace, Live: &live, KeepText: keep})
		if rec.Failed() || len(rec.Chunks) != n || rec.Usage.CompletionTokens != n {
			b.Fatalf("record: %s %s, %d chunks, usage %+v", rec.Err, rec.ErrMsg, len(rec.Chunks), rec.Usage)
		}
	}
	perChunk(b, n, &ms0)
}
