package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/tmpfs"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// manyRequests is a run whose record spill outgrows a 64 KB disk.
const manyRequests = `name: many
seed: 3
pins:
  model: {name: m}
  prompt: {tokens: 100}
  output: {tokens: 200, tolerance_pct: 100}
  concurrency: {mode: closed, streams: 4}
requests: 300
`

// fullDiskRun runs scenario against the simulator with its results and
// spill on a 64 KB tmpfs, which the spill outgrows, and fallback as
// FallbackDirs; it returns the outcome, stdout, stderr and the error.
func fullDiskRun(t *testing.T, scenario string, fallback []string, spillMemory int) (*Outcome, string, string, error) {
	t.Helper()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, nil)
	cfg := quiet(t, Config{ScenarioPath: scenarioFile(t, scenario), Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Output: filepath.Join(tmpfs.Mount(t, 64<<10), "r.json"), FallbackDirs: fallback, SpillMemory: spillMemory})
	o, err := Run(context.Background(), context.Background(), cfg)
	out, errOut := cfg.Out.(fmt.Stringer).String(), cfg.ErrOut.(fmt.Stringer).String()
	if !strings.Contains(out, "PIN CARD") {
		t.Errorf("no summary:\n%s\nstderr:\n%s", out, errOut)
	}
	return o, out, errOut, err
}

// A run whose results and spill sit on a disk that fills while it runs
// (a 64 KB tmpfs): the summary is printed, every request reaches the
// results, which go to the fallback directory, and the spill is removed.
func TestFullDiskKeepsEveryRequest(t *testing.T) {
	t.Parallel()
	fallback := t.TempDir()
	o, out, errOut, err := fullDiskRun(t, manyRequests, []string{fallback}, 0)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if want := filepath.Join(fallback, "r.json"); o.Path != want {
		t.Errorf("results written to %s, want %s", o.Path, want)
	}
	run, err := results.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Errors.Requests != 300 || run.Incomplete {
		t.Errorf("results hold %d requests (incomplete %v), want all 300", run.Errors.Requests, run.Incomplete)
	}
	if !strings.Contains(errOut, "no space left on device): the results went to "+o.Path) {
		t.Errorf("stderr does not say where the results went:\n%s", errOut)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(o.Path), "*.spill")); len(left) > 0 {
		t.Errorf("spill left behind: %v", left)
	}
}

// lost matches the summary's line on what a run whose results could not
// be written lost.
var lost = regexp.MustCompile(`LOST: (\d+) of the 300 requests measured, those after the record spill could not be written \(.*no space left on device\); it holds the first (\d+): ` +
	"`sixpin recover (\\S+) -o FILE` rebuilds those")

// When nothing takes the results either, the summary is printed and says
// what was lost: the requests the spill on the full disk does not hold,
// which `sixpin recover` rebuilds every one of.
func TestFullDiskWithNoFallbackSaysWhatIsLost(t *testing.T) {
	t.Parallel()
	_, out, errOut, err := fullDiskRun(t, manyRequests, []string{}, 0)
	if err == nil || !strings.Contains(err.Error(), "no fallback directory took them") {
		t.Errorf("err %v", err)
	}
	m := lost.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the summary does not say what was lost:\n%s\nstderr:\n%s", out, errOut)
	}
	missing, held := atoi(t, m[1]), atoi(t, m[2])
	if missing == 0 || held == 0 || missing+held != 300 {
		t.Errorf("lost %d, spill holds %d: want both, 300 in all", missing, held)
	}
	rec, err := results.Recover(m[3], "test")
	if err != nil || rec.Requests != held || rec.SkippedBytes != 0 {
		t.Fatalf("recover %s: %+v, %v: want the %d it holds, nothing skipped", m[3], rec, err, held)
	}
}

// A run that keeps its records in memory while its disk is full stops
// issuing once they pass the bound: the results, marked incomplete, say
// why, and hold every request it sent.
func TestFullDiskStopsTheRunPastTheMemoryBound(t *testing.T) {
	t.Parallel()
	long := strings.Replace(manyRequests, "requests: 300", "duration: 60s", 1)
	o, out, errOut, err := fullDiskRun(t, long, []string{t.TempDir()}, 1)
	if !errors.Is(err, ErrInterrupted) || o == nil {
		t.Fatalf("err %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	run, err := results.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Incomplete || !strings.Contains(run.IncompleteReason, "stopped early: the record spill could not be written") ||
		!strings.Contains(run.IncompleteReason, "outgrew the 0.000001 MB that may be kept in memory") {
		t.Errorf("incomplete %v: %q", run.Incomplete, run.IncompleteReason)
	}
	if run.Errors.Requests == 0 || run.Errors.Requests != o.Run.Errors.Requests {
		t.Errorf("results hold %d requests, the run measured %d", run.Errors.Requests, o.Run.Errors.Requests)
	}
	if !strings.Contains(errOut, "sixpin: warning: the record spill cannot be written") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
