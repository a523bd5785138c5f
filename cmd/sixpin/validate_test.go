package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/internal/bounds"
)

// validate checks traces and profiles as strictly as scenarios: files
// given directly (by name and keys), --profile and --trace, and a
// scenario's trace with it.
func TestValidateTracesAndProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	profile := write("mine.yaml", "kind: vllm\nbase_url: https://alice:s3cret@gpu.example/v1\nheaders: {X-Team: ml}\n")
	empty := write("empty.yaml", "")
	passwd := write("passwd", "root:x:0:0:root:/root:/bin/bash\n")
	long := write("long.yaml", "pins:\n  model: {name: m}\n  prompt: {tokens: 100}\n  output: {tokens: 10}\n  concurrency: {mode: closed, streams: \""+strings.Repeat("x", 1<<20)+"\"}\nrequests: 1\n")
	replay := write("replay.yaml", "pins:\n  model: {name: m}\nworkload: {kind: trace, file: "+abs(t, "../../trace/testdata/bad/sixpin-output-1e12.jsonl")+"}\n")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"a trace given directly", []string{"validate", "../../trace/testdata/mooncake.jsonl"}, ExitOK,
			[]string{"(mooncake format)", "4 requests in 4 sessions", "shared prompt blocks of 512 tokens"}, nil},
		{"--trace", []string{"validate", "--trace", "../../trace/testdata/azure.csv"}, ExitOK, []string{"(azure format)"}, nil},
		{"a bad trace", []string{"validate", "../../trace/testdata/bad/mooncake-timestamp-1e300.jsonl"}, ExitBadInput, nil,
			[]string{"mooncake-timestamp-1e300.jsonl:1:15: timestamp: must be ≤ 3,155,760,000,000 ms, a century (got 1e+300)"}},
		{"a profile given directly", []string{"validate", profile}, ExitOK,
			[]string{"profile      mine", "vllm at https://[redacted]@gpu.example/v1", "declares     1 header(s)"}, nil},
		{"--profile NAME", []string{"validate", "--profile", "vllm", "--profile", "sim-local-27b"}, ExitOK,
			[]string{"profile      vllm (embedded)", "kind         simulator"}, nil},
		{"a bad profile", []string{"validate", "--profile", "../../profiles/testdata/bad/header-crlf.yaml"}, ExitBadInput, nil,
			[]string{"header-crlf.yaml:4:11: headers.X-Team: must not hold a line break"}},
		{"an empty profile says profile", []string{"validate", "--profile", empty}, ExitBadInput, nil,
			[]string{"empty.yaml: empty file: want a profile mapping"}},
		{"a file that is no profile is not echoed", []string{"validate", "--profile", passwd}, ExitBadInput, nil,
			[]string{"passwd:1:1: not a profile file: want a mapping (name, kind, base_url, ...), got a string"}},
		{"a scenario's trace", []string{"validate", replay}, ExitBadInput, nil,
			[]string{"replay.yaml:3:31: workload.file: ", "sixpin-output-1e12.jsonl:1:73: output_tokens: must be ≤ 10,000,000 tokens (got 1000000000000)"}},
		{"a megabyte scalar is cut short", []string{"validate", long}, ExitBadInput, nil,
			[]string{`long.yaml:5:40: pins.concurrency.streams: must be an integer (got "` + strings.Repeat("x", 80) + `"…)`}},
		{"nothing to validate", []string{"validate"}, ExitBadInput, nil, []string{"validate needs a FILE, --profile or --trace"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := sixpin(t, nil, c.args...)
			expectOutput(t, code, out, errOut, c.code, c.stdout, c.stderr)
			if strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, "root:x") || len(errOut) > 4000 {
				t.Errorf("output echoes what it must not (%d bytes of stderr)", len(errOut))
			}
		})
	}
	code, out, _ := sixpin(t, nil, "profiles", "show", profile)
	if code != ExitOK || strings.Contains(out, "s3cret") || !strings.Contains(out, "https://[redacted]@gpu.example/v1") {
		t.Errorf("profiles show: exit %d\n%s", code, out)
	}
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// `sixpin validate` of a scenario with a list past bounds.Values refuses
// it for a few MB: neither telling a profile from a scenario nor loading
// it builds the YAML tree first (a 26 MB file of 13M values cost 3.6 GB).
// Not parallel: it counts the whole process's allocations.
func TestValidateRefusesTooManyValuesCheaply(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	src := "pins:\n  model: {name: m}\n  prompt: {tokens: {dist: empirical, values: [" + strings.Repeat("1, ", bounds.Values) + "1]}}\n" +
		"  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 1}\nrequests: 1\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var code int
	var errOut string
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	code, _, errOut = sixpin(t, nil, "validate", path)
	runtime.ReadMemStats(&b)
	if n := b.TotalAlloc - a.TotalAlloc; n > 5*uint64(len(src)) {
		t.Errorf("validate allocated %d MB for a %d MB file", n>>20, len(src)>>20)
	}
	if code != ExitBadInput || !strings.Contains(errOut, "big.yaml:3:46: a list of more than 1,000,000 items") {
		t.Errorf("exit %d, stderr %.300s", code, errOut)
	}
}
