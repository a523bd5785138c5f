package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/analyze"
	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/trace"
)

// NewCmdAnalyze builds `sixpin analyze` and its subcommands.
func NewCmdAnalyze(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Measure real agentic work from session logs",
	}
	cmd.AddCommand(NewCmdAnalyzeOpencode(f, nil))
	return cmd
}

// AnalyzeOpencodeOptions are `sixpin analyze opencode`'s dependencies and
// flags.
type AnalyzeOpencodeOptions struct {
	F           *Factory
	DBs         []string
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
	// Now is the clock --since/--until count back from (time.Now).
	Now func() time.Time
}

// NewCmdAnalyzeOpencode builds `sixpin analyze opencode`. runF replaces
// the action in tests.
func NewCmdAnalyzeOpencode(f *Factory, runF func(*cobra.Command, *AnalyzeOpencodeOptions) error) *cobra.Command {
	opts := &AnalyzeOpencodeOptions{F: f, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "opencode",
		Short: "Effective throughput per model from opencode's database (read-only)",
		Long: `Reads opencode's SQLite database, strictly read-only, and reports per
provider and model the effective throughput of real work — (output +
reasoning tokens) / generation time, from the request to the last token,
cut at the first tool call; samples with at least --min-output tokens and
0.2 s to 1 h — as n, tokens, P10/P25/P50/P75/P90, min and max; then the
context lengths, input:output ratio, cache reads, effective tok/s per
context bucket, pure decode tok/s, TTFT and the prefill share, tokens per
minute per session against a profile's rate limits, and the bill at its
prices.`,
		Example: `  sixpin analyze opencode --since 30d
  sixpin analyze opencode --model qwen --format md -o report.md --charts charts/
  sixpin analyze opencode --db ~/archive/opencode-2026-10.db --db ~/.local/share/opencode/opencode.db
  sixpin analyze opencode --profile sim-cerebras-27b --export-trace sessions.jsonl`,
		Args: argsBadInput(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.FormatSet = cmd.Flags().Changed("format")
			if runF != nil {
				return runF(cmd, opts)
			}
			return analyzeOpencodeRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.DBs, "db", nil, "opencode database (repeatable, read together; default $XDG_DATA_HOME/opencode/opencode.db, else ~/.local/share/opencode/opencode.db)")
	fl.StringVar(&opts.Since, "since", "", "only generations from then on: 30d, 12h, 2026-11-01, 2026-11-01T15:04")
	fl.StringVar(&opts.Until, "until", "", "only generations before then (a bare date includes that day)")
	fl.StringArrayVar(&opts.Providers, "provider", nil, "only providers whose id contains P, or matches it as a glob with * or ? (repeatable)")
	fl.StringArrayVar(&opts.Models, "model", nil, "only models whose id contains M, or matches it as a glob with * or ? (repeatable)")
	fl.IntVar(&opts.MinOutput, "min-output", analyze.DefaultMinOutputTokens, "fewest output + reasoning tokens of a throughput sample")
	fl.StringVar(&opts.ToolCut, "tool-cut", analyze.ToolCutReference, "when a generation's time ends at a tool start: "+strings.Join(analyze.ToolCuts, " or ")+" (see the README)")
	fl.StringVar(&opts.Format, "format", "text", "report format: "+strings.Join(analyze.Formats, ", ")+" (default from -o's extension, else text)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the report to FILE (atomically) instead of stdout")
	fl.StringVar(&opts.Charts, "charts", "", "write charts (SVG and PNG) into DIR")
	fl.StringVar(&opts.Profile, "profile", "", "rate limits and prices from a profile: an embedded NAME or a YAML FILE")
	fl.StringVar(&opts.ExportTrace, "export-trace", "", "write the sessions as a sixpin trace (JSONL) to FILE")
	return cmd
}

func analyzeOpencodeRun(cmd *cobra.Command, opts *AnalyzeOpencodeOptions) error {
	ios := opts.F.IO
	now := opts.Now()
	a := analyze.Options{
		DBs:             opts.DBs,
		Providers:       opts.Providers,
		Models:          opts.Models,
		MinOutputTokens: opts.MinOutput,
		ToolCut:         opts.ToolCut,
		Trace:           opts.ExportTrace != "",
		Now:             now,
	}
	if len(a.DBs) == 0 {
		a.DBs = []string{analyze.DefaultDB(opts.F.Getenv)}
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
	format := opts.Format
	if !opts.FormatSet && opts.Output != "" {
		format = formatFromExt(opts.Output)
	}
	if !slices.Contains(analyze.Formats, format) {
		return badInput(fmt.Errorf("--format %q: want one of %s", format, strings.Join(analyze.Formats, ", ")))
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
		// A database that cannot be read (*analyze.DBError) or options
		// that contradict each other.
		return badInput(err)
	}
	if opts.Output == "" {
		if err := rep.Write(ios.Out, format); err != nil {
			return err
		}
	} else {
		if err := atomicfile.Write(opts.Output, func(w io.Writer) error { return rep.Write(w, format) }); err != nil {
			return err
		}
		fmt.Fprintf(ios.ErrOut, "wrote %s (%s)\n", opts.Output, format)
	}
	if opts.Charts != "" {
		if rep.Counts.Samples == 0 {
			fmt.Fprintln(ios.ErrOut, "no charts: no throughput samples")
		} else {
			files, err := rep.WriteCharts(opts.Charts)
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
	return nil
}

// formatFromExt picks the report format from an output file's extension.
func formatFromExt(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return "md"
	case ".json":
		return "json"
	case ".csv":
		return "csv"
	}
	return "text"
}
