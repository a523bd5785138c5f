package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// An answer whose body stays open after [DONE] (the server never sends
// the chunked body's end) is whole: the client reads what is left for
// drainTimeout at most, then closes the connection, and the request ends
// then — not at the request timeout, and not as a failure. Read on the
// request's goroutine and on the event loop (where this package's tests
// hand every stream they can).
func TestDrainIsBounded(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write(simStream(2))
		w.(http.Flusher).Flush()
		select { // the body's end never comes (until the test is over)
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	for _, noLoop := range []bool{true, false} {
		c := client(t, Target{BaseURL: srv.URL + "/v1", Model: "sim-model"},
			Options{Exact: true, NoEventLoop: noLoop, RequestTimeout: time.Minute})
		start := time.Now()
		rec := c.Stream(context.Background(), Call{Req: record.Request{PromptTokens: 8, OutputTokens: 2},
			Msgs: UserMessage("hi"), Clock: Clock{Start: start}, Cut: ErrCutAfterGrace})
		took := time.Since(start)
		if rec.Failed() || len(rec.Chunks) != 2 {
			t.Errorf("no event loop %v: %s %s, %d chunks; want a whole answer of 2", noLoop, rec.Err, rec.ErrMsg, len(rec.Chunks))
		}
		// drainTimeout (1 s) bounds it; the request timeout (a minute)
		// would be the bound without it.
		if took > 20*drainTimeout {
			t.Errorf("no event loop %v: the request ended after %v, held open by a body that never ends (drain bound %v)", noLoop, took, drainTimeout)
		}
	}
}
