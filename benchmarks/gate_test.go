package benchmarks

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/verdict"
)

// The gate's A/A and A/B experiment: is the gate's verdict, with its
// default rules and a baseline of several runs, true on this machine?
// Every run is gate-check.yaml (eight closed-loop streams) by bin/sixpin
// against `sixpin sim` in a second process: A the default simulator
// (sim-local-27b), B the same with its decode 10% slower
// (sim-local-27b-decode10.yaml). In each of gateSets blocks, gateBaseRuns
// baseline runs of A are interleaved with gateTrials unchanged runs of A
// and gateTrials runs of B; then each A and each B run is gated by the
// real command, `sixpin gate --baseline 'DIR/base-*.json' RUN.json`.
const (
	gateSets     = 2  // baseline sets
	gateBaseRuns = 5  // runs in each baseline set
	gateTrials   = 10 // A/A and A/B trials against each baseline set
)

// BenchmarkGateNoise runs the experiment once (about fifty 20-second
// runs) and claims: at most 1 of the 20 A/A trials fails (the gate's
// false-failure rate ≤ 1 in 20), and at least 19 of the 20 A/B trials fail
// (a decode 10% slower is caught). It also reports, for the README and
// the default rules' derivation, each default rule's figure's standard
// deviation between the unchanged A runs (plain and typical, see
// gateNoise) and B's shift from A, and how
// the A/A trials fare against one baseline run (the single-baseline form,
// within-run intervals). Files go to $SIXPIN_GATE_DIR when set (make
// gate-check keeps them in bench-results/gate-check), else a temporary
// directory.
func BenchmarkGateNoise(b *testing.B) {
	bin := binary(b)
	fast := serveSim(b, bin, "sim-local-27b")
	slow := serveSim(b, bin, "sim-local-27b-decode10.yaml")
	for b.Loop() {
		dir := os.Getenv("SIXPIN_GATE_DIR")
		if dir == "" {
			dir = b.TempDir()
		}
		var aa, ab, single gateTally
		var aRuns, bRuns []string
		for k := range gateSets {
			set := filepath.Join(dir, fmt.Sprintf("set%d", k+1))
			if err := os.RemoveAll(set); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(set, 0o755); err != nil {
				b.Fatal(err)
			}
			var base, as, bs []string
			for i := range gateTrials {
				// The baseline's runs spread through the block, so the
				// baseline sees the machine as the trials do.
				if len(base) < gateBaseRuns && i%(gateTrials/gateBaseRuns) == 0 {
					p := filepath.Join(set, fmt.Sprintf("base-%d.json", len(base)+1))
					gateBaselineRun(b, bin, fast, p)
					base = append(base, p)
				}
				as = append(as, filepath.Join(set, fmt.Sprintf("a-%d.json", i+1)))
				gateCurrentRun(b, bin, fast, as[i])
				bs = append(bs, filepath.Join(set, fmt.Sprintf("b-%d.json", i+1)))
				gateCurrentRun(b, bin, slow, bs[i])
			}
			glob := filepath.Join(set, "base-*.json")
			for i := range as {
				aa.add(gate(b, bin, as[i], "--baseline", glob))
				ab.add(gate(b, bin, bs[i], "--baseline", glob))
				single.add(gate(b, bin, as[i], "--baseline", base[0]))
			}
			aRuns = append(append(aRuns, base...), as...)
			bRuns = append(bRuns, bs...)
		}
		b.ReportMetric(float64(aa.failed), "aa_failed")
		b.ReportMetric(float64(ab.failed), "ab_caught")
		b.ReportMetric(float64(single.failed), "aa_failed_1_baseline_run")
		b.Logf("A/A, %d runs against %d sets of %d baseline runs: %d failed %s", aa.n, gateSets, gateBaseRuns, aa.failed, aa.rules())
		b.Logf("A/B (decode 10%% slower): %d of %d caught %s", ab.failed, ab.n, ab.rules())
		b.Logf("A/A against one baseline run (within-run intervals): %d of %d failed %s", single.failed, single.n, single.rules())
		gateNoise(b, aRuns, bRuns)
		if aa.failed > aa.n/20 {
			b.Errorf("A/A: %d of %d unchanged runs failed the gate; the claim is at most 1 in 20", aa.failed, aa.n)
		}
		if ab.failed < ab.n-ab.n/20 {
			b.Errorf("A/B: the gate caught %d of %d runs with a decode 10%% slower; the claim is at least 19 in 20", ab.failed, ab.n)
		}
	}
}

// gateTally counts gate verdicts and the rules that failed.
type gateTally struct {
	n, failed int
	byRule    map[string]int
}

