package verdict

import (
	"testing"

	"github.com/sixpin/sixpin/results"
)

// The fixtures are report's: results and set files of real runs against
// the built-in simulator, made once by the commands in
// report/testdata/gen/README.md (report's golden files render them).
const (
	fixBase    = "../report/testdata/base.json"    // smoke, 20 s, seed 7, sim-local-27b
	fixNoise   = "../report/testdata/noise.json"   // the same with seed 8: noise only
	fixSlow    = "../report/testdata/slow.json"    // the same on a ~22% slower simulator: a regression
	fixC1      = "../report/testdata/c1-8k.json"   // one stream, 8,000-token prompts: other pins
	fixInstant = "../report/testdata/instant.json" // sim-instant: model and KV pins contradicted

	fixSweep      = "../report/testdata/sweep.json"       // concurrency.streams = 1, 4
	fixSweepNoise = "../report/testdata/sweep-noise.json" // the same with seed 8
	fixSweepSlow  = "../report/testdata/sweep-slow.json"  // the same on the slower simulator
)

func load(t *testing.T, paths ...string) []Input {
	t.Helper()
	ins, err := Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

func loadSet(t *testing.T, path string) SetInput {
	t.Helper()
	_, set, err := results.ReadAnyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if set == nil {
		t.Fatalf("%s is not a set", path)
	}
	return SetInput{Name: path, Set: set}
}
