package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// givenRuns writes the base fixture as one results file per change (a
// fraction): its steady TPOT moved by that change, its histograms and
// series dropped (the between-run rule reads one value per run). It
// returns the files' paths: DIR/PREFIX-1.json, …
func givenRuns(t *testing.T, dir, prefix string, changes ...float64) []string {
	t.Helper()
	var paths []string
	for i, ch := range changes {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.json", prefix, i+1))
		editJSON(t, fixBase, p, func(m map[string]any) {
			tpot := m["windows"].(map[string]any)["steady"].(map[string]any)["tpot_ms"].(map[string]any)
			for k, v := range tpot {
				if k != "count" {
					tpot[k] = v.(float64) * (1 + ch)
				}
			}
			delete(m, "histograms")
			delete(m, "series")
		})
		paths = append(paths, p)
	}
	return paths
}

// A baseline of several runs: a glob, --baseline repeated, or a --repeat
// set. The five unchanged reruns (TPOT p50 −3.1%, −1.3%, +6.4%,
// +8.1%, +10.0% against their first run): the last, gated against the
// others, is inside their spread and passes; 20% slower fails. Before,
// --baseline took one file and the glob was no file at all.
func TestGateSeveralBaselineRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := givenRuns(t, dir, "base", 0, -0.031, -0.013, 0.064, 0.081)
	same := givenRuns(t, dir, "same", 0.10)[0]
	slow := givenRuns(t, dir, "slow", 0.20)[0]
	rules := filepath.Join(dir, "tpot.yaml")
	writeFile(t, rules, "steady.tpot_ms.p50: {max_increase: 5%}\n")
	glob := filepath.Join(dir, "base-*.json")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"an unchanged rerun inside the spread passes", []string{"--baseline", glob, same, "--rules", rules}, ExitOK,
			[]string{"5 runs of smoke (seed 7)", "beyond the tolerance but within the spread between runs",
				"RESULT: PASS — 2 rules, no regression; baseline 5 runs, between-run sd 4.8% of the mean"}, nil},
		{"a regression outside it fails", []string{"--baseline", glob, slow, "--rules", rules}, ExitFailed,
			[]string{"FAIL  steady.tpot_ms.p50", "RESULT: FAIL — 1 of 2 rules regressed: steady.tpot_ms.p50 +17.6% (between-run sd 4.8%); baseline 5 runs"},
			[]string{"gate: regression: 1 of 2 rules failed"}},
		{"--baseline repeated", []string{"--baseline", base[0], "--baseline", base[1], "--baseline", base[2], slow, "--rules", rules}, ExitFailed,
			[]string{"baseline 3 runs, between-run sd"}, nil},
		{"a repeat set is a baseline of its runs", []string{"--baseline", fixRepeat, fixBase}, ExitOK,
			[]string{"2 runs of smoke (seeds 7, 8)", "RESULT: PASS — 7 rules, no regression; baseline 2 runs, between-run sd"}, nil},
		{"a glob that matches nothing", []string{"--baseline", filepath.Join(dir, "nope-*.json"), same}, ExitBadInput, nil,
			[]string{"--baseline " + filepath.Join(dir, "nope-*.json") + ": no file matches"}},
		{"the current run among several baseline runs", []string{"--baseline", glob, base[2]}, ExitBadInput, nil,
			[]string{base[2] + " is both a baseline and the current run"}},
		{"a file twice", []string{"--baseline", base[0], "--baseline", base[0], same}, ExitBadInput, nil,
			[]string{"--baseline: " + base[0] + " given twice"}},
		{"a sweep among runs", []string{"--baseline", glob, "--baseline", fixSweep, same}, ExitBadInput, nil,
			[]string{"gate sets with sets"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runCmd(t, gateCmd, c.args...)
			expectOutput(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
