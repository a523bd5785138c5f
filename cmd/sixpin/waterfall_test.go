package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Flags reach the harness's configuration as named.
func TestWaterfallFlags(t *testing.T) {
	t.Parallel()
	var got *WaterfallOptions
	build := func(f *Factory) *cobra.Command {
		return NewCmdWaterfall(f, func(_ *cobra.Command, o *WaterfallOptions) error { got = o; return nil })
	}
	code, _, errOut := runCmd(t, build, "--from", "brochure", "--to", "prod.yaml", "--order", "concurrency,prompt", "--metric", "ttft",
		"--orders", "2", "--exact", "--repeat", "3", "--claim", "1500", "--step-duration", "30s", "--step-requests", "40", "--seed", "9")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	c := got.Config
	if c.From != "brochure" || c.To != "prod.yaml" || !slices.Equal(c.Order, []string{"concurrency", "prompt"}) || c.Metric != "ttft" ||
		c.Orders != 2 || !c.Exact || c.Repeat != 3 || c.Claim != 1500 || c.Duration != 30*time.Second || c.Requests != 40 || !got.SeedSet || got.Seed != 9 {
		t.Errorf("config %+v", c)
	}
	// By default the harness chooses the attribution: exact within the
	// budget, else two orders.
	if code, _, errOut := runCmd(t, build, "--from", "brochure", "--to", "prod.yaml"); code != ExitOK || got.Config.Orders != 0 || got.Config.Exact || got.Config.MaxRuns != 64 {
		t.Errorf("defaults: exit %d %s, orders %d exact %v max-runs %d", code, errOut, got.Config.Orders, got.Config.Exact, got.Config.MaxRuns)
	}
}

// sixpin waterfall end to end on the simulator, then its file through
// sixpin report in every format, re-rendered for another metric; compare
// refuses it, report --metric refuses a results file.
func TestWaterfallCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prof := filepath.Join(dir, "fixed.yaml")
	// Requests of about 80 ms: long beside the client's own time between
	// an agent's turns, which a loaded machine stretches (at 16 ms, an
	// agentic step was once judged to have kept too few in flight).
	src := "name: fixed\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\nsim: {model: m, timing: fixed, fixed: {ttft: 20ms, itl: 2ms}}\n"
	if err := os.WriteFile(prof, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "w.json")
	wf := func(f *Factory) *cobra.Command { return NewCmdWaterfall(f, nil) }
	code, stdout, errOut := runCmd(t, wf, "--from", "brochure", "--to", "../../harness/testdata/waterfall-to.yaml", "--profile", prof,
		"--step-requests", "8", "--claim", "1500", "--orders", "1", "--no-progress", "-o", out)
	expectOutput(t, code, stdout, errOut, ExitOK, []string{"sixpin waterfall: brochure →", "plan: 5 configurations × 1 run = 5 runs, each bounded by 8 requests", "attribution: one order (--orders 1)",
		"Claimed 1,500", "  metric ", "Results: " + out}, []string{"waterfall run 5 of 5"})

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{out}, []string{"Waterfall: brochure →", "start ", "█", "Share is the step's part"}},
		{[]string{out, "--format", "md"}, []string{"# Waterfall: brochure →", "| step | from → to |", "```text"}},
		{[]string{out, "--format", "html"}, []string{"<svg", "Where the figure went", "claimed 1,500", "SIMULATED"}},
		{[]string{out, "--format", "csv"}, []string{"step,pin,from,to,config,window,metric,value", "6,metric,"}},
		{[]string{out, "--format", "junit"}, []string{"<testsuites", "w.json#start/seed=3"}},
		{[]string{out, "--metric", "ttft"}, []string{"Metric: TTFT P50 (ms; lower is better), held through every step.", "Skipped metric: held: --metric ttft"}},
	} {
		code, stdout, errOut := runCmd(t, reportCmd, c.args...)
		expectOutput(t, code, stdout, errOut, ExitOK, c.want, nil)
	}
	code, _, errOut = runCmd(t, reportCmd, out, "--metric", "speed")
	expectOutput(t, code, "", errOut, ExitBadInput, nil, []string{`metric "speed"`})
	code, _, errOut = runCmd(t, reportCmd, "../../report/testdata/base.json", "--metric", "ttft")
	expectOutput(t, code, "", errOut, ExitBadInput, nil, []string{"--metric re-renders a waterfall"})
	code, _, errOut = runCmd(t, func(f *Factory) *cobra.Command { return NewCmdCompare(f, nil) }, out, "../../report/testdata/base.json")
	if code != ExitBadInput || !strings.Contains(errOut, "is a waterfall") {
		t.Errorf("compare: exit %d %s", code, errOut)
	}
}
