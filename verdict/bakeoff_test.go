package verdict

import (
	"testing"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// fixBakeoffAgentic is agentic-120k for 2 minutes against sim-local-27b
// and sim-cerebras-27b, whose rate limit refuses some turns (see
// report/testdata/gen/README.md).
const fixBakeoffAgentic = "../report/testdata/bakeoff-agentic.json"

func TestVendors(t *testing.T) {
	t.Parallel()
	vs := Vendors(loadSet(t, fixBakeoffAgentic).Set)
	if len(vs) != 2 || vs[0].Profile != "sim-local-27b" || vs[1].Profile != "sim-cerebras-27b" {
		t.Fatalf("vendors %+v", vs)
	}
	local, cloud := vs[0], vs[1]
	if local.Lost() || !local.Usable() || local.Gate != "pass" {
		t.Errorf("local: lost %v usable %v gate %q, want kept, usable, pass: %+v", local.Lost(), local.Usable(), local.Gate, local.Losses)
	}
	th, ok := cloud.Loss(LossThrottled)
	want := float64(cloud.Runs[0].Errors.ByClass[string(record.ErrHTTP429)]) / float64(cloud.Runs[0].Errors.Requests)
	if !ok || th.Share != want || th.Share <= 0 {
		t.Errorf("cloud throttled %v share %v, want %v", ok, th.Share, want)
	}
	if inv, ok := cloud.Loss(LossInvalid); !ok || inv.Why != "prompt, errors" {
		t.Errorf("cloud invalid %v %q, want the invalid pins named once each", ok, inv.Why)
	}
	if !cloud.Lost() || cloud.Usable() {
		t.Errorf("cloud: lost %v usable %v, want lost and not usable", cloud.Lost(), cloud.Usable())
	}
}

func TestVendorsRepeatedGroupByProfile(t *testing.T) {
	t.Parallel()
	set := loadSet(t, fixBakeoffAgentic).Set
	set.Runs = append(set.Runs, set.Runs...)
	set.Profiles = append(set.Profiles, set.Profiles...)
	vs := Vendors(set)
	if len(vs) != 2 || len(vs[0].Runs) != 2 || len(vs[1].Runs) != 2 {
		t.Fatalf("want 2 vendors of 2 runs each, got %d", len(vs))
	}
	if th, _ := vs[1].Loss(LossThrottled); th.Share != float64(2*set.Runs[1].Errors.ByClass["http_429"])/float64(2*set.Runs[1].Errors.Requests) {
		t.Errorf("share %v not pooled over the runs", th.Share)
	}
}

func TestSessionCap(t *testing.T) {
	t.Parallel()
	sess := func(reasons ...string) *results.Run {
		r := &results.Run{Sessions: &results.Sessions{}}
		for _, why := range reasons {
			r.Sessions.All = append(r.Sessions.All, &results.Session{EndReason: why})
		}
		return r
	}
	joined := sess(record.SessionEndContextWindow)
	joined.Sessions.All[0].FirstTurn = 3
	joined.Sessions.All = append(joined.Sessions.All, &results.Session{EndReason: record.SessionEndRunEnded})
	for _, c := range []struct {
		name   string
		run    *results.Run
		capped bool
		why    string
	}{
		{"no sessions", &results.Run{}, false, ""},
		{"none ended", sess(record.SessionEndRunEnded, record.SessionEndRunEnded), true, "the run's length; no session ended"},
		{"one filled its context", sess(record.SessionEndRunEnded, record.SessionEndContextWindow), false, ""},
		{"cost cap", sess(record.SessionEndCostCap, record.SessionEndRunEnded), true, "the cost cap; no session ended otherwise"},
		{"one that joined mid-life does not count", joined, true, "the run's length; no session ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			capped, why := SessionCap(c.run)
			if capped != c.capped || why != c.why {
				t.Errorf("got %v %q, want %v %q", capped, why, c.capped, c.why)
			}
		})
	}
}
