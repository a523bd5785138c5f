package scenario_test

import (
	"fmt"

	"github.com/sixpin/sixpin/scenario"
)

func ExampleDist_String() {
	fmt.Println(scenario.Fixed(8000))
	fmt.Println(scenario.Dist{Kind: scenario.DistUniform, Min: 150, Max: 500})
	fmt.Println(scenario.Dist{Kind: scenario.DistLognormal, Median: 50000, Sigma: 0.6, Min: 11000, Max: 120000})
	fmt.Println(scenario.Dist{Kind: scenario.DistEmpirical, Values: []float64{8000, 32000}, Weights: []float64{0.9, 0.1}})
	// Output:
	// 8000
	// uniform [150, 500]
	// lognormal(median 50000, σ 0.6) in [11000, 120000]
	// empirical{8000: 0.9, 32000: 0.1}
}
