package runner

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sixpin/sixpin/sim"
)

// failFirst answers the first n chat requests with a 503 and hands the
// others to next.
func failFirst(n int64, next http.Handler) http.Handler {
	var seen atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && seen.Add(1) <= n {
			status(503, "application/json", `{"error":{"message":"warming up","type":"server_error"}}`)(w, r)
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
			srv := newSim(t, sim.Config{Timing: sim.TimingNone})
			ts := serve(t, failFirst(c.fail, srv), func() { srv.Close() })
			r := newRunner(t, mustPlan(t, discoverYAML), Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel, OutputControl: ControlIgnoreEOS},
				WithConnectBackoff(time.Millisecond, 10*time.Millisecond))
			got, ok, msg := r.Probe(context.Background())
			if got != c.want || ok != c.wantOK || !strings.Contains(msg, c.wantMsg) {
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
	r := newRunner(t, mustPlan(t, discoverYAML), Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, ok, msg := r.Probe(ctx)
	if ok || !strings.Contains(msg, "at once") || strings.Contains(msg, "grace period") && !strings.Contains(msg, "no grace period") {
		t.Errorf("Probe = %v, %q; want a failure cut off at once by the interrupt", ok, msg)
	}
}
