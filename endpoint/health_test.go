package endpoint

import (
	"testing"
	"time"
)

// TestOutageLastsUntilARealAnswer: an outage opened by connect failures
// ends at the first real answer once the server accepts connections
// again. A 503 (a server still loading its model) or 529 on a new
// connection shows it accepts them, but does not end the outage; a real
// answer after it does, on that kept-alive connection too. A real answer
// on a connection kept alive from before, with no new one accepted, does
// not. Times are given, not measured.
func TestOutageLastsUntilARealAnswer(t *testing.T) {
	s := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	type answer struct {
		sent, at    float64
		fresh, real bool
	}
	for _, tc := range []struct {
		name      string
		answers   []answer
		recovered bool
		endS      float64
	}{
		{"a real answer on a new connection", []answer{{2, 2.1, true, true}}, true, 2.1},
		{"503s on new connections, then a real answer on one of them kept alive",
			[]answer{{2, 2.1, true, false}, {2.5, 2.6, false, false}, {3, 3.2, false, true}}, true, 3.2},
		{"503s only", []answer{{2, 2.1, true, false}, {3, 3.1, false, false}}, false, 1.5},
		{"real answers on a connection kept alive from before", []answer{{2, 2.1, false, true}}, false, 1.5},
		{"an answer to a request sent before the outage", []answer{{0.5, 2.1, true, true}}, false, 1.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h health
			h.failed(s(1))
			h.failed(s(1.5))
			for _, a := range tc.answers {
				h.answered(s(a.sent), s(a.at), a.fresh, a.real)
			}
			out := h.list()
			if len(out) != 1 || out[0].Recovered != tc.recovered || out[0].EndS != tc.endS || out[0].StartS != 1 || out[0].FailedRequests != 2 {
				t.Errorf("outages %+v; want one from 1 s to %v s, recovered %v, 2 failed requests", out, tc.endS, tc.recovered)
			}
		})
	}
}
