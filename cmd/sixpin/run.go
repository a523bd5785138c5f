package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/sixpin/sixpin/cmd/sixpin/internal/kube"
	"github.com/sixpin/sixpin/harness"
	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// RunOptions are `sixpin run`'s dependencies and flags.
type RunOptions struct {
	F          *Factory
	Config     harness.Config
	Seed       int64
	SeedSet    bool
	NoProgress bool
	CPUProfile string
	MemProfile string
	// Shard and StartAt are --shard I/N and --start-at T as given.
	Shard, StartAt string
	// ServerMetrics is --server-metrics as given.
	ServerMetrics string
}

// NewCmdRun builds `sixpin run`. runF replaces the action in tests.
func NewCmdRun(f *Factory, runF func(*cobra.Command, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{F: f}
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Replay a scenario against an endpoint (the built-in simulator by default)",
		Example: `  sixpin run scenarios/agentic-120k.yaml
  sixpin run scenarios/chat-8k-c16.yaml --endpoint http://127.0.0.1:8080/v1 --model qwen
  sixpin run scenarios/smoke.yaml --profile vllm -o results.json
  sixpin run scenarios/smoke.yaml -o results.json --records requests.jsonl`,
		Annotations: trapSignals,
		Args:        argsBadInput(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Config.ScenarioPath = args[0]
			opts.SeedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(cmd, opts)
			}
			return runRun(cmd, opts)
		},
	}
	c := &opts.Config
	fl := cmd.Flags()
	addTargetFlags(fl, c)
	fl.StringVarP(&c.Output, "output", "o", "", "results file (default sixpin-NAME-TIMESTAMP.json)")
	fl.StringVar(&c.Records, "records", "", "also write one row per request to FILE as the run goes: JSON Lines (.jsonl) or CSV (.csv); a sweep's or repeat's runs each to FILE numbered (rows.1.jsonl, …)")
	fl.Int64Var(&opts.Seed, "seed", 0, "override the scenario's seed")
	fl.DurationVar(&c.Duration, "duration", 0, "override the scenario's duration (e.g. 30s, 5m)")
	fl.IntVar(&c.Requests, "requests", 0, "override the scenario's request count")
	fl.DurationVar(&c.Grace, "grace", harness.DefaultGrace, "after an interrupt, how long in-flight requests may finish")
	addReadyFlag(fl, c)
	fl.IntVar(&c.Repeat, "repeat", 0, "run N times (seeds seed, seed+1, …) and report means with 95% confidence intervals")
	fl.BoolVar(&c.ContentCheck, "content-check", false, "after the run, run a short slice per content class of prompt (prose, code, json, tool-calls, repetitive) at the same pins and compare their decode tok/s: past --content-spread the card marks the run content-sensitive (a speculative drafter's speed depends on what the model writes)")
	fl.DurationVar(&c.ContentCheckSlice, "content-check-slice", harness.DefaultContentCheckSlice, "how long each content class's slice runs (the scenario's duration when shorter)")
	fl.Float64Var(&c.ContentSpreadPct, "content-spread", results.DefaultContentSpreadPct, "the spread of decode tok/s across content classes, in percent (fastest ÷ slowest − 1), past which a run is content-sensitive")
	fl.BoolVar(&opts.NoProgress, "no-progress", false, "no progress bar")
	fl.BoolVar(&c.AllowOverContext, "allow-over-context", false, "send planned prompts longer than the server's context on purpose, to measure how it refuses them (without it the prompt pin is ✗ and the run invalid)")
	fl.StringSliceVar(&c.AllowPinMismatch, "allow-pin-mismatch", nil, "accept a contradicted pin knowingly (model, prompt, output, concurrency, kv_cache or mix; repeatable): it stays ✗ on the card and is recorded in the results, but the run is valid")
	fl.StringVar(&c.PromptSalt, "prompt-salt", "", "reuse a run's prompt salt (scenario.prompt_salt in its results) to send the same prompt bytes again, e.g. for warm-cache studies (default: a fresh salt per run)")
	fl.DurationVar(&c.Checkpoint, "checkpoint", harness.DefaultCheckpoint, "rewrite the results file, marked incomplete, this often once a run has gone on for a minute (0: never)")
	fl.StringVar(&opts.Shard, "shard", "", "run shard I of N of the scenario's plan (I/N, e.g. 0/4; needs --run-id); `sixpin merge` combines the shards' results")
	fl.StringVar(&opts.StartAt, "start-at", "", "start load at this wall-clock time, RFC 3339 or unix seconds, the same for every shard (a late start is recorded)")
	fl.StringVar(&c.Distributed.RunID, "run-id", "", "the id every shard of a distributed run shares (recorded in the results; salts the prompts)")
	fl.StringVar(&c.KVFit, "kv-fit", harness.KVFitWarn, "before load, check that the planned concurrency fits the server's KV cache: warn (say so and go on) or strict (refuse, exit 2)")
	fl.StringArrayVar(&c.AbortOn, "abort-on", nil, "stop the run as soon as one of these conditions is broken at 95% confidence, e.g. 'ttft_ms.p90<=5000, error_rate<=5%' (repeatable; beside the scenario's abort_on): the run is marked stopped early, says why and when, and fails")
	fl.BoolVar(&c.Calibrate, "calibrate", false, "before the run, measure sixpin's own floor (TTFT, ITL) at the run's concurrency against an in-process loopback server; a run whose floor exceeds 5% of its TTFT p50 is flagged")
	fl.StringVar(&opts.ServerMetrics, "server-metrics", "1s", "scrape the server's own Prometheus /metrics (vLLM, SGLang, llama.cpp --metrics, TGI) this often during the run, or off")
	addLiveFlags(fl, c)
	fl.BoolVar(&c.NoEventLoop, "no-event-loop", false, "read every answer on its own goroutine; by default, on Linux, an answer over plain HTTP/1.1 that the server paces is read, after its first reads, on one event-loop thread with all such streams, which costs less CPU per token (docs/speed.md): this is the way to compare")
	fl.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a Go CPU profile of sixpin itself to FILE")
	_ = fl.MarkHidden("cpuprofile")
	fl.StringVar(&opts.MemProfile, "memprofile", "", "write a Go heap profile of sixpin itself to FILE at its largest live heap (looked at every second)")
	_ = fl.MarkHidden("memprofile")
	fl.Float64Var(&c.TimeScale, "time-scale", 0, "run the built-in simulator and the client this much faster (0 < k < 1), figures in simulated time (for tests and demos)")
	_ = fl.MarkHidden("time-scale")
	return cmd
}

