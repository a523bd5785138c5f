package trace

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// writeTrace writes lines to a file in a temporary directory.
func writeTrace(t *testing.T, name string, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Open and its cursor give what Read gives — the same sessions, in order
// of start, with their indices, and the same summary — whether the file
// streams (its sessions in order of start) or is held in memory (not).
func TestOpenReadsWhatReadReads(t *testing.T) {
	sixpin := func(s string, turn int, start, offset float64, in int) string {
		return fmt.Sprintf(`{"session":%q,"turn":%d,"session_start_s":%g,"offset_s":%g,"input_tokens":%d,"output_tokens":%d}`, s, turn, start, offset, in, in/10+1)
	}
	paths := []string{"testdata/sixpin.jsonl", "testdata/mooncake.jsonl", "testdata/mooncake-sessions.jsonl", "testdata/azure.csv",
		writeTrace(t, "interleaved.jsonl", // in order of start, turns out of order, sessions overlapping
			sixpin("a", 1, 0, 5, 200), sixpin("b", 0, 1, 0, 300), sixpin("a", 0, 0, 0, 100), sixpin("c", 0, 1, 0, 50),
			sixpin("b", 2, 1, 9, 500), sixpin("a", 2, 0, 30, 400), sixpin("b", 1, 1, 4, 400)),
		writeTrace(t, "unsorted.jsonl", sixpin("late", 0, 50, 0, 10), sixpin("early", 0, 2, 0, 20), sixpin("early", 1, 2, 3, 30)),
		writeTrace(t, "mixed.jsonl", // keyed and single requests, both under way at once
			`{"session_id": "s", "timestamp": 0, "input_length": 100, "output_length": 5}`,
			`{"timestamp": 10, "input_length": 7, "output_length": 5}`,
			`{"timestamp": 10, "input_length": 8, "output_length": 5}`,
			`{"session_id": "s", "timestamp": 20, "input_length": 300, "output_length": 5}`),
		writeTrace(t, "azure-unsorted.csv", "TIMESTAMP,ContextTokens,GeneratedTokens", "2023-11-16 18:15:50.0,1,2", "2023-11-16 18:15:46.0,3,4"),
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			c := f.Sessions()
			defer c.Close()
			var got []Session
			for i := 0; ; i++ {
				idx, s, ok := c.Next()
				if !ok {
					break
				}
				if idx != i {
					t.Errorf("session %d has index %d", i, idx)
				}
				got = append(got, s)
			}
			if err := c.Err(); err != nil || !reflect.DeepEqual(got, want.Sessions) {
				t.Errorf("sessions (%v):\n got %+v\nwant %+v", err, got, want.Sessions)
			}
			if sum := want.Summarize(); !reflect.DeepEqual(f.Summary(), sum) {
				t.Errorf("summary:\n got %+v\nwant %+v", f.Summary(), sum)
			}
		})
	}
}

// heapAfter is the live heap once f has run, holding what it returns.
func heapAfter(f func() any) (uint64, any) {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	v := f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	return b.HeapAlloc - min(a.HeapAlloc, b.HeapAlloc), v
}

// Opening a trace holds memory that does not grow with its rows: four
// times the requests — single ones (Mooncake), or the turns of as many
// sessions (sixpin) — hold no more.
func TestOpenHoldsNoRows(t *testing.T) {
	mooncake := func(n int) string {
		lines := make([]string, n)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"timestamp": %d, "input_length": %d, "output_length": 20, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8]}`, i, 4000+i%100)
		}
		return writeTrace(t, fmt.Sprintf("m%d.jsonl", n), lines...)
	}
	sixpin := func(turns int) string {
		var lines []string
		for s := range 100 {
			for k := range turns {
				lines = append(lines, fmt.Sprintf(`{"session":"s%d","turn":%d,"session_start_s":%d,"offset_s":%d,"input_tokens":%d,"output_tokens":9}`, s, k, s, k, 100*(k+1)))
			}
		}
		return writeTrace(t, fmt.Sprintf("s%d.jsonl", turns), lines...)
	}
	for name, paths := range map[string][2]string{"mooncake": {mooncake(5_000), mooncake(20_000)}, "sixpin": {sixpin(50), sixpin(200)}} {
		var held [2]uint64
		for i, path := range paths {
			var f any
			held[i], f = heapAfter(func() any {
				f, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				return f
			})
			runtime.KeepAlive(f)
		}
		if held[1] > held[0]+256<<10 {
			t.Errorf("%s: opening 4× the requests holds %d KB against %d KB", name, held[1]>>10, held[0]>>10)
		}
	}
}

// A cursor over a file in order of start holds only the sessions under
// way: reading sessions one after another, never more than one.
func TestCursorHoldsOnlySessionsUnderWay(t *testing.T) {
	var lines []string
	for s := range 50 {
		for k := range 5 {
			lines = append(lines, fmt.Sprintf(`{"session":"s%d","turn":%d,"session_start_s":%d,"offset_s":%d,"input_tokens":10,"output_tokens":1}`, s, k, 10*s, k))
		}
	}
	f, err := Open(writeTrace(t, "seq.jsonl", lines...))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Sessions()
	defer c.Close()
	n, most := 0, 0
	for {
		_, s, ok := c.Next()
		if !ok {
			break
		}
		n++
		most = max(most, len(c.queue))
		if len(s.Turns) != 5 {
			t.Fatalf("session %q has %d turns", s.ID, len(s.Turns))
		}
	}
	if n != 50 || most > 1 || c.Err() != nil {
		t.Errorf("%d sessions, at most %d held (%v); want 50, 1", n, most, c.Err())
	}
}
