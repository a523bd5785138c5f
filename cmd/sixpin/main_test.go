package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/testserve"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// TestMain lets a test re-run this binary as sixpin itself (for signals).
func TestMain(m *testing.M) {
	if os.Getenv("SIXPIN_TEST_AS_MAIN") == "1" {
		if n, err := strconv.ParseUint(os.Getenv("SIXPIN_TEST_NOFILE"), 10, 64); err == nil {
			// The open-file limit a user's shell might set (ulimit -n N).
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
				os.Exit(99)
			}
		}
		os.Args = append([]string{"sixpin"}, strings.Fields(os.Getenv("SIXPIN_TEST_ARGS"))...)
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

// sixpin runs the command tree in-process with captured streams.
func sixpin(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: func(k string) string { return env[k] },
		Hard:   context.Background(),
	}
	code = execute(context.Background(), f, args)
	return code, out.String(), errOut.String()
}

func TestValidate(t *testing.T) {
	t.Parallel()
	code, out, errOut := sixpin(t, nil, "validate", "testdata/tiny.yaml", "../../scenarios/agentic-120k.yaml")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"scenario     tiny", "concurrency  closed loop, 2 concurrent streams", "scenario     agentic-120k", "lognormal"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = sixpin(t, nil, "validate", "testdata/bad.yaml")
	if code != ExitBadInput {
		t.Fatalf("bad scenario: exit %d, want %d", code, ExitBadInput)
	}
	for _, want := range []string{
		"testdata/bad.yaml:6:43: pins.output.tokens.max: must be ≥ min (got 10 < 50)",
		"testdata/bad.yaml:7:3: pins.concurrency.streams: required when mode is closed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestUsageErrorsAreBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"run"}, {"run", "a.yaml", "--nope"}, {"run", "missing.yaml"}, {"validate"}, {"profiles", "show", "nope"},
		{"run", "testdata/tiny.yaml", "--server-metrics", "sometimes"}, {"run", "testdata/tiny.yaml", "--server-metrics", "-1s"},
		{"run", "testdata/tiny.yaml", "--kv-fit", "loose"}} {
		if code, _, _ := sixpin(t, nil, args...); code != ExitBadInput {
			t.Errorf("sixpin %v: exit %d, want %d", args, code, ExitBadInput)
		}
	}
}

