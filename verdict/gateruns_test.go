package verdict

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
)

// The between-run rule is tested on given numbers: runs made from the base
// fixture whose steady TPOT p50 and aggregate are set, histograms and
// series dropped (the rule reads one value per run and needs neither).

// given returns a copy of the base fixture named name whose steady TPOT
// p50 is tpot ms and aggregate agg tok/s.
func given(t *testing.T, name string, tpot, agg float64) Input {
	t.Helper()
	in := modified(t, func(r *results.Run) {
		w := r.Windows[results.WindowSteady]
		d := *w.TPOTMs
		d.P50 = tpot
		w.TPOTMs = &d
		w.AggregateOutputTokS = agg
		r.Histograms, r.Series = nil, results.Series{}
	})
	in.Name = name
	return in
}

// tpots is a sample of runs whose TPOT p50 is 7 ms moved by each change
// (a fraction); their aggregate is 400 tok/s.
func tpots(t *testing.T, name string, changes ...float64) Sample {
	t.Helper()
	s := Sample{Name: name}
	for i, ch := range changes {
		s.Runs = append(s.Runs, given(t, fmt.Sprintf("%s-%d.json", strings.TrimSuffix(name, "-*.json"), i+1), 7*(1+ch), 400))
	}
	return s
}

func mustRule(t *testing.T, key, kind string, limit float64) Rule {
	t.Helper()
	r, err := NewRule(key, kind, limit)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGateRunsJudgesTheSpreadBetweenRuns(t *testing.T) {
	tpot5 := mustRule(t, "steady.tpot_ms.p50", MaxIncrease, 0.05)
	for _, c := range []struct {
		name      string
		base, cur []float64 // TPOT p50 changes from 7 ms
		want      Status
		why       string
		sd        float64 // the between-run sd wanted, a fraction of the baseline mean (0: none)
	}{
		// The five unchanged reruns and their baseline: the last,
		// +10% (+7.8% from the others' mean), is beyond a 5% tolerance but
		// inside the spread the others show (sd 4.8% of their mean: the
		// change's interval is [−6.9%, +22.5%]).
		{"an unchanged rerun inside the reruns' spread passes", []float64{0, -0.031, -0.013, 0.064, 0.081}, []float64{0.10},
			Pass, "beyond the tolerance but within the spread between runs", 0.0484},
		// Tight baseline runs: 12% slower is a regression.
		{"a regression outside a tight spread fails", []float64{0, 0.005, -0.004, 0.003, -0.002}, []float64{0.12},
			Fail, "regression: beyond the tolerance and outside the spread between runs", 0.0036},
		// Outside the spread but within the tolerance: no regression.
		{"outside the spread but within the tolerance passes", []float64{0, 0.005, -0.004, 0.003, -0.002}, []float64{0.04},
			Pass, "within the tolerance", 0.0036},
		// Several current runs: the spread is pooled over both sides.
		{"several current runs, a regression", []float64{0, 0.01, -0.01}, []float64{0.10, 0.11, 0.09},
			Fail, "outside the spread between runs", 0.01},
		{"one baseline run, several current runs: their spread decides", []float64{0}, []float64{0.06, 0.14, 0.02},
			Pass, "within the spread between runs", 0.0611},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := GateRuns(tpots(t, "base-*.json", c.base...), tpots(t, "cur-*.json", c.cur...), []Rule{tpot5}, stats.Default())
			if err != nil {
				t.Fatal(err)
			}
			ch := g.Checks[0]
			if ch.Status != c.want || !strings.Contains(ch.Why, c.why) || !ch.Between {
				t.Fatalf("%s (%s), between %v; want %s (%q)", ch.Status, ch.Why, ch.Between, c.want, c.why)
			}
			if sd := ch.RelSpread(); math.Abs(sd-c.sd) > 0.0005 {
				t.Errorf("between-run sd %.4f, want %.4f", sd, c.sd)
			}
		})
	}
}

