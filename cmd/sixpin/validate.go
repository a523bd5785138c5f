package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/trace"
	"github.com/sixpin/sixpin/verdict"
)

// ValidateOptions are `sixpin validate`'s dependencies and arguments.
type ValidateOptions struct {
	F *Factory
	// Paths are files of any kind: scenarios, profiles (YAML with kind:
	// and no pins:) and traces (.jsonl, .ndjson, .csv, gzipped or not).
	Paths []string
	// Profiles and Traces are named as such (--profile, --trace).
	Profiles []string
	Traces   []string
}

// NewCmdValidate builds `sixpin validate`.
func NewCmdValidate(f *Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{F: f}
	cmd := &cobra.Command{
		Use:   "validate [FILE...] [--profile NAME|FILE]... [--trace FILE]...",
		Short: "Check scenarios, profiles and traces; print what they resolve to, or file:line:col errors",
		Long: `Check files as strictly as run loads them, and print what each resolves to
or every error at file:line:col with its field. A FILE is a scenario, a
profile (YAML with kind: and no pins:) or a trace (.jsonl, .ndjson or .csv,
gzipped or not: sixpin, Mooncake or Azure); a scenario's trace is checked
with it. --profile and --trace name a profile or trace as such.`,
		Example: `  sixpin validate scenarios/*.yaml
  sixpin validate my-vendor.yaml sessions.jsonl
  sixpin validate scenarios/smoke.yaml --profile vllm --trace week.jsonl.gz`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(opts.Profiles) == 0 && len(opts.Traces) == 0 {
				return badInput(errors.New("validate needs a FILE, --profile or --trace"))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Profiles, "profile", nil, "a profile to check: an embedded NAME or a YAML FILE (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Traces, "trace", nil, "a trace file to check (repeatable)")
	return cmd
}

// check loads one input and describes it to w, or returns why it is bad.
type check func(w io.Writer) error

func validateRun(opts *ValidateOptions) error {
	var checks []check
	for _, path := range opts.Paths {
		checks = append(checks, checkFor(path))
	}
	for _, ref := range opts.Profiles {
		checks = append(checks, profileCheck(ref))
	}
	for _, path := range opts.Traces {
		checks = append(checks, traceCheck(path))
	}
	ios := opts.F.IO
	bad := 0
	out := &paragraphs{w: ios.Out}
	for _, c := range checks {
		out.next()
		if err := c(out); err != nil {
			var we writeError
			if errors.As(err, &we) {
				return we.err
			}
			bad++
			fmt.Fprintln(ios.ErrOut, err)
		}
	}
	if bad > 0 {
		return badInput(fmt.Errorf("%d of %d files are invalid", bad, len(checks)))
	}
	return nil
}

// writeError marks a failure to write the description (not a bad file).
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// checkFor picks the check of a file by its name and, for YAML, its keys.
func checkFor(path string) check {
	if trace.IsTraceName(path) {
		return traceCheck(path)
	}
	data, err := bounds.ReadFile(path)
	if err == nil && profiles.LooksLikeProfile(data) {
		return profileCheck(path)
	}
	return func(w io.Writer) error {
		var sc *scenario.Scenario
		if data != nil {
			sc, err = scenario.Parse(path, data) // the file read once
		} else {
			sc, err = scenario.Load(path) // which says why it cannot be read
		}
		if err != nil {
			return err
		}
		if len(sc.AbortOn) > 0 {
			if _, err := verdict.ParseTier(sc.Path, "abort_on", "abort_on", sc.AbortOn); err != nil {
				return err
			}
		}
		return described(report.DescribeScenario(w, sc))
	}
}

func profileCheck(ref string) check {
	return func(w io.Writer) error {
		p, err := profiles.Resolve(ref)
		if err != nil {
			return err
		}
		var sm *report.Simulator
		if p.Simulated() {
			if sm, err = harness.SimulatorOf(p); err != nil {
				return err
			}
		}
		return described(report.DescribeProfile(w, p, sm))
	}
}

func traceCheck(path string) check {
	return func(w io.Writer) error {
		f, err := trace.Open(path)
		if err != nil {
			return err
		}
		return described(report.DescribeTrace(w, f.Summary()))
	}
}

// described wraps a describer's write error so validateRun stops on it.
func described(err error) error {
	if err != nil {
		return writeError{err}
	}
	return nil
}

// paragraphs writes to w with a blank line between the outputs of
// successive checks, leaving out the line after a check that wrote
// nothing.
type paragraphs struct {
	w       io.Writer
	wrote   bool // anything yet
	pending bool // a new check began
}

func (p *paragraphs) next() { p.pending = p.wrote }

func (p *paragraphs) Write(b []byte) (int, error) {
	if p.pending {
		p.pending = false
		if _, err := io.WriteString(p.w, "\n"); err != nil {
			return 0, err
		}
	}
	p.wrote = p.wrote || len(b) > 0
	return p.w.Write(b)
}
