package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// failed is a failed request whose message is what a server may send:
// quotes, a comma, a newline, a tab, a control character, invalid UTF-8.
func failed(msg string) *record.Record {
	return &record.Record{Index: 3, Session: -1, Scheduled: time.Second, Sent: time.Second + 2*time.Millisecond, End: 2 * time.Second,
		Err: record.ErrHTTP4xx, HTTPStatus: 400, ErrMsg: msg, RequestID: `sixpin-1-"x"`}
}

// rowsOf writes recs as format and returns the output.
func rowsOf(t testing.TB, format RecordsFormat, recs ...*record.Record) string {
	t.Helper()
	var b bytes.Buffer
	rw := NewRecordWriter(&b, format)
	if err := rw.Begin(&results.Header{}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := rw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A server's message, whatever it holds, is one JSON Lines row that
// decodes to it (invalid UTF-8 as U+FFFD) and one CSV record.
func TestRowsCarryAnyMessage(t *testing.T) {
	t.Parallel()
	msg := "HTTP 400: \"bad\", said the server\n\tline two \x01 \xff end"
	line := rowsOf(t, RecordsJSONL, failed(msg))
	if strings.Count(line, "\n") != 1 {
		t.Fatalf("not one line: %q", line)
	}
	var row map[string]any
	if err := json.Unmarshal([]byte(line), &row); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if want := strings.ToValidUTF8(msg, "\ufffd"); row["error_message"] != want || row["request_id"] != `sixpin-1-"x"` {
		t.Errorf("row %v, want the message %q", row, want)
	}
	if _, ok := row["ttft_ms"]; ok || row["e2e_ms"] != 1000.0 || row["lag_ms"] != 2.0 || row["http_status"] != 400.0 {
		t.Errorf("a failure's figures: %v", row)
	}
	recs, err := csv.NewReader(strings.NewReader(rowsOf(t, RecordsCSV, failed(msg)))).ReadAll()
	if err != nil || len(recs) != 2 || recs[1][colErrorMessage] != msg {
		t.Errorf("CSV (%v): %q", err, recs)
	}
}

// FuzzRowJSON: any message and id make a valid JSON line that decodes
// to them.
func FuzzRowJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\n\r\t\x00\x1f\x7f", "\xff\xfe", "ünïcödé ✓", "\u2028\u2029"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, msg, id string) {
		r := failed(msg)
		r.RequestID = id
		line := rowsOf(t, RecordsJSONL, r)
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil || strings.Count(line, "\n") != 1 {
			t.Fatalf("%v: %q", err, line)
		}
		// encoding/json's reading of the message: each invalid byte U+FFFD.
		b, _ := json.Marshal(msg)
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if msg != "" && row["error_message"] != want {
			t.Fatalf("message %q came back %q, want %q", msg, row["error_message"], want)
		}
	})
}

// A request the server drafted for (llama.cpp's timings) has its draft
// and accepted tokens; one it did not has neither, never a zero.
func TestRowsDraftTokens(t *testing.T) {
	t.Parallel()
	drafted := &record.Record{Index: 1, Session: -1, Scheduled: time.Second, Sent: time.Second, End: 2 * time.Second,
		Server: record.ServerTimings{Has: true, DraftTokens: 84, DraftAccepted: 41}}
	plain := &record.Record{Index: 2, Session: -1, Scheduled: time.Second, Sent: time.Second, End: 2 * time.Second,
		Server: record.ServerTimings{Has: true}}
	lines := strings.Split(strings.TrimSpace(rowsOf(t, RecordsJSONL, drafted, plain)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, want := range []map[string]any{{"draft_tokens": 84.0, "draft_accepted_tokens": 41.0}, {}} {
		var row map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &row); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"draft_tokens", "draft_accepted_tokens"} {
			if v, ok := row[k]; v != want[k] || ok != (len(want) > 0) {
				t.Errorf("row %d: %s = %v, want %v", i, k, v, want[k])
			}
		}
	}
}
