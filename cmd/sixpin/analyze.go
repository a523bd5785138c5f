package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/trace"
)

// NewCmdAnalyze builds `sixpin analyze` and its subcommands.
func NewCmdAnalyze(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Measure real agentic work from session logs",
	}
	asGroup(cmd)
	cmd.AddCommand(NewCmdAnalyzeOpencode(f, nil), NewCmdAnalyzeClaudeCode(f, nil), NewCmdAnalyzeCodex(f, nil))
	return cmd
}

// AnalyzeOptions are `sixpin analyze SOURCE`'s dependencies and flags.
type AnalyzeOptions struct {
	F      *Factory
	Source string
	// DBs are opencode's databases (--db); Paths the transcript files or
	// directories of the other sources (arguments).
	DBs         []string
	Paths       []string
	Since       string
	Until       string
	Providers   []string
	Models      []string
	MinOutput   int
	ToolCut     string
	Format      string
	FormatSet   bool
	Output      string
	Charts      string
	Profile     string
	ExportTrace string
	// ExportScenario is where to write the fitted scenario (YAML).
	ExportScenario string
	// Now is the clock --since/--until count back from (time.Now).
	Now func() time.Time
}

// analyzeCommon registers the flags every source takes.
func analyzeCommon(fl *pflag.FlagSet, opts *AnalyzeOptions) {
	fl.StringVar(&opts.Since, "since", "", "only generations from then on: 30d, 12h, 2026-11-01, 2026-11-01T15:04")
	fl.StringVar(&opts.Until, "until", "", "only generations before then (a bare date includes that day)")
	fl.StringArrayVar(&opts.Providers, "provider", nil, "only providers whose id contains P, or matches it as a glob with * or ? (repeatable)")
	fl.StringArrayVar(&opts.Models, "model", nil, "only models whose id contains M, or matches it as a glob with * or ? (repeatable)")
	fl.IntVar(&opts.MinOutput, "min-output", analyze.DefaultMinOutputTokens, "fewest output + reasoning tokens of a throughput sample")
	fl.StringVar(&opts.Format, "format", "text", "report format: "+strings.Join(report.AnalyzeFormats, ", ")+" (default from -o's extension, else text)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	fl.StringVar(&opts.Charts, "charts", "", "write charts (SVG) into DIR")
	fl.StringVar(&opts.Profile, "profile", "", "rate limits and prices from a profile: an embedded NAME or a YAML FILE")
	fl.StringVar(&opts.ExportTrace, "export-trace", "", "write the sessions as a sixpin trace (JSONL) to FILE")
	fl.StringVar(&opts.ExportScenario, "export-scenario", "", "write an agentic scenario (YAML) with the sessions' own pins to FILE")
}

// newCmdAnalyzeSource builds one source's command around the common
// flags; args takes the positional arguments into opts.
func newCmdAnalyzeSource(opts *AnalyzeOptions, cmd *cobra.Command, args func([]string), runF func(*cobra.Command, *AnalyzeOptions) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, a []string) error {
		args(a)
		opts.FormatSet = cmd.Flags().Changed("format")
		if runF != nil {
			return runF(cmd, opts)
		}
		return analyzeRun(cmd, opts)
	}
	analyzeCommon(cmd.Flags(), opts)
	return cmd
}

