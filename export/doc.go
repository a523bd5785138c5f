// Package export writes sixpin's measurements in the formats other tools
// read: one row per request as JSON Lines or CSV (the per-request export
// AIPerf's profile_export.jsonl and vLLM's --save-detailed give their
// users), and the llm-d Benchmark Report v0.2 of a run, a set of runs or
// a capacity search, the interchange format llm-d-benchmark imports
// AIPerf and inference-perf into.
//
// It is data, not words: what a person reads is report's. Rows are
// written as records are consumed (a RecordWriter holds one row, never
// the run), by the goroutine that already sees every finished record.
package export
