package runner

import (
	"net/http"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/sim"
)

// TestStatsCountRecords: the live counters agree with the records — a
// failed record is counted failed, and a request's output tokens are its
// usage's when the server sent one, else its chunks — whatever the
// server answers: failures of every kind the simulator makes, streams
// with and without usage.
func TestStatsCountRecords(t *testing.T) {
	const n = 24
	faults := map[string]float64{sim.FaultStall: 0.1, sim.FaultHTTP400: 0.1, sim.FaultHTTP500: 0.1, sim.FaultCut: 0.1,
		sim.FaultMalformed: 0.1, sim.FaultEmpty: 0.1}
	stream := func(pieces ...string) http.Handler {
		return testserve.SSE(append([]string{testserve.RoleEvent, testserve.ContentEvent(" a"), testserve.ContentEvent(" b")}, pieces...)...)
	}
	cases := []struct {
		name       string
		handler    http.Handler // nil: the simulator with faults
		wantTokens int64        // per request, when a stream of the test's own
	}{
		{name: "simulator faults"},
		{name: "no usage: the chunks", handler: stream(testserve.FinishEvent("stop"), testserve.DoneEvent), wantTokens: 2},
		{name: "usage: its tokens, not the chunks", handler: stream(testserve.FinishEvent("length"), testserve.UsageEvent(5, 7), testserve.DoneEvent),
			wantTokens: 7},
		{name: "a failure after two chunks", handler: stream(`data: {"error":{"message":"boom"}}` + "\n\n"), wantTokens: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg := endpoint.Target{Model: "m"}
			if c.handler == nil {
				ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, Faults: faults}, nil)
				tg = simTarget(ts)
			} else {
				tg.BaseURL = serve(t, c.handler, nil).URL + "/v1"
			}
			r := newRunnerWith(t, mustPlan(t, errorsYAML), tg, endpoint.Options{StallTimeout: 100 * time.Millisecond},
				WithTemplate(endpoint.Template{Overhead: simOverhead}))
			recs := runAll(t, r)
			checkIndexes(t, recs, n)
			var failed, tokens int64
			for _, rec := range recs {
				if rec.Failed() {
					failed++
				}
				if rec.HasUsage {
					tokens += int64(rec.Usage.CompletionTokens)
				} else {
					tokens += int64(len(rec.Chunks))
				}
			}
			if c.handler == nil && (failed == 0 || failed == n) {
				t.Errorf("%d of %d requests failed; the test wants some of both", failed, n)
			}
			if c.wantTokens != 0 && tokens != n*c.wantTokens {
				t.Errorf("records say %d output tokens, want %d a request", tokens, c.wantTokens)
			}
			st := r.Stats()
			if got := st.Failed.Load(); got != failed {
				t.Errorf("stats: %d failed, records say %d", got, failed)
			}
			if got := st.OutputTokens.Load(); got != tokens {
				t.Errorf("stats: %d output tokens, records say %d", got, tokens)
			}
		})
	}
}

const errorsYAML = `
seed: 11
pins:
  model: {name: sim-model}
  prompt: {tokens: {dist: uniform, min: 20, max: 60}}
  output: {tokens: {dist: uniform, min: 4, max: 12}, exact: true}
  concurrency: {mode: closed, streams: 4}
requests: 24
`
