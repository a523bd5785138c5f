package trace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// seed adds the trace files matching globs to f's corpus.
func seed(f *testing.F, globs ...string) {
	for _, glob := range globs {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
}

// fuzzReader feeds one reader arbitrary bytes: it returns a trace or an
// error, never panics, and a trace it returns keeps its bounds.
func fuzzReader(t *testing.T, format string, data []byte) {
	read, fromFirst := rowsOf(format)
	tr, err := collect("fuzz", read, fromFirst, bufio.NewReader(bytes.NewReader(data)))
	if err != nil {
		return
	}
	for _, s := range tr.Sessions {
		if s.Start < 0 {
			t.Fatalf("session %q starts at %v", s.ID, s.Start)
		}
		for _, u := range s.Turns {
			if u.InputTokens < 0 || u.OutputTokens < 0 || u.InputTokens > 10_000_000 || u.OutputTokens > 10_000_000 || u.Offset < 0 || u.Think < 0 {
				t.Fatalf("session %q: turn %+v out of bounds", s.ID, u)
			}
		}
	}
}

// The trace readers' fuzz targets; in CI they run over their seed corpus
// as normal tests (go test -fuzz FuzzReadSixpin ./trace/ explores beyond).
func FuzzReadSixpin(f *testing.F) {
	seed(f, "testdata/sixpin.jsonl", "testdata/bad/sixpin-*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, FormatSixpin, data) })
}

func FuzzReadMooncake(f *testing.F) {
	seed(f, "testdata/mooncake*.jsonl", "testdata/bad/mooncake-*.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, FormatMooncake, data) })
}

func FuzzReadAzure(f *testing.F) {
	seed(f, "testdata/azure.csv", "testdata/bad/azure-*.csv")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, FormatAzure, data) })
}

func FuzzReadWeka(f *testing.F) {
	seed(f, "testdata/weka*.json", "testdata/bad/weka-*.json")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzReader(t, FormatWeka, data) })
}

// FuzzDecode feeds Decode (format detection, gzip, then a reader).
func FuzzDecode(f *testing.F) {
	seed(f, "testdata/*", "testdata/bad/*")
	f.Fuzz(func(t *testing.T, data []byte) { _, _ = Decode("fuzz", bytes.NewReader(data)) })
}
