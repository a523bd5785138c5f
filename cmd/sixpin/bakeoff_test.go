package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bakeoffScenario is a short closed-loop scenario every test profile
// below serves.
const bakeoffScenario = `name: bo
seed: 5
pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 20, max: 300}}
  output: {tokens: 24, exact: true}
  concurrency: {mode: closed, streams: 2}
requests: 16
`

// boProfile writes a simulator profile with load-independent timing;
// perMinute > 0 rate-limits its server to that many requests a minute.
func boProfile(t *testing.T, dir, name string, perMinute string) string {
	t.Helper()
	limit := ""
	if perMinute != "" {
		limit = ", rate_limits: {requests_per_minute: " + perMinute + "}"
	}
	path := filepath.Join(dir, name+".yaml")
	src := "name: " + name + "\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\n" +
		"sim: {model: m, timing: fixed, fixed: {ttft: 10ms, itl: 2ms}" + limit + "}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The bake-off's exit code tells CI what happened: 0 every vendor kept;
// 3 it ran and lost a vendor (throttled into invalidity) while another
// stands, the memo written; 1 no vendor stands; 2 bad input.
func TestBakeoffExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sc := filepath.Join(dir, "bo.yaml")
	if err := os.WriteFile(sc, []byte(bakeoffScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	fast, slow := boProfile(t, dir, "fast", ""), boProfile(t, dir, "slow", "")
	lim1, lim2 := boProfile(t, dir, "limited", "2"), boProfile(t, dir, "limited-too", "2")
	for _, c := range []struct {
		name string
		// args are profile files (each given as --profile) and flags.
		args   []string
		code   int
		stderr string
	}{
		{"every vendor kept", []string{fast, slow}, ExitOK, ""},
		{"one vendor throttled", []string{fast, lim1}, ExitVendorLost, "bake-off lost a vendor: limited: invalid"},
		{"no vendor stands", []string{lim1, lim2}, ExitFailed, "no vendor's figures stand"},
		{"one profile", []string{fast}, ExitBadInput, "at least two --profile"},
		{"no run", []string{fast, slow, "--repeat", "0"}, ExitBadInput, "--repeat 0: want 1 or more"},
		{"an unknown profile, refused before any vendor runs", []string{fast, filepath.Join(dir, "nowhere.yaml")}, ExitBadInput, "nowhere.yaml"},
		{"repeated", []string{fast, slow, "--repeat", "2"}, ExitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "bo")
			args := []string{"bakeoff", sc, "--time-scale", "0.01", "--no-progress", "-o", out}
			for _, p := range c.args {
				if strings.HasPrefix(p, "-") || !strings.HasSuffix(p, ".yaml") {
					args = append(args, p) // a flag or its value
					continue
				}
				args = append(args, "--profile", p)
			}
			code, stdout, stderr := sixpin(t, nil, args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s", code, c.code, c.stderr, stderr)
			}
			if c.code == ExitBadInput {
				if _, err := os.Stat(filepath.Join(out, "fast.json")); err == nil {
					t.Error("bad input, but a vendor ran")
				}
				return
			}
			if strings.Contains(strings.Join(args, " "), "--repeat 2") && !strings.Contains(stdout, "2 runs each (seeds 5–6)") {
				t.Errorf("stdout does not say it repeated:\n%s", stdout)
			}
			if !strings.Contains(stdout, "VERDICT: for bo at 2 streams: ") {
				t.Errorf("stdout lacks the verdict:\n%s", stdout)
			}
			for _, f := range []string{"bakeoff.json", "bakeoff.md", "bakeoff.html"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Errorf("exit %d without %s", code, f)
				}
			}
		})
	}
}
