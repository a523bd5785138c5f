package report

import (
	"io"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// WriteAttestation renders a merged run's attestation, as `sixpin merge`
// prints it: one line per shard (its host, start offset from the earliest
// shard, how late it started, its schedule lag and CPU saturation), then
// whether the whole is valid. A run that was not merged writes nothing.
func WriteAttestation(w io.Writer, run *results.Run) error {
	a := run.Merged
	if a == nil {
		return nil
	}
	p := &numfmt.Printer{W: w}
	p.F("Merged %s of run %q (scenario %s, seed %d); a shard may start %s ms late:\n",
		numfmt.Count(len(a.Shards), "shard", ""), a.RunID, run.Scenario.Name, run.Scenario.Seed, numfmt.Sig(a.StartToleranceMs))
	for _, s := range a.Shards {
		lag := "no requests"
		if d := s.ScheduleLagMs; d != nil {
			lag = "schedule lag p99 " + numfmt.Sig(d.P99) + " ms"
		}
		behind := ""
		if s.Behind {
			behind = ", BEHIND its schedule"
		}
		p.F("  shard %d/%d on %s: started +%s ms (%s ms after the start), %s%s, CPU %s\n",
			s.Index, s.Count, s.Host, numfmt.Sig(s.StartOffsetMs), numfmt.Sig(s.StartLateMs), lag, behind, numfmt.Percent(s.CPUSaturation))
	}
	if run.Valid {
		p.F("Valid: every shard started on time and kept its schedule, and the pins hold for the whole.\n")
	}
	return p.Err
}
