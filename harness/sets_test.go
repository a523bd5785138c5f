package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/results"
)

// fixedProfile writes a simulator profile with load-independent timing:
// each stream gets its first token after ttft and one every itl.
func fixedProfile(t *testing.T, name, ttft, itl string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	src := "name: " + name + "\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\n" +
		"sim: {model: m, timing: fixed, fixed: {ttft: " + ttft + ", itl: " + itl + "}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readSet(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A sweep runs one point per value, writes them in one file, and plots
// them, against two simulator profiles: with load-independent timing,
// aggregate throughput grows with the streams while each stream's speed
// holds; with none, every point is still a valid run. Not parallel:
// against the instant simulator a test beside it can slow the client
// until its one stream is busy less than half the time, and the point is
// invalid.
func TestSweepEndToEnd(t *testing.T) {
	for _, c := range []struct {
		name, profile string
		grows         bool
	}{{"fixed timing", fixedProfile(t, "fixed", "20ms", "5ms"), true}, {"no delay", "sim-instant", false}} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sweep.json")
			o, err := run(t, Config{ScenarioPath: "testdata/sweep.yaml", Profile: c.profile, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			set := o.Set
			if set == nil || set.Kind != results.SetSweep || len(set.Runs) != 3 || set.Pin != "concurrency.streams" {
				t.Fatalf("set %+v", set)
			}
			var agg []float64
			for i, r := range set.Runs {
				if r.Pins.Concurrency.Declared.Streams != int(set.Values[i]) || !r.Valid {
					t.Errorf("point %d: streams %d, valid %v %v", i, r.Pins.Concurrency.Declared.Streams, r.Valid, r.Invalid)
				}
				agg = append(agg, r.Windows[results.WindowAll].AggregateOutputTokS)
			}
			if c.grows && !(agg[0] < agg[1] && agg[1] < agg[2]) {
				t.Errorf("aggregate throughput %v does not grow with the streams", agg)
			}
			if !strings.Contains(string(readSet(t, out)), `"schema": "sixpin/set/v1"`) {
				t.Error("set file lacks its schema")
			}
			page := string(readSet(t, strings.TrimSuffix(out, ".json")+".html"))
			if !strings.Contains(page, "<svg") || !strings.Contains(page, "Aggregate vs per-stream throughput") {
				t.Error("sweep page lacks its Pareto plot")
			}
		})
	}
}

// A bake-off runs one scenario against two simulator profiles and writes
// one report: the shared pins, each vendor's figures, and the usable view
// with the declared intelligence gate.
func TestBakeoffEndToEnd(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bo")
	fast, slow := fixedProfile(t, "fast", "10ms", "2ms"), fixedProfile(t, "slow", "50ms", "10ms")
	cfg := BakeoffConfig{Config: quiet(t, Config{}), Profiles: []string{fast, slow}, Dir: dir,
		Gates: map[string]string{"fast": "fail", "slow": "pass"}}
	o, err := Bakeoff(t.Context(), t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Set.Runs) != 2 || o.Set.Profiles[0] != "fast" || o.Set.Profiles[1] != "slow" {
		t.Fatalf("set %+v", o.Set)
	}
	for _, f := range []string{"fast.json", "slow.json", "bakeoff.json", "bakeoff.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	md := string(readSet(t, filepath.Join(dir, "bakeoff.md")))
	for _, want := range []string{"Pins shared by the 2 profiles", "| fast | fail |", "| slow | pass |", "intelligence gate"} {
		if !strings.Contains(md, want) {
			t.Errorf("bakeoff.md lacks %q:\n%s", want, md)
		}
	}
	// The fast vendor wins throughput (★) even though it fails the gate.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| fast | fail |") && !strings.Contains(line, "tok/s ★") {
			t.Errorf("fast vendor's throughput not marked best: %s", line)
		}
	}
}

func TestRepeat(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "rep.json")
	o, err := run(t, Config{ScenarioPath: "testdata/exact.yaml", Profile: fixedProfile(t, "fixed", "10ms", "2ms"), Output: out, Repeat: 3})
	if err != nil {
		t.Fatal(err)
	}
	if o.Set == nil || o.Set.Kind != results.SetRepeat || len(o.Set.Runs) != 3 {
		t.Fatalf("set %+v", o.Set)
	}
	if s0, s2 := o.Set.Runs[0].Scenario.Seed, o.Set.Runs[2].Scenario.Seed; s2 != s0+2 {
		t.Errorf("seeds %d … %d, want consecutive", s0, s2)
	}
}

