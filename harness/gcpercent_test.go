package harness

import (
	"fmt"
	"testing"

	"github.com/sixpin/sixpin/sim"
)

// A run of thousands of connections asks for the lean collector target
// before load; a smaller one leaves the collector as it is.
func TestManyStreamsSetLeanGCPercent(t *testing.T) {
	t.Parallel()
	url := simServer(t, sim.Config{Model: "m", Timing: "none"}, nil)
	for _, c := range []struct {
		name string
		conc string
		want []int
	}{
		{"closed, 2,048 streams", "{mode: closed, streams: 2048}", []int{leanGCPercent}},
		{"closed, 2,047 streams", "{mode: closed, streams: 2047}", nil},
		{"open, max_in_flight 4,096", "{mode: open, rate: 1, max_in_flight: 4096}", []int{leanGCPercent}},
		{"open, max_in_flight 8", "{mode: open, rate: 1, max_in_flight: 8}", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := scenarioFile(t, fmt.Sprintf(`name: gc
seed: 1
pins:
  model: {name: m}
  prompt: {tokens: 16}
  output: {tokens: 4}
  concurrency: %s
duration: 2s
`, c.conc))
			var got []int
			// The run may go on, 2 requests long, or be refused for
			// open files on a machine that allows fewer: the target is
			// set before either.
			_, _ = run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: url, Model: "m", Requests: 2,
				SetGCPercent: func(p int) { got = append(got, p) }})
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("SetGCPercent called with %v, want %v", got, c.want)
			}
		})
	}
}
