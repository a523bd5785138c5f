package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/scenario"
)

// CapacityOptions are `sixpin capacity`'s dependencies and flags.
type CapacityOptions struct {
	F          *Factory
	Config     harness.CapacityConfig
	Seed       int64
	SeedSet    bool
	NoProgress bool
	// ServerMetrics is --server-metrics as given.
	ServerMetrics string
	// Shard is --shard I/N as given.
	Shard string
	// Repeat is --repeat: how many searches, each with its own seed.
	Repeat int
}

// NewCmdCapacity builds `sixpin capacity`. runF replaces the action in
// tests.
func NewCmdCapacity(f *Factory, runF func(*cobra.Command, *CapacityOptions) error) *cobra.Command {
	opts := &CapacityOptions{F: f}
	cmd := &cobra.Command{
		Use:   "capacity SCENARIO.yaml [--tiers FILE] [--tier 'NAME: COND, …']…",
		Short: "Find the largest concurrency that meets each SLO tier, and what binds one step above it",
		Long: `Vary the scenario's concurrency pin — closed-loop streams, concurrent
agentic sessions, or the open-loop rate in req/s — holding every other pin,
and find for each tier N*, the largest value that passes it. A tier is a
name and conditions that must all hold on the steady window:

  interactive: ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30, error_rate <= 1%

(metrics: ttft_ms, itl_ms, tpot_ms, e2e_ms, decode_tok_s, effective_tok_s,
server_queue_ms at a percentile p10, p50, p90, p95, p99 or p99_9;
error_rate and http_429_rate as shares; lifetime_min for agentic sessions).
Without --tiers or --tier the scenario's slo is one tier (its bounds at the
p90). Each point runs until its tiers are decided at 95% confidence by a
sequential test, a pass earned by each percentile's minimum count and
--min-steady of steady state. The search brackets by doubling or halving,
bisects, then confirms N* and N*+1 with the next seed; the answer names what
failed first at N*+1 and why (the server's queue, its KV cache, prefill,
decode, rate limits, errors, or sixpin itself), and normalises N* per GPU,
per kW and per $/hour where the profile declares them. --max-runs and
--budget bound the search; when they run out the answer is an interval.

The file renders with sixpin report (html: the throughput–interactivity
curve with each tier's N*), compares with sixpin compare (N* per tier side
by side; refused when pins or tiers differ) and gates with sixpin gate.

Sharded across machines, when one client cannot make the load: shard 0 runs
the search and serves its coordination (--shard 0/N --run-id ID --coordinate
:7070); shards 1 to N-1 are its workers (--shard I/N --run-id ID
--coordinator http://LEADER:7070, with the same scenario, tiers and target).
Every point runs as N shards started together; the leader judges all their
records as they arrive, stops them together once the point is decided, and
merges their results into the point's (as sixpin merge does). Only the
leader writes the file. A shard that fails or goes unheard for
--shard-timeout stops the search, the file marked incomplete.`,
		Example: `  sixpin capacity scenarios/agentic-120k.yaml --tiers tiers.yaml -o capacity.json
  sixpin capacity scenarios/chat-8k-c16.yaml --profile vllm --endpoint http://127.0.0.1:8000/v1 \
      --tier 'interactive: ttft_ms.p90<=2000, decode_tok_s.p10>=30' --budget 30m
  sixpin report capacity.json --format html -o capacity.html   # the curve, N* per tier
  sixpin compare capacity-main.json capacity-pr.json           # N* per tier side by side
  sixpin capacity s.yaml --endpoint http://vllm:8000/v1 --tier 'i: ttft_ms.p90<=2000' --shard 0/2 --run-id r1 --coordinate :7070
  sixpin capacity s.yaml --endpoint http://vllm:8000/v1 --tier 'i: ttft_ms.p90<=2000' --shard 1/2 --run-id r1 --coordinator http://leader:7070`,
		Annotations: trapSignals,
		Args:        argsBadInput(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Config.ScenarioPath = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(cmd, opts)
			}
			return capacityRun(cmd, opts)
		},
	}
	c := &opts.Config
	fl := cmd.Flags()
	fl.StringVar(&c.TiersFile, "tiers", "", "a tiers file: YAML, tier name → its conditions (a list, or one comma-separated string)")
	fl.StringArrayVar(&c.Tiers, "tier", nil, "a tier: 'NAME: COND, COND, …', e.g. 'interactive: ttft_ms.p90<=2000, decode_tok_s.p10>=30' (repeatable)")
	addTargetFlags(fl, &c.Config)
	fl.StringVarP(&c.Output, "output", "o", "", "capacity file (default sixpin-capacity-NAME-TIMESTAMP.json)")
	fl.Float64Var(&c.Min, "min", 0, "the smallest value tried (default 1; a rate: the scenario's ÷ 64)")
	fl.Float64Var(&c.Max, "max", 0, "the largest value tried (default 64; a rate: the scenario's × 64)")
	fl.Float64Var(&c.Resolution, "resolution", 0, "an open-loop rate's resolution: N*+1 is N* × (1 + this) (default 0.1)")
	fl.IntVar(&c.MaxRuns, "max-runs", 0, "run at most this many points (0: no bound); then the answer is an interval")
	fl.DurationVar(&c.Budget, "budget", 0, "spend at most this much wall time (0: no bound); then the answer is an interval")
	fl.IntVar(&c.Points, "points", 0, "after the search, run this many log-spaced points between --min and --max for the throughput–interactivity curve")
	fl.DurationVar(&c.MinSteady, "min-steady", 0, "the steady state a pass needs, after the warmup (default 20s)")
	fl.DurationVar(&c.Duration, "duration", 0, "bound each point's run (default: the scenario's duration)")
	fl.Int64Var(&opts.Seed, "seed", 0, "override the scenario's seed (a value's k-th run uses seed + k)")
	fl.IntVar(&opts.Repeat, "repeat", 1, "run the search this many times, with seeds seed, seed+1000, … (each its own file: -seedS before -o's extension), then N* per tier over the seeds")
	fl.DurationVar(&c.Grace, "grace", harness.DefaultGrace, "after a point is decided or interrupted, how long its in-flight requests may finish")
	fl.StringVar(&opts.ServerMetrics, "server-metrics", "1s", "scrape the server's own Prometheus /metrics this often (the KV regime and queue a binding constraint is read from), or off")
	fl.BoolVar(&c.Calibrate, "calibrate", false, "before each point, measure sixpin's own floor: a point where it exceeds 5% of the TTFT p50 is invalid (sixpin saturated)")
	addReadyFlag(fl, &c.Config)
	fl.BoolVar(&opts.NoProgress, "no-progress", false, "no progress bar")
	fl.Float64Var(&c.TimeScale, "time-scale", 0, "run the built-in simulator and the client this much faster (0 < k < 1), figures in simulated time (for tests and demos)")
	_ = fl.MarkHidden("time-scale")
	addLiveFlags(fl, &c.Config)
	fl.StringVar(&opts.Shard, "shard", "", "run shard I of N of every point (I/N, e.g. 0/4; needs --run-id): shard 0 leads the search (--coordinate), the others are its workers (--coordinator)")
	fl.StringVar(&c.Distributed.RunID, "run-id", "", "the id every shard of a sharded search shares (the leader checks it; each point's prompts are salted by it)")
	fl.StringVar(&c.Coordinate, "coordinate", "", "shard 0: serve the workers' coordination at ADDR (HOST:PORT; a bare :PORT listens on every interface)")
	fl.StringVar(&c.Coordinator, "coordinator", "", "shards 1 to N-1: the leader's coordination, http://HOST:PORT")
	fl.DurationVar(&c.ShardTimeout, "shard-timeout", harness.DefaultShardTimeout, "a shard not heard from for this long is gone, and the point it was in fails")
	fl.DurationVar(&c.JoinTimeout, "join-timeout", harness.DefaultJoinTimeout, "how long the leader waits for every worker to join, and a worker for the leader to answer")
	return cmd
}