func TestRunOnBuiltInSimulator(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := sixpin(t, nil, "run", "testdata/tiny.yaml", "--profile", "sim-instant", "-o", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	first, _, _ := strings.Cut(out, "\n")
	if !strings.Contains(first, "built-in simulator") {
		t.Errorf("first line does not say it runs on the simulator: %q", first)
	}
	for _, want := range []string{"PIN CARD", "1 model", "2 prompt", "3 output", "4 concurrency", "5 kv_cache", "6 mix",
		"STEADY (headline) window", "BURST", "per stream, steady", "aggregate output (all streams, steady window)", "goodput (steady window", "Results: " + path} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if strings.Index(out, "PIN CARD") > strings.Index(out, "STEADY") {
		t.Error("the pin card must come before the windows")
	}
	run, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if run.Errors.Requests != 20 || run.Errors.Failed != 0 || !run.Target.Simulated || run.Incomplete {
		t.Errorf("run: %d requests, %d failed, simulated %v, incomplete %v", run.Errors.Requests, run.Errors.Failed, run.Target.Simulated, run.Incomplete)
	}
	if run.Pins.Prompt.Verified != results.Verified || run.Pins.Output.Verified != results.Verified {
		t.Errorf("prompt/output pins not verified: %+v / %+v", run.Pins.Prompt, run.Pins.Output)
	}
	for _, w := range []string{"warmup", "burst", "steady", "all"} {
		if run.Windows[w] == nil {
			t.Errorf("window %s missing", w)
		}
	}
}

// An endpoint given by URL: the API key comes from the environment and
// never appears in output or results.
func TestRunAgainstEndpointKeepsKeySecret(t *testing.T) {
	t.Parallel()
	const secret = "sk-test-7d3f9a1b2c4e5f60718293a4b5c6d7e8"
	s, err := sim.New(sim.Config{Timing: sim.TimingNone, Model: "served-model"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var sawKey atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+secret {
			sawKey.Store(true)
		}
		s.ServeHTTP(w, r)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := sixpin(t, map[string]string{"OPENAI_API_KEY": secret},
		"run", "testdata/tiny.yaml", "--endpoint", srv.URL+"/v1", "--model", "served-model", "--tokenizer", "words", "-o", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !sawKey.Load() {
		t.Error("the server never saw the API key")
	}
	data, _ := os.ReadFile(path)
	for name, text := range map[string]string{"stdout": out, "stderr": errOut, "results": string(data)} {
		if strings.Contains(text, secret) || strings.Contains(text, secret[8:]) {
			t.Errorf("the API key appears in %s", name)
		}
	}
	if !strings.Contains(out, srv.URL+"/v1") || !strings.Contains(string(data), `"api_key_env": "OPENAI_API_KEY"`) {
		t.Errorf("target not recorded:\n%s", out)
	}
}

func TestRunFailsWithoutSuccess(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"down"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "out.json")
	// --ready-timeout 0: a server answering 503 to everything, /health
	// too, would otherwise be waited for as one still loading its model.
	code, out, _ := sixpin(t, nil, "run", "testdata/tiny.yaml", "--endpoint", srv.URL+"/v1", "-o", path, "--requests", "4", "--ready-timeout", "0")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d", code, ExitFailed)
	}
	if !strings.Contains(out, "http_5xx 4") {
		t.Errorf("summary does not classify the failures:\n%s", out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("results not written for a failed run: %v", err)
	}
}

// Ctrl-C: the child stops issuing, lets in-flight requests finish, writes
// its results marked incomplete and exits 1.
func TestInterruptWritesPartialResults(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "partial.json")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SIXPIN_TEST_AS_MAIN=1",
		"SIXPIN_TEST_ARGS=run testdata/slow.yaml --no-progress --grace 30s -o "+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.Contains(lines.Text(), "built-in simulator") {
		t.Fatalf("first line %q", lines.Text())
	}
	waitForRecords(t, path+".spill", 2)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitFailed {
		t.Fatalf("exit: %v, want code %d\nstderr: %s", err, ExitFailed, stderr.String())
	}
	if !strings.Contains(rest.String(), "INCOMPLETE") {
		t.Errorf("summary not marked incomplete:\n%s", rest.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Incomplete bool `json:"incomplete"`
		Errors     struct {
			Requests int            `json:"requests"`
			ByClass  map[string]int `json:"by_class"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	if !run.Incomplete || run.Errors.Requests < 2 {
		t.Errorf("results: incomplete %v, %d requests", run.Incomplete, run.Errors.Requests)
	}
	if run.Errors.ByClass["interrupted"] != 0 {
		t.Errorf("in-flight requests were cut off within the grace period: %v", run.Errors.ByClass)
	}
}

// `sixpin sim` says on stderr where it listens and who can reach it: a
// bare :PORT is this machine only, as for --live and --metrics-addr.
func TestSimCommandServes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw, _ := os.Pipe()
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: pw}, Getenv: os.Getenv, Hard: context.Background()}
	done := make(chan int)
	go func() { done <- execute(ctx, f, []string{"sim", "--addr", ":0", "--profile", "sim-instant"}) }()
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(pr).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case code := <-done:
		t.Fatalf("sim exited %d", code)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("sim said nothing on stderr for a minute")
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/v1 \(this machine only\)`).FindString(line)
	if url == "" {
		t.Fatalf("no loopback URL in %q", line)
	}
	url = strings.Fields(url)[0]
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != "sim-instant" {
		t.Errorf("models = %+v", models)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("sim exit %d", code)
	}
}

// `sixpin sim --tls-cert --tls-key` serves https, HTTP/2 offered as a
// cloud endpoint does; the two flags go together.
func TestSimCommandServesTLS(t *testing.T) {
	t.Parallel()
	cert, key := testserve.SelfSigned(t, t.TempDir())
	var errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}, Getenv: os.Getenv, Hard: context.Background()}
	if code := execute(context.Background(), f, []string{"sim", "--addr", ":0", "--tls-cert", cert}); code != ExitBadInput || !strings.Contains(errOut.String(), "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: exit %d, stderr %q; want 2, naming both flags", code, errOut.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw, _ := os.Pipe()
	f = &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: pw}, Getenv: os.Getenv, Hard: context.Background()}
	done := make(chan int)
	go func() {
		done <- execute(ctx, f, []string{"sim", "--addr", ":0", "--profile", "sim-instant", "--tls-cert", cert, "--tls-key", key})
	}()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	url := regexp.MustCompile(`https://127\.0\.0\.1:\d+/v1`).FindString(line)
	if url == "" {
		cancel()
		t.Fatalf("no https URL in %q", line)
	}
	pem, _ := os.ReadFile(cert)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(url + "/models")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/2.0" {
		t.Errorf("GET /models: %s %s; want 200 over HTTP/2.0", resp.Proto, resp.Status)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Errorf("sim exit %d", code)
	}
}

// `sixpin sim` listens beyond this machine only when --remote says so.
func TestSimCommandLoopbackUnlessRemote(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &errOut}, Getenv: os.Getenv, Hard: context.Background()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // ends a sim that serves after all
	defer cancel()
	code := execute(ctx, f, []string{"sim", "--addr", "0.0.0.0:0", "--profile", "sim-instant"})
	if code != ExitBadInput || !strings.Contains(errOut.String(), "--addr 0.0.0.0:0: not a loopback address") || !strings.Contains(errOut.String(), "--remote") {
		t.Errorf("exit %d, stderr %q; want 2 and the address refused, naming --remote", code, errOut.String())
	}
}

func TestProfilesCommands(t *testing.T) {
	t.Parallel()
	code, out, _ := sixpin(t, nil, "profiles", "list")
	if code != ExitOK || !strings.Contains(out, "sim-local-27b") || !strings.Contains(out, "vllm") {
		t.Errorf("profiles list: %d\n%s", code, out)
	}
	code, out, _ = sixpin(t, nil, "profiles", "show", "llamacpp")
	if code != ExitOK || !strings.Contains(out, "base_url: http://127.0.0.1:8080/v1") {
		t.Errorf("profiles show: %d\n%s", code, out)
	}
}

// A scenario may name its target; flags still win over it.
func TestScenarioTarget(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.json")
	code, out, errOut := sixpin(t, nil, "run", "testdata/targeted.yaml", "-o", path)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.Contains(first, "profile sim-instant") {
		t.Errorf("scenario target ignored: %q", first)
	}
	code, out, _ = sixpin(t, nil, "run", "testdata/targeted.yaml", "--profile", "sim-local-27b", "--requests", "2", "-o", path,
		"--allow-pin-mismatch", "model") // sim-local-27b does not serve the scenario's model
	if first, _, _ := strings.Cut(out, "\n"); code != ExitOK || !strings.Contains(first, "profile sim-local-27b") {
		t.Errorf("--profile did not override the scenario's target: %d %q", code, first)
	}
}
