package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sseEvent is one server-sent event: its event field ("" without one)
// and its data.
type sseEvent struct {
	name, data string
}

// readEvents parses server-sent events until EOF; a line that is neither
// "event: " nor "data: " is an error.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				evs = append(evs, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("not an SSE line: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read events: %v", err)
	}
	return evs
}

// postJSON posts body (marshalled, or sent as it is when a string) to
// url+path with the given headers.
func postJSON(t *testing.T, url, path string, body any, headers map[string]string) *http.Response {
	t.Helper()
	var b []byte
	if s, ok := body.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	r, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// streamEvents posts body and reads the whole event stream.
func streamEvents(t *testing.T, url, path string, body map[string]any) (*http.Response, []sseEvent) {
	t.Helper()
	body["stream"] = true
	resp := postJSON(t, url, path, body, nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return resp, readEvents(t, resp.Body)
}

// readAll posts body and returns the status and the whole body.
func readAll(t *testing.T, url, path string, body any, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	resp := postJSON(t, url, path, body, headers)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// strict decodes data into v, refusing unknown fields and trailing data.
func strict(t *testing.T, data string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %T from %s: %v", v, data, err)
	}
	if dec.More() {
		t.Fatalf("trailing data after %s", data)
	}
}

// keys is the sorted member names of the object at path (dot-separated
// member names or array indexes; "" for the top) in data, comma-joined: what a test
// compares with the documented members, so that a missing member fails
// as surely as an extra one.
func keys(t *testing.T, data, path string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if path != "" {
		for _, k := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				i, err := strconv.Atoi(k)
				if err != nil || i >= len(x) {
					t.Fatalf("%s: no element %s in %s", data, k, path)
				}
				v = x[i]
			default:
				t.Fatalf("%s: %s is not an object or array", data, path)
			}
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %q is not an object", data, path)
	}
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// wantKeys checks the members of the object at path: want lists them,
// comma-separated, in any order.
func wantKeys(t *testing.T, data, path, want string) {
	t.Helper()
	ws := strings.Split(want, ",")
	sort.Strings(ws)
	want = strings.Join(ws, ",")
	if got := keys(t, data, path); got != want {
		t.Errorf("members of %q = %s, want %s\n%s", path, got, want, data)
	}
}

// stamp is the sixpin_sent_unix_ns member of an event's data.
func stamp(t *testing.T, data string) int64 {
	t.Helper()
	var v struct {
		Stamp int64 `json:"sixpin_sent_unix_ns"`
	}
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return v.Stamp
}

// checkStamps checks every event is stamped and the stamps never go back.
func checkStamps(t *testing.T, evs []sseEvent) {
	t.Helper()
	var prev int64
	for i, e := range evs {
		if e.data == "[DONE]" {
			continue
		}
		s := stamp(t, e.data)
		if s == 0 || s < prev {
			t.Errorf("event %d (%s) stamp %d after %d", i, e.name, s, prev)
		}
		prev = s
	}
}
