package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sixpin/sixpin/harness"
)

// Exit codes (DESIGN §5).
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitBadInput = 2
	// ExitVendorLost is a bake-off that ran whole and compared its
	// vendors but lost some — invalid, failed or throttled — while
	// another's figures stand (harness.ErrVendorLost).
	ExitVendorLost = 3
)

// IOStreams are a command's input and outputs. Only Main touches os.Stdout.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrTTY is true when ErrOut is a terminal (progress bars go there).
	ErrTTY bool
}

// Factory carries what every command needs from its environment.
type Factory struct {
	IO     *IOStreams
	Getenv func(string) string
	// Hard is cancelled by a second interrupt: stop now.
	Hard context.Context
	// Trap starts trapping SIGINT and SIGTERM (nil: nothing to trap, as
	// in tests). Main calls it before a command that runs load.
	Trap func()
	// SetGCPercent sets the process's collector target for a run of
	// thousands of streams (harness.Config.SetGCPercent; nil in tests).
	SetGCPercent func(percent int)
}

// trapsSignals marks a command that runs load (cobra.Command.Annotations):
// it traps SIGINT and SIGTERM to stop issuing and write what it measured.
const trapsSignals = "sixpin/traps-signals"

// trapSignals is the Annotations of a command that runs load.
var trapSignals = map[string]string{trapsSignals: "yes"}

// errBadInput marks a usage or input error (exit 2).
type errBadInput struct{ err error }

func (e errBadInput) Error() string { return e.err.Error() }
func (e errBadInput) Unwrap() error { return e.err }

func badInput(err error) error { return errBadInput{err} }

// Main runs sixpin with the process's arguments and streams and returns
// the exit code. Only the commands that run load (see trapsSignals) trap
// SIGINT and SIGTERM: the first cancels the command's context (a run stops
// issuing and writes what it measured), a second cancels Factory.Hard.
// Every other command keeps the default behaviour and stops at once.
func Main() int {
	ctx, cancel := context.WithCancel(context.Background())
	hard, cancelHard := context.WithCancel(context.Background())
	defer cancel()
	defer cancelHard()
	sigs := make(chan os.Signal, 2)
	defer signal.Stop(sigs)
	f := &Factory{
		IO:     &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ErrTTY: term.IsTerminal(int(os.Stderr.Fd()))},
		Getenv: os.Getenv,
		Hard:   hard,
		SetGCPercent: func(pct int) {
			if os.Getenv("GOGC") == "" { // the user's own setting stands
				debug.SetGCPercent(pct)
			}
		},
		Trap: func() {
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() {
				<-sigs
				fmt.Fprintln(os.Stderr, "\nsixpin: interrupted (interrupt again to stop at once)")
				cancel()
				<-sigs
				cancelHard()
			}()
		},
	}
	return execute(ctx, f, os.Args[1:])
}

// execute runs the root command with args and maps its error to an exit
// code, printing the error once.
func execute(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(f.IO.ErrOut, "sixpin: %v\n", err)
	var bad errBadInput
	switch {
	case errors.As(err, &bad), errors.Is(err, harness.ErrBadInput):
		return ExitBadInput
	case errors.Is(err, harness.ErrVendorLost):
		return ExitVendorLost
	}
	return ExitFailed
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "sixpin",
		Short: "Benchmark LLM inference endpoints with every figure bound to its six pins",
		Long: `sixpin replays a scenario that pins six parameters — model size, prompt
length, output length, concurrency, KV-cache budget and the prefill/decode
mix — against an OpenAI-compatible streaming endpoint (or its built-in
simulator), and reports per-stream and aggregate throughput, steady-state and
burst windows, with every figure carrying its pins.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       harness.Version,
	}
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return badInput(err) })
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		if cmd.Annotations[trapsSignals] != "" && f.Trap != nil {
			f.Trap()
		}
	}
	asGroup(root)
	root.SetHelpCommand(newCmdHelp(root))
	root.AddCommand(NewCmdRun(f, nil), NewCmdValidate(f, nil), NewCmdSim(f, nil), NewCmdProfiles(f),
		NewCmdReport(f, nil), NewCmdCompare(f, nil), NewCmdGate(f, nil), NewCmdAnalyze(f),
		NewCmdBakeoff(f, nil), NewCmdRecover(f, nil), NewCmdKube(f), NewCmdMerge(f, nil), NewCmdWaterfall(f, nil),
		NewCmdCapacity(f, nil), NewCmdImport(f, nil))
	return root
}

// exactArgs is cobra.ExactArgs reported as bad input.
func argsBadInput(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return badInput(err)
		}
		return nil
	}
}

// asGroup makes cmd, a command that only holds subcommands, refuse an
// unknown subcommand as bad input (cobra would print the help and exit 0,
// or exit 1 at the root), and print its help when given none.
func asGroup(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += fmt.Sprintf(" (did you mean %q?)", s[0])
		}
		return badInput(errors.New(msg + "; see " + cmd.CommandPath() + " --help"))
	}
	return cmd
}

// newCmdHelp is `sixpin help [command]`: a command's help, and bad input
// (exit 2) for a topic that is no command (cobra's own prints the root's
// help and exits 0).
func newCmdHelp(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 || len(args) > 0 && cmd == root {
				return badInput(fmt.Errorf("unknown help topic %q; see %s --help", strings.Join(args, " "), root.CommandPath()))
			}
			return cmd.Help()
		},
	}
}
