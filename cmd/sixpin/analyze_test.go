package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/analyze"
	oc "github.com/sixpin/sixpin/analyze/opencodetest"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/trace"
)

var analyzeT0 = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC).UnixMilli()

// opencodeDB writes a small opencode database: two sessions of a cloud
// and a local model, the cloud one's turns cut at their tool calls.
func opencodeDB(t *testing.T, dir string) string {
	d := oc.New(t, dir)
	for i := range 5 {
		at := analyzeT0 + int64(i)*10_000
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_c%d", i), Session: "ses_c", Provider: "cerebras", Model: "qwen-3.8-27b", Created: at, Completed: at + 5000,
			Finish: "tool-calls", Input: 2000, CacheRead: 10000 * i, Output: 300, Reasoning: 100, Parts: []oc.Part{oc.Text(at+300, at+700), oc.Tool(at+1000, at+5000)}})
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_l%d", i), Session: "ses_l", Provider: "local", Model: "qwen-3.8-27b", Created: at, Completed: at + 4000,
			Finish: "stop", Input: 1000, CacheRead: 9000 * i, Output: 400, Parts: []oc.Part{oc.Text(at+500, at+4000)}})
	}
	return d.Close()
}

// runAnalyze runs `sixpin analyze ARGS...` on NewCmdAnalyze with captured
// streams and the given environment.
func runAnalyze(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := &Factory{
		IO:     &IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Getenv: func(k string) string { return env[k] },
		Hard:   context.Background(),
	}
	cmd := NewCmdAnalyze(f)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

func TestAnalyzeFlags(t *testing.T) {
	t.Parallel()
	var got *AnalyzeOptions
	f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
	cmd := NewCmdAnalyzeOpencode(f, func(_ *cobra.Command, o *AnalyzeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--db", "a.db", "--db", "b.db", "--since", "30d", "--until", "2026-11-01", "--provider", "cerebras",
		"--model", "qwen", "--model", "gpt-5*", "--min-output", "10", "--tool-cut", "any-tool", "--format", "md", "-o", "r.md", "--charts", "charts",
		"--profile", "sim-cerebras-27b", "--export-trace", "t.jsonl", "--export-scenario", "prod.yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := AnalyzeOptions{Source: "opencode", DBs: []string{"a.db", "b.db"}, Since: "30d", Until: "2026-11-01", Providers: []string{"cerebras"},
		Models: []string{"qwen", "gpt-5*"}, MinOutput: 10, ToolCut: "any-tool", Format: "md", FormatSet: true, Output: "r.md", Charts: "charts",
		Profile: "sim-cerebras-27b", ExportTrace: "t.jsonl", ExportScenario: "prod.yaml"}
	got.F, got.Now = nil, nil
	if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", want) {
		t.Errorf("options:\n got %+v\nwant %+v", *got, want)
	}
	cmd = NewCmdAnalyzeOpencode(f, func(_ *cobra.Command, o *AnalyzeOptions) error { got = o; return nil })
	cmd.SetArgs(nil)
	cmd.Execute()
	if got.MinOutput != analyze.DefaultMinOutputTokens || got.Format != "text" || got.FormatSet || got.ToolCut != analyze.ToolCutReference {
		t.Errorf("defaults: %+v", *got)
	}
}

func TestAnalyzeOpencode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := opencodeDB(t, t.TempDir())
	before, _ := os.ReadFile(db)

	out, _, err := runAnalyze(t, nil, "opencode", "--db", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cerebras/qwen-3.8-27b", "local/qwen-3.8-27b", "PROVIDER/MODEL", "10 generations of 2 models in 2 sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runAnalyze(t, nil, "opencode", "--db", db, "--format", "json", "--model", "qwen", "--provider", "cerebras", "--profile", "sim-cerebras-27b")
	if err != nil {
		t.Fatal(err)
	}
	var rep analyze.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	// 400 tokens in the 1 s before the tool call: 400 tok/s, not 80.
	if len(rep.Models) != 1 || rep.Models[0].EffectiveTokS.P50 != 400 || rep.Cost == nil || rep.Sessions.Buckets[1].Limit != 450000 {
		t.Errorf("report: %d models, %+v, cost %+v", len(rep.Models), rep.Models[0].EffectiveTokS, rep.Cost)
	}

	mdPath := filepath.Join(dir, "report.md")
	tr := filepath.Join(dir, "sessions.jsonl")
	charts := filepath.Join(dir, "charts")
	out, errOut, err := runAnalyze(t, nil, "opencode", "--db", db, "-o", mdPath, "--charts", charts, "--export-trace", tr)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("stdout %q with -o, want nothing", out)
	}
	md, _ := os.ReadFile(mdPath)
	if !strings.HasPrefix(string(md), "# Effective throughput") {
		t.Errorf("-o report.md is not Markdown:\n%s", md)
	}
	for _, want := range []string{"wrote " + mdPath + " (md)", "wrote charts ", "wrote trace " + tr + ": 2 sessions, 10 turns"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, name := range []string{report.ChartBoxPlot + ".svg", report.ChartContext + ".svg"} {
		if _, err := os.Stat(filepath.Join(charts, name)); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
	back, err := trace.Read(tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Sessions) != 2 || back.Turns() != 10 || back.Sessions[0].Turns[4].CachedTokens == 0 {
		t.Errorf("trace: %+v", back.Sessions)
	}

	for _, format := range []string{"csv", "md"} {
		out, _, err := runAnalyze(t, nil, "opencode", "--db", db, "--format", format)
		if err != nil || out == "" {
			t.Errorf("--format %s: %v, %d bytes", format, err, len(out))
		}
	}

	after, _ := os.ReadFile(db)
	if !bytes.Equal(before, after) {
		t.Error("the database changed")
	}
}

func TestAnalyzeDefaultDB(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	os.MkdirAll(filepath.Join(data, "opencode"), 0o755)
	opencodeDB(t, filepath.Join(data, "opencode"))
	out, _, err := runAnalyze(t, map[string]string{"XDG_DATA_HOME": data}, "opencode")
	if err != nil || !strings.Contains(out, filepath.Join(data, "opencode", "opencode.db")) {
		t.Errorf("default database under $XDG_DATA_HOME: %v\n%s", err, out)
	}
	home := t.TempDir()
	_, _, err = runAnalyze(t, map[string]string{"HOME": home}, "opencode")
	want := filepath.Join(home, ".local", "share", "opencode", "opencode.db")
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err = %v, want a missing-database error naming %s", err, want)
	}
}

func TestAnalyzeErrorsAreBadInput(t *testing.T) {
	t.Parallel()
	db := opencodeDB(t, t.TempDir())
	notDB := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 20)), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"opencode", "--db", "/nope/opencode.db"}, "opencode database /nope/opencode.db: no such file"},
		{[]string{"opencode", "--db", notDB}, "opencode database " + notDB + ": not a SQLite database"},
		{[]string{"opencode", "--db", db, "--since", "soon"}, "--since: "},
		{[]string{"opencode", "--db", db, "--until", "yesterday"}, "--until: "},
		{[]string{"opencode", "--db", db, "--since", "2026-11-02", "--until", "2026-11-01"}, "is not before --until"},
		{[]string{"opencode", "--db", db, "--format", "html"}, `--format "html"`},
		{[]string{"opencode", "--db", db, "--profile", "nope"}, `no profile "nope"`},
		{[]string{"opencode", "--db", db, "--min-output", "-1"}, "--min-output must be ≥ 0"},
		{[]string{"opencode", "--db", db, "--tool-cut", "never"}, `--tool-cut "never": want reference or any-tool`},
		{[]string{"opencode", "--db", db, "--nope"}, "unknown flag"},
		{[]string{"opencode", "extra"}, "unknown command"},
	} {
		_, _, err := runAnalyze(t, nil, c.args...)
		var bad errBadInput
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: err = %v, want one-line bad input containing %q", c.args, err, c.want)
		}
	}
}

