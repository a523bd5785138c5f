package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// llamaLastChunk is the last chunk of a real llama-server's stream
// (build b1-de3ff81), verbatim: usage and timings, no choices.
const llamaLastChunk = `{"choices":[],"created":1796139079,"id":"chatcmpl-aKR78N6tVcEZEWFNx4ooF690rXrO9gUE","model":"/work/llama/tiny-qwen2.gguf","system_fingerprint":"b1-de3ff81","object":"chat.completion.chunk","usage":{"completion_tokens":4,"prompt_tokens":11,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":10}},"timings":{"cache_n":10,"prompt_n":1,"prompt_ms":9.041,"prompt_per_token_ms":9.041,"prompt_per_second":110.60723371308484,"predicted_n":4,"predicted_ms":17.526,"predicted_per_token_ms":5.842,"predicted_per_second":171.17425539198905}}`

// TestParseTimings reads llama.cpp's timings without allocating; it has
// no queue_ms, so the queue is unknown.
func TestParseTimings(t *testing.T) {
	var c chunk
	if err := parseChunk([]byte(llamaLastChunk), &c); err != nil {
		t.Fatal(err)
	}
	got := c.timings.results(Clock{})
	want := record.ServerTimings{Has: true, Prefill: 9041 * time.Microsecond, Decode: 17526 * time.Microsecond,
		PromptTokens: 1, CachedTokens: 10, PredictedTokens: 4}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if !c.hasUsage || c.usage.cachedTokens != 10 {
		t.Errorf("usage lost beside the timings: %+v", c.usage)
	}
	// Compressed time: the server's wall-clock ms become run time.
	if g := c.timings.results(Clock{Scale: 0.5}); g.Prefill != 18082*time.Microsecond {
		t.Errorf("scaled prefill %v", g.Prefill)
	}
	b := []byte(llamaLastChunk)
	if n := testing.AllocsPerRun(200, func() { _ = parseChunk(b, &c) }); n != 0 {
		t.Errorf("the last chunk's parse allocates %v times", n)
	}
	for _, bad := range []string{`{"timings":{"prompt_ms":"x"}}`, `{"timings":{"prompt_ms":1e}}`, `{"timings":[1]}`} {
		if err := parseChunk([]byte(bad), &c); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}

// TestParseDraftTimings reads llama.cpp's speculative-decoding counts
// (draft_n and draft_n_accepted, sent only when it drafted) into the
// record's, without allocating; without them they are 0.
func TestParseDraftTimings(t *testing.T) {
	tests := []struct {
		name, chunk           string
		drafted, acceptedToks int
	}{
		{"drafted", `{"choices":[],"timings":{"cache_n":0,"prompt_n":12,"prompt_ms":4.5,"predicted_n":64,"predicted_ms":120.25,"draft_n":84,"draft_n_accepted":41}}`, 84, 41},
		{"accepted first", `{"timings":{"draft_n_accepted":3,"predicted_n":9,"draft_n":8}}`, 8, 3},
		{"none drafted", llamaLastChunk, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c chunk
			if err := parseChunk([]byte(tt.chunk), &c); err != nil {
				t.Fatal(err)
			}
			got := c.timings.results(Clock{})
			if got.DraftTokens != tt.drafted || got.DraftAccepted != tt.acceptedToks {
				t.Errorf("draft %d accepted %d, want %d and %d", got.DraftTokens, got.DraftAccepted, tt.drafted, tt.acceptedToks)
			}
			b := []byte(tt.chunk)
			if n := testing.AllocsPerRun(100, func() { _ = parseChunk(b, &c) }); n != 0 {
				t.Errorf("the last chunk's parse allocates %v times", n)
			}
		})
	}
}

// TestStreamServerTimings: over HTTP, the simulator's timings (with its
// queue_ms) land on the record.
func TestStreamServerTimings(t *testing.T) {
	srv, err := sim.New(sim.Config{Timing: sim.TimingNone, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); srv.Close() })
	c := newClient(t, Target{BaseURL: ts.URL + "/v1", Model: "m"})
	rec := c.Stream(context.Background(), Call{Req: record.Request{PromptTokens: 20, OutputTokens: 8},
		Msgs: UserMessage("hello there"), Clock: Clock{Start: time.Now()}, Cut: ErrCutAfterGrace})
	if rec.Err != record.OK {
		t.Fatalf("%s %s", rec.Err, rec.ErrMsg)
	}
	if s := rec.Server; !s.Has || !s.QueueKnown || s.PredictedTokens != 8 || s.PromptTokens+s.CachedTokens == 0 {
		t.Errorf("server timings %+v", s)
	}
}

// TestRequestID: every request carries its own X-Request-Id, recorded on
// its record; an answer's echo is checked (the simulator echoes it, as
// vLLM does with --enable-request-id-headers).
func TestRequestID(t *testing.T) {
	srv, err := sim.New(sim.Config{Timing: sim.TimingNone, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	const stream = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n"
	canned := func(echo string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if echo != "" {
				w.Header().Set("X-Request-Id", echo)
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(stream))
		})
	}
	for _, c := range []struct {
		name string
		h    http.Handler
		want record.IDEcho
	}{
		{"the simulator echoes", srv, record.IDEchoed},
		{"no echo", canned(""), record.IDNotEchoed},
		{"another id", canned("proxy-7"), record.IDMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			var seen []string
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = append(seen, r.Header.Get("X-Request-Id"))
				c.h.ServeHTTP(w, r)
			}))
			defer ts.Close()
			cl, err := New(Target{BaseURL: ts.URL + "/v1", Model: "m"}, Options{RequestIDPrefix: "sixpin-ab12"})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			for i := range 2 {
				rec := cl.Stream(context.Background(), Call{Req: record.Request{Index: i, PromptTokens: 5, OutputTokens: 2},
					Msgs: UserMessage("hi"), Clock: Clock{Start: time.Now()}, Cut: ErrCutAfterGrace})
				want := "sixpin-ab12-" + strconv.Itoa(i+1)
				if rec.Err != record.OK || rec.RequestID != want || seen[i] != want || rec.IDEcho != c.want {
					t.Errorf("request %d: %s %s, id %q sent %q, echo %d (want %d)", i, rec.Err, rec.ErrMsg, rec.RequestID, seen[i], rec.IDEcho, c.want)
				}
			}
		})
	}
}