// The interval is the prediction interval of one run: for baseline runs
// 7·(1 + {0, ±1%}) ms (mean 7, sd 0.07) and one current run, mean ± t(2,
// 95%) · 0.07 · √(1 + 1/3), as a change from 7.
func TestGateRunsPredictionInterval(t *testing.T) {
	g, err := GateRuns(tpots(t, "base-*.json", 0, 0.01, -0.01), tpots(t, "cur.json", 0.2),
		[]Rule{mustRule(t, "steady.tpot_ms.p50", MaxIncrease, 0.1)}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	c := g.Checks[0]
	half := stats.StudentT(2, 0.95) * 0.07 * math.Sqrt(1+1.0/3) / 7
	if math.Abs(c.Change-0.2) > 1e-9 || math.Abs(c.Interval.Lo-(0.2-half)) > 1e-9 || math.Abs(c.Interval.Hi-(0.2+half)) > 1e-9 || c.Runs.DF != 2 {
		t.Errorf("change %v interval [%v, %v] df %d, want 0.2 [%v, %v] df 2", c.Change, c.Interval.Lo, c.Interval.Hi, c.Runs.DF, 0.2-half, 0.2+half)
	}
}

func TestGateRunsEdges(t *testing.T) {
	tpot := mustRule(t, "steady.tpot_ms.p50", MaxIncrease, 0.05)
	noTPOT := func(in Input) Input {
		r := *in.Run
		r.Windows = map[string]*results.Window{}
		for k, w := range in.Run.Windows {
			cp := *w
			r.Windows[k] = &cp
		}
		r.Windows[results.WindowSteady].TPOTMs = nil
		return Input{Name: in.Name, Run: &r}
	}
	base := tpots(t, "base-*.json", 0, 0.01, -0.01)
	for _, c := range []struct {
		name      string
		base, cur Sample
		rule      Rule
		want      Status
		why       string
	}{
		{"a current run without the figure fails", base,
			Sample{Name: "cur-*.json", Runs: []Input{given(t, "cur-1.json", 7, 400), noTPOT(given(t, "cur-2.json", 7, 400))}}, tpot,
			Fail, "the current run has no such figure (cur-2.json: no successful request in the steady window); the baseline has"},
		{"two runs in all with the figure are too few", Sample{Name: "base-*.json", Runs: []Input{base.Runs[0], noTPOT(base.Runs[1])}},
			tpots(t, "cur.json", 0.2), tpot, Pass, "without an interval nothing is significant: 2 runs have it, and the spread between runs needs 3"},
		{"an absolute rule bounds several current runs' mean", base, tpots(t, "cur-*.json", 0.2, 0.21, 0.19),
			mustRule(t, "steady.tpot_ms.p50", MaxValue, 8), Fail, "regression: beyond the tolerance and outside the spread between runs"},
		{"an absolute rule on one current run needs its interval", base, tpots(t, "cur.json", 0.2),
			mustRule(t, "steady.tpot_ms.p50", MaxValue, 8), NotEvaluated, "no histogram in the results file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := GateRuns(c.base, c.cur, []Rule{c.rule}, stats.Default())
			if err != nil {
				t.Fatal(err)
			}
			ch := g.Checks[0]
			if ch.Status != c.want || !strings.Contains(ch.Why, c.why) {
				t.Errorf("%s (%s), want %s (%q)", ch.Status, ch.Why, c.want, c.why)
			}
		})
	}
}

// Pins and validity name the run they concern when a side holds several
// (report's TestGateHeadlineNamesTheSpread: the verdict line names the
// baseline's runs and spread).
func TestGateRunsNamesRuns(t *testing.T) {
	base := tpots(t, "base-*.json", 0, 0.01, -0.01)
	other := base
	other.Runs = append([]Input(nil), base.Runs...)
	other.Runs[2] = modified(t, func(r *results.Run) {
		r.Pins.Concurrency.Declared.Streams = 1
		r.Valid, r.Invalid = false, []string{"prompt: drifted"}
	})
	other.Runs[2].Name = "base-3.json"
	g, err := GateRuns(other, tpots(t, "cur.json", 0), DefaultRules(), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	why := strings.Join(g.Incomparable, "; ")
	if g.Comparable() || !strings.Contains(why, "base-3.json: concurrency: ") || !strings.Contains(why, "base-3.json: the baseline is invalid: prompt: drifted") {
		t.Errorf("incomparable %q", g.Incomparable)
	}

	cur := tpots(t, "cur-*.json", 0, 0.01)
	cur.Runs[1].Run.Valid, cur.Runs[1].Run.Invalid = false, []string{"output: drifted"}
	g, err = GateRuns(base, cur, []Rule{DefaultRules()[len(DefaultRules())-1]}, stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if c := g.Checks[0]; c.Status != Fail || c.Why != "current runs: cur-2.json: invalid: output: drifted" {
		t.Errorf("validity: %s (%s)", c.Status, c.Why)
	}
}

// Several baseline sets of one sweep are several runs at each point
// (report's TestSetGateHeadline: and the verdict line says so).
func TestGateSetsSeveralBaselineSets(t *testing.T) {
	base := []SetInput{loadSet(t, fixSweep), loadSet(t, fixSweepNoise)}
	g, err := GateSets("sweep*.json", base, loadSet(t, fixSweepSlow), DefaultRules(), stats.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Points) != 2 || len(g.Failed()) != 2 {
		t.Fatalf("%d points, %d failed; want 2 and 2", len(g.Points), len(g.Failed()))
	}
	for _, p := range g.Points {
		if n := len(p.Gate.Baseline.Runs); n != 2 || !p.Gate.BetweenRuns() || p.Gate.Baseline.Runs[1].Name != fixSweepNoise+"#"+p.Point.Key {
			t.Errorf("%s: %d baseline runs (%v), want both sets' runs at the point", p.Point.Label, n, p.Gate.Baseline.Runs)
		}
	}
}