func runRun(cmd *cobra.Command, opts *RunOptions) error {
	c := opts.Config
	if opts.SeedSet {
		c.Seed = &opts.Seed
	}
	if c.Duration < 0 {
		return badInput(errNegative("--duration", c.Duration))
	}
	if c.Checkpoint < 0 {
		return badInput(errNegative("--checkpoint", c.Checkpoint))
	}
	if c.ReadyTimeout < 0 {
		return badInput(errNegative("--ready-timeout", c.ReadyTimeout))
	}
	if c.Repeat < 0 || c.TimeScale < 0 || c.TimeScale > 1 {
		return badInput(fmt.Errorf("--repeat must be ≥ 0 and --time-scale in (0, 1]"))
	}
	sm, err := harness.ParseServerMetrics(opts.ServerMetrics)
	if err != nil {
		return badInput(err)
	}
	c.ServerMetrics = sm
	if c.KVFit, err = harness.ParseKVFit(c.KVFit); err != nil {
		return badInput(err)
	}
	if err := harness.CheckPinNames("--allow-pin-mismatch", c.AllowPinMismatch); err != nil {
		return badInput(err)
	}
	if err := parseDistributed(opts, &c.Distributed); err != nil {
		return badInput(err)
	}
	c.Getenv = opts.F.Getenv
	c.SetGCPercent = opts.F.SetGCPercent
	c.Out, c.ErrOut = opts.F.IO.Out, opts.F.IO.ErrOut
	c.Progress = opts.F.IO.ErrTTY && !opts.NoProgress
	if opts.CPUProfile != "" {
		f, err := os.Create(opts.CPUProfile)
		if err != nil {
			return badInput(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if opts.MemProfile != "" {
		stop, err := heapPeaks(opts.MemProfile)
		if err != nil {
			return badInput(err)
		}
		defer stop()
	}
	_, err = harness.Run(cmd.Context(), opts.F.Hard, c)
	return err
}

// heapPeaks writes the heap profile to path each second the live heap
// (as of the last collection) is larger than ever before; stop ends it.
func heapPeaks(path string) (stop func(), err error) {
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var peak uint64
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if metrics.Read(s); s[0].Value.Uint64() > peak {
				peak = s[0].Value.Uint64()
				_ = atomicfile.Write(path, func(w io.Writer) error { return pprof.Lookup("heap").WriteTo(w, 0) })
			}
		}
	})
	return func() { close(done); wg.Wait() }, nil
}

type negErr struct {
	flag string
	d    time.Duration
}

func (e negErr) Error() string { return e.flag + " must not be negative (got " + e.d.String() + ")" }

func errNegative(flag string, d time.Duration) error { return negErr{flag, d} }

// parseDistributed reads --shard and --start-at into d.
func parseDistributed(opts *RunOptions, d *harness.Distributed) error {
	if opts.Shard != "" {
		sh, err := scenario.ParseShard(opts.Shard)
		if err != nil {
			return err
		}
		d.Shard = sh
	}
	if opts.StartAt != "" {
		at, err := kube.ParseStartAt(opts.StartAt)
		if err != nil {
			return err
		}
		d.StartAt = at
	}
	return nil
}
