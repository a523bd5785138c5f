package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/scenario"
)

// ValidateOptions are `sixpin validate`'s dependencies and arguments.
type ValidateOptions struct {
	F     *Factory
	Paths []string
}

// NewCmdValidate builds `sixpin validate`.
func NewCmdValidate(f *Factory, runF func(*ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{F: f}
	return &cobra.Command{
		Use:   "validate SCENARIO.yaml...",
		Short: "Check scenarios and print their resolved pins, or file:line:col errors",
		Args:  argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(opts)
		},
	}
}

func validateRun(opts *ValidateOptions) error {
	io := opts.F.IO
	bad := 0
	for i, path := range opts.Paths {
		if i > 0 {
			fmt.Fprintln(io.Out)
		}
		sc, err := scenario.Load(path)
		if err != nil {
			bad++
			fmt.Fprintln(io.ErrOut, err)
			continue
		}
		if err := sc.Describe(io.Out); err != nil {
			return err
		}
	}
	if bad > 0 {
		return badInput(fmt.Errorf("%d of %d scenario files are invalid", bad, len(opts.Paths)))
	}
	return nil
}
