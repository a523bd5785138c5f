package jsonerr

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPositionAndMessage(t *testing.T) {
	type doc struct {
		Name    string         `json:"name"`
		Windows map[string]int `json:"windows"`
	}
	for _, tc := range []struct {
		in        string
		line, col int
		msg       string
	}{
		{"{\n \"name\": \"a\",\n \"windows\": [1]\n}", 3, 13, "windows: want a JSON object, got a JSON array"},
		{"{\n \"name\": 5}", 2, 10, "name: want string, got a JSON number"},
		{"{\n \"windows\": {,}\n}", 2, 14, "invalid character ',' looking for beginning of object key string"},
		{"{", 1, 1, "unexpected end of JSON input"},
	} {
		var d doc
		err := json.Unmarshal([]byte(tc.in), &d)
		if err == nil {
			t.Fatalf("%q: no error", tc.in)
		}
		line, col, ok := Position([]byte(tc.in), err)
		if !ok || line != tc.line || col != tc.col {
			t.Errorf("%q: at %d:%d (ok %v), want %d:%d", tc.in, line, col, ok, tc.line, tc.col)
		}
		if got := Message(err); got != tc.msg {
			t.Errorf("%q: message %q, want %q", tc.in, got, tc.msg)
		}
	}
}

func TestFind(t *testing.T) {
	data := []byte("{\n  \"schema\": \"x\",\n  \"windows\": {\n    \"all\": {\"requests\": -1, \"p\": [3, {\"a\": 4}]}\n  },\n  \"runs\": [ {}, {\"n\": 1} ]\n}\n")
	for _, tc := range []struct {
		path      []string
		line, col int
		found     bool
	}{
		{nil, 1, 1, true},
		{[]string{"schema"}, 2, 13, true},
		{[]string{"windows", "all", "requests"}, 4, 25, true},
		{[]string{"windows", "all", "p", "1", "a"}, 4, 44, true},
		{[]string{"runs", "1", "n"}, 6, 23, true},
		{[]string{"windows", "steady", "requests"}, 3, 14, false},
		{[]string{"runs", "7"}, 6, 11, false},
		{[]string{"schema", "x"}, 2, 13, false},
	} {
		off, found := Find(data, tc.path...)
		line, col := LineCol(data, off)
		if found != tc.found || line != tc.line || col != tc.col {
			t.Errorf("Find(%q) at %d:%d found %v, want %d:%d found %v", tc.path, line, col, found, tc.line, tc.col, tc.found)
		}
	}
}

func TestDescribe(t *testing.T) {
	dec := json.NewDecoder(strings.NewReader(`{"a": 1, "colour": 2}`))
	dec.DisallowUnknownFields()
	var v struct{ A int }
	err := dec.Decode(&v)
	if field, msg := Describe(err); field != "colour" || msg != "unknown key" {
		t.Errorf("Describe(%v) = %q, %q", err, field, msg)
	}
}

func TestLocate(t *testing.T) {
	type win struct {
		Start time.Time `json:"started_at"`
		N     int       `json:"n"`
	}
	type doc struct {
		Name    string          `json:"name"`
		Windows map[string]*win `json:"windows"`
		List    []win           `json:"list"`
	}
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"name": "a", "windows": {"all": {"started_at": "yesterday"}}}`, "windows.all.started_at"},
		{`{"list": [{"n": 1}, {"started_at": "2026-01-02T03:04:05Z"}, {"started_at": "soon"}]}`, "list[2].started_at"},
		{`{"Name": "a", "windows": {}}`, ""},
	} {
		var d doc
		err := json.Unmarshal([]byte(tc.in), &d)
		got := Path(Locate([]byte(tc.in), reflect.TypeFor[doc]()))
		if got != tc.want {
			t.Errorf("Locate(%s) = %q (error %v), want %q", tc.in, got, err, tc.want)
		}
	}
}
