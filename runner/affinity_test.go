package runner

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
	"github.com/sixpin/sixpin/trace"
)

// headersSeen records, by X-Request-Id, the session headers each chat
// request arrived with.
type headersSeen struct {
	mu    sync.Mutex
	names []string
	by    map[string][]string // request id → the values of names, "" for an absent one
}

func (h *headersSeen) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			vals := make([]string, len(h.names))
			for i, n := range h.names {
				if vs := r.Header.Values(n); len(vs) > 1 {
					vals[i] = "repeated: " + strings.Join(vs, "|")
				} else {
					vals[i] = r.Header.Get(n)
				}
			}
			h.mu.Lock()
			h.by[r.Header.Get("X-Request-Id")] = vals
			h.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

// affinityRun runs plan against the simulator behind a recorder of the
// headers names, every request with an X-Request-Id, and returns the
// records and what each request carried.
func affinityRun(t *testing.T, p *scenario.Plan, names ...string) ([]*record.Record, map[string][]string) {
	t.Helper()
	seen := &headersSeen{names: names, by: map[string][]string{}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, seen.wrap)
	c := newClient(t, p, simTarget(ts), func(o *endpoint.Options) { o.RequestIDPrefix = "aff" })
	r, err := New(p, c, WithTemplate(endpoint.Template{Overhead: 8, PerMessage: 5}))
	if err != nil {
		t.Fatal(err)
	}
	recs := runAll(t, r)
	seen.mu.Lock()
	defer seen.mu.Unlock()
	return recs, seen.by
}

// sessionValues checks that every request of a session carried each header
// once, all with one value, and returns that value by session.
func sessionValues(t *testing.T, recs []*record.Record, by map[string][]string) map[int]string {
	t.Helper()
	vals := map[int]string{}
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("session %d turn %d: %s %s", rec.Session, rec.Turn, rec.Err, rec.ErrMsg)
		}
		got, ok := by[rec.RequestID]
		if !ok {
			t.Fatalf("request %s never reached the server", rec.RequestID)
		}
		for i, v := range got {
			if v != got[0] {
				t.Errorf("session %d turn %d: header %d is %q, header 0 %q", rec.Session, rec.Turn, i, v, got[0])
			}
		}
		if prev, ok := vals[rec.Session]; ok && prev != got[0] {
			t.Errorf("session %d turn %d carried %q, an earlier turn %q", rec.Session, rec.Turn, got[0], prev)
		}
		vals[rec.Session] = got[0]
	}
	return vals
}

// With session affinity on, every request of agentic session k carries
// the session's id in each named header, the same on every turn, and no
// two sessions share one; off, no request carries any.
func TestSessionAffinityAgentic(t *testing.T) {
	t.Parallel()
	on := mustPlan(t, sessionsPlan(t, "on_429: backoff", "on_429: backoff\n  session_affinity: {headers: [X-Session-ID, x-user-id]}",
		"requests: 12", "requests: 24"))
	if got := on.Affinity(); len(got) != 2 || got[0] != "X-Session-Id" || got[1] != "X-User-Id" {
		t.Fatalf("Affinity() = %q", got)
	}
	recs, by := affinityRun(t, on, "X-Session-ID", "X-User-ID")
	vals := sessionValues(t, recs, by)
	if len(vals) < 4 {
		t.Fatalf("%d sessions, want at least 4", len(vals))
	}
	owner := map[string]int{}
	for s, v := range vals {
		if want := on.Session(s).ID; v != want {
			t.Errorf("session %d carried %q, want its id %q", s, v, want)
		}
		if o, dup := owner[v]; dup {
			t.Errorf("sessions %d and %d both carried %q", o, s, v)
		}
		owner[v] = s
	}

	off := mustPlan(t, sessionsPlan(t))
	if off.Affinity() != nil {
		t.Fatalf("Affinity() = %q with the option off", off.Affinity())
	}
	recs, by = affinityRun(t, off, "X-Session-ID", "X-User-ID")
	for _, rec := range recs {
		if got := by[rec.RequestID]; got[0] != "" || got[1] != "" {
			t.Fatalf("session %d turn %d carried %q with affinity off", rec.Session, rec.Turn, got)
		}
	}
}

// A trace replay's requests carry the trace's own session ids, salted
// when the plan is.
func TestSessionAffinityReplay(t *testing.T) {
	t.Parallel()
	tr := &trace.Trace{Sessions: []trace.Session{
		{ID: "conv-a", Turns: []trace.Turn{
			{InputTokens: 600, OutputTokens: 5},
			{Offset: time.Second, Think: 100 * time.Millisecond, InputTokens: 900, OutputTokens: 5},
			{Offset: 2 * time.Second, Think: 100 * time.Millisecond, InputTokens: 1200, OutputTokens: 5},
		}},
		{ID: "conv-b", Start: 200 * time.Millisecond, Turns: []trace.Turn{
			{InputTokens: 700, OutputTokens: 5},
			{Offset: time.Second, Think: 100 * time.Millisecond, InputTokens: 800, OutputTokens: 5},
		}},
	}}
	s := traceScenario(t, tr, ", session_affinity: {}")
	for _, c := range []struct {
		name string
		opts []scenario.PlanOption
		want map[int]string
	}{
		{"unsalted", nil, map[int]string{0: "conv-a", 1: "conv-b"}},
		{"salted", []scenario.PlanOption{scenario.PromptSalt(7)}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := scenario.NewPlan(s, c.opts...)
			recs, by := affinityRun(t, p, scenario.DefaultAffinityHeader)
			if len(recs) != 5 {
				t.Fatalf("%d records, want 5", len(recs))
			}
			vals := sessionValues(t, recs, by)
			for i, own := range []string{"conv-a", "conv-b"} {
				v := vals[i]
				switch {
				case c.want != nil && v != c.want[i]:
					t.Errorf("session %d carried %q, want %q", i, v, c.want[i])
				case c.want == nil && (!strings.HasPrefix(v, own+"-") || v == own):
					t.Errorf("salted session %d carried %q, want %q and the salt", i, v, own)
				}
			}
		})
	}
}

