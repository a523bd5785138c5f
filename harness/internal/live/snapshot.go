package live

// Snapshot is what the live page shows at one moment of a run, as JSON.
// The harness builds it (Start's source); every figure carries its unit
// in its name, and per-stream and aggregate throughput are separate
// fields, never one for the other.
type Snapshot struct {
	// Seq counts the snapshots sent; it moves every Interval.
	Seq int64 `json:"seq"`
	// State is "starting" (no run yet), "running", "between" (one run of
	// a sweep or bake-off ended, the next not begun) or "finished" (the
	// final report is at /report).
	State string `json:"state"`
	// Step is "step k of n: LABEL" in a sweep, repeat or bake-off, else "".
	Step      string `json:"step,omitempty"`
	Scenario  string `json:"scenario"`
	Target    string `json:"target"`
	Simulated bool   `json:"simulated"`

	// ElapsedS is the run's own clock (run time, as its records are),
	// s; DurationS its duration bound (0: none) and Requests its request
	// bound (0: none).
	ElapsedS  float64 `json:"elapsed_s"`
	DurationS float64 `json:"duration_s"`
	Requests  int     `json:"requests"`

	Pins []Pin `json:"pins"`

	Issued   int64 `json:"issued"`
	Done     int64 `json:"done"`
	Failed   int64 `json:"failed"`
	InFlight int64 `json:"in_flight"`
	// OutputTokens counts output tokens as they stream (ended requests'
	// usage plus the chunks of those in flight).
	OutputTokens int64 `json:"output_tokens"`
	PromptTokens int64 `json:"prompt_tokens"`

	// Seconds is the per-second series so far (the latest last, at most
	// MaxSeconds of them).
	Seconds []Second `json:"seconds"`

	// Latency percentiles of the requests ended so far, ms.
	TTFTMs Percentiles `json:"ttft_ms"`
	ITLMs  Percentiles `json:"itl_ms"`
	E2EMs  Percentiles `json:"e2e_ms"`
	// LagMs is the schedule lag: how late requests were sent, ms.
	LagMs Percentiles `json:"schedule_lag_ms"`

	// Errors counts failed requests by class.
	Errors map[string]int64 `json:"errors"`

	Windows []Window `json:"windows"`

	// Server is the server's own series (KV usage, requests running and
	// waiting, its token rates), one value per scrape of its /metrics;
	// empty when it is not scraped (`--server-metrics off`, or no
	// /metrics).
	Server []ServerSeries `json:"server"`

	// Final is set once the final report is at /report.
	Final bool `json:"final"`
}

// MaxSeconds bounds Snapshot.Seconds.
const MaxSeconds = 600

// Pin is one declared pin, in words.
type Pin struct {
	N        int    `json:"n"`
	Name     string `json:"name"`
	Declared string `json:"declared"`
}

// Second is one second of the run (run time [AtS−1, AtS)).
type Second struct {
	AtS float64 `json:"at_s"`
	// AggregateTokS is output tokens arriving that second, all streams.
	AggregateTokS float64 `json:"aggregate_tok_s"`
	// InFlight is requests in flight at the second's end.
	InFlight int64 `json:"in_flight"`
	// PerStreamTokS is AggregateTokS ÷ InFlight (0 when none is in
	// flight).
	PerStreamTokS float64 `json:"per_stream_tok_s"`
}

// Percentiles summarise a distribution; N is its sample count (0: the
// rest is empty).
type Percentiles struct {
	N   int64   `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Window is one window of the run as far as it is decided: Decided once
// its bounds are known (warmup and burst when the clock passes their end,
// steady and all at the end), with Note saying what is still open.
type Window struct {
	Name    string  `json:"name"`
	StartS  float64 `json:"start_s"`
	EndS    float64 `json:"end_s"`
	Decided bool    `json:"decided"`
	Note    string  `json:"note,omitempty"`
}

// ServerSeries is one of the server's series: its name, unit and latest
// values, one per second.
type ServerSeries struct {
	Name   string    `json:"name"`
	Unit   string    `json:"unit"`
	Values []float64 `json:"values"`
}
