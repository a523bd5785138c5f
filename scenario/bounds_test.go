package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
)

// The bad-scenario corpus of bounds: every count, length, rate and time
// beyond its sane bound is refused at load with file:line:col and the
// field (before, 1e18-token prompts panicked in the prompt builder,
// 1e11 streams spawned goroutines for ever, 1e300 trace times overflowed
// time.Duration).
func TestBoundsCorpus(t *testing.T) {
	for file, want := range map[string][]string{
		"bounds-agentic.yaml": {
			`testdata/invalid/bounds-agentic.yaml:8:13: workload.sessions: must be ≤ 1,000,000 (got 1000000000000)`,
			`testdata/invalid/bounds-agentic.yaml:9:10: workload.turns: must be ≤ 10,000 turns (got 1000000000)`,
			`testdata/invalid/bounds-agentic.yaml:10:47: workload.growth_tokens.max: must be ≤ 10,000,000 tokens (got 1000000000000)`,
			`testdata/invalid/bounds-agentic.yaml:11:47: workload.think_seconds.max: must be ≤ 3,155,760,000 s, a century (got 1e+300)`,
			`testdata/invalid/bounds-agentic.yaml:12:23: workload.max_context_tokens: must be ≤ 10,000,000 tokens (got 1000000000)`,
			`testdata/invalid/bounds-agentic.yaml:13:16: workload.max_retries: must be ≤ 1,000 (got 1000000000)`,
		},
		"bounds-arrivals.yaml": {
			`testdata/invalid/bounds-arrivals.yaml:5:35: pins.concurrency.rate: plans about 3,153,600,000,000,000 arrivals in 876000h, more than 100,000,000: lower the rate, shorten the duration or set requests`,
		},
		"bounds-duration.yaml": {
			`testdata/invalid/bounds-duration.yaml:6:11: duration: must be ≤ 876600h, a century (got 1000000h)`,
		},
		"bounds-empirical-empty.yaml": {
			`testdata/invalid/bounds-empirical-empty.yaml:3:38: pins.prompt.tokens.values: must hold at least one value`,
		},
		"bounds-empirical-value.yaml": {
			`testdata/invalid/bounds-empirical-value.yaml:3:52: pins.prompt.tokens.values[1]: must be ≤ 10,000,000 tokens (got 2000000000)`,
		},
		"bounds-kv-cache.yaml": {
			`testdata/invalid/bounds-kv-cache.yaml:6:29: pins.kv_cache.max_model_len: must be ≤ 10,000,000 tokens (got 100000000)`,
			`testdata/invalid/bounds-kv-cache.yaml:6:54: pins.kv_cache.max_num_seqs: must be ≤ 1,000,000 (got 1000000000)`,
		},
		"bounds-open.yaml": {
			`testdata/invalid/bounds-open.yaml:5:66: pins.concurrency.burstiness: must be in [0.001, 1000] (got 1e-300)`,
			`testdata/invalid/bounds-open.yaml:5:89: pins.concurrency.max_in_flight: must be ≤ 1,000,000 (got 1000000000)`,
		},
		"bounds-output-max.yaml": {
			`testdata/invalid/bounds-output-max.yaml:4:49: pins.output.tokens.max: must be ≤ 10,000,000 tokens (got 1000000000000)`,
		},
		"bounds-prompt-1e18.yaml": {
			`testdata/invalid/bounds-prompt-1e18.yaml:3:20: pins.prompt.tokens: must be ≤ 10,000,000 tokens (got 1000000000000000000)`,
		},
		"bounds-rate-1e-300.yaml": {
			`testdata/invalid/bounds-rate-1e-300.yaml:5:35: pins.concurrency.rate: must be at least one request a century (got 1e-300 requests/s)`,
		},
		"bounds-rate-1e12.yaml": {
			`testdata/invalid/bounds-rate-1e12.yaml:5:35: pins.concurrency.rate: must be ≤ 1,000,000 requests/s (got 1000000000000)`,
		},
		"bounds-requests.yaml": {
			`testdata/invalid/bounds-requests.yaml:6:11: requests: must be ≤ 100,000,000 (got 1000000000000)`,
		},
		"bounds-streams-1e11.yaml": {
			`testdata/invalid/bounds-streams-1e11.yaml:5:40: pins.concurrency.streams: must be ≤ 1,000,000 (got 100000000000)`,
		},
		"bounds-sweep.yaml": {
			`testdata/invalid/bounds-sweep.yaml:7:47: sweep.values[1]: must be ≤ 1,000,000 for concurrency.streams (got 1000000000)`,
		},
		"bounds-times.yaml": {
			`testdata/invalid/bounds-times.yaml:7:18: request_timeout: must be ≤ 876600h, a century (got 2000000h)`,
			`testdata/invalid/bounds-times.yaml:8:30: windows.burst: must be ≤ 876600h, a century (got 1000000h)`,
			`testdata/invalid/bounds-times.yaml:8:65: windows.steady.end: must be ≤ 876600h, a century (got 1000000h)`,
			`testdata/invalid/bounds-times.yaml:9:16: slo.ttft_ms: must be ≤ 3,155,760,000,000 ms, a century (got 1e+300)`,
		},
		"bounds-trace-1e300.yaml": {
			`testdata/invalid/bounds-trace-1e300.yaml:3:31: workload.file: ../trace/testdata/bad/mooncake-timestamp-1e300.jsonl:1:15: timestamp: must be ≤ 3,155,760,000,000 ms, a century (got 1e+300)`,
		},
		"bounds-trace.yaml": {
			`testdata/invalid/bounds-trace.yaml:4:31: workload.file: session "a" turn 0 needs 30000 + 4000 tokens, more than pins.kv_cache.max_model_len 32768`,
			`testdata/invalid/bounds-trace.yaml:4:65: workload.time_scale: stretches the trace's 1111h6m40s to more than a century`,
		},
		"bounds-weights-overflow.yaml": {
			`testdata/invalid/bounds-weights-overflow.yaml:3:58: pins.prompt.tokens.weights: must sum to a finite total (they overflow)`,
		},
	} {
		t.Run(file, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", "invalid", file))
			if err == nil {
				t.Fatalf("Load succeeded: %+v", s)
			}
			if got := errStrings(t, err); !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A scenario with an empirical distribution one value past bounds.Values
// is refused before its YAML is parsed: at the list, for a few MB (a
// 26 MB file of 13M values cost 3.6 GB and 39 s before).
func TestTooManyValuesRefusedBeforeParsing(t *testing.T) {
	src := []byte("pins:\n  model: {name: m}\n  prompt: {tokens: {dist: empirical, values: [" + strings.Repeat("1, ", bounds.Values) + "1]}}\n" +
		"  output: {tokens: 10}\n  concurrency: {mode: closed, streams: 1}\nrequests: 1\n")
	var err error
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	_, err = Parse("big.yaml", src)
	runtime.ReadMemStats(&b)
	if n := b.TotalAlloc - a.TotalAlloc; n > 4<<20 {
		t.Errorf("Parse allocated %d MB before refusing", n>>20)
	}
	want := "big.yaml:3:46: a list of more than 1,000,000 items: more than a scenario holds (an empirical distribution's values are at most 1,000,000; replay a trace instead)"
	if err == nil || err.Error() != want {
		t.Errorf("error %.300v\nwant  %s", err, want)
	}
}

// A scenario replaying a trace holds none of its rows: loading one of
// four times the requests holds no more (a 2M-row trace held 1.6 GB), and
// its plan reads the sessions again as they are replayed.
func TestReplayHoldsNoRows(t *testing.T) {
	dir := t.TempDir()
	load := func(n int) (uint64, *Scenario) {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 20, "hash_ids": [1, 2, 3, 4, 5, 6, 7, 8]}`+"\n", i, 4000+i%100)
		}
		name := fmt.Sprintf("t%d.jsonl", n)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.yaml", n))
		if err := os.WriteFile(path, []byte("pins:\n  model: {name: m}\nworkload: {kind: trace, file: "+name+"}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var a, b2 runtime.MemStats
		runtime.ReadMemStats(&a)
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&b2)
		return b2.HeapAlloc - min(a.HeapAlloc, b2.HeapAlloc), s
	}
	small, s1 := load(5_000)
	big, s2 := load(20_000)
	if big > small+256<<10 {
		t.Errorf("a scenario replaying 20,000 requests holds %d KB, 5,000 requests %d KB", big>>10, small>>10)
	}
	p := NewPlan(s2)
	defer p.Close()
	if n := p.TraceSessions(); n != 20_000 {
		t.Fatalf("%d sessions", n)
	}
	for _, i := range []int{0, 1, 19_999, 3} { // forward, then back
		if s := p.TraceSession(i); s.Index != i || len(s.Turns) != 1 || s.Turns[0].InputTokens != 4000+i%100 || s.Start != time.Duration(i)*time.Millisecond {
			t.Errorf("session %d: %+v", i, s)
		}
	}
	if err := p.TraceErr(); err != nil {
		t.Error(err)
	}
	runtime.KeepAlive(s1)
}