// A Weka conversation replays as its sessions, each request carrying its
// session's id (the conversation's, the subagent's ID::sa:AGENT), and its
// 64-token blocks become shared prompt prefixes: the subagent's first
// request, which shares the parent's first two blocks, is served partly
// from the prefix cache. The trace runs at a tenth of its pace: the
// subagent's first request comes 610 ms after the parent's (at a
// hundredth, 61 ms were too few for the parent's answer under -race in
// CI beside the other packages' tests, and nothing was cached yet).
func TestSessionAffinityWeka(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("..", "trace", "testdata", "weka.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	src := "pins:\n  model: {name: m}\nworkload: {kind: trace, file: w.json, time_scale: 0.1, session_affinity: {headers: [X-Session-ID]}}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := scenario.NewPlan(s)
	seen := &headersSeen{names: []string{"X-Session-ID"}, by: map[string][]string{}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, PrefixCaching: boolp(true)}, seen.wrap)
	c := newClient(t, p, simTarget(ts), func(o *endpoint.Options) { o.RequestIDPrefix = "w" })
	r, err := New(p, c, WithTemplate(endpoint.Template{Overhead: 8}))
	if err != nil {
		t.Fatal(err)
	}
	recs := runAll(t, r)
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5", len(recs))
	}
	seen.mu.Lock()
	vals := sessionValues(t, recs, seen.by)
	seen.mu.Unlock()
	if vals[0] != "f64a8d4c-12d" || vals[1] != "f64a8d4c-12d::sa:agent_001" {
		t.Errorf("sessions carried %v", vals)
	}
	for _, rec := range recs {
		if rec.Session == 1 && rec.Turn == 0 && rec.Usage.CachedTokens < 64 {
			t.Errorf("the subagent's first request shares two 64-token blocks with its parent but %d tokens were cached", rec.Usage.CachedTokens)
		}
	}
}

// tokenGateway stands in for llm-d's session-affinity scorer: an answer to
// a request without an x-session-token names a pod of its own in one
// (base64, as the scorer encodes it); a request that carries one is
// recorded with it.
type tokenGateway struct {
	mu     sync.Mutex
	issued int
	by     map[string]string // request id → the token it carried ("" none)
}

func (g *tokenGateway) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			tok := r.Header.Get("X-Session-Token")
			g.mu.Lock()
			g.by[r.Header.Get("X-Request-Id")] = tok
			if tok == "" {
				g.issued++
				tok = base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("default/pod-%d", g.issued)))
			}
			g.mu.Unlock()
			w.Header().Set("X-Session-Token", tok)
		}
		next.ServeHTTP(w, r)
	})
}

// With echo, a session sends back the token its first answer gave on
// every later turn: the first turn carries none, every later one the
// same, and sessions keep their own.
func TestSessionAffinityEcho(t *testing.T) {
	t.Parallel()
	p := mustPlan(t, sessionsPlan(t, "on_429: backoff", "on_429: backoff\n  session_affinity: {headers: [], echo: [x-session-token]}"))
	g := &tokenGateway{by: map[string]string{}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, g.wrap)
	c := newClient(t, p, simTarget(ts), func(o *endpoint.Options) { o.RequestIDPrefix = "e" })
	r, err := New(p, c, WithTemplate(endpoint.Template{Overhead: 8, PerMessage: 5}))
	if err != nil {
		t.Fatal(err)
	}
	recs := runAll(t, r)
	g.mu.Lock()
	defer g.mu.Unlock()
	tokens := map[int]string{}
	owner := map[string]int{}
	later := 0
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("%s %s", rec.Err, rec.ErrMsg)
		}
		tok := g.by[rec.RequestID]
		if rec.Turn == 0 {
			if tok != "" {
				t.Errorf("session %d's first turn carried %q before any answer", rec.Session, tok)
			}
			continue
		}
		later++
		if tok == "" {
			t.Errorf("session %d turn %d sent no token back", rec.Session, rec.Turn)
			continue
		}
		if prev, ok := tokens[rec.Session]; ok && prev != tok {
			t.Errorf("session %d turn %d sent %q back, an earlier turn %q", rec.Session, rec.Turn, tok, prev)
		}
		if o, ok := owner[tok]; ok && o != rec.Session {
			t.Errorf("sessions %d and %d both sent %q back", o, rec.Session, tok)
		}
		tokens[rec.Session], owner[tok] = tok, rec.Session
	}
	if later == 0 || len(tokens) < 2 {
		t.Fatalf("%d later turns in %d sessions: nothing to check", later, len(tokens))
	}
}