var (
	claudeFixtures = filepath.Join("..", "..", "analyze", "testdata", "claude-code")
	codexFixtures  = filepath.Join("..", "..", "analyze", "testdata", "codex")
)

func TestAnalyzeClaudeCodeAndCodex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		source, dir string
		env         map[string]string
		want        []string
	}{
		{"claude-code", claudeFixtures, nil, []string{"Claude Code: 3 files", "anthropic/claude-sonnet-4-5-20250929", "5 generations of 2 models in 3 sessions",
			"decode       not available: Claude Code's transcripts record no first-token time", "skipped: 1 unreadable line"}},
		{"codex", codexFixtures, nil, []string{"Codex: 2 files", "openai/gpt-5-codex", "4 generations of 2 models in 2 sessions",
			"Rate limits as Codex reported them: primary (5-hour window) at most 7.5% used (4 reports); secondary (7-day window) at most 2% used"}},
	} {
		t.Run(c.source, func(t *testing.T) {
			t.Parallel()
			out, _, err := runAnalyze(t, c.env, c.source, c.dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("text report lacks %q:\n%s", w, out)
				}
			}
			out, _, err = runAnalyze(t, nil, c.source, c.dir, "--format", "json", "--profile", "sim-cerebras-27b")
			var rep analyze.Report
			if err != nil || json.Unmarshal([]byte(out), &rep) != nil || rep.Source != c.source || rep.Cost == nil || len(rep.Unavailable) == 0 {
				t.Errorf("--format json: %v\n%s", err, out)
			}
			tr := filepath.Join(t.TempDir(), "t.jsonl")
			md, errOut, err := runAnalyze(t, nil, c.source, c.dir, "--format", "md", "--export-trace", tr, "--charts", filepath.Join(t.TempDir(), "c"))
			if err != nil || !strings.Contains(md, "Not available from these logs: decode_tok_s, prefill_share, ttft_s") || !strings.Contains(errOut, "wrote trace "+tr) {
				t.Errorf("md/trace/charts: %v\n%s\n%s", err, md, errOut)
			}
			if _, err := trace.Read(tr); err != nil {
				t.Errorf("exported trace: %v", err)
			}
		})
	}
}

