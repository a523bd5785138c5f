package report

import (
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// The summary's error lines name the outages and the reconnects, also
// when no request failed.
func TestSummaryOutagesAndReconnects(t *testing.T) {
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows:  map[string]*results.Window{results.WindowSteady: {Completed: 4, EndS: 10}},
		Errors: results.Errors{Requests: 40, Failed: 7, Rate: 7.0 / 40, ByClass: map[string]int{"connect": 7}, Reconnects: 3,
			Outages: []record.Outage{{StartS: 2.5, EndS: 4.25, FailedRequests: 5, Recovered: true}, {StartS: 9, EndS: 9.5, FailedRequests: 2}}},
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"endpoint unreachable from 2.50 s to 4.25 s (5 requests failed to connect)",
		"endpoint unreachable from 9.00 s: no new connection accepted by the end of the run (2 requests failed to connect)",
		"reconnects: 3 ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	run.Errors = results.Errors{Requests: 40, Reconnects: 2}
	b.Reset()
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "none in 40 requests") || !strings.Contains(b.String(), "reconnects: 2 ") {
		t.Errorf("summary of a run without failures:\n%s", b.String())
	}
	run.Client = results.ClientInfo{Connections: 41, KeepAliveOff: &results.KeepAliveOff{AtS: -0.2, Reason: "the probe's connection was closed"}}
	b.Reset()
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	if want := "connections: a new one per request before load (41 opened): the server hangs up on kept-alive connections without saying so (the probe's connection was closed)"; !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
}

// The summary says when the server asked sixpin to slow down, how often
// (by status), how long sixpin waited (by what it waited after), and
// how many open-loop arrivals it withheld; a run that only waited after
// connect failures says that much.
func TestSummaryBackoff(t *testing.T) {
	run := &results.Run{
		Headline: results.WindowSteady,
		Windows:  map[string]*results.Window{results.WindowSteady: {Completed: 4, EndS: 10}},
		Errors: results.Errors{Requests: 48, Failed: 46, Rate: 46.0 / 48, ByClass: map[string]int{"http_429": 40, "http_5xx": 6},
			SlowDowns:        map[string]int{"429": 40, "503": 6},
			BackoffS:         map[string]float64{"http_429": 79.5, "http_5xx": 3.25, "connect": 0.5},
			WithheldArrivals: 368},
	}
	var b strings.Builder
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"the server asked sixpin to slow down 46 times (429 × 40, 503 × 6)",
		"sixpin waited 83.2 s before sending again (after connect 0.5 s, after http_429 79.5 s, after http_5xx 3.25 s), never counted as latency",
		"368 open-loop arrivals fell inside those waits and were withheld (not sent, never sent late)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	run.Errors = results.Errors{Requests: 40, Failed: 3, Rate: 3.0 / 40, ByClass: map[string]int{"connect": 3}, BackoffS: map[string]float64{"connect": 0.35}}
	b.Reset()
	if err := WriteSummary(&b, run); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "slow down") || !strings.Contains(s, "sixpin waited 0.35 s before sending again (after connect 0.35 s)") {
		t.Errorf("summary of a run that waited only after connect failures:\n%s", s)
	}
}
