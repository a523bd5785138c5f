package runner

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/testserve"
)

// The live output count moves while a stream is still being read (its
// first chunk is counted at once), and once the request ends it holds the
// server's usage and nothing is left streaming.
func TestLiveOutputTokens(t *testing.T) {
	release := make(chan struct{})
	ts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		testserve.SSEThenHold(release, testserve.RoleEvent, testserve.ContentEvent("a"))(w, r)
		for _, p := range []string{testserve.ContentEvent(" b"), testserve.ContentEvent(" c"), testserve.FinishEvent("length"),
			testserve.UsageEvent(5, 7), testserve.DoneEvent} {
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}), nil)
	p := mustPlan(t, `
pins:
  model: {name: m}
  prompt: {tokens: 5}
  output: {tokens: 7}
  concurrency: {mode: closed, streams: 1}
requests: 1
`)
	r := newRunner(t, p, endpoint.Target{BaseURL: ts.URL + "/v1", Model: "m"})
	ch := r.Run(context.Background(), context.Background())
	deadline := time.Now().Add(hangGuard)
	for r.Stats().LiveOutputTokens() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the live output count did not move while the stream was read")
		}
		time.Sleep(time.Millisecond)
	}
	if got := r.Stats().OutputTokens.Load(); got != 0 {
		t.Errorf("OutputTokens = %d mid-stream, want 0 (the request has not ended)", got)
	}
	close(release)
	recs := collect(t, ch)
	if len(recs) != 1 || recs[0].Failed() {
		t.Fatalf("records: %+v", recs)
	}
	st := r.Stats()
	if got := st.Streaming.Load(); got != 0 {
		t.Errorf("Streaming = %d after the run, want 0", got)
	}
	if got := st.LiveOutputTokens(); got != 7 {
		t.Errorf("LiveOutputTokens = %d after the run, want the usage's 7", got)
	}
}
