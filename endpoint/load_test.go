package endpoint

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/sim"
)

// simOverhead is the simulator's default chat-template overhead for one
// user message: 5 per message plus 3 for the assistant prime.
const simOverhead = sim.DefaultTemplateOverheadTokens + 3

// simPrompt is one user message the simulator counts as n prompt tokens
// (at least simOverhead + 1): its template's overhead, then a token a
// word.
func simPrompt(n int) []Message {
	return UserMessage(strings.TrimSpace(strings.Repeat("tok ", n-simOverhead)))
}

// serve serves h over HTTP for the test's lifetime. stop, if not nil, runs
// before the server closes, to release handlers that hold a response.
func serve(t testing.TB, h http.Handler, stop func()) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		if stop != nil {
			stop()
		}
		ts.Close()
	})
	return ts
}

// newSim returns a simulator for cfg, closed when the test ends.
func newSim(t testing.TB, cfg sim.Config) *sim.Server {
	t.Helper()
	srv, err := sim.New(cfg)
	if err != nil {
		t.Fatalf("sim.New: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// simTarget addresses the simulator at base (its /v1) with exact output
// enforced by ignore_eos.
func simTarget(base string) Target {
	return Target{BaseURL: base, Model: sim.DefaultModel, OutputControl: ControlIgnoreEOS}
}

// client is a client for tg with the options o, closed when the test
// ends.
func client(t testing.TB, tg Target, o Options) *Client {
	t.Helper()
	c, err := New(tg, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// closedLoop sends n requests from streams goroutines, each sending its
// next request when the last is answered (a closed loop), and returns
// their records in index order; req makes request i and its messages.
func closedLoop(c *Client, n, streams int, req func(i int) (record.Request, []Message)) []*record.Record {
	recs := make([]*record.Record, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	clk := Clock{Start: time.Now()}
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				r, msgs := req(i)
				recs[i] = c.Stream(context.Background(), Call{Req: r, Msgs: msgs, Scheduled: clk.Since(), Clock: clk, Cut: ErrCutAtOnce})
			}
		}()
	}
	wg.Wait()
	return recs
}

// simLoad is closedLoop with request i asking for prompt(i) prompt tokens
// (simPrompt) and out(i) output tokens.
func simLoad(c *Client, n, streams int, prompt, out func(i int) int) []*record.Record {
	return closedLoop(c, n, streams, func(i int) (record.Request, []Message) {
		return record.Request{Index: i, PromptTokens: prompt(i), OutputTokens: out(i)}, simPrompt(prompt(i))
	})
}

// load sends n one-token requests from streams goroutines, in a closed
// loop, and returns their records in index order.
func load(c *Client, n, streams int) []*record.Record {
	return closedLoop(c, n, streams, func(i int) (record.Request, []Message) {
		return record.Request{Index: i, PromptTokens: 1, OutputTokens: 1}, UserMessage("tok")
	})
}

// fixed is a length that does not change from request to request.
func fixed(n int) func(int) int { return func(int) int { return n } }

// one sends a single short request (10 prompt tokens, 2 output) to c.
func one(c *Client) *record.Record { return streamOne(c, 0, 10, 2, UserMessage("a short prompt")) }

// checkIndexes fails unless recs hold n records, each carrying its
// request's index.
func checkIndexes(t *testing.T, recs []*record.Record, n int) {
	t.Helper()
	if len(recs) != n {
		t.Errorf("got %d records, want %d", len(recs), n)
	}
	for i, rec := range recs {
		if rec == nil || rec.Index != i {
			t.Errorf("record %d: %+v, want request %d's", i, rec, i)
		}
	}
}

// checkTimeline checks the ordering of a record's timestamps: Scheduled ≤
// Sent ≤ each chunk (non-decreasing) ≤ End, and a non-negative client lag
// when the server stamps its chunks (-1 when it does not).
func checkTimeline(t *testing.T, rec *record.Record, stamped bool) {
	t.Helper()
	if rec.Sent < rec.Scheduled {
		t.Errorf("request %d: Sent %v < Scheduled %v", rec.Index, rec.Sent, rec.Scheduled)
	}
	prev := rec.Sent
	for j, c := range rec.Chunks {
		if c.At < prev {
			t.Errorf("request %d: chunk %d at %v is before %v (Sent or the previous chunk)", rec.Index, j, c.At, prev)
		}
		prev = c.At
		switch {
		case stamped && c.ClientLagUS < 0:
			t.Errorf("request %d: chunk %d ClientLagUS = %d, want ≥ 0 (the server stamps chunks)", rec.Index, j, c.ClientLagUS)
		case !stamped && c.ClientLagUS != -1:
			t.Errorf("request %d: chunk %d ClientLagUS = %d, want -1 (no server stamp)", rec.Index, j, c.ClientLagUS)
		}
		if c.Bytes <= 0 {
			t.Errorf("request %d: chunk %d has %d bytes", rec.Index, j, c.Bytes)
		}
	}
	if rec.End < prev {
		t.Errorf("request %d: End %v before its last chunk or Sent %v", rec.Index, rec.End, prev)
	}
}
