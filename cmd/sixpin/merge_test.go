package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sixpin merge refuses an incomplete set of shards, and files that are no
// shards, with exit 2 and the reason.
func TestMergeRefusesWithExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	code, _, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "--profile", "sim-instant", "--shard", "0/2", "--run-id", "x", "-o", one, "--no-progress")
	if code != ExitOK {
		t.Fatalf("run --shard 0/2: exit %d: %s", code, errOut)
	}
	merged := filepath.Join(dir, "m.json")
	code, _, errOut = sixpin(t, nil, "merge", one, "-o", merged)
	if code != ExitBadInput || !strings.Contains(errOut, "shard 1 of 2 missing") {
		t.Errorf("one shard of two: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(merged); err == nil {
		t.Error("a refused merge wrote its output")
	}
	code, _, errOut = sixpin(t, nil, "merge", one, one, "-o", merged)
	if code != ExitBadInput || !strings.Contains(errOut, "given twice") {
		t.Errorf("a shard twice: exit %d: %s", code, errOut)
	}
	code, _, errOut = sixpin(t, nil, "merge", one)
	if code != ExitBadInput || !strings.Contains(errOut, "-o MERGED.json") {
		t.Errorf("no -o: exit %d: %s", code, errOut)
	}
	code, _, errOut = sixpin(t, nil, "run", "testdata/tiny.yaml", "--profile", "sim-instant", "--shard", "0/2", "-o", one)
	if code != ExitBadInput || !strings.Contains(errOut, "--run-id") {
		t.Errorf("--shard without --run-id: exit %d: %s", code, errOut)
	}
}