// NewCmdAnalyzeOpencode builds `sixpin analyze opencode`. runF replaces
// the action in tests.
func NewCmdAnalyzeOpencode(f *Factory, runF func(*cobra.Command, *AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{F: f, Source: analyze.SourceOpencode, Now: time.Now}
	cmd := newCmdAnalyzeSource(opts, &cobra.Command{
		Use:   "opencode",
		Short: "Effective throughput per model from opencode's database (read-only)",
		Long: `Reads opencode's SQLite database, strictly read-only — opencode 1's
message and part tables and OpenCode 2's session_message, each message
once — and reports per provider and model the effective throughput of
real work — (output + reasoning tokens) / generation time, from the
request to the last token, cut at the first tool call as the field
report's tool does (--tool-cut); samples with at least --min-output
tokens and 0.2 s to 1 h — as n, tokens, P10/P25/P50/P75/P90, min and
max; then the context lengths, input:output ratio, cache reads,
effective tok/s per context bucket, pure decode tok/s, TTFT and the
prefill share, tokens per minute per session against a profile's rate
limits, and the bill at its prices.`,
		Example: `  sixpin analyze opencode --since 30d
  sixpin analyze opencode --model qwen --format md -o report.md --charts charts/
  sixpin analyze opencode --db ~/archive/opencode-2026-10.db --db ~/.local/share/opencode/opencode.db
  sixpin analyze opencode --profile sim-cerebras-27b --export-trace sessions.jsonl`,
		Args: argsBadInput(cobra.NoArgs),
	}, func([]string) {}, runF)
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.DBs, "db", nil, "opencode database (repeatable, read together; default $XDG_DATA_HOME/opencode/opencode.db, else ~/.local/share/opencode/opencode.db)")
	fl.StringVar(&opts.ToolCut, "tool-cut", analyze.ToolCutReference, "when a generation's time ends at a tool start: "+strings.Join(analyze.ToolCuts, " or ")+" (see docs/analyze.md)")
	return cmd
}