func capacityRun(cmd *cobra.Command, opts *CapacityOptions) error {
	c := opts.Config
	if opts.SeedSet {
		c.Seed = &opts.Seed
	}
	switch {
	case c.Duration < 0:
		return badInput(errNegative("--duration", c.Duration))
	case c.Budget < 0:
		return badInput(errNegative("--budget", c.Budget))
	case c.MinSteady < 0:
		return badInput(errNegative("--min-steady", c.MinSteady))
	case c.ReadyTimeout < 0:
		return badInput(errNegative("--ready-timeout", c.ReadyTimeout))
	case c.MaxRuns < 0 || c.Points < 0 || c.Min < 0 || c.Max < 0 || c.Resolution < 0:
		return badInput(fmt.Errorf("--max-runs, --points, --min, --max and --resolution must be ≥ 0"))
	case c.TimeScale < 0 || c.TimeScale > 1:
		return badInput(fmt.Errorf("--time-scale must be in (0, 1]"))
	case opts.Repeat < 1:
		return badInput(fmt.Errorf("--repeat must be ≥ 1"))
	}
	if opts.Shard != "" {
		sh, err := scenario.ParseShard(opts.Shard)
		if err != nil {
			return badInput(err)
		}
		c.Distributed.Shard = sh
	}
	sm, err := harness.ParseServerMetrics(opts.ServerMetrics)
	if err != nil {
		return badInput(err)
	}
	c.ServerMetrics = sm
	c.Getenv = opts.F.Getenv
	c.SetGCPercent = opts.F.SetGCPercent
	c.Out, c.ErrOut = opts.F.IO.Out, opts.F.IO.ErrOut
	c.Progress = opts.F.IO.ErrTTY && !opts.NoProgress
	if opts.Repeat == 1 {
		_, err = harness.Capacity(cmd.Context(), opts.F.Hard, c)
		return err
	}
	outs, err := harness.CapacityRepeats(cmd.Context(), opts.F.Hard, c, opts.Repeat)
	files := make([]*capacity.File, len(outs))
	for i, o := range outs {
		files[i] = o.File
	}
	if werr := report.WriteCapacityRepeats(c.Out, files); err == nil {
		err = werr
	}
	return err
}
