package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// The MLPerf agentic sample: two conversations of 3 and 2 client turns,
// written from MLPerf's published field list.
const (
	mlperfFile = "../trace/testdata/mlperf/agentic.jsonl"
	mlperfSHA  = "cb435a3b7e515da5305046edb46f4bc38122cd0f935a0a1cf2baa14d5da02ad8"
)

// seen is one request as the server received it.
type seen struct {
	session       string
	arrived, done time.Time
	body          struct {
		Messages           []json.RawMessage `json:"messages"`
		Tools              json.RawMessage   `json:"tools"`
		ChatTemplateKwargs *struct {
			PreserveThinking bool `json:"preserve_thinking"`
		} `json:"chat_template_kwargs"`
	}
}

// recorder wraps a handler and keeps every chat request with a session
// id it serves.
type recorder struct {
	mu   sync.Mutex
	reqs []*seen
}

func (rc *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") || r.Header.Get(scenario.DefaultAffinityHeader) == "" {
			// The probe's requests, not the replay's.
			h.ServeHTTP(w, r)
			return
		}
		s := &seen{session: r.Header.Get(scenario.DefaultAffinityHeader), arrived: time.Now()}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &s.body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
		s.done = time.Now()
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, s)
		rc.mu.Unlock()
	})
}

// bySession groups the requests by X-Session-ID, in the order served.
func (rc *recorder) bySession() map[string][]*seen {
	m := map[string][]*seen{}
	for _, s := range rc.reqs {
		m[s.session] = append(m[s.session], s)
	}
	return m
}

func mlperfPlan(t *testing.T, workload string, pins string) *scenario.Plan {
	t.Helper()
	abs, err := filepath.Abs(mlperfFile)
	if err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf("pins:\n  model: {name: m}\n%sworkload: {kind: trace, format: mlperf-agentic, file: %s, sha256: %s%s}\n", pins, abs, mlperfSHA, workload)
	return scenario.NewPlan(loadScenarioSrc(t, t.TempDir(), src))
}