func TestAnalyzeDefaultLogDirs(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, c := range []struct {
		source string
		env    map[string]string
		want   string
	}{
		{"claude-code", map[string]string{"HOME": home}, filepath.Join(home, ".claude", "projects")},
		{"claude-code", map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": filepath.Join(home, "cc")}, filepath.Join(home, "cc", "projects")},
		{"codex", map[string]string{"HOME": home}, filepath.Join(home, ".codex", "sessions")},
		{"codex", map[string]string{"HOME": home, "CODEX_HOME": filepath.Join(home, "cx")}, filepath.Join(home, "cx", "sessions")},
	} {
		_, _, err := runAnalyze(t, c.env, c.source)
		var bad errBadInput
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want+": no such file or directory") {
			t.Errorf("%s %v: err = %v, want a bad-input error naming %s", c.source, c.env, err, c.want)
		}
	}
}

// TestAnalyzeExportScenario: every source exports a scenario that loads,
// its header naming the logs it came from.
func TestAnalyzeExportScenario(t *testing.T) {
	t.Parallel()
	db := opencodeDB(t, t.TempDir())
	for _, c := range []struct {
		args []string
		from string
	}{
		{[]string{"opencode", "--db", db}, "# From the opencode database " + db},
		{[]string{"claude-code", claudeFixtures}, "# From Claude Code's logs: " + claudeFixtures},
		{[]string{"codex", codexFixtures, "--since", "2026-10-01"}, "# Filters: since 2026-10-01T00:00:00"},
	} {
		t.Run(c.args[0], func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "prod.yaml")
			_, errOut, err := runAnalyze(t, nil, append(c.args, "--export-scenario", path)...)
			if err != nil {
				t.Fatal(err)
			}
			s, err := scenario.Load(path)
			if err != nil {
				t.Fatalf("the exported scenario does not load: %v", err)
			}
			data, _ := os.ReadFile(path)
			if !s.Workload.Agentic() || s.Name != "prod" || !strings.Contains(string(data), c.from) || !strings.Contains(errOut, "wrote scenario "+path+": ") {
				t.Errorf("scenario %+v\n%s\n%s", s, data, errOut)
			}
		})
	}
	_, _, err := runAnalyze(t, nil, "opencode", "--db", db, "--model", "nope", "--export-scenario", filepath.Join(t.TempDir(), "x.yaml"))
	var bad errBadInput
	if !errors.As(err, &bad) || !strings.Contains(err.Error(), "no sessions to fit") {
		t.Errorf("no sessions: err = %v", err)
	}
}
