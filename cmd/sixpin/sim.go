package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/profiles"
)

// SimOptions are `sixpin sim`'s dependencies and flags.
type SimOptions struct {
	F       *Factory
	Addr    string
	Remote  bool
	Profile string
	// RequestLog is a file that receives one JSON line per request
	// served ("": none).
	RequestLog string
	// TLSCert and TLSKey are PEM files: with both, it serves https.
	TLSCert, TLSKey string
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
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:8000", "listen address, HOST:PORT (a bare :PORT is 127.0.0.1; loopback only unless --remote)")
	cmd.Flags().BoolVar(&opts.Remote, "remote", false, "let --addr listen on a non-loopback address, a bare :PORT on every interface (anyone who reaches it can use the simulator)")
	cmd.Flags().StringVar(&opts.Profile, "profile", profiles.DefaultSimulator, "simulator profile (NAME or FILE)")
	cmd.Flags().StringVar(&opts.RequestLog, "request-log", "", "write one JSON line per request served to `FILE` (id, prompt, cached and completion tokens, finish reason): what the server counted, request by request")
	cmd.Flags().StringVar(&opts.TLSCert, "tls-cert", "", "serve https with this PEM certificate `FILE` (with --tls-key): HTTP/2 and HTTP/1.1, as a cloud endpoint; clients trust it through SSL_CERT_FILE")
	cmd.Flags().StringVar(&opts.TLSKey, "tls-key", "", "the PEM private key `FILE` of --tls-cert")
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
	var log io.Writer
	if opts.RequestLog != "" {
		f, err := os.Create(opts.RequestLog)
		if err != nil {
			return badInput(fmt.Errorf("--request-log: %w", err))
		}
		defer f.Close()
		log = f
	}
	var cert *tls.Certificate
	switch {
	case (opts.TLSCert == "") != (opts.TLSKey == ""):
		return badInput(fmt.Errorf("--tls-cert and --tls-key go together: give both, or neither for plain http"))
	case opts.TLSCert != "":
		c, err := tls.LoadX509KeyPair(opts.TLSCert, opts.TLSKey)
		if err != nil {
			return badInput(fmt.Errorf("--tls-cert %s, --tls-key %s: %w", opts.TLSCert, opts.TLSKey, err))
		}
		cert = &c
	}
	sm, err := harness.ServeSimulator(p, opts.Addr, opts.Remote, log, cert)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.F.IO.ErrOut, "sixpin sim: serving profile %s (model %q) at %s (%s) — Ctrl-C stops\n", p.Name, sm.Model, sm.URL, sm.Reach)
	select {
	case err := <-sm.Done():
		return fmt.Errorf("sim: %w", err)
	case <-cmd.Context().Done():
	}
	return sm.Close(5 * time.Second)
}
