package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

// A from-logs scenario's prompts are exact by every tokenizer kind, and
// the card declares where they come from.
func TestFromLogsExactPrompts(t *testing.T) {
	t.Parallel()
	for _, tok := range []string{"words", "qwen2", "o200k_base"} {
		t.Run(tok, func(t *testing.T) {
			t.Parallel()
			o, err := run(t, Config{ScenarioPath: "testdata/from-logs.yaml", Profile: simProfile(t, tok)})
			if err != nil {
				t.Fatal(err)
			}
			checkExact(t, o.Run)
			if got := o.Run.Pins.Prompt.Declared.Content; got != "from-logs (../../analyze/testdata)" {
				t.Errorf("declared content %q", got)
			}
		})
	}
}

// promptCatcher stands in front of the simulator and keeps every chat
// request's prompt (its messages' text, joined).
type promptCatcher struct {
	mu      sync.Mutex
	prompts []string
}

func (c *promptCatcher) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			data, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(data))
			var body struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			if json.Unmarshal(data, &body) == nil {
				var sb strings.Builder
				for _, m := range body.Messages {
					sb.WriteString(m.Content)
				}
				c.mu.Lock()
				c.prompts = append(c.prompts, sb.String())
				c.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

// runCaught runs the from-logs scenario against the simulator behind a
// promptCatcher, with the prompt salt given, and returns the prompts of
// the load (the template probe's one-token prompt left out), sorted.
func runCaught(t *testing.T, salt string) ([]string, *results.Run) {
	t.Helper()
	var c promptCatcher
	url := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, c.wrap)
	o, err := run(t, Config{ScenarioPath: "testdata/from-logs.yaml", Profile: "vllm", Endpoint: url, Model: "m", Tokenizer: "words", PromptSalt: salt})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, p := range c.prompts {
		if len(strings.Fields(p)) >= 10 {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, o.Run
}

// The prompts are the logs' lines, the same for the same seed and salt,
// and the results file does not keep them.
func TestFromLogsPromptsComeFromTheLogs(t *testing.T) {
	t.Parallel()
	a, r := runCaught(t, "00000000000000a1")
	b, _ := runCaught(t, "00000000000000a1")
	other, _ := runCaught(t, "00000000000000b2")
	if len(a) != 16 {
		t.Fatalf("%d prompts of the load caught, want 16", len(a))
	}
	checkExact(t, r)
	// Lines of a Claude Code transcript (a prompt, a tool result) and of a
	// Codex rollout (an answer), as the pool makes them.
	lines := []string{" the parser test fails, fix it\n", "    parse_test.go:12: got 1, want 2\n", " It reads runes.\n"}
	found := map[string]int{}
	for _, p := range a {
		for _, l := range lines {
			if strings.Contains(p, l) {
				found[l]++
			}
		}
		if strings.Contains(p, " river") && !strings.Contains(p, "\n") {
			t.Errorf("a prose prompt: %.200q", p)
		}
	}
	for _, l := range lines {
		if found[l] == 0 {
			t.Errorf("line %q of the logs in no prompt", l)
		}
	}
	if !slices.Equal(a, b) {
		t.Error("the same seed and salt built other prompts")
	}
	if slices.Equal(a, other) {
		t.Error("another salt built the same prompts")
	}
}

// The results file records the logs' path, never their text.
func TestFromLogsResultsKeepNoText(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "r.json")
	if _, err := run(t, Config{ScenarioPath: "testdata/from-logs.yaml", Profile: "sim-instant", Output: path}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"parser test fails", "parse_test.go", "reads runes", "lexer"} {
		if bytes.Contains(data, []byte(text)) {
			t.Errorf("the results file holds the logs' text %q", text)
		}
	}
	if !bytes.Contains(data, []byte("from-logs (../../analyze/testdata)")) {
		t.Error("the results file does not name the logs")
	}
}

// Logs that give no text are refused before any load, as bad input.
func TestFromLogsWithoutText(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	// A transcript of records that are no messages.
	if err := os.WriteFile(filepath.Join(logs, "s.jsonl"), []byte(`{"type":"summary","summary":"nothing"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/from-logs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, bytes.Replace(src, []byte("../../analyze/testdata"), []byte("logs"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	var c promptCatcher
	url := simServer(t, sim.Config{Model: "m", Timing: sim.TimingNone, Tokenizer: "words"}, c.wrap)
	_, err = run(t, Config{ScenarioPath: path, Profile: "vllm", Endpoint: url, Model: "m", Tokenizer: "words"})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "pins.prompt.logs logs: 0 messages") {
		t.Errorf("err = %v, want bad input naming pins.prompt.logs", err)
	}
	if len(c.prompts) != 0 {
		t.Errorf("%d requests sent", len(c.prompts))
	}
}

// A content check of a from-logs scenario runs sixpin's own classes,
// which drop the logs, and a slice of the user's own logs, which keeps
// them and is the base the others are compared with; on a speculating
// simulator every slice measures decode.
func TestFromLogsContentCheckSlices(t *testing.T) {
	sc, err := scenario.Load("testdata/from-logs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkContentCheck(Config{ContentCheck: true}, sc); err != nil {
		t.Fatal(err)
	}
	for _, class := range contentClassesOf(sc) {
		s, err := contentSlice(sc, class, time.Minute)
		if keeps := class == scenario.ContentFromLogs; err != nil || (s.LogsPath() != "") != keeps {
			t.Errorf("%s slice: %v, logs %q", class, err, s.Pins.Prompt.Logs)
		}
	}
	o, err := run(t, Config{ScenarioPath: "testdata/from-logs.yaml", Profile: "sim-spec-healthy", TimeScale: 0.1, Requests: 24,
		ContentCheck: true, ContentCheckSlice: 5 * time.Second, AllowPinMismatch: []string{"model"}})
	if o == nil || o.Run == nil || o.Run.ContentCheck == nil {
		t.Fatalf("no content check: %v", err)
	}
	cc := o.Run.ContentCheck
	if cc.Base != scenario.ContentFromLogs || len(cc.Classes) != len(scenario.ContentClasses)+1 || cc.Incomplete {
		t.Fatalf("content check: base %q, %d slices, missing %v", cc.Base, len(cc.Classes), cc.Missing)
	}
	last := cc.Classes[len(cc.Classes)-1]
	if last.Class != scenario.ContentFromLogs || last.DecodeTokS == nil || last.Ratio == nil || *last.Ratio != 1 {
		t.Errorf("the logs' slice: %+v", last)
	}
}
