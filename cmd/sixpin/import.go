package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/importer"
	"github.com/sixpin/sixpin/internal/bounds"
)

// ImportOptions are `sixpin import`'s dependencies and flags.
type ImportOptions struct {
	F *Factory
	// Peer is the tool imported from; Args its arguments (after --), or
	// the config file of inference-perf.
	Peer string
	Args []string
	// Output is the scenario file to write ("": PEER-DATASET.yaml); the
	// profile goes beside it as NAME.profile.yaml.
	Output string
	Opts   importer.Options
	Force  bool
}

// peers maps `sixpin import PEER` to its importer of a command line.
var peers = map[string]func([]string, importer.Options) (*importer.Result, error){
	"vllm-bench": importer.VLLMBench,
	"aiperf":     importer.AIPerf,
	"guidellm":   importer.GuideLLM,
}

// NewCmdImport builds `sixpin import`. runF replaces the action in tests.
func NewCmdImport(f *Factory, runF func(*ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{F: f}
	cmd := &cobra.Command{
		Use:   "import vllm-bench|aiperf|guidellm -- ARGS… | import inference-perf CONFIG.yaml",
		Short: "Translate another benchmark tool's invocation into a scenario that sends the same workload",
		Long: `import reads the command line of vLLM's benchmark (vllm bench serve,
benchmark_serving.py), AIPerf (aiperf profile) or GuideLLM (guidellm
benchmark), given after --, or an inference-perf config file, and writes a
sixpin scenario that sends the same workload — the same number of
requests, the same input and output length distributions, the same
concurrency or arrival process, the same don't-stop-early behaviour — and
a profile of the endpoint it addressed. Every setting is commented with
the peer's flag; one that cannot be translated faithfully is refused with
the reason, one whose default or detail differs is noted. import prints
the token totals the peer's invocation should make the server count, and
what sixpin's plan sends (the results file's parity section).`,
		Example: `  sixpin import vllm-bench -- --dataset-name random --random-input-len 512 --random-output-len 128 \
      --num-prompts 200 --max-concurrency 8 --ignore-eos --seed 1
  sixpin import aiperf -o chat.yaml -- --model m --isl 1000 --osl 200 --concurrency 16 --request-count 500 \
      --extra-inputs ignore_eos:true --streaming
  sixpin import guidellm -- --target http://localhost:8000 --profile constant --rate 4 --max-requests 300 \
      --data prompt_tokens=512,output_tokens=128
  sixpin import inference-perf config.yml`,
		Args: argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Peer = args[0]
			dash := cmd.ArgsLenAtDash()
			switch {
			case opts.Peer == "inference-perf":
				if len(args) != 2 || dash >= 0 {
					return badInput(errors.New("import inference-perf takes one argument, the config file: sixpin import inference-perf CONFIG.yaml"))
				}
			case peers[opts.Peer] == nil:
				return badInput(fmt.Errorf("import %q: want vllm-bench, aiperf, guidellm or inference-perf", opts.Peer))
			case dash != 1:
				return badInput(fmt.Errorf("import %s: give the peer's arguments after --: sixpin import %s -- ARGS…", opts.Peer, opts.Peer))
			}
			opts.Args = args[1:]
			if runF != nil {
				return runF(opts)
			}
			return importRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Output, "output", "o", "", "scenario file to write (default: NAME.yaml); the profile goes beside it as NAME.profile.yaml")
	fl.StringVar(&opts.Opts.Name, "name", "", "the scenario's name (default: the peer and its dataset)")
	fl.IntVar(&opts.Opts.SpecialTokens, "special-tokens", 0, "special tokens the peer's tokenizer adds to a prompt (Hugging Face num_special_tokens_to_add(): 1 with a BOS token); vLLM's random dataset subtracts them before drawing")
	fl.IntVar(&opts.Opts.TemplateOverhead, "template-overhead", 0, "tokens the server's chat template adds to each prompt, for a peer that counts only the prompt's text (sixpin's probe measures it: a results file's target.template_overhead_tokens)")
	fl.BoolVar(&opts.Force, "force", false, "overwrite the files if they exist")
	return cmd
}

func importRun(opts *ImportOptions) error {
	if opts.Opts.SpecialTokens < 0 || opts.Opts.TemplateOverhead < 0 {
		return badInput(errors.New("--special-tokens and --template-overhead must be ≥ 0"))
	}
	out := opts.Output
	// The scenario's name decides the default file; a first pass with no
	// profile path learns it.
	translate := func(o importer.Options) (*importer.Result, error) {
		if opts.Peer == "inference-perf" {
			data, err := bounds.ReadFile(opts.Args[0])
			if err != nil {
				return nil, err
			}
			return importer.InferencePerf(opts.Args[0], data, o)
		}
		return peers[opts.Peer](opts.Args, o)
	}
	o := opts.Opts
	if out == "" {
		first, err := translate(o)
		if err != nil {
			return badInput(err)
		}
		out = first.Name + ".yaml"
	}
	profilePath := strings.TrimSuffix(out, filepath.Ext(out)) + ".profile.yaml"
	o.Profile = profilePath
	r, err := translate(o)
	if err != nil {
		return badInput(err)
	}
	if r.Profile == nil {
		profilePath = ""
	}
	for _, path := range []string{out, profilePath} {
		if path == "" || opts.Force {
			continue
		}
		if _, err := os.Stat(path); err == nil {
			return badInput(fmt.Errorf("%s exists: give --force to overwrite it, or -o another file", path))
		}
	}
	if err := os.WriteFile(out, r.Scenario, 0o644); err != nil {
		return err
	}
	if profilePath != "" {
		if err := os.WriteFile(profilePath, r.Profile, 0o644); err != nil {
			return err
		}
	}
	r.WriteSummary(opts.F.IO.Out, out, profilePath)
	return nil
}
