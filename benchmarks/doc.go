// Package benchmarks holds sixpin's load benchmarks: whole runs of the
// real binary against the simulator in a separate process, measuring
// sixpin itself (memory at 10,000 streams, client-added latency at 1,000,
// open-loop pacing at 2,000 req/s). Run them with `make bench`; each
// reports its figures with b.ReportMetric and fails when its claim is not
// met on the machine at hand.
package benchmarks