// throttledProfile writes a simulator profile like fixedProfile's whose
// server allows perMinute requests a minute and answers 429 beyond.
func throttledProfile(t *testing.T, name string, perMinute int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".yaml")
	src := "name: " + name + "\nkind: simulator\noutput_control: ignore_eos\ntokenizer: words\n" +
		"sim: {model: m, timing: fixed, fixed: {ttft: 10ms, itl: 2ms}, rate_limits: {requests_per_minute: " + strconv.Itoa(perMinute) + "}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A bake-off that ran whole says what it found: every vendor kept is no
// error; a vendor throttled into invalidity beside a valid one is
// ErrVendorLost (the bake-off ran; it lost a vendor), with both memos
// written; every vendor lost is ErrRunFailed (there is nothing to
// compare).
func TestBakeoffOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		profiles func(t *testing.T) []string
		want     error
	}{
		{"all kept", func(t *testing.T) []string {
			return []string{fixedProfile(t, "a", "10ms", "2ms"), fixedProfile(t, "b", "20ms", "3ms")}
		}, nil},
		{"one throttled", func(t *testing.T) []string {
			return []string{fixedProfile(t, "a", "10ms", "2ms"), throttledProfile(t, "limited", 2)}
		}, ErrVendorLost},
		{"all throttled", func(t *testing.T) []string {
			return []string{throttledProfile(t, "x", 2), throttledProfile(t, "y", 2)}
		}, ErrRunFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "bo")
			cfg := BakeoffConfig{Config: quiet(t, Config{TimeScale: 0.01}), Profiles: c.profiles(t), Dir: dir}
			o, err := Bakeoff(t.Context(), t.Context(), cfg)
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if c.want == ErrVendorLost && errors.Is(err, ErrRunFailed) {
				t.Errorf("error %v is also a failed run", err)
			}
			if o == nil || len(o.Set.Runs) != 2 {
				t.Fatalf("outcome %+v: want both vendors run", o)
			}
			for _, f := range []string{"bakeoff.md", "bakeoff.html"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("missing %s", f)
				}
			}
		})
	}
}

// bakeoff --repeat N runs every profile N times, interleaved (a round of
// every profile per seed, so that drift falls on all alike), with seeds
// seed…seed+N−1 shared across profiles, and keeps each run's results.
func TestBakeoffRepeat(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bo")
	a, b := fixedProfile(t, "a", "10ms", "2ms"), fixedProfile(t, "b", "20ms", "3ms")
	cfg := BakeoffConfig{Config: quiet(t, Config{TimeScale: 0.1, Repeat: 2}), Profiles: []string{a, b}, Dir: dir}
	o, err := Bakeoff(t.Context(), t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	set := o.Set
	if got := strings.Join(set.Profiles, ","); got != "a,b,a,b" || len(set.Runs) != 4 {
		t.Fatalf("profiles %s, %d runs: want a round of both per seed", got, len(set.Runs))
	}
	s0 := set.Runs[0].Scenario.Seed
	for i, r := range set.Runs {
		if want := s0 + int64(i/2); r.Scenario.Seed != want {
			t.Errorf("run %d seed %d, want %d", i, r.Scenario.Seed, want)
		}
	}
	for _, f := range []string{"a.1.json", "a.2.json", "b.1.json", "b.2.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if md := string(readSet(t, filepath.Join(dir, "bakeoff.md"))); !strings.Contains(md, "2 runs each") || !strings.Contains(md, " ± ") {
		t.Errorf("bakeoff.md has no intervals:\n%s", md)
	}
}

// A repeat count below one is bad input.
func TestBakeoffRepeatRefused(t *testing.T) {
	t.Parallel()
	cfg := BakeoffConfig{Config: quiet(t, Config{Repeat: -1}), Profiles: []string{"sim-instant", "sim-instant"}, Dir: t.TempDir()}
	if _, err := Bakeoff(t.Context(), t.Context(), cfg); !errors.Is(err, ErrBadInput) {
		t.Errorf("error %v, want bad input", err)
	}
}
