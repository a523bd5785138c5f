package runner

import (
	"context"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/scenario"
)

// newClient is the endpoint client for a run of p against tg, as the
// harness makes it (ClientOptions); with, if not nil, changes the options.
func newClient(t testing.TB, p *scenario.Plan, tg endpoint.Target, with func(*endpoint.Options)) *endpoint.Client {
	t.Helper()
	o := ClientOptions(p)
	if with != nil {
		with(&o)
	}
	c, err := endpoint.New(tg, o)
	if err != nil {
		t.Fatalf("endpoint.New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// probe runs endpoint.Probe on c as the harness does, with a short backoff.
func probe(t testing.TB, c *endpoint.Client, conversation bool) (endpoint.Template, bool, string) {
	t.Helper()
	b, err := wordPrompts()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, ok, msg, _ := endpoint.Probe(context.Background(), c, endpoint.ProbeRequest{One: b.Build(endpoint.ProbeSeed, 1), Conversation: conversation,
		Backoff: 4 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
	return tmpl, ok, msg
}

// newProbedRunner is newRunner with the chat template probed first, as
// the harness does; the probe must succeed.
func newProbedRunner(t testing.TB, p *scenario.Plan, tg endpoint.Target, opts ...Option) *Runner {
	t.Helper()
	c := newClient(t, p, tg, nil)
	w := p.Scenario().Workload
	tmpl, ok, msg := probe(t, c, w.Agentic() || w.Replay())
	if !ok {
		t.Fatalf("probe: %s", msg)
	}
	r, err := New(p, c, append(opts, WithTemplate(tmpl))...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
func boolp(b bool) *bool { return &b }
