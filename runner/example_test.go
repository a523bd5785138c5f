package runner_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/runner"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// A whole run, in the order the data flows: a scenario's pins become a
// Plan; an endpoint.Client speaks to the server (here sixpin's simulator
// on a real HTTP port); the Runner issues the Plan's requests through it
// and sends their records on a channel it closes when every request has
// ended; a results.Collector, on one goroutine, takes each record and
// finally measures the windows; Assemble binds that measurement to the
// declared pins, each verified against what the server did. harness.Run
// does the same with a profile, a tokenizer, progress, checkpoints, the
// server's own metrics and the results file.
func Example() {
	// The server: answers after 50 ms, then a token every 2 ms.
	srv, err := sim.New(sim.Config{Model: "m", Tokenizer: "words", Timing: sim.TimingFixed,
		Fixed: sim.Fixed{TTFT: 50 * time.Millisecond, ITL: 2 * time.Millisecond}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()

	// The workload: the pins and a bound, as a scenario file holds them.
	sc, err := scenario.Parse("example.yaml", []byte(`name: example
seed: 1
pins:
  model: {name: m, params_b: 8}
  prompt: {tokens: 100}
  output: {tokens: 16, exact: true}
  concurrency: {mode: closed, streams: 2}
  kv_cache: {max_model_len: 32768}
requests: 8
`))
	if err != nil {
		panic(err)
	}
	plan := scenario.NewPlan(sc)

	// The wire: a client for the target, with the connections and the
	// output control the plan needs. Discovery asks the server what it
	// serves; the probe measures what its chat template adds, so that
	// prompts are built to the pinned length.
	target := endpoint.Target{BaseURL: ts.URL + "/v1", Model: "m", OutputControl: endpoint.ControlIgnoreEOS}
	client, err := endpoint.New(target, runner.ClientOptions(plan))
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()
	disc := endpoint.Discover(ctx, client)
	tmpl, ok, msg, _ := endpoint.Probe(ctx, client, endpoint.ProbeRequest{One: "hello"})
	if !ok {
		panic(msg)
	}

	// The load: the runner owns the channel of records and closes it.
	rn, err := runner.New(plan, client, runner.WithTemplate(tmpl))
	if err != nil {
		panic(err)
	}
	col, err := results.NewCollector("") // records spill to a temporary file
	if err != nil {
		panic(err)
	}
	defer col.Close()
	for rec := range rn.Run(ctx, ctx) {
		col.Add(rec)
	}

	// The result: the windows measured, then bound to the pins declared.
	h := &results.Header{
		StartedAt: rn.Start(),
		Discovery: disc,
		Declared: results.Declared{Declared: plan.Declared(scenario.Wire{
			Model: target.Model, OutputControl: target.OutputControl.String(), Tokenizer: "words"})},
		Windows: results.WindowSpec{Warmup: sc.Windows.Warmup.D(), Burst: sc.Windows.Burst.D(),
			SteadyAuto: sc.Windows.Steady.Auto, SteadyStart: sc.Windows.Steady.Start, SteadyEnd: sc.Windows.Steady.End},
		Tol: results.Tolerances{PromptPct: sc.Pins.Prompt.PromptTolerancePct(), OutputPct: sc.Pins.Output.OutputTolerancePct()},
	}
	m, err := col.Finish(h.Windows, h.SLO, h.Tol)
	if err != nil {
		panic(err)
	}
	run := results.Assemble(h, m, results.Ending{})

	fmt.Printf("%d requests, %d failed, %d output tokens\n", run.Errors.Requests, run.Errors.Failed, run.Tokens.Output)
	// Each pin's verdict as the results file writes it: true, false or
	// unverifiable (with why).
	fmt.Println("pin          verified")
	for _, p := range []struct {
		name   string
		v      results.Verdict
		reason string
	}{
		{"model", run.Pins.Model.Verified, run.Pins.Model.Reason},
		{"prompt", run.Pins.Prompt.Verified, run.Pins.Prompt.Reason},
		{"output", run.Pins.Output.Verified, run.Pins.Output.Reason},
		{"concurrency", run.Pins.Concurrency.Verified, run.Pins.Concurrency.Reason},
		{"kv_cache", run.Pins.KVCache.Verified, run.Pins.KVCache.Reason},
		{"mix", run.Pins.Mix.Verified, run.Pins.Mix.Reason},
	} {
		if p.v == results.Unverifiable {
			fmt.Printf("%-12s %s: %s\n", p.name, p.v, p.reason)
			continue
		}
		fmt.Printf("%-12s %s\n", p.name, p.v)
	}
	fmt.Println("valid:", run.Valid)
	// Output:
	// 8 requests, 0 failed, 128 output tokens
	// pin          verified
	// model        true
	// prompt       true
	// output       true
	// concurrency  true
	// kv_cache     true
	// mix          true
	// valid: true
}
