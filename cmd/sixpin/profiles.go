package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/profiles"
)

// NewCmdProfiles builds `sixpin profiles list|show`.
func NewCmdProfiles(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "profiles",
		Short: "List and show the embedded endpoint profiles",
	}
	asGroup(cmd)
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the embedded profiles",
		Args:  argsBadInput(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			list, err := profiles.List()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tKIND\tPROTOCOL\tENDPOINT\tOUTPUT CONTROL\tDESCRIPTION")
			for _, p := range list {
				ep := p.BaseURL
				if p.Simulated() {
					ep = "in-process"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind, p.Protocol, ep, p.OutputControl, firstSentence(p.Description))
			}
			return tw.Flush()
		},
	}, &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a profile's YAML",
		Args:  argsBadInput(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := profiles.Resolve(args[0])
			if err != nil {
				return badInput(err)
			}
			src, err := profiles.Text(p)
			if err != nil {
				return err
			}
			_, err = f.IO.Out.Write(src)
			return err
		},
	})
	return cmd
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
