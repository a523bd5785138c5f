package trace

import (
	"path/filepath"
	"strings"
	"testing"
)

// The bad-trace corpus: each file is refused with its line, column and
// field, and none panics, hangs or allocates what its numbers ask for.
func TestBadTraceCorpus(t *testing.T) {
	for file, want := range map[string]string{
		"azure-unterminated-quote.csv":      `2:37: invalid CSV: extraneous or missing " in quoted-field`,
		"azure-context-1e12.csv":            "2:29: ContextTokens: must be ≤ 10,000,000 tokens (got 1000000000000)",
		"azure-generated-overflow.csv":      "2:33: GeneratedTokens: must be ≤ 10,000,000 tokens (got 99999999999999999999)",
		"azure-year-9999.csv":               `3:1: TIMESTAMP: "9999-12-31 23:59:59.9999999" is more than a century after the trace's first request ("2023-11-16 18:15:46.6805900")`,
		"azure-negative.csv":                "3:24: ContextTokens: must be ≥ 0 (got -396)",
		"mooncake-timestamp-1e300.jsonl":    "1:15: timestamp: must be ≤ 3,155,760,000,000 ms, a century (got 1e+300)",
		"mooncake-input-1e18.jsonl":         "1:34: input_length: must be ≤ 10,000,000 tokens (got 1000000000000000000)",
		"mooncake-missing-output.jsonl":     "2:1: output_length: required",
		"mooncake-negative-hash.jsonl":      "1:77: hash_ids[1]: must be ≥ 0 (got -2)",
		"sixpin-offset-1e300.jsonl":         "1:56: offset_s: must be ≤ 3,155,760,000 s, a century (got 1e+300)",
		"sixpin-start-beyond-century.jsonl": "1:43: session_start_s: must be ≤ 3,155,760,000 s, a century (got 4e+09)",
		"sixpin-output-1e12.jsonl":          "1:73: output_tokens: must be ≤ 10,000,000 tokens (got 1000000000000)",
		"sixpin-think-negative.jsonl":       "1:86: think_s: must be ≥ 0 s (got -1)",
		"sixpin-type.jsonl":                 "1:53: input_tokens: want int, got a JSON string",
		"sixpin-missing.jsonl":              "2:1: output_tokens: required",
		"sixpin-unknown-key.jsonl":          "1:85: colour: unknown key",
		"sixpin-syntax.jsonl":               "2:25: invalid JSON: invalid character ',' looking for beginning of object key string",
		"sixpin-cached-over-input.jsonl":    "1:73: cached_tokens: must be ≤ input_tokens (got 101 > 100)",
		"weka-unknown-key.json":             "1:96: requests[0].colour: unknown key",
		"weka-ttft-on-normal.json":          "6:55: requests[1].ttft: unknown key",
		"weka-subagent-negative.json":       "7:37: requests[1].requests[0].in: must be 0 to 10,000,000 tokens (got -4)",
		"weka-block-zero.json":              "1:27: block_size: must be 1 to 1,048,576 tokens (got 0)",
		"weka-type.json":                    `1:61: requests[0].type: must be "n", "s" or "subagent" (got "x")`,
		"weka-missing-out.json":             "1:44: requests[0]: out required (a request has t, in and out)",
		"weka-duplicate-id.json":            `2:8: id: "a" is the id of the conversation on line 1 too`,
		"weka-mixed-blocks.json":            "2:27: block_size: 16 differs from 64 on line 1: one file, one block size",
		"weka-syntax.json":                  "5:46: invalid JSON: invalid character '}' looking for beginning of object key string",
		"weka-truncated.json":               "6:1: the file ends inside the object begun on line 1",
	} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", file)
			tr, err := Read(path)
			if err == nil {
				t.Fatalf("Read succeeded: %d sessions", len(tr.Sessions))
			}
			if got, want := err.Error(), path+":"+want; got != want {
				t.Errorf("error\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// A megabyte of text in a field is not echoed whole.
func TestTraceErrorsAreShort(t *testing.T) {
	long := strings.Repeat("9", 1<<20)
	for name, data := range map[string]string{
		"a.csv":   "TIMESTAMP,ContextTokens,GeneratedTokens\n" + long + ",1,2\n",
		"b.csv":   "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,x" + long + ",2\n",
		"s.jsonl": `{"session":"a","turn":0,"offset_s":0,"input_tokens":1,"output_tokens":1}` + "\n" + `{"session":"` + long + `","turn":0,"offset_s":0,"input_tokens":5,"output_tokens":1}` + "\n" + `{"session":"` + long + `","turn":0,"offset_s":1,"input_tokens":5,"output_tokens":1}` + "\n",
	} {
		_, err := Decode(name, strings.NewReader(data))
		if err == nil || len(err.Error()) > 300 {
			t.Errorf("%s: error of %d bytes: %.300s", name, len(err.Error()), err)
		}
	}
}

// A Mooncake line with more hash ids than a prompt of bounds.Tokens has
// blocks is refused for what it is, however long the line: a first line
// longer than format detection peeks at is still read as what it is.
func TestTooManyHashIDs(t *testing.T) {
	ids := strings.Repeat("1,", 1_000_000) + "1"
	long := `{"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [` + ids + `]}` + "\n"
	for name, c := range map[string]struct{ data, want string }{
		"first line":  {long, "m.jsonl:1:71: hash_ids: too many (1,000,001): a prompt of at most 10,000,000 tokens is at most 19,532 blocks of 512"},
		"second line": {`{"timestamp": 0, "input_length": 512, "output_length": 1, "hash_ids": [1]}` + "\n" + long, "m.jsonl:2:71: hash_ids: too many (1,000,001)"},
		"sixpin":      {`{"session":"a","turn":0,"offset_s":0,"input_tokens":1,"output_tokens":1,"hash_ids":[` + ids + "]}\n", "m.jsonl:1:84: hash_ids: too many (1,000,001)"},
	} {
		_, err := Decode("m.jsonl", strings.NewReader(c.data))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %.300v, want %s…", name, err, c.want)
		}
	}
	// A valid first line longer than the peek.
	note := strings.Repeat("x", 2<<20)
	tr, err := Decode("m.jsonl", strings.NewReader(`{"timestamp": 5, "note": "`+note+`", "input_length": 700, "output_length": 3, "hash_ids": [1, 2]}`+"\n"+
		`{"timestamp": 9, "input_length": 100, "output_length": 2}`+"\n"))
	if err != nil || tr.Format != FormatMooncake || tr.Turns() != 2 {
		t.Fatalf("a long first line: %.300v, %+v", err, tr)
	}
}