// NewCmdAnalyzeClaudeCode builds `sixpin analyze claude-code`.
func NewCmdAnalyzeClaudeCode(f *Factory, runF func(*cobra.Command, *AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{F: f, Source: analyze.SourceClaudeCode, Now: time.Now}
	return newCmdAnalyzeSource(opts, &cobra.Command{
		Use:   "claude-code [DIR|FILE...]",
		Short: "Effective throughput per model from Claude Code's transcripts",
		Long: `Reads Claude Code's JSONL transcripts (default $CLAUDE_CONFIG_DIR/projects,
else ~/.claude/projects, searched recursively; subagents' included) and
reports the same figures as analyze opencode where the transcripts
allow: each assistant message (its lines joined by message.id, each
message once across files) is one model call, timed from the user record
before it (a prompt or tool results) to its last line. Transcripts hold
no first-token time: decode tok/s, TTFT and the prefill share are not
available, and the report says so.`,
		Example: `  sixpin analyze claude-code --since 7d
  sixpin analyze claude-code ~/.claude/projects/-home-me-work --format md -o claude.md`,
	}, func(a []string) { opts.Paths = a }, runF)
}

// NewCmdAnalyzeCodex builds `sixpin analyze codex`.
func NewCmdAnalyzeCodex(f *Factory, runF func(*cobra.Command, *AnalyzeOptions) error) *cobra.Command {
	opts := &AnalyzeOptions{F: f, Source: analyze.SourceCodex, Now: time.Now}
	return newCmdAnalyzeSource(opts, &cobra.Command{
		Use:   "codex [DIR|FILE...]",
		Short: "Effective throughput per model from Codex CLI's rollouts",
		Long: `Reads Codex CLI's JSONL rollouts (default ${CODEX_HOME:-~/.codex}/sessions,
searched recursively) and reports the same figures as analyze opencode
where the rollouts allow: each token_count event with new usage is one
model call (last_token_usage, else the change in total_token_usage),
timed from the input before it (the user's message, a tool's output) to
the event, its model the turn_context's. Rollouts hold no first-token
time: decode tok/s, TTFT and the prefill share are not available, and
the report says so. The rate-limit meters Codex records are reported
beside the profile's.`,
		Example: `  sixpin analyze codex --since 30d
  sixpin analyze codex ~/.codex/sessions/2026/10 --profile sim-cerebras-27b`,
	}, func(a []string) { opts.Paths = a }, runF)
}

func analyzeRun(cmd *cobra.Command, opts *AnalyzeOptions) error {
	ios := opts.F.IO
	now := opts.Now()
	a := analyze.Options{
		Source:          opts.Source,
		DBs:             opts.DBs,
		Paths:           opts.Paths,
		Providers:       opts.Providers,
		Models:          opts.Models,
		MinOutputTokens: opts.MinOutput,
		ToolCut:         opts.ToolCut,
		Trace:           opts.ExportTrace != "",
		Scenario:        opts.ExportScenario != "",
		Now:             now,
	}
	switch {
	case a.Source == analyze.SourceOpencode && len(a.DBs) == 0:
		a.DBs = []string{analyze.DefaultDB(opts.F.Getenv)}
	case a.Source == analyze.SourceClaudeCode && len(a.Paths) == 0:
		a.Paths = []string{analyze.ClaudeCodeDir(opts.F.Getenv)}
	case a.Source == analyze.SourceCodex && len(a.Paths) == 0:
		a.Paths = []string{analyze.CodexDir(opts.F.Getenv)}
	}
	var err error
	if opts.Since != "" {
		if a.Since, err = analyze.ParseTime(opts.Since, now, false); err != nil {
			return badInput(fmt.Errorf("--since: %w", err))
		}
	}
	if opts.Until != "" {
		if a.Until, err = analyze.ParseTime(opts.Until, now, true); err != nil {
			return badInput(fmt.Errorf("--until: %w", err))
		}
	}
	format, err := outputFormat(ios.ErrOut, opts.Format, opts.FormatSet, opts.Output, report.AnalyzeFormats)
	if err != nil {
		return err
	}
	if opts.Profile != "" {
		p, err := profiles.Resolve(opts.Profile)
		if err != nil {
			return badInput(err)
		}
		a.Profile, a.Pricing, a.Energy, a.Limits = p.Name, p.Pricing, p.Energy(), p.RateLimits
	}
	rep, err := analyze.Analyze(cmd.Context(), a)
	if err != nil {
		if cmd.Context().Err() != nil {
			return err
		}
		// A database or log that cannot be read (*analyze.DBError,
		// *analyze.FileError) or options that contradict each other.
		return badInput(err)
	}
	if opts.Output == "" {
		if err := report.WriteAnalyze(ios.Out, rep, format); err != nil {
			return err
		}
	} else {
		if err := atomicfile.Write(opts.Output, func(w io.Writer) error { return report.WriteAnalyze(w, rep, format) }); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "wrote %s (%s)\n", opts.Output, format)
	}
	if opts.Charts != "" {
		if rep.Counts.Samples == 0 {
			fmt.Fprintln(ios.ErrOut, "no charts: no throughput samples")
		} else {
			files, err := report.WriteAnalyzeCharts(opts.Charts, rep)
			if err != nil {
				return err
			}
			fmt.Fprintf(ios.ErrOut, "wrote charts %s\n", strings.Join(files, ", "))
		}
	}
	if opts.ExportTrace != "" {
		t := rep.Trace
		if err := atomicfile.Write(opts.ExportTrace, func(w io.Writer) error { return trace.Write(w, t) }); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "wrote trace %s: %d sessions, %d turns\n", opts.ExportTrace, len(t.Sessions), t.Turns())
	}
	if opts.ExportScenario != "" {
		if err := exportScenario(opts.ExportScenario, rep, ios.ErrOut); err != nil {
			return err
		}
	}
	return nil
}

// exportScenario writes rep's fitted scenario to path, atomically, once
// it has read back as a valid scenario.
func exportScenario(path string, rep *analyze.Report, errOut io.Writer) error {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var buf bytes.Buffer
	if err := rep.WriteScenario(&buf, name); err != nil {
		err = fmt.Errorf("--export-scenario %s: %w", path, err)
		if errors.Is(err, analyze.ErrNoSessions) {
			return badInput(err)
		}
		return err
	}
	if _, err := scenario.Parse(path, buf.Bytes()); err != nil {
		return fmt.Errorf("--export-scenario %s: the fitted scenario does not validate: %w", path, err)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return err
	}
	f := rep.Scenario
	fmt.Fprintf(errOut, "wrote scenario %s: %d sessions, %d at once (peak %d), first prompt %s, output %s\n",
		path, f.Sessions, max(f.MedianSessions, 1), f.PeakSessions, f.FirstPrompt.Dist, f.Output.Dist)
	return nil
}
