package scenario

import (
	"reflect"
	"strings"
	"testing"
)

const agenticValid = `pins:
  model: {name: m}
  prompt: {tokens: 100}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 2}
workload:
  kind: agentic
  turns: 3
  growth_tokens: 50
  AFFINITY
requests: 10
`

func agentic(affinity string) string { return strings.Replace(agenticValid, "AFFINITY", affinity, 1) }

func TestParseSessionAffinity(t *testing.T) {
	for _, tt := range []struct {
		name string
		src  string
		want []string // the plan's headers, or
		errs []string // the errors, file "t.yaml"
	}{
		{"off", agentic(""), nil, nil},
		{"default header", agentic("session_affinity: {}"), []string{"X-Session-Id"}, nil},
		{"router headers", agentic("session_affinity: {headers: [X-Session-ID, x-user-id]}"), []string{"X-Session-Id", "X-User-Id"}, nil},
		{"echo alone", agentic("session_affinity: {headers: [], echo: [x-session-token]}"), nil, nil},
		{"nothing named", agentic("session_affinity: {headers: []}"), nil, []string{
			"t.yaml:10:3: workload.session_affinity: names no header: give headers, echo or both (or leave headers out: X-Session-ID)",
		}},
		{"echo repeats a header", agentic("session_affinity: {echo: [x-session-id]}"), nil, []string{
			`t.yaml:10:29: workload.session_affinity.echo[0]: "x-session-id" repeats the default session header (write headers: [] to send none)`,
		}},
		{"not a token", agentic("session_affinity: {headers: [\"X Session\"]}"), nil, []string{
			`t.yaml:10:32: workload.session_affinity.headers[0]: "X Session" is not a header name (letters, digits and !#$%&'*+-.^_` + "`" + `|~ only)`,
		}},
		{"repeated in another case", agentic("session_affinity: {headers: [X-Session-ID, x-session-id]}"), nil, []string{
			`t.yaml:10:46: workload.session_affinity.headers[1]: "x-session-id" repeats headers[0] (header names are case-insensitive)`,
		}},
		{"sixpin's own", agentic("session_affinity: {headers: [authorization]}"), nil, []string{
			`t.yaml:10:32: workload.session_affinity.headers[0]: "authorization" is a header sixpin sets itself; name another`,
		}},
		{"unknown key", agentic("session_affinity: {header: X-Session-ID}"), nil, []string{
			`t.yaml:10:22: workload.session_affinity.header: unknown field (did you mean "headers"?)`,
		}},
		{"independent requests", valid + "workload: {session_affinity: {}}\n", nil, []string{
			"t.yaml:7:12: workload.session_affinity: only for kind agentic or trace: independent requests belong to no session",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tt.src))
			if tt.errs != nil {
				if err == nil {
					t.Fatalf("Parse succeeded: %+v", s.Workload.SessionAffinity)
				}
				if got := errStrings(t, err); !reflect.DeepEqual(got, tt.errs) {
					t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			p := NewPlan(s)
			if got := p.Affinity(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Affinity() = %q, want %q", got, tt.want)
			}
			d := p.Declared(Wire{})
			words := ConcurrencyWords(d.Concurrency)
			if tt.name == "echo alone" {
				if got := p.AffinityEcho(); len(got) != 1 || got[0] != "X-Session-Token" || d.Concurrency.SessionEcho != "X-Session-Token" {
					t.Errorf("AffinityEcho() = %q, declared %q", got, d.Concurrency.SessionEcho)
				}
				if !strings.HasSuffix(words, "; each session sends back header X-Session-Token") {
					t.Errorf("pin 4 worded %q", words)
				}
				return
			}
			if tt.want == nil {
				if d.Concurrency.SessionAffinity != "" || strings.Contains(words, "session") && strings.Contains(words, "header") {
					t.Errorf("declared %q, worded %q, with affinity off", d.Concurrency.SessionAffinity, words)
				}
				return
			}
			if !strings.HasSuffix(words, strings.Join(tt.want, ", ")) || !strings.Contains(words, "each session's id in header") {
				t.Errorf("pin 4 worded %q: the headers are not named", words)
			}
		})
	}
}

// A session's id is the same in every plan of one seed and salt, differs
// between sessions, and changes with the seed or the salt.
func TestSessionIDs(t *testing.T) {
	parse := func(seed string) *Scenario {
		s, err := Parse("t.yaml", []byte(agentic("session_affinity: {}")+"seed: "+seed+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, again := NewPlan(parse("1")), NewPlan(parse("1"))
	salted, reseeded := NewPlan(parse("1"), PromptSalt(9)), NewPlan(parse("2"))
	seen := map[string]int{}
	for i := range 50 {
		id := a.Session(i).ID
		if !strings.HasPrefix(id, "sixpin-") {
			t.Fatalf("session %d: id %q", i, id)
		}
		if j, dup := seen[id]; dup {
			t.Fatalf("sessions %d and %d share the id %q", j, i, id)
		}
		seen[id] = i
		if again.Session(i).ID != id {
			t.Errorf("session %d: %q, then %q from the same seed", i, id, again.Session(i).ID)
		}
		if salted.Session(i).ID == id || reseeded.Session(i).ID == id {
			t.Errorf("session %d: %q whatever the salt or the seed", i, id)
		}
	}
}

func TestTraceSessionIDs(t *testing.T) {
	p := &Plan{}
	for own, want := range map[string]string{"conv-1": "conv-1", " 42 ": "42", "a\nb": "a_b", "": "_"} {
		if got := p.traceSessionID(own); got != want {
			t.Errorf("traceSessionID(%q) = %q, want %q", own, got, want)
		}
	}
	salted := &Plan{salt: 9}
	if got := salted.traceSessionID("conv-1"); !strings.HasPrefix(got, "conv-1-") || len(got) != len("conv-1-")+8 {
		t.Errorf("salted: %q", got)
	}
}
