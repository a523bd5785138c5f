package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmitCollectRoundTrip: files of every ending come out of a log that
// interleaves other output byte for byte.
func TestEmitCollectRoundTrip(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"run-shard-0.json": "{\n  \"a\": 1\n}\n",
		"run-shard-1.json": "{\"no\": \"newline at the end\"}",
		"run-shard-2.json": "",
		"run-shard-3.json": "\n\nblank lines\r\nand a CR\n\n",
		"run-shard-4.json": strings.Repeat("x", 200_000) + "\n" + strings.Repeat("y", 70_000),
	}
	for name, body := range files {
		write(t, filepath.Join(src, name), []byte(body))
	}
	var log bytes.Buffer
	log.WriteString("\nsixpin: interrupted (interrupt again to stop at once)\n")
	if err := Emit(&log, filepath.Join(src, "run-shard-0.json")); err != nil {
		t.Fatal(err)
	}
	log.WriteString("some other line\n")
	if err := Emit(&log, filepath.Join(src, "run-shard-[1-4].json")); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	got, err := Collect(&log, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("collected %d files, want %d", len(got), len(files))
	}
	for name, body := range files {
		data, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != body {
			t.Errorf("%s: %q, want %q", name, trunc(data), trunc([]byte(body)))
		}
	}
}

func trunc(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

// TestCollectPrefixed reads `kubectl logs --prefix` output.
func TestCollectPrefixed(t *testing.T) {
	src := write(t, filepath.Join(t.TempDir(), "r-shard-0.json"), []byte("{\n  \"x\": 2\n}\n"))
	var emitted bytes.Buffer
	if err := Emit(&emitted, src); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, l := range strings.SplitAfter(emitted.String(), "\n") {
		if l != "" {
			log.WriteString("[pod/job-0-abc/results] " + l)
		}
	}
	dst := t.TempDir()
	if _, err := Collect(strings.NewReader(log.String()), dst); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dst, "r-shard-0.json")); string(data) != "{\n  \"x\": 2\n}\n" {
		t.Errorf("got %q", data)
	}
}

// TestCollectRefuses: a cut-short, altered, missing or clashing file is
// reported by name and not written; the good ones are.
func TestCollectRefuses(t *testing.T) {
	src := t.TempDir()
	good := write(t, filepath.Join(src, "good.json"), []byte("{\"ok\": true}\n"))
	bad := write(t, filepath.Join(src, "bad.json"), []byte("{\"v\": 1}\n"))
	var g, b bytes.Buffer
	Emit(&g, good)
	Emit(&b, bad)
	block := b.String()
	var other bytes.Buffer
	Emit(&other, write(t, filepath.Join(t.TempDir(), "bad.json"), []byte("{\"v\": 2}\n")))
	cases := map[string]struct{ log, want string }{
		"cut short":  {block[:strings.Index(block, "-----END")], "bad.json: the log ends inside it"},
		"altered":    {strings.Replace(block, `"v": 1`, `"v": 2`, 1), "bad.json: its bytes do not match their sha256"},
		"longer":     {strings.Replace(block, `{"v": 1}`, "{\"v\": 1}\n{\"w\": 2}", 1), "bad.json: more bytes than its BEGIN line's 9"},
		"missing":    {"-----SIXPIN FILE MISSING name=bad.json-----\n", "bad.json: missing in its pod"},
		"bad header": {"-----BEGIN SIXPIN FILE name=../x bytes=1 sha256=00-----\n", "a malformed BEGIN line"},
		"clash":      {block + other.String(), "bad.json: two different files of that name"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dst := t.TempDir()
			got, err := Collect(strings.NewReader(g.String()+c.log), dst)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if name == "clash" {
				got = got[:1] // the first bad.json was fine when it came
			}
			if len(got) != 1 || filepath.Base(got[0].Path) != "good.json" {
				t.Errorf("collected %+v, want good.json alone", got)
			}
			entries, _ := os.ReadDir(dst)
			for _, e := range entries {
				if e.Name() != "good.json" && !(name == "clash" && e.Name() == "bad.json") {
					t.Errorf("left %s in the directory", e.Name())
				}
			}
		})
	}

	if _, err := Collect(strings.NewReader("just a log\n"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "no sixpin files in the input") {
		t.Errorf("a log without files: %v", err)
	}

	// The same file twice (a sidecar that printed, restarted, printed) is
	// one file.
	dst := t.TempDir()
	if got, err := Collect(strings.NewReader(block+block), dst); err != nil || len(got) != 1 {
		t.Errorf("the same file twice: %+v, %v", got, err)
	}
}

func TestEmitMissing(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	err := Emit(&log, filepath.Join(dir, "gone.json"))
	if err == nil || log.String() != "-----SIXPIN FILE MISSING name=gone.json-----\n" {
		t.Errorf("log %q, error %v", log.String(), err)
	}
	log.Reset()
	if err := Emit(&log, filepath.Join(dir, "*.json")); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("empty glob: %v", err)
	}
}
