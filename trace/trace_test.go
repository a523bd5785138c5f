package trace

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Fixtures copy the documented shapes of the public traces:
//   - testdata/mooncake.jsonl: the first lines of kvcache-ai/Mooncake's
//     mooncake_trace.jsonl as quoted by NVIDIA dynamo's
//     benchmarks/data_generator/README.md (timestamp in ms, 512-token
//     hash_ids blocks);
//   - testdata/mooncake-sessions.jsonl: aiperf's multi-turn variant with
//     a session_id;
//   - testdata/azure.csv: the header and timestamp format of
//     Azure/AzurePublicDataset's AzureLLMInferenceTrace_{code,conv}.csv
//     (TIMESTAMP with 100 ns ticks, ContextTokens, GeneratedTokens).

func TestReadMooncake(t *testing.T) {
	tr, err := Read("testdata/mooncake.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sessions) != 4 || tr.Turns() != 4 {
		t.Fatalf("%d sessions, %d turns, want 4 and 4", len(tr.Sessions), tr.Turns())
	}
	if tr.BlockTokens() != 512 {
		t.Errorf("BlockTokens = %d, want 512", tr.BlockTokens())
	}
	s := tr.Sessions[2]
	want := Session{ID: "3", Start: 3052 * time.Millisecond, Turns: []Turn{{InputTokens: 7234, OutputTokens: 794,
		HashIDs: []int{0, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41}}}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("session 3 = %+v, want %+v", s, want)
	}
	if tr.Source != "testdata/mooncake.jsonl" {
		t.Errorf("Source = %q", tr.Source)
	}
}

func TestReadMooncakeSessions(t *testing.T) {
	tr, err := Read("testdata/mooncake-sessions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(tr.Sessions))
	}
	c0 := tr.Sessions[0]
	if c0.ID != "conv_0" || c0.Start != time.Second || len(c0.Turns) != 2 || c0.Turns[1].Offset != 9535*time.Millisecond || c0.Turns[1].InputTokens != 1200 {
		t.Errorf("conv_0 = %+v", c0)
	}
}

func TestReadAzure(t *testing.T) {
	tr, err := Read("testdata/azure.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sessions) != 4 || tr.BlockTokens() != 0 {
		t.Fatalf("%d sessions, block tokens %d", len(tr.Sessions), tr.BlockTokens())
	}
	want := []Session{
		{ID: "1", Start: 0, Turns: []Turn{{InputTokens: 374, OutputTokens: 44}}},
		{ID: "2", Start: 4314579000, Turns: []Turn{{InputTokens: 396, OutputTokens: 109}}},
		{ID: "3", Start: 4610410000, Turns: []Turn{{InputTokens: 879, OutputTokens: 3}}},
		{ID: "4", Start: 4924410000, Turns: []Turn{{InputTokens: 91, OutputTokens: 33}}},
	}
	if !reflect.DeepEqual(tr.Sessions, want) {
		t.Errorf("sessions:\n got %+v\nwant %+v", tr.Sessions, want)
	}
}

func TestReadSixpin(t *testing.T) {
	tr, err := Read("testdata/sixpin.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []Session{
		{ID: "ses_a", Start: 0, Turns: []Turn{
			{InputTokens: 11000, OutputTokens: 300, ReasoningTokens: 120},
			{Offset: 4500 * time.Millisecond, Think: 1250 * time.Millisecond, InputTokens: 13500, CachedTokens: 11000, OutputTokens: 250},
		}},
		{ID: "ses_b", Start: 2500 * time.Millisecond, Turns: []Turn{{InputTokens: 9000, OutputTokens: 100}}},
	}
	if !reflect.DeepEqual(tr.Sessions, want) {
		t.Errorf("sessions:\n got %+v\nwant %+v", tr.Sessions, want)
	}
}

func TestRoundTrip(t *testing.T) {
	in := &Trace{Sessions: []Session{
		{ID: "a", Start: 0, Turns: []Turn{
			{InputTokens: 11000, OutputTokens: 300, ReasoningTokens: 120},
			{Offset: 65123 * time.Millisecond, Think: 3001 * time.Millisecond, InputTokens: 99000, CachedTokens: 88000, OutputTokens: 250, ReasoningTokens: 7},
		}},
		{ID: "b", Start: 1234567 * time.Millisecond, Turns: []Turn{{InputTokens: 1, OutputTokens: 2, HashIDs: []int{4, 5}}}},
	}}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Errorf("%d lines, want one per generation (3):\n%s", n, buf.String())
	}
	out, err := Decode("mem.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Sessions, in.Sessions) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out.Sessions, in.Sessions)
	}
}

