package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Commands that run no load keep the default signal behaviour: Ctrl-C
// (or SIGTERM) stops them at once, even while they block on input. Only
// the commands that run load trap the signals (TestInterruptWritesPartialResults).
// Each child blocks reading a FIFO that is held open and never written;
// before the fix it trapped the signal and went on waiting.
func TestCommandsWithoutLoadStopAtOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args func(fifo string) string
		sig  syscall.Signal
	}{
		{"validate", func(f string) string { return "validate " + f }, syscall.SIGINT},
		{"validate (SIGTERM)", func(f string) string { return "validate " + f }, syscall.SIGTERM},
		{"report", func(f string) string { return "report " + f }, syscall.SIGINT},
		{"compare", func(f string) string { return "compare " + f + " " + f }, syscall.SIGINT},
		{"gate", func(f string) string { return "gate --baseline " + f + " " + f }, syscall.SIGINT},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fifo := filepath.Join(t.TempDir(), "input.yaml")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "SIXPIN_TEST_AS_MAIN=1", "SIXPIN_TEST_ARGS="+c.args(fifo))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Hold the FIFO open once the child waits on it, so that it
			// blocks reading, never seeing its end.
			var w *os.File
			for deadline := time.Now().Add(30 * time.Second); w == nil; {
				f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				switch {
				case err == nil:
					w = f
				case time.Now().After(deadline):
					cmd.Process.Kill()
					t.Fatalf("the child never opened its input: %v\n%s", err, stderr.String())
				default:
					time.Sleep(10 * time.Millisecond)
				}
			}
			defer w.Close()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatalf("exit: %v, want death by %v", err, c.sig)
				}
				if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != c.sig {
					t.Errorf("exit %v, want death by %v\n%s", err, c.sig, stderr.String())
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%s went on after %v (it trapped the signal)\n%s", c.name, c.sig, stderr.String())
			}
		})
	}
}

// An unknown command, or an unknown subcommand of a command group, is bad
// input (exit 2), as the README says; so is every other usage error.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, `unknown command "nope" for "sixpin"`},
		{[]string{"valdate", "x.yaml"}, `unknown command "valdate" for "sixpin" (did you mean "validate"?)`},
		{[]string{"profiles", "nope"}, `unknown command "nope" for "sixpin profiles"`},
		{[]string{"analyze", "cursor"}, `unknown command "cursor" for "sixpin analyze"`},
		{[]string{"help", "nope"}, `unknown help topic "nope"`},
		{[]string{"help", "profiles", "nope"}, `unknown help topic "profiles nope"`},
		{[]string{"--nope"}, "unknown flag: --nope"},
		{[]string{"report", "--format"}, "flag needs an argument"},
		{[]string{"gate", "--baseline", "a.json", "b.json", "--resamples", "many"}, "invalid argument"},
	} {
		code, _, errOut := sixpin(t, nil, c.args...)
		if code != ExitBadInput || !strings.Contains(errOut, c.want) {
			t.Errorf("sixpin %v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, ExitBadInput, c.want)
		}
	}
	for _, args := range [][]string{{}, {"profiles"}, {"analyze"}, {"--help"}, {"profiles", "--help"}, {"help"}, {"help", "run"}, {"help", "profiles", "list"}} {
		if code, out, errOut := sixpin(t, nil, args...); code != ExitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("sixpin %v: exit %d, want help and 0\n%s%s", args, code, out, errOut)
		}
	}
}
