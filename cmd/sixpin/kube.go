package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/cmd/sixpin/internal/kube"
)

// NewCmdKube builds `sixpin kube` and its subcommands.
func NewCmdKube(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Run a scenario as a Kubernetes Indexed Job, one shard per pod",
	}
	cmd.AddCommand(NewCmdKubeManifest(f, nil), NewCmdKubeEmit(f, nil), NewCmdKubeCollect(f, nil))
	return cmd
}

// KubeOptions are `sixpin kube manifest`'s dependencies and flags.
type KubeOptions struct {
	F    *Factory
	Kube kube.Options
	// StartAt is --start-at as given (RFC 3339 or unix seconds).
	StartAt string
	// APIKey is set when someone tried to pass a key itself.
	APIKey string
	// Now is the clock (time.Now).
	Now func() time.Time
	// Capacity is --capacity; Search the capacity flags, and Seed
	// --seed (SeedSet when given).
	Capacity bool
	Search   kube.Capacity
	Seed     int64
	SeedSet  bool
}

// kubeCapacityFlags are the flags of a capacity search alone.
var kubeCapacityFlags = []string{"tiers", "tier", "min", "max", "resolution", "max-runs", "points", "budget", "min-steady", "duration", "seed", "shard-timeout", "join-timeout", "coordination-port"}