func TestReadGzip(t *testing.T) {
	data, _ := os.ReadFile("testdata/mooncake.jsonl")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	path := filepath.Join(t.TempDir(), "trace.jsonl.gz")
	os.WriteFile(path, buf.Bytes(), 0o644)
	tr, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Sessions) != 4 {
		t.Errorf("%d sessions, want 4", len(tr.Sessions))
	}
}

func TestReadErrors(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"empty.jsonl", "\n\n", "empty.jsonl: empty trace file"},
		{"what.txt", "hello\n", "what.txt:1: unrecognised trace format"},
		{"keys.jsonl", `{"foo": 1}` + "\n", "keys.jsonl:1: unrecognised trace line"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":1,"output_tokens":1}` + "\n" + `{"session":"a","turn":1,"offset_s":1,"input_tokens":1}` + "\n", "s.jsonl:2:1: output_tokens: required"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":1,"output_tokens":1,"colour":2}` + "\n", `s.jsonl:1:82: colour: unknown key`},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":"x","output_tokens":1}` + "\n", "s.jsonl:1:53: input_tokens: want int, got a JSON string"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":5,"cached_tokens":6,"output_tokens":1}` + "\n", "s.jsonl:1:71: cached_tokens: must be ≤ input_tokens (got 6 > 5)"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":5,"output_tokens":1}` + "\n" + `{"session":"a","turn":2,"offset_s":1,"input_tokens":5,"output_tokens":1}` + "\n", "s.jsonl:2: session \"a\": turn 2 follows turn 0"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":5,"output_tokens":1}` + "\n" + `{"session":"a","turn":0,"offset_s":1,"input_tokens":5,"output_tokens":1}` + "\n", "s.jsonl:2: session \"a\": turn 0 appears twice"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":2,"input_tokens":5,"output_tokens":1}` + "\n" + `{"session":"a","turn":1,"offset_s":1,"input_tokens":5,"output_tokens":1}` + "\n", "s.jsonl:2: session \"a\": turn 1's offset_s 1 is before turn 0's 2"},
		{"s.jsonl", `{"session":"a","turn":0,"offset_s":0,"input_tokens":5,"output_tokens":1}` + "\n{bad\n", "s.jsonl:2:2: invalid JSON: invalid character 'b'"},
		{"m.jsonl", `{"timestamp": 0, "input_length": 1, "output_length": 1}` + "\n" + `{"timestamp": 5, "output_length": 1}` + "\n", "m.jsonl:2:1: input_length: required"},
		{"m.jsonl", `{"timestamp": -1, "input_length": 1, "output_length": 1}` + "\n", "m.jsonl:1:15: timestamp: must be ≥ 0 ms (got -1)"},
		{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374,44\nyesterday,1,2\n", `a.csv:3:1: TIMESTAMP: "yesterday" is not a time`},
		{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,-3,44\n", "a.csv:2:24: ContextTokens: must be ≥ 0 (got -3)"},
		{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,3\n", "a.csv:2: want 3 fields, got 2"},
		{"a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n", "a.csv: no requests in the trace"},
	} {
		t.Run(c.name+"/"+c.want, func(t *testing.T) {
			_, err := Decode(c.name, strings.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "nope.jsonl")); err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Errorf("err = %v, want it to name the file", err)
	}
}

func ExampleWrite() {
	t := &Trace{Sessions: []Session{{ID: "ses_1", Turns: []Turn{
		{InputTokens: 11000, OutputTokens: 300, ReasoningTokens: 120},
		{Offset: 4500 * time.Millisecond, Think: 1250 * time.Millisecond, InputTokens: 13500, CachedTokens: 11000, OutputTokens: 250},
	}}}}
	Write(os.Stdout, t)
	// Output:
	// {"session":"ses_1","turn":0,"session_start_s":0,"offset_s":0,"input_tokens":11000,"cached_tokens":0,"output_tokens":300,"reasoning_tokens":120,"think_s":0}
	// {"session":"ses_1","turn":1,"session_start_s":0,"offset_s":4.5,"input_tokens":13500,"cached_tokens":11000,"output_tokens":250,"reasoning_tokens":0,"think_s":1.25}
}