func (t *gateTally) add(failedRules []string) {
	t.n++
	if len(failedRules) > 0 {
		t.failed++
	}
	for _, r := range failedRules {
		if t.byRule == nil {
			t.byRule = map[string]int{}
		}
		t.byRule[r]++
	}
}

// rules is the rules that failed and how often: "(steady.tpot_ms.p50 3×)".
func (t *gateTally) rules() string {
	if len(t.byRule) == 0 {
		return ""
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(t.byRule)) {
		parts = append(parts, fmt.Sprintf("%s %d×", r, t.byRule[r]))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// gateRunOnce runs gate-check.yaml against url into out: whether the run
// was valid. Exit 1 with results written is an invalid run.
func gateRunOnce(b *testing.B, bin, url, out string) bool {
	b.Helper()
	cmd := exec.Command(bin, "run", "gate-check.yaml", "--no-progress", "--profile", "llamacpp",
		"--endpoint", url, "--model", "sim-local-27b", "-o", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		b.Fatalf("sixpin run → %s: %v\n%s", out, err, stderr.String())
	}
	res, rerr := results.ReadFile(out)
	if rerr != nil {
		b.Fatalf("sixpin run → %s: %v; results: %v\n%s", out, err, rerr, stderr.String())
	}
	if !res.Valid {
		b.Logf("%s: invalid run: %q", out, res.Invalid)
	}
	return res.Valid
}

// gateBaselineRun makes one baseline run: a valid one, as a CI job
// would rerun main's invalid run (three tries).
func gateBaselineRun(b *testing.B, bin, url, out string) {
	b.Helper()
	for range 3 {
		if gateRunOnce(b, bin, url, out) {
			return
		}
	}
	b.Fatalf("%s: three invalid runs in a row", out)
}

// gateCurrentRun makes one trial run, valid or not: an invalid one fails
// the gate's validity rule, as it would in CI.
func gateCurrentRun(b *testing.B, bin, url, out string) {
	b.Helper()
	gateRunOnce(b, bin, url, out)
}

// gate runs `sixpin gate` on current with args and returns the rules
// that failed (none: it passed). Any exit but 0 or 1 is fatal.
func gate(b *testing.B, bin, current string, args ...string) []string {
	b.Helper()
	cmd := exec.Command(bin, append(append([]string{"gate"}, args...), current)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
	default:
		b.Fatalf("sixpin gate %v %s: %v\n%s%s", args, current, err, stdout.String(), stderr.String())
	}
	var failed []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "FAIL" {
			failed = append(failed, f[1])
		}
	}
	if len(failed) == 0 {
		b.Fatalf("sixpin gate %v %s exited 1 and names no failed rule:\n%s", args, current, stdout.String())
	}
	return failed
}

// gateNoise logs, for each default rule's figure, its standard deviation
// between the unchanged A runs — plain, and typical: 1.4826 × the median
// absolute deviation, which sets aside runs starved by other work on the
// machine — as fractions of the mean (median), and B's shift from A: the
// measurements the default rules are derived from.
func gateNoise(b *testing.B, aRuns, bRuns []string) {
	b.Helper()
	load := func(paths []string) verdict.Sample {
		ins, err := verdict.Load(paths...)
		if err != nil {
			b.Fatal(err)
		}
		return verdict.Sample{Name: "runs", Runs: ins}
	}
	g, err := verdict.GateRuns(load(aRuns), load(bRuns), verdict.DefaultRules(), stats.Default())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%-32s %-18s %10s %10s %10s", "default rule", "tolerance", "A sd", "typical", "B − A")
	for _, c := range g.Checks {
		if c.Runs == nil || c.Rule.Kind == verdict.Validity {
			continue
		}
		mean, sd := stats.MeanSD(c.Runs.Baseline)
		rel, typical := sd/math.Abs(mean), typicalSD(c.Runs.Baseline)
		if math.IsNaN(rel) || math.IsNaN(typical) {
			continue
		}
		b.Logf("%-32s %-18s %9.1f%% %9.1f%% %+9.1f%%", c.Rule.Key, c.Rule.Tolerance(), 100*rel, 100*typical, 100*c.Change)
		key := strings.NewReplacer("steady.", "", ".", "_").Replace(c.Rule.Key)
		b.ReportMetric(100*typical, key+"_typical_sd_%")
	}
}

// typicalSD is 1.4826 × the median absolute deviation of xs from their
// median, as a fraction of the median: a standard deviation (for normal
// noise) that a few outlying values do not move. NaN for a zero median.
func typicalSD(xs []float64) float64 {
	med := func(vs []float64) float64 {
		s := slices.Sorted(slices.Values(vs))
		return stats.Percentile(len(s), func(i int) float64 { return s[i] }, 50)
	}
	m := med(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	if m == 0 {
		return math.NaN()
	}
	return 1.4826 * med(dev) / math.Abs(m)
}
