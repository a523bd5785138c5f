package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/sim"
)

// SimOptions are `sixpin sim`'s dependencies and flags.
type SimOptions struct {
	F       *Factory
	Addr    string
	Profile string
}

// NewCmdSim builds `sixpin sim`.
func NewCmdSim(f *Factory, runF func(*cobra.Command, *SimOptions) error) *cobra.Command {
	opts := &SimOptions{F: f}
	cmd := &cobra.Command{
		Use:         "sim",
		Short:       "Serve the simulator as an OpenAI-compatible endpoint for other tools",
		Annotations: trapSignals,
		Args:        argsBadInput(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd, opts)
			}
			return simRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8000", "listen address")
	cmd.Flags().StringVar(&opts.Profile, "profile", profiles.DefaultSimulator, "simulator profile (NAME or FILE)")
	return cmd
}

func simRun(cmd *cobra.Command, opts *SimOptions) error {
	p, err := profiles.Resolve(opts.Profile)
	if err != nil {
		return badInput(err)
	}
	if !p.Simulated() {
		return badInput(fmt.Errorf("profile %s is not a simulator profile (kind %s)", p.Name, p.Kind))
	}
	s, err := sim.New(*p.Sim)
	if err != nil {
		return badInput(fmt.Errorf("profile %s: %w", p.Name, err))
	}
	defer s.Close()
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(opts.F.IO.Out, "sixpin sim: serving profile %s (model %q) at http://%s/v1 — Ctrl-C stops\n",
		p.Name, sim.Defaults(*p.Sim).Model, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("sim: %w", err)
	case <-cmd.Context().Done():
	}
	s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("sim: shutdown: %w", err)
	}
	return nil
}