// A short MLPerf-agentic file replays as MLPerf's reference client plays
// it: every client row one request with the conversation so far (tools,
// tool calls, tool results, reasoning), sent after its delay, under the
// trajectory's X-Session-ID, its system prompt salted per repeat and
// conversation.
func TestMLPerfReplay(t *testing.T) {
	rc := &recorder{}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone, PrefixCaching: boolp(true)}, rc.wrap)
	const scale = 0.5
	p := mlperfPlan(t, fmt.Sprintf(", sessions: 4, time_scale: %g", scale), "  concurrency: {streams: 2}\n")
	r := newProbedRunner(t, p, endpoint.Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel})
	recs := runAll(t, r)
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10 (5 client turns × 2 repeats)", len(recs))
	}
	for _, rec := range recs {
		if rec.Failed() {
			t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
		}
	}
	d, err := trace.ReadMLPerfAgentic(mlperfFile, mlperfSHA)
	if err != nil {
		t.Fatal(err)
	}
	by := rc.bySession()
	if len(by) != 4 {
		t.Fatalf("sessions %v, want c1, c2, c1__repeat_2, c2__repeat_2", keys(by))
	}
	for _, c := range d.Conversations {
		var delays []time.Duration
		for _, row := range c.Rows {
			if row.Client() {
				delays = append(delays, row.Delay)
			}
		}
		for repeat := 1; repeat <= 2; repeat++ {
			id := trace.MLPerfSessionID(c.ID, repeat)
			reqs := by[id]
			if len(reqs) != len(delays) {
				t.Fatalf("%s: %d requests, want %d", id, len(reqs), len(delays))
			}
			rs, cs := trace.MLPerfSalts(repeat, c.ID)
			var sys struct{ Role, Content string }
			for k, s := range reqs {
				json.Unmarshal(s.body.Messages[0], &sys)
				if sys.Role != "system" || !strings.HasPrefix(sys.Content, "[salt: "+rs+"]\n\n") || !strings.HasSuffix(sys.Content, "\n\n[salt: "+cs+"]") {
					t.Errorf("%s turn %d: system message %.60q, want salts %s and %s", id, k, sys.Content, rs, cs)
				}
				if !bytes.HasPrefix(s.body.Tools, []byte(`[{"type":"function"`)) {
					t.Errorf("%s turn %d: tools %s", id, k, s.body.Tools)
				}
				if s.body.ChatTemplateKwargs == nil || !s.body.ChatTemplateKwargs.PreserveThinking {
					t.Errorf("%s turn %d: no preserve_thinking", id, k)
				}
				if k == 0 {
					continue
				}
				// Each request extends the last one's conversation byte for
				// byte, after the recorded delay (at the time scale).
				prev := reqs[k-1]
				for j, m := range prev.body.Messages {
					if !bytes.Equal(m, s.body.Messages[j]) {
						t.Errorf("%s turn %d: message %d differs from the previous request's", id, k, j)
					}
				}
				if gap, want := s.arrived.Sub(prev.done), time.Duration(float64(delays[k])*scale); gap < want {
					t.Errorf("%s turn %d sent %v after the last answer, want ≥ %v", id, k, gap, want)
				}
			}
		}
	}
	// Repeats do not share a salt; conversations keep theirs.
	r1, c1 := trace.MLPerfSalts(1, "c1")
	r2, c2 := trace.MLPerfSalts(2, "c2")
	if r1 == r2 || c1 == c2 {
		t.Errorf("salts %s %s %s %s", r1, r2, c1, c2)
	}
	// c1's last request: the whole conversation in OpenAI's wire format.
	last := by["c1"][2].body.Messages
	var roles []string
	for _, m := range last {
		var v struct{ Role string }
		json.Unmarshal(m, &v)
		roles = append(roles, v.Role)
	}
	if got := strings.Join(roles, " "); got != "system user assistant tool assistant user" {
		t.Fatalf("roles %s", got)
	}
	for j, want := range map[int]string{
		2: `{"role":"assistant","content":null,"tool_calls":[{"id":"functions.bash:0","type":"function","function":{"name":"bash","arguments":"{\"cmd\": \"cat dates/parse.py\"}"}}],"reasoning_content":"The failure is`,
		3: `{"role":"tool","content":"def parse(s):\n`,
		4: `{"role":"assistant","content":"The parser swaps`,
	} {
		if !strings.HasPrefix(string(last[j]), want) {
			t.Errorf("message %d: %.200s\nwant %s…", j, last[j], want)
		}
	}
	if !strings.Contains(string(last[3]), `"tool_call_id":"functions.bash:0"`) {
		t.Errorf("tool message %s", last[3])
	}
	// The later turns of a trajectory are served from the prefix cache.
	for _, rec := range recs {
		if rec.Turn > 0 && rec.Usage.CachedTokens == 0 {
			t.Errorf("trajectory %d turn %d: nothing cached", rec.Session, rec.Turn)
		}
	}
}

func keys(m map[string][]*seen) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// preserve_reasoning is verified by the served prompt lengths: kept, each
// later turn's prompt is longer by exactly the reasoning of the answers
// before it (the simulator counts it under preserve_thinking, as Qwen's
// template does); dropped, it is not sent at all.
func TestMLPerfPreserveReasoning(t *testing.T) {
	d, err := trace.ReadMLPerfAgentic(mlperfFile, mlperfSHA)
	if err != nil {
		t.Fatal(err)
	}
	served := map[bool]map[[2]int]int{}
	for _, keep := range []bool{true, false} {
		rc := &recorder{}
		ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, rc.wrap)
		p := mlperfPlan(t, fmt.Sprintf(", preserve_reasoning: %t, time_scale: 0.01", keep), "  concurrency: {streams: 1}\n")
		if got := *p.Declared(scenario.Wire{}).Prompt.PreserveReasoning; got != keep {
			t.Fatalf("declared preserve_reasoning %t", got)
		}
		r := newProbedRunner(t, p, endpoint.Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel})
		served[keep] = map[[2]int]int{}
		for _, rec := range runAll(t, r) {
			if rec.Failed() || !rec.HasUsage {
				t.Fatalf("%s: %s", rec.Err, rec.ErrMsg)
			}
			served[keep][[2]int{rec.Session, rec.Turn}] = rec.Usage.PromptTokens
		}
		for _, s := range rc.reqs {
			sent := false
			for _, m := range s.body.Messages {
				sent = sent || bytes.Contains(m, []byte(`"reasoning_content"`))
			}
			if sent != keep && len(s.body.Messages) > 2 {
				t.Errorf("preserve_reasoning %t: a request re-sent reasoning: %t", keep, sent)
			}
		}
	}
	for i, c := range d.Conversations {
		reasoning, k := 0, 0
		for _, row := range c.Rows {
			if !row.Client() {
				reasoning += len(strings.Fields(row.Reasoning))
				continue
			}
			key := [2]int{i, k}
			if diff := served[true][key] - served[false][key]; diff != reasoning {
				t.Errorf("%s turn %d: kept %d − dropped %d = %d prompt tokens, want the %d reasoning tokens before it",
					c.ID, k, served[true][key], served[false][key], diff, reasoning)
			}
			k++
		}
		if reasoning == 0 {
			t.Fatalf("%s has no reasoning: the test proves nothing", c.ID)
		}
	}
}