// NewCmdKubeManifest builds `sixpin kube manifest`. runF replaces the
// action in tests.
func NewCmdKubeManifest(f *Factory, runF func(*KubeOptions) error) *cobra.Command {
	opts := &KubeOptions{F: f, Now: time.Now}
	k := &opts.Kube
	cmd := &cobra.Command{
		Use:   "manifest SCENARIO.yaml --shards N --image IMAGE",
		Short: "Print a ConfigMap and an Indexed Job that run SCENARIO as N shards",
		Long: `Print, for kubectl apply -f, a ConfigMap holding the scenario and an Indexed
Job whose pod I runs "sixpin run SCENARIO --shard I/N --start-at T": every
shard waits for the same wall-clock start T (now + --start-delay unless
--start-at is given) and writes its own results file. How to collect the
shards and merge them is written at the end, as comments.

With --capacity the pods run "sixpin capacity" sharded instead: pod 0 leads
the search and serves its coordination behind a headless Service (at
NAME-0.NAME:--coordination-port), the other pods are its workers, and each
point runs on every pod at once; pod 0 writes the capacity file. The tiers
(--tiers FILE travels in the ConfigMap, or --tier) and the search's flags
are passed on.`,
		Example: `  sixpin kube manifest scenarios/chat-8k-c16.yaml --shards 4 --image registry.example.com/sixpin:v1 \
    --profile vllm --endpoint http://vllm.inference.svc:8000/v1 --api-key-secret vllm-key > job.yaml
  sixpin kube manifest scenarios/chat-8k-c16.yaml --shards 4 --image registry.example.com/sixpin:v1 \
    --profile vllm --endpoint http://vllm.inference.svc:8000/v1 --capacity --tiers tiers.yaml --budget 2h > search.yaml`,
		Args: argsBadInput(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			k.Scenario = args[0]
			if cmd.Flags().Changed("api-key") {
				return badInput(errors.New("--api-key: sixpin never puts a key in a manifest: store it in a Secret (kubectl create secret generic NAME --from-literal=VAR=...) and pass --api-key-secret NAME"))
			}
			if cmd.Flags().Changed("start-at") && cmd.Flags().Changed("start-delay") {
				return badInput(errors.New("--start-at and --start-delay: give one of them"))
			}
			for _, name := range kubeCapacityFlags {
				if cmd.Flags().Changed(name) && !opts.Capacity {
					return badInput(fmt.Errorf("--%s is a capacity search's: give --capacity too", name))
				}
			}
			if opts.Capacity && (cmd.Flags().Changed("start-at") || cmd.Flags().Changed("start-delay")) {
				return badInput(errors.New("--start-at and --start-delay with --capacity: pod 0 starts each point when every pod is ready for it"))
			}
			opts.SeedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(opts)
			}
			return kubeRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&k.Shards, "shards", 0, "N: the number of pods, each running one shard")
	fl.StringVar(&k.Image, "image", "", "container image whose entrypoint is sixpin (see the Dockerfile)")
	fl.StringVar(&k.Profile, "profile", "", "endpoint profile: an embedded NAME, or a YAML FILE (shipped in the ConfigMap)")
	fl.StringVar(&k.Endpoint, "endpoint", "", "the endpoint's base URL as the pods reach it, e.g. http://vllm.inference.svc:8000/v1")
	fl.StringVar(&k.Model, "model", "", "model id to request")
	fl.StringVar(&k.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&k.Name, "name", "", "name of the ConfigMap and the Job (default sixpin-SCENARIO)")
	fl.StringVar(&opts.StartAt, "start-at", "", "when every shard starts: RFC 3339 or unix seconds")
	fl.DurationVar(&k.StartDelay, "start-delay", kube.DefaultStartDelay, "start this long after now (time to apply and schedule the pods)")
	fl.StringVar(&k.RunID, "run-id", "", "the id every shard's results carry (default: the start time and random digits)")
	fl.StringVar(&k.APIKeySecret, "api-key-secret", "", "NAME[:KEY] of the Secret holding the API key (KEY default: the profile's api_key_env)")
	fl.StringVar(&k.Results, "results", kube.DefaultResults, "where results go: pvc:CLAIM (a shared volume) or stdout (each pod's log)")
	fl.StringVar(&k.CPU, "cpu", kube.DefaultCPU, "each pod's CPU, requested and limited")
	fl.StringVar(&k.Memory, "memory", kube.DefaultMemory, "each pod's memory, requested and limited")
	fl.StringVar(&opts.APIKey, "api-key", "", "refused: keys go in a Secret (--api-key-secret)")
	_ = fl.MarkHidden("api-key")
	c := &opts.Search
	fl.BoolVar(&opts.Capacity, "capacity", false, "run `sixpin capacity` instead: pod 0 leads the search, the others are its workers")
	fl.StringVar(&c.TiersFile, "tiers", "", "capacity: a tiers file (it travels in the ConfigMap)")
	fl.StringArrayVar(&c.Tiers, "tier", nil, "capacity: a tier, 'NAME: COND, COND, …' (repeatable)")
	fl.Float64Var(&c.Min, "min", 0, "capacity: the smallest value tried")
	fl.Float64Var(&c.Max, "max", 0, "capacity: the largest value tried")
	fl.Float64Var(&c.Resolution, "resolution", 0, "capacity: an open-loop rate's resolution")
	fl.IntVar(&c.MaxRuns, "max-runs", 0, "capacity: run at most this many points")
	fl.IntVar(&c.Points, "points", 0, "capacity: log-spaced points for the curve after the search")
	fl.DurationVar(&c.Budget, "budget", 0, "capacity: spend at most this much wall time")
	fl.DurationVar(&c.MinSteady, "min-steady", 0, "capacity: the steady state a pass needs")
	fl.DurationVar(&c.Duration, "duration", 0, "capacity: bound each point's run (default: the scenario's duration)")
	fl.Int64Var(&opts.Seed, "seed", 0, "capacity: override the scenario's seed")
	fl.DurationVar(&c.ShardTimeout, "shard-timeout", 0, "capacity: a pod not heard from for this long is gone (default 30s)")
	fl.DurationVar(&c.JoinTimeout, "join-timeout", 0, "capacity: how long pod 0 waits for the others to join (default 10m)")
	fl.IntVar(&c.Port, "coordination-port", kube.DefaultCoordinationPort, "capacity: the port pod 0 serves the coordination on")
	return cmd
}

