package verdict_test

import (
	"fmt"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/verdict"
)

// The fixtures are report's (report/testdata/gen/README.md): results files
// of real runs against the built-in simulator.

// A run on a slower server against its baseline: the throughput and TPOT
// rules fail; the p99 rules see the slowdown but 88 requests are too few
// for a p99 interval, so they cannot fail.
func ExampleGate() {
	runs, err := verdict.Load("../report/testdata/base.json", "../report/testdata/slow.json")
	if err != nil {
		panic(err)
	}
	g, err := verdict.Gate(runs[0], runs[1], verdict.DefaultRules(), stats.Default())
	if err != nil {
		panic(err)
	}
	for _, c := range g.Checks {
		fmt.Printf("%-4s %-30s %s\n", c.Status, c.Rule.Key, c.Rule.Tolerance())
	}
	fmt.Println("passed:", g.Passed())
	// Output:
	// pass steady.ttft_ms.p99             max_increase 55%
	// fail steady.tpot_ms.p50             max_increase 15%
	// pass steady.e2e_ms.p99              max_increase 20%
	// fail steady.aggregate_output_tok_s  max_decrease 5%
	// fail steady.effective_tok_s.p50     max_decrease 5%
	// pass errors.rate                    max 1%
	// pass validity                       valid and complete
	// passed: false
}

// Two runs measure the same workload only if their pins agree.
func ExamplePinMismatches() {
	runs, err := verdict.Load("../report/testdata/base.json", "../report/testdata/c1-8k.json")
	if err != nil {
		panic(err)
	}
	fmt.Println(verdict.JoinMismatches(verdict.PinMismatches(runs[0].Run, runs[1].Run, stats.Default())))
	// Output:
	// prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens; prompt p50: 505 vs 8,003; concurrency: 4 vs 1; mix ratio: 7.80 vs 125
}

// A baseline of several runs: each rule is judged against the spread
// between them, as well as its tolerance.
func ExampleGateRuns() {
	runs, err := verdict.Load("../report/testdata/base.json", "../report/testdata/noise.json", "../report/testdata/slow.json")
	if err != nil {
		panic(err)
	}
	base := verdict.Sample{Name: "../report/testdata/{base,noise}.json", Runs: runs[:2]}
	current := verdict.Sample{Name: "../report/testdata/slow.json", Runs: runs[2:]}
	g, err := verdict.GateRuns(base, current, verdict.DefaultRules(), stats.Default())
	if err != nil {
		panic(err)
	}
	for _, c := range g.Checks {
		fmt.Printf("%-4s %-30s %s\n", c.Status, c.Rule.Key, c.Why)
	}
	fmt.Println("passed:", g.Passed())
	// Output:
	// pass steady.ttft_ms.p99             within the tolerance
	// fail steady.tpot_ms.p50             regression: beyond the tolerance and outside the spread between runs
	// fail steady.e2e_ms.p99              regression: beyond the tolerance and outside the spread between runs
	// fail steady.aggregate_output_tok_s  regression: beyond the tolerance and outside the spread between runs
	// fail steady.effective_tok_s.p50     regression: beyond the tolerance and outside the spread between runs
	// pass errors.rate                    within the tolerance
	// pass validity                       the current run is valid and complete
	// passed: false
}
