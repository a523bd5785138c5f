// Package results turns a run's records into sixpin's figures, as data.
//
// It holds the collector (fed by one goroutine, the consumer of the
// runner's channel), the windows and their HDR histograms, the per-second
// series, the pins (declared, observed, verified with the reason),
// validity, cost and rate limits, the server's side of a run, merge of
// shards, the spill that keeps records on disk while a run goes on, and
// the versioned results file (schema sixpin/result/v1) with its reader.
// It renders nothing: every word a person reads of it is package report's.
// What one request and one server sample are is package record's.
package results
