//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Under an open-file limit of 200 (ulimit -n 200), a run of 300 streams
// against the built-in simulator — 600 connection ends and the run's own
// files — is refused before any request, naming what it needs and how to
// raise the limit; a run of 2 streams runs.
func TestRunRefusedBeyondTheOpenFileLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wide := filepath.Join(dir, "wide.yaml")
	if err := os.WriteFile(wide, bytes.Replace(src, []byte("streams: 2"), []byte("streams: 300"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(scenario string) (int, string) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "SIXPIN_TEST_AS_MAIN=1", "SIXPIN_TEST_NOFILE=200",
			"SIXPIN_TEST_ARGS=run "+scenario+" --profile sim-instant --no-progress -o "+filepath.Join(dir, filepath.Base(scenario)+".json"))
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), errOut.String()
	}
	code, errOut := run(wide)
	if code != ExitBadInput || !strings.Contains(errOut, "this run needs about 664 open files (300 connections and the built-in simulator's end of each, and 64 for its files and listeners) and the process may open 200") ||
		!strings.Contains(errOut, "ulimit -n 664") || strings.Contains(errOut, "recording to") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
	if code, errOut := run("testdata/tiny.yaml"); code != ExitOK {
		t.Errorf("2 streams under the same limit: exit %d:\n%s", code, errOut)
	}
}
