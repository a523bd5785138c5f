package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
)

// sixpin run --records and report --format br0.2 end to end: the rows
// file holds a row per request, the report is one Benchmark Report on
// stdout (or in -o's file, a JSON file without a warning), a set's are
// one per point as JSON Lines, and a records file named otherwise is
// refused before the run.
func TestRecordsAndBenchmarkReportCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, rows := filepath.Join(dir, "r.json"), filepath.Join(dir, "rows.jsonl")
	code, stdout, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "--profile", "sim-instant", "-o", out, "--records", rows)
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, errOut)
	}
	run, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(rows)
	if err != nil || strings.Count(string(data), "\n") != run.Errors.Requests || !strings.Contains(errOut, "wrote 20 per-request rows to "+rows) {
		t.Errorf("rows (%v):\n%s\nstderr: %s", err, data, errOut)
	}

	code, stdout, errOut = sixpin(t, nil, "report", out, "--format", "br0.2")
	var br map[string]any
	if code != ExitOK || json.Unmarshal([]byte(stdout), &br) != nil || br["version"] != "0.2" {
		t.Fatalf("report --format br0.2: exit %d\n%s%s", code, stdout, errOut)
	}
	file := filepath.Join(dir, "br.json")
	if code, _, errOut = sixpin(t, nil, "report", out, "--format", "br0.2", "-o", file); code != ExitOK || strings.Contains(errOut, "extension") {
		t.Errorf("report -o br.json: exit %d: %s", code, errOut)
	}
	if data, err := os.ReadFile(file); err != nil || json.Unmarshal(data, &br) != nil {
		t.Errorf("br.json (%v): %s", err, data)
	}

	set, err := results.ReadSetFile("../../report/testdata/sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, errOut = sixpin(t, nil, "report", "../../report/testdata/sweep.json", "--format", "br0.2")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != ExitOK || len(lines) != len(set.Runs) {
		t.Fatalf("a sweep of %d points: exit %d, %d lines\n%s", len(set.Runs), code, len(lines), errOut)
	}
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &br); err != nil || br["scenario"].(map[string]any)["load"].(map[string]any)["standardized"].(map[string]any)["stage"] != float64(i) {
			t.Errorf("line %d (%v): %.200s", i+1, err, l)
		}
	}

	if code, _, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "--records", filepath.Join(dir, "rows.txt")); code != ExitBadInput || !strings.Contains(errOut, ".jsonl (JSON Lines) or .csv") {
		t.Errorf("--records rows.txt: exit %d: %s", code, errOut)
	}
}
