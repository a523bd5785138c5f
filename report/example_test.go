package report_test

import (
	"fmt"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/report"
)

// A run on a slower server against its baseline: the throughput and TPOT
// rules fail; the p99 rules see the slowdown but 88 requests are too few
// for a p99 interval, so they cannot fail.
func ExampleGate() {
	runs, err := report.Load("testdata/base.json", "testdata/slow.json")
	if err != nil {
		panic(err)
	}
	g, err := report.Gate(runs[0], runs[1], report.DefaultRules(), stats.Default())
	if err != nil {
		panic(err)
	}
	for _, c := range g.Checks {
		fmt.Printf("%-4s %-30s %s\n", c.Status, c.Rule.Key, c.Rule.Tolerance())
	}
	fmt.Println("passed:", g.Passed())
	// Output:
	// pass steady.ttft_ms.p99             max_increase 10%
	// fail steady.tpot_ms.p50             max_increase 10%
	// pass steady.e2e_ms.p99              max_increase 10%
	// fail steady.aggregate_output_tok_s  max_decrease 5%
	// fail steady.effective_tok_s.p50     max_decrease 5%
	// pass errors.rate                    max 1%
	// pass validity                       valid and complete
	// passed: false
}

// Two runs measure the same workload only if their pins agree.
func ExamplePinMismatches() {
	runs, err := report.Load("testdata/base.json", "testdata/c1-8k.json")
	if err != nil {
		panic(err)
	}
	fmt.Println(report.JoinMismatches(report.PinMismatches(runs[0].Run, runs[1].Run, stats.Default())))
	// Output:
	// prompt: uniform [400, 600] tokens (mean 500) vs 8000 tokens; prompt p50: 505 vs 8,003; concurrency: 4 vs 1; mix ratio: 7.80 vs 125
}
