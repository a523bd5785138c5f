// Package benchmarks holds sixpin's load benchmarks, which measure sixpin
// itself.
//
// They are whole runs of the real binary against the simulator in a
// separate process (CPU per streamed token and client-added latency, each
// as a ratio to a bare Go client measured in the same run; memory at
// 10,000 streams; open-loop pacing at 2,000 req/s). Run them with `make
// bench`; each reports its figures with b.ReportMetric and fails when its
// claim is not met on the machine at hand. No check is an absolute time.
package benchmarks
