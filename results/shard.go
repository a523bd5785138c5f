package results

import (
	"time"

	"github.com/sixpin/sixpin/scenario"
)

// ShardInfo is one shard's identity and how it kept time: a results file
// of `sixpin run --shard I/N` carries it under "shard", and a merged run
// lists every shard's under "merged.shards".
type ShardInfo struct {
	// Index and Count are I and N of `--shard I/N`.
	Index int `json:"index"`
	Count int `json:"count"`
	// RunID is the id every shard of one distributed run shares.
	RunID string `json:"run_id,omitempty"`
	// ScenarioSHA256 and Seed identify the plan that was split.
	ScenarioSHA256 string `json:"scenario_sha256"`
	Seed           int64  `json:"seed"`
	// Host is the machine the shard ran on.
	Host string `json:"host"`
	// StartAt is the common start every shard waited for (nil: none);
	// StartedAt the wall-clock start of this shard's load.
	StartAt   *time.Time `json:"start_at,omitempty"`
	StartedAt time.Time  `json:"started_at"`
	// StartLateMs is how much later than StartAt the shard started, in
	// milliseconds (0 without StartAt).
	StartLateMs float64 `json:"start_late_ms"`
	// StartOffsetMs is, in a merged run, the shard's start from the
	// earliest shard's, in milliseconds.
	StartOffsetMs float64 `json:"start_offset_ms,omitempty"`
	// ScheduleLagMs is the shard's schedule lag over its whole run (send
	// time − scheduled time); Behind is true when its client fell behind
	// its open-loop schedule (Schedule.Behind).
	ScheduleLagMs *Dist `json:"schedule_lag_ms,omitempty"`
	Behind        bool  `json:"behind"`
	// CPUSaturation is the sixpin process's CPU time over the load's wall
	// time and the machine's CPUs (1: every core busy); 0 when unknown.
	CPUSaturation float64 `json:"cpu_saturation"`
	// Whole is the concurrency pin of the whole, unsplit plan (the shard's
	// own is under pins.concurrency.declared).
	Whole scenario.ConcurrencyDeclared `json:"whole_concurrency"`
}

// Attestation is how a merged run's shards kept time together: every
// shard's identity, start offset and schedule lag. A merged percentile is
// only as good as the worst shard, so the merged run is invalid when a
// shard fell behind its schedule or started later than the tolerance.
type Attestation struct {
	RunID  string      `json:"run_id,omitempty"`
	Count  int         `json:"count"`
	Shards []ShardInfo `json:"shards"`
	// StartToleranceMs is how late a shard may start (after StartAt, or
	// after the earliest shard) before the merged run is invalid.
	StartToleranceMs float64 `json:"start_tolerance_ms"`
}

// shardOf fills a shard's identity from what its run measured: its
// schedule lag and whether it fell behind.
func shardOf(h *Header, m *Measurement, sched *Schedule) *ShardInfo {
	if h.Shard == nil {
		return nil
	}
	s := *h.Shard
	s.StartedAt = h.StartedAt.UTC()
	if s.StartAt != nil {
		s.StartLateMs = max(float64(h.StartedAt.Sub(*s.StartAt))/float64(time.Millisecond), 0)
	}
	if w := m.Windows[WindowAll]; w != nil {
		s.ScheduleLagMs = w.ScheduleLagMs
	}
	s.Behind = sched != nil && sched.Behind
	return &s
}
