package endpoint

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/sim"
)

// TestProbeUsageCut: an answer whose stream ends in the middle of its
// usage event (the body ends there) is a failed probe request, sent
// again, and the probe says so when every answer was cut; only a server
// whose answers end cleanly without usage "reports no usage".
func TestProbeUsageCut(t *testing.T) {
	cases := []struct {
		name    string
		fault   func(n int64) fault
		ok      bool
		wantMsg string
	}{
		{"first answer cut", func(n int64) fault {
			if n == 1 {
				return cutUsage
			}
			return answer
		}, true, ""},
		{"every answer cut", func(int64) fault { return cutUsage }, false, "ended in the middle of an event"},
		{"no usage", func(int64) fault { return noUsage }, false, "the server reports no usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRawServer(t, func(_ string, n int64) fault { return tc.fault(n) })
			c := rawClient(t, s, 1, false)
			tmpl, ok, msg := rawProbe(c)
			switch {
			case ok != tc.ok || !strings.Contains(msg, tc.wantMsg):
				t.Errorf("Probe = %v, %q; want %v and a message with %q", ok, msg, tc.ok, tc.wantMsg)
			case ok && tmpl.Overhead != rawOverhead:
				t.Errorf("overhead %d, want %d", tmpl.Overhead, rawOverhead)
			case !ok && tc.wantMsg != "the server reports no usage" && strings.Contains(msg, "reports no usage"):
				t.Errorf("Probe says %q: the server does report usage, cut off", msg)
			}
		})
	}
}

// failFirst answers the first n chat requests with a 503 and hands the
// others to next.
func failFirst(n int64, next http.Handler) http.Handler {
	var seen atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && seen.Add(1) <= n {
			testserve.Status(503, "application/json", `{"error":{"message":"warming up","type":"server_error"}}`)(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestProbeRetries: one transient fault does not cost the run its chat
// template's overhead; a server that keeps failing is reported with the
// failure, after a few attempts.
func TestProbeRetries(t *testing.T) {
	cases := []struct {
		name    string
		fail    int64
		wantOK  bool
		want    int
		wantMsg string
	}{
		{"fails once", 1, true, simOverhead, ""},
		{"fails twice", 2, true, simOverhead, ""},
		{"keeps failing", 1000, false, 0, "failed 3 times (last: http_5xx): HTTP 503: warming up"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := serve(t, failFirst(c.fail, newSim(t, sim.Config{Timing: sim.TimingNone})), nil)
			tmpl, ok, msg := rawProbe(client(t, simTarget(ts.URL+"/v1"), Options{}))
			if got := tmpl.Overhead; got != c.want || ok != c.wantOK || !strings.Contains(msg, c.wantMsg) {
				t.Errorf("Probe = %d, %v, %q; want %d, %v, a message with %q", got, ok, msg, c.want, c.wantOK, c.wantMsg)
			}
		})
	}
}

// TestProbeInterrupted: an interrupt cuts the probe at once (there is no
// grace period before the run), and the message says so.
func TestProbeInterrupted(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	ts := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		holdBeforeHeaders(release)(w, r)
	}), func() { close(release) })
	c := client(t, Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, ok, msg := probeCtx(ctx, c)
	if ok || !strings.Contains(msg, "at once") || strings.Contains(msg, "grace period") && !strings.Contains(msg, "no grace period") {
		t.Errorf("Probe = %v, %q; want a failure cut off at once by the interrupt", ok, msg)
	}
}

// TestProbe measures the chat template's overhead against servers with
// known overheads, and reports why it cannot when it cannot.
func TestProbe(t *testing.T) {
	intp := func(v int) *int { return &v }
	cases := []struct {
		name    string
		handler http.Handler // nil: the simulator with simCfg
		simCfg  sim.Config
		want    int
		wantOK  bool
		wantMsg string
	}{
		{name: "simulator default (5 per message + 3)", simCfg: sim.Config{Timing: sim.TimingNone}, want: 8, wantOK: true},
		{name: "simulator, 2 per message", simCfg: sim.Config{Timing: sim.TimingNone, TemplateOverheadTokens: intp(2)}, want: 5, wantOK: true},
		{name: "simulator, no template", simCfg: sim.Config{Timing: sim.TimingNone, TemplateOverheadTokens: intp(0)}, want: 3, wantOK: true},
		{name: "no usage", handler: sse(roleEvent, contentEvent(" hi"), finishEvent("length"), doneEvent), wantMsg: "no usage"},
		{name: "server error", handler: testserve.Status(500, "application/json", `{"error":{"message":"down"}}`), wantMsg: "http_5xx"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.handler
			if h == nil {
				h = newSim(t, c.simCfg)
			}
			tmpl, ok, msg := rawProbe(client(t, simTarget(serve(t, h, nil).URL+"/v1"), Options{}))
			if got := tmpl.Overhead; got != c.want || ok != c.wantOK || !strings.Contains(msg, c.wantMsg) {
				t.Errorf("Probe = %d, %v, %q; want %d, %v, a message mentioning %q", got, ok, msg, c.want, c.wantOK, c.wantMsg)
			}
		})
	}
}
