package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// RepeatSeedStep separates the seeds of repeated searches: a search's
// confirmations run a value again with seed + 1, + 2, …, so the searches'
// seeds lie far apart and no two share a run.
const RepeatSeedStep = 1000

// CapacityRepeats runs cc's search n times, the k-th with seed
// seed + k·RepeatSeedStep (seed: cc.Seed, else the scenario's), each
// writing a file of its own (cc.Output with "-seedS" before its
// extension; the default name otherwise). It stops at the first search
// that fails or is interrupted and returns the searches done.
func CapacityRepeats(ctx, hard context.Context, cc CapacityConfig, n int) ([]*CapacityOutcome, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: --repeat must be ≥ 1", ErrBadInput)
	}
	if cc.Distributed.Shard.N > 1 {
		return nil, fmt.Errorf("%w: --repeat with --shard: run the sharded searches one after another, each with its own --seed and --run-id", ErrBadInput)
	}
	base := int64(0)
	if cc.Seed != nil {
		base = *cc.Seed
	} else {
		sc, err := loadScenario(withDefaults(cc.Config))
		if err != nil {
			return nil, err
		}
		base = sc.Seed
	}
	var out []*CapacityOutcome
	for k := range n {
		one := cc
		seed := base + int64(k)*RepeatSeedStep
		one.Seed = &seed
		if cc.Output != "" {
			ext := filepath.Ext(cc.Output)
			one.Output = fmt.Sprintf("%s-seed%d%s", strings.TrimSuffix(cc.Output, ext), seed, ext)
		}
		o, err := Capacity(ctx, hard, one)
		if o != nil {
			out = append(out, o)
		}
		if err != nil || ctx.Err() != nil {
			return out, err
		}
	}
	return out, nil
}
