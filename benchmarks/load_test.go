package benchmarks

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// binary builds sixpin once per test process (or uses $SIXPIN_BIN).
func binary(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("SIXPIN_BIN"); p != "" {
		return p
	}
	out := filepath.Join(b.TempDir(), "sixpin")
	cmd := exec.Command("go", "build", "-o", out, "../cmd/sixpin")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("build sixpin: %v", err)
	}
	return out
}

// serveSim starts `sixpin sim` with profile, and flags, in its own
// process and returns its base URL.
func serveSim(b *testing.B, bin, profile string, flags ...string) string {
	b.Helper()
	cmd := exec.Command(bin, append([]string{"sim", "--addr", "127.0.0.1:0", "--profile", profile}, flags...)...)
	first := &firstLine{w: os.Stderr, line: make(chan string, 1)} // where it listens
	cmd.Stderr = first
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	var line string
	select {
	case line = <-first.line:
	case <-time.After(time.Minute):
		b.Fatal("sim: no line on stderr within a minute")
	}
	url := regexp.MustCompile(`https?://\S+/v1`).FindString(line)
	if url == "" {
		b.Fatalf("sim printed no URL: %q", line)
	}
	return url
}

// firstLine passes what it is written to w, and sends its first line on
// line.
type firstLine struct {
	w    io.Writer
	buf  []byte
	line chan string
	sent bool
}

func (f *firstLine) Write(p []byte) (int, error) {
	if !f.sent {
		f.buf = append(f.buf, p...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.line <- string(f.buf[:i])
			f.sent, f.buf = true, nil
		}
	}
	return f.w.Write(p)
}

// usage is what a `sixpin run` process used.
type usage struct {
	rss int64         // peak resident memory, bytes
	cpu time.Duration // user + system CPU time
}

// run executes `sixpin run` with args and returns its results and what
// the client process used.
func run(b *testing.B, bin string, args ...string) (*results.Run, usage) {
	b.Helper()
	return startRun(b, bin, nil, args...)()
}

// startRun starts `sixpin run` with args, and env added to this
// process's environment; the function it returns waits for the run to
// end and returns its results and what the process used.
func startRun(b *testing.B, bin string, env []string, args ...string) func() (*results.Run, usage) {
	b.Helper()
	out := filepath.Join(b.TempDir(), "results.json")
	cmd := exec.Command(bin, append([]string{"run", "--no-progress", "-o", out}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = nil
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("sixpin run %v: %v", args, err)
	}
	return func() (*results.Run, usage) {
		b.Helper()
		// Exit 1 with results written is a run sixpin judged invalid or
		// failed (on a busy machine: its own send-lag bound, say): the
		// benchmark still reads it and checks its own claim.
		err := cmd.Wait()
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
			b.Fatalf("sixpin run %v: %v", args, err)
		}
		var u usage
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.rss = ru.Maxrss * 1024 // KiB on Linux
		}
		u.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		res, rerr := results.ReadFile(out)
		if rerr != nil {
			b.Fatalf("sixpin run %v: %v; results: %v", args, err, rerr)
		}
		if err != nil {
			b.Logf("sixpin run %v exited 1: valid %v %q", args, res.Valid, res.Invalid)
		}
		return res, u
	}
}

// BenchmarkStreams10k: one sixpin process holds 10,000 concurrent streams
// against the simulator with no modelled delay (claim: peak RSS ≤ 24 KiB
// a stream, the whole process counted, and no client-side errors).
func BenchmarkStreams10k(b *testing.B) {
	bin := binary(b)
	url := serveSim(b, bin, "sim-instant")
	for b.Loop() {
		res, u := run(b, bin, "c10k.yaml", "--profile", "llamacpp", "--endpoint", url, "--model", "sim-instant")
		rss := u.rss
		st := res.Windows[results.WindowSteady]
		b.ReportMetric(float64(rss)/(1<<20), "rss_MiB")
		b.ReportMetric(st.MeanInFlight, "in_flight")
		// A connect that timed out waited in the server's full accept
		// queue: the simulator, sharing two cores with 10,000 streams,
		// takes ~500 connections a second while it serves, and a dial
		// that meets the queue full for its 10 s fails. That is the
		// server's failure, told apart; any other is sixpin's.
		acceptQueue := 0
		if n := res.Errors.ByClass[string(record.ErrConnect)]; n > 0 && allSay(res.Errors.Examples[string(record.ErrConnect)], "i/o timeout") {
			acceptQueue = n
		}
		b.ReportMetric(float64(res.Errors.Failed-acceptQueue), "failed")
		b.ReportMetric(float64(acceptQueue), "server_connect_timeouts")
		b.ReportMetric(float64(res.Errors.Requests), "requests")
		b.ReportMetric(st.AggregateOutputTokS, "agg_tok/s")
		if res.Errors.Failed > acceptQueue {
			b.Errorf("%d of %d requests failed: %v; for example %v", res.Errors.Failed, res.Errors.Requests, res.Errors.ByClass, res.Errors.Examples)
		} else if acceptQueue > 0 {
			b.Logf("%d of %d connects timed out in the simulator's full accept queue", acceptQueue, res.Errors.Requests)
		}
		// The goal: 24 KiB a stream, the whole process counted.
		perStream := float64(rss) / 1024 / float64(10000)
		b.ReportMetric(perStream, "KiB/stream")
		if perStream > 24 {
			b.Errorf("peak RSS %d MiB: %.1f KiB a stream, more than 24", rss>>20, perStream)
		}
	}
}

// scenarioFile writes a scenario's source to a file of its own and
// returns its path.
func scenarioFile(b *testing.B, src string) string {
	path := filepath.Join(b.TempDir(), "scenario.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// allSay reports whether every message holds s (and there is one).
func allSay(msgs []string, s string) bool {
	for _, m := range msgs {
		if !strings.Contains(m, s) {
			return false
		}
	}
	return len(msgs) > 0
}

// BenchmarkOpenLoop2k: open loop at 2,000 req/s of short requests delivers
// within 1% of the target rate, and the run reports the achieved rate.
func BenchmarkOpenLoop2k(b *testing.B) {
	bin := binary(b)
	url := serveSim(b, bin, "sim-instant")
	for b.Loop() {
		start := time.Now()
		res, _ := run(b, bin, "open-2k.yaml", "--profile", "llamacpp", "--endpoint", url, "--model", "sim-instant")
		s := res.Schedule
		if s == nil {
			b.Fatal("no schedule report for an open-loop run")
		}
		off := (s.AchievedRateRPS - s.TargetRateRPS) / s.TargetRateRPS * 100
		b.ReportMetric(s.AchievedRateRPS, "achieved_rps")
		b.ReportMetric(off, "off_%")
		if s.LagMs != nil {
			b.ReportMetric(s.LagMs.P99, "lag_p99_ms")
		}
		b.ReportMetric(float64(res.Errors.Failed), "failed")
		if off < -1 || off > 1 {
			b.Errorf("achieved %.1f req/s, %.2f%% off the target %g (run took %s)", s.AchievedRateRPS, off, s.TargetRateRPS, time.Since(start))
		}
		if res.Errors.Failed > 0 {
			b.Errorf("%d requests failed: %v", res.Errors.Failed, res.Errors.ByClass)
		}
	}
}
