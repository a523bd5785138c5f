package harness

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Distributed is how one `sixpin run` takes part in a run split across
// processes or machines (`--shard I/N --start-at T --run-id ID`); its zero
// value is a run of the whole plan, started at once.
type Distributed struct {
	// Shard is the part of the plan this process runs (zero: the whole).
	Shard scenario.Shard
	// StartAt is the wall-clock time load starts, the same for every
	// shard (zero: as soon as the run is ready).
	StartAt time.Time
	// RunID names the distributed run every shard belongs to.
	RunID string
	// barrier, for a shard of a sharded capacity point, says it is ready
	// and returns the start every shard shares, once all are (it replaces
	// StartAt).
	barrier func(context.Context) (time.Time, error)
}

// set reports whether d asks for anything.
func (d Distributed) set() bool { return !d.Shard.Whole() || !d.StartAt.IsZero() || d.RunID != "" }

// checkDistributed refuses what a distributed run cannot be.
func checkDistributed(cfg Config, sc *scenario.Scenario) error {
	if !cfg.Distributed.set() {
		return nil
	}
	switch {
	case !cfg.Distributed.Shard.Whole() && cfg.Distributed.RunID == "":
		return fmt.Errorf("%w: --shard needs --run-id: the id every shard of the run shares (sixpin merge checks it, and the shards' prompts are salted by it)", ErrBadInput)
	case sc.Sweep != nil:
		return fmt.Errorf("%w: --shard, --start-at and --run-id run one scenario, not a sweep: shard each point as its own scenario", ErrBadInput)
	case cfg.Repeat > 1:
		return fmt.Errorf("%w: --shard, --start-at and --run-id with --repeat: repeat the distributed run instead", ErrBadInput)
	}
	return nil
}

// runSalt is the prompt salt every shard of run id shares, so that
// together they send what one process running the whole plan would
// (shared prefixes shared across shards), and no other run's prompts.
func runSalt(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("sixpin run id\x00" + id))
	return max(h.Sum64(), 1)
}

// shardPlan is cfg's shard of the whole plan (the whole when unsharded).
func shardPlan(cfg Config, whole *scenario.Plan) (*scenario.Plan, error) {
	if cfg.Distributed.Shard.Whole() {
		return whole, nil
	}
	p, err := whole.Shard(cfg.Distributed.Shard)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return p, nil
}

// shardIdentity is the results' shard identity (nil for a run that is no
// part of a distributed one); Assemble fills in its timing.
func shardIdentity(cfg Config, sc *scenario.Scenario, whole *scenario.Plan) *results.ShardInfo {
	d := cfg.Distributed
	if !d.set() {
		return nil
	}
	host, _ := os.Hostname()
	s := &results.ShardInfo{Index: d.Shard.I, Count: max(d.Shard.N, 1), RunID: d.RunID, ScenarioSHA256: sc.SHA256, Seed: sc.Seed,
		Host: host, Whole: whole.Declared(scenario.Wire{}).Concurrency}
	if !d.StartAt.IsZero() {
		at := d.StartAt.UTC()
		s.StartAt = &at
	}
	return s
}

// waitStart waits for cfg's common start (none: returns at once), saying
// so on ErrOut; a start already past is not waited for, and the shard
// records how late it started. A shard of a sharded capacity point learns
// its start from its barrier, once every shard is ready, and h's shard
// identity records it. An interrupt while waiting ends the run before it
// began.
func waitStart(ctx context.Context, cfg Config, h *results.Header) error {
	at := cfg.Distributed.StartAt
	if b := cfg.Distributed.barrier; b != nil {
		var err error
		if at, err = b(ctx); err != nil {
			return err
		}
		if h.Shard != nil {
			u := at.UTC()
			h.Shard.StartAt = &u
		}
	}
	if at.IsZero() {
		return nil
	}
	wait := time.Until(at)
	if wait <= 0 {
		fmt.Fprintf(cfg.ErrOut, "sixpin: warning: the start %s is %s past: starting late\n", at.UTC().Format(time.RFC3339Nano), (-wait).Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(cfg.ErrOut, "sixpin: waiting %s for the start at %s\n", wait.Round(time.Millisecond), at.UTC().Format(time.RFC3339Nano))
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: before the start at %s", ErrInterrupted, at.UTC().Format(time.RFC3339Nano))
	}
}

// cpuSaturation is the CPU time the process spent since load started
// (cpu0: its CPU seconds then) over the load's wall time and the
// machine's CPUs.
func cpuSaturation(ci results.ClientInfo, cpu0 float64, started time.Time) float64 {
	wall := time.Since(started).Seconds()
	if wall <= 0 || ci.CPUs <= 0 {
		return 0
	}
	return max(ci.CPUSeconds-cpu0, 0) / (wall * float64(ci.CPUs))
}