// Every request of a replay is a record of its trajectory, the last one
// marked as the trajectory's end.
func TestMLPerfTrajectoryEnds(t *testing.T) {
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
	p := mlperfPlan(t, ", time_scale: 0.01", "")
	r := newProbedRunner(t, p, endpoint.Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel})
	ends := 0
	for _, rec := range runAll(t, r) {
		if rec.SessionEnd == record.SessionEndTurns {
			ends++
		}
	}
	if ends != 2 {
		t.Errorf("%d trajectories ended, want 2", ends)
	}
}

// Re-sent reasoning and MLPerf's conversations are chat completions'
// members: another protocol is refused before a request is sent.
func TestMLPerfNeedsChat(t *testing.T) {
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, nil)
	for _, c := range []struct {
		plan *scenario.Plan
		want string
	}{
		{mlperfPlan(t, "", ""), "MLPerf's agentic dataset is replayed over chat completions"},
		{mustPlan(t, sessionsPlan(t, "on_429: backoff", "on_429: backoff\n  preserve_reasoning: true")), "preserve_reasoning: true re-sends reasoning"},
	} {
		tg := endpoint.Target{BaseURL: ts.URL + "/v1", Model: sim.DefaultModel, Protocol: endpoint.ProtocolMessages}
		c2, err := endpoint.New(tg, ClientOptions(c.plan))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(c.plan, c2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want %q", err, c.want)
		}
	}
}

// An MLPerf replay's requests carry MLPerf's own trajectory ids (the
// conversation's, then "__repeat_N"), never a salted trace id: in
// X-Session-ID, which MLPerf requires on every request, and in the other
// headers workload.session_affinity declares; and each trajectory sends
// back the token its first answer gave (echo), on every later request.
func TestMLPerfSessionAffinity(t *testing.T) {
	p := mlperfPlan(t, ", sessions: 4, time_scale: 0.01, session_affinity: {headers: [x-user-id], echo: [x-session-token]}", "  concurrency: {streams: 2}\n")
	seen := &headersSeen{names: []string{"X-Session-ID", "X-User-Id"}, by: map[string][]string{}}
	g := &tokenGateway{by: map[string]string{}}
	ts, _ := serveSim(t, sim.Config{Timing: sim.TimingNone}, func(h http.Handler) http.Handler { return seen.wrap(g.wrap(h)) })
	c := newClient(t, p, simTarget(ts), func(o *endpoint.Options) { o.RequestIDPrefix = "ml" })
	r, err := New(p, c, WithTemplate(endpoint.Template{Overhead: 8, PerMessage: 5}))
	if err != nil {
		t.Fatal(err)
	}
	recs := runAll(t, r)
	if len(recs) != 10 {
		t.Fatalf("%d records, want 10 (5 client turns × 2 repeats)", len(recs))
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	vals := sessionValues(t, recs, seen.by)
	convs := p.MLPerf().Conversations
	for i, v := range vals {
		if want := trace.MLPerfSessionID(convs[i%len(convs)].ID, i/len(convs)+1); v != want {
			t.Errorf("trajectory %d carried %q, want MLPerf's id %q", i, v, want)
		}
	}
	if len(vals) != 4 {
		t.Errorf("%d trajectories, want 4", len(vals))
	}
	tokens := map[int]string{}
	for _, rec := range recs {
		tok := g.by[rec.RequestID]
		switch prev, ok := tokens[rec.Session]; {
		case rec.Turn == 0 && tok != "":
			t.Errorf("trajectory %d's first request carried %q before any answer", rec.Session, tok)
		case rec.Turn > 0 && tok == "":
			t.Errorf("trajectory %d turn %d sent no token back", rec.Session, rec.Turn)
		case rec.Turn > 0 && ok && prev != tok:
			t.Errorf("trajectory %d turn %d sent %q back, an earlier turn %q", rec.Session, rec.Turn, tok, prev)
		case rec.Turn > 0:
			tokens[rec.Session] = tok
		}
	}
}
