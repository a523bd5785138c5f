// Package verdict holds sixpin's decisions about runs: whether two runs
// may be compared, how they differ, and whether a build passes its gate.
//
// PinMismatches names the pins on which two runs differ beyond their
// tolerances; the registry of figures (Figure, FigureRef, ParseFigure)
// says what can be compared and reads it from a run with its sampling
// model; Compare and CompareSets put runs (or sets, point by point) side by
// side, each change with its confidence interval; Gate, GateRuns and
// GateSets judge rules — read from strict YAML by ParseRules, or
// DefaultRules — by the runs' own intervals or the spread between several
// runs, and ErrRegression is the error a failed gate ends in. The
// intervals come from internal/stats (the bootstrap of HDR histograms and
// per-second series, Jeffreys intervals, Student's t).
//
// Results are data: figures in their unit (Figure.Unit; fractions 0–1),
// changes and tolerances as fractions (0.10 = 10%), and the reasons for an
// outcome in a phrase (Check.Why, GateResult.Incomparable). Package report
// words them as text, Markdown, HTML, CSV and JUnit; cmd/sixpin maps them
// to exit codes. Nothing here renders, reads a flag or writes a file.
package verdict

import (
	"fmt"
	"strconv"

	"github.com/sixpin/sixpin/results"
)

// Input is one results file: a run and the name it was given by.
type Input struct {
	// Name is how verdicts and reports name the file (its path as given).
	Name string
	Run  *results.Run
}

// Load reads results files.
func Load(paths ...string) ([]Input, error) {
	ins := make([]Input, 0, len(paths))
	for _, p := range paths {
		run, err := results.ReadFile(p)
		if err != nil {
			return nil, err
		}
		ins = append(ins, Input{Name: p, Run: run})
	}
	return ins, nil
}

// SetInput is one set file (sixpin/set/v1): a sweep's points, repeats, or
// a bake-off's vendors.
type SetInput struct {
	// Name is how verdicts and reports name the file (its path as given).
	Name string
	Set  *results.Set
}

// Point is one member of a set: a sweep's value, a repeat's seed, a
// bake-off's profile.
type Point struct {
	// Key names the point in machine-read names (a CSV file column, a
	// JUnit suite): "concurrency.streams=4", "seed=8", "profile=vllm",
	// "profile=vllm,seed=43" in a bake-off that ran each profile more than
	// once.
	Key string
	// Label names it for people: "concurrency.streams = 4", "seed 8",
	// "profile vllm".
	Label string
	Run   *results.Run
}

// Points lists set's members in order. Two sets' points are the same
// point when their keys are equal.
func Points(set *results.Set) []Point {
	ps := make([]Point, len(set.Runs))
	for i, r := range set.Runs {
		switch set.Kind {
		case results.SetSweep:
			v := "?"
			if i < len(set.Values) {
				v = strconv.FormatFloat(set.Values[i], 'f', -1, 64)
			}
			ps[i] = Point{Key: set.Pin + "=" + v, Label: set.Pin + " = " + v, Run: r}
		case results.SetBakeoff:
			name := r.Target.Profile
			if i < len(set.Profiles) {
				name = set.Profiles[i]
			}
			ps[i] = Point{Key: "profile=" + name, Label: "profile " + name, Run: r}
			if repeated(set, name) {
				ps[i].Key += fmt.Sprintf(",seed=%d", r.Scenario.Seed)
				ps[i].Label += fmt.Sprintf(", seed %d", r.Scenario.Seed)
			}
		default:
			ps[i] = Point{Key: fmt.Sprintf("seed=%d", r.Scenario.Seed), Label: fmt.Sprintf("seed %d", r.Scenario.Seed), Run: r}
		}
	}
	return ps
}

// repeated reports whether a bake-off ran profile more than once
// (bakeoff --repeat): its points are then keyed by profile and seed.
func repeated(set *results.Set, profile string) bool {
	n := 0
	for _, p := range set.Profiles {
		if p == profile {
			n++
		}
	}
	return n > 1
}
