package jsonerr

import (
	"encoding/json"
	"testing"
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