func kubeRun(opts *KubeOptions) error {
	k := opts.Kube
	k.Now = opts.Now()
	if opts.Capacity {
		search := opts.Search
		if opts.SeedSet {
			search.Seed = &opts.Seed
		}
		k.Capacity, k.StartDelay = &search, 0
	}
	if opts.StartAt != "" {
		t, err := kube.ParseStartAt(opts.StartAt)
		if err != nil {
			return badInput(err)
		}
		k.StartAt, k.StartDelay = t, 0
	}
	m, err := kube.Generate(k)
	if err != nil {
		return badInput(err)
	}
	if err := m.WriteYAML(opts.F.IO.Out); err != nil {
		return err
	}
	e := opts.F.IO.ErrOut
	for _, n := range m.Notes {
		fmt.Fprintf(e, "sixpin: %s\n", n)
	}
	if opts.Capacity {
		fmt.Fprintf(e, "sixpin: capacity search %s: %d pods, pod 0 leading. How to follow it and collect the capacity file: at the end of the manifest.\n", m.RunID, m.Shards)
		return nil
	}
	fmt.Fprintf(e, "sixpin: run %s: %d shards start at %s (in %s); apply before then. How to collect and merge: at the end of the manifest.\n",
		m.RunID, m.Shards, m.StartAt.Format(time.RFC3339), m.StartAt.Sub(k.Now).Truncate(time.Second))
	return nil
}

// KubeEmitOptions are `sixpin kube emit`'s dependencies and flags.
type KubeEmitOptions struct {
	F      *Factory
	Paths  []string
	OnStop bool
}

// NewCmdKubeEmit builds `sixpin kube emit`, which the manifests' pods run.
func NewCmdKubeEmit(f *Factory, runF func(*cobra.Command, *KubeEmitOptions) error) *cobra.Command {
	opts := &KubeEmitOptions{F: f}
	cmd := &cobra.Command{
		Use:   "emit FILE|GLOB...",
		Short: "Print files between delimiter lines, for a pod's log (the manifests use it)",
		Long: `Print each file between a BEGIN line (its name, length and sha256) and an END
line, so that "sixpin kube collect" can take it out of a pod's log intact.
With --on-stop, wait until the process is told to stop (SIGTERM: a sidecar
is stopped after the run has ended) and print then.`,
		Args: argsBadInput(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(cmd, opts)
			}
			return kubeEmitRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.OnStop, "on-stop", false, "wait for SIGTERM or an interrupt, then print")
	return cmd
}

func kubeEmitRun(cmd *cobra.Command, opts *KubeEmitOptions) error {
	if opts.OnStop {
		<-cmd.Context().Done()
	}
	return kube.Emit(opts.F.IO.Out, opts.Paths...)
}

// KubeCollectOptions are `sixpin kube collect`'s dependencies and flags.
type KubeCollectOptions struct {
	F    *Factory
	Logs []string
	Dir  string
}

// NewCmdKubeCollect builds `sixpin kube collect`.
func NewCmdKubeCollect(f *Factory, runF func(*KubeCollectOptions) error) *cobra.Command {
	opts := &KubeCollectOptions{F: f}
	cmd := &cobra.Command{
		Use:   "collect [LOG...] -d DIR",
		Short: "Take the results files out of pods' logs (stdin by default) into DIR",
		Example: `  kubectl logs -l sixpin.dev/run-id=RUN -c results --tail=-1 | sixpin kube collect -d shards
  sixpin merge shards/RUN-shard-*.json -o merged.json`,
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Logs = args
			if runF != nil {
				return runF(opts)
			}
			return kubeCollectRun(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Dir, "dir", "d", ".", "directory to write the files into")
	return cmd
}

func kubeCollectRun(opts *KubeCollectOptions) error {
	io := opts.F.IO
	var got []kube.Collected
	var errs []error
	read := func(name string, c []kube.Collected, err error) {
		got = append(got, c...)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if len(opts.Logs) == 0 {
		c, err := kube.Collect(io.In, opts.Dir)
		read("stdin", c, err)
	}
	for _, p := range opts.Logs {
		c, err := kube.CollectFile(p, opts.Dir)
		read(p, c, err)
	}
	for _, c := range got {
		fmt.Fprintf(io.Out, "%s (%d bytes)\n", c.Path, c.Bytes)
	}
	if len(errs) > 0 {
		return badInput(errors.Join(errs...))
	}
	fmt.Fprintf(io.ErrOut, "sixpin: files collected into %s: %d\n", opts.Dir, len(got))
	return nil
}
