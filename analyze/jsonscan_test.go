package analyze

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParsePart(t *testing.T) {
	for _, c := range []struct {
		in   string
		want part
		bad  bool
	}{
		{in: `{"type":"text","text":"a \"quoted\" }{ word\\","time":{"start":1000,"end":2000.5}}`, want: part{typ: "text", start: 1000, end: 2000.5, hasStart: true, hasEnd: true}},
		{in: ` { "state" : {"status":"completed","input":{"a":[1,{"b":"]"}]},"time":{"end":9,"start":5}}, "type" : "tool" } `, want: part{typ: "tool", toolStart: 5, hasToolStart: true}},
		{in: `{"type":"reasoning","time":{"start":null}}`, want: part{typ: "reasoning"}},
		{in: `{"type":"tool","state":{"status":"pending","input":{},"raw":""}}`, want: part{typ: "tool"}},
		{in: `{"type":"text","time":"soon"}`, want: part{typ: "text"}},
		{in: `{"type":"t\u0065xt"}`, want: part{typ: "text"}},
		{in: `{}`, bad: true},               // no type
		{in: `{"text":"x"}`, bad: true},     // no type
		{in: `{"type":"text"`, bad: true},   // unclosed
		{in: `{"type":"text}`, bad: true},   // unclosed string
		{in: `{"type":"text",}`, bad: true}, // trailing comma
		{in: `{"type" "text"}`, bad: true},
		{in: `{"type":"tool","state":{"time":{"start":1]}}`, bad: true},
		{in: `{"type":"text"} x`, bad: true},
		{in: `"a string"`, bad: true},
		{in: `[1]`, bad: true},
		{in: ``, bad: true},
		{in: `{"type":"text","x":}`, bad: true},
	} {
		got, err := parsePart([]byte(c.in))
		if c.bad {
			if err == nil {
				t.Errorf("%s: no error", c.in)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", c.in, got, err, c.want)
		}
	}
}

func TestParseInfo(t *testing.T) {
	in := `{"role":"assistant","time":{"created":1759320000000,"completed":1759320003000},"error":null,"parentID":"msg_1",` +
		`"modelID":"qwen","providerID":"local","mode":"build","path":{"cwd":"/","root":"/"},"cost":0,` +
		`"tokens":{"input":10,"output":20,"reasoning":5,"cache":{"read":100,"write":7}},"finish":"tool-calls"}`
	m, err := parseInfo([]byte(in))
	want := info{role: "assistant", provider: "local", model: "qwen", finish: "tool-calls", created: 1759320000000, completed: 1759320003000,
		hasCreated: true, hasCompleted: true, hasInput: true, hasOut: true, input: 10, output: 20, reasoning: 5, cacheRead: 100, cacheWrite: 7}
	if err != nil || m != want {
		t.Errorf("got %+v, %v\nwant %+v", m, err, want)
	}
	m, _ = parseInfo([]byte(`{"role":"assistant","error":{"name":"MessageAbortedError"}}`))
	if !m.failed {
		t.Error("error object not seen")
	}
}

// FuzzFields: whatever encoding/json reads as an object, fields reads
// too, with the same keys and values.
func FuzzFields(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"type":"tool","state":{"time":{"start":1}}}`, `{"a":"\\\"","b":[{"c":"]"}]}`, `{}`, ` {"x" : null , "y":true} `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &want) != nil || want == nil || !strings.HasPrefix(strings.TrimLeft(s, " \t\r\n"), "{") {
			return
		}
		got := map[string]json.RawMessage{}
		err := fields([]byte(s), func(k, v []byte) error {
			var key string
			if json.Unmarshal(append(append([]byte{'"'}, k...), '"'), &key) != nil {
				t.Fatalf("key %q is not a JSON string body", k)
			}
			got[key] = append(json.RawMessage(nil), v...)
			return nil
		})
		if err != nil {
			t.Fatalf("fields(%q): %v, but encoding/json reads it", s, err)
		}
		if len(got) != len(want) {
			t.Fatalf("fields(%q): %d keys, encoding/json %d", s, len(got), len(want))
		}
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("fields(%q)[%q] = %s, encoding/json %s", s, k, got[k], v)
			}
		}
	})
}

func TestElements(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: `[]`},
		{in: ` [ 1 , "a]" , {"b":[2]} , null ] `, want: []string{"1", `"a]"`, `{"b":[2]}`, "null"}},
		{in: `[1,]`, bad: true},
		{in: `[1 2]`, bad: true},
		{in: `[1`, bad: true},
		{in: `{}`, bad: true},
		{in: `[1] x`, bad: true},
	} {
		var got []string
		err := elements([]byte(c.in), func(e []byte) error { got = append(got, string(e)); return nil })
		if c.bad != (err != nil) || (!c.bad && strings.Join(got, "|") != strings.Join(c.want, "|")) {
			t.Errorf("%s: got %q, %v", c.in, got, err)
		}
	}
}
