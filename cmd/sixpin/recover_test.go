package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/results"
)

// A run SIGKILLed mid-run leaves its record spill beside its results
// file; `sixpin recover` rebuilds a readable results file from it, marked
// incomplete, with the requests measured until then.
func TestKilledRunRecovers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "killed.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIXPIN_TEST_AS_MAIN=1", "TMPDIR="+filepath.Join(dir, "tmp"),
		"SIXPIN_TEST_ARGS=run testdata/slow.yaml --no-progress -o "+path)
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	spill := path + ".spill"
	lines := bufio.NewScanner(stderr)
	for lines.Scan() && !strings.Contains(lines.Text(), "recording to "+spill) {
	}
	waitForRecords(t, spill, 2)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp", "sixpin-records-*")); len(left) > 0 {
		t.Errorf("spill files left in TMPDIR: %v", left)
	}
	if _, err := os.Stat(spill); err != nil {
		t.Fatalf("no spill beside the results file after SIGKILL: %v", err)
	}
	out, rows := filepath.Join(dir, "recovered.json"), filepath.Join(dir, "requests.csv")
	code, stdout, errOut := sixpin(t, nil, "recover", spill, "-o", out, "--records", rows)
	if code != ExitOK {
		t.Fatalf("recover: exit %d\n%s%s", code, stdout, errOut)
	}
	run, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// --records: a row per request recovered, after the CSV's header.
	if data, err := os.ReadFile(rows); err != nil || strings.Count(string(data), "\n") != run.Errors.Requests+1 ||
		!strings.Contains(stdout, fmt.Sprintf("wrote %d per-request rows to %s", run.Errors.Requests, rows)) {
		t.Errorf("records (%v):\n%s\nstdout: %s", err, data, stdout)
	}
	if !run.Incomplete || run.Errors.Requests < 2 || run.Errors.Failed != 0 {
		t.Errorf("recovered: incomplete %v, %d requests (%d failed)", run.Incomplete, run.Errors.Requests, run.Errors.Failed)
	}
	if run.Scenario.Name != "slow" || !run.Target.Simulated || run.Pins.Output.Declared.Mean != 100 {
		t.Errorf("recovered run lost its header: scenario %q, simulated %v, output pin %+v", run.Scenario.Name, run.Target.Simulated, run.Pins.Output.Declared)
	}
	if code, o, e := sixpin(t, nil, "report", out, "--format", "md"); code != ExitOK || !strings.Contains(o, "INCOMPLETE") {
		t.Errorf("report: exit %d: %s%s", code, o, e)
	}
	// gate reads it, and refuses to judge an incomplete run.
	if _, o, e := sixpin(t, nil, "gate", "--baseline", out, out); !strings.Contains(o+e, "incomplete") || strings.Contains(o+e, "read results") {
		t.Errorf("gate: %s%s", o, e)
	}

	// The same spill with a tail of zeros (what a crash can leave on some
	// file systems): every record before them is rebuilt, and recover
	// says what it skipped.
	f, err := os.OpenFile(spill, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 8192)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, errOut = sixpin(t, nil, "recover", spill, "-o", out)
	if code != ExitOK || !strings.Contains(stdout, "skipped the last 8,192 bytes") {
		t.Fatalf("recover of a spill with a zero tail: exit %d\n%s%s", code, stdout, errOut)
	}
	again, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if again.Errors.Requests != run.Errors.Requests || !again.Incomplete {
		t.Errorf("with a zero tail: %d requests (incomplete %v), want the %d before it", again.Errors.Requests, again.Incomplete, run.Errors.Requests)
	}
}

// waitForRecords waits until the record spill at path, which a run in
// another process flushes every second, holds at least n whole records
// (on sim-local-27b each request takes about 0.7 s); it fails the test
// after two minutes.
func waitForRecords(t *testing.T, path string, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rec, err := results.Recover(path, "looked at while the run goes on")
		if err == nil && rec.Requests >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the record spill %s did not reach %d records in two minutes (last look: %v)", path, n, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRecoverRefusesWhatIsNoSpill(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "x.spill")
	if err := os.WriteFile(bad, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := sixpin(t, nil, "recover", bad); code != ExitBadInput || !strings.Contains(errOut, "not a sixpin record spill") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// -o into a missing or unwritable directory fails before the first
// request, with exit 2 and a clear message.
func TestRunRefusesAnUnwritableOutput(t *testing.T) {
	t.Parallel()
	for name, path := range map[string]string{
		"missing directory": filepath.Join(t.TempDir(), "no", "such", "dir", "r.json"),
		// Not writable even by root (CI runs as root, which ignores modes).
		"read-only file system": "/proc/sixpin-results.json",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "-o", path)
			if code != ExitBadInput || !strings.Contains(errOut, "cannot write the results file "+path) {
				t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if strings.Contains(out, "requests started") {
				t.Errorf("the run went ahead:\n%s", out)
			}
		})
	}
}
