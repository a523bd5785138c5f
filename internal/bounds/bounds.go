// Package bounds holds the sane limits sixpin puts on every count, length,
// rate and time it reads from a file.
//
// They apply to scenarios, traces and profiles alike, so that no input can overflow an int or a time.Duration, allocate absurdly,
// or keep a run waiting for longer than anyone could mean. Loaders check
// them and name the field; the README's scenario section lists them.
package bounds

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"time"
)

// Limits on what a file may declare.
const (
	// Tokens is the longest prompt, output or context, in tokens, when no
	// max_model_len bounds it: 10M, beyond every served model's context.
	Tokens = 10_000_000
	// Streams is the most concurrent streams (closed loop), sessions or
	// requests in flight: 1M.
	Streams = 1_000_000
	// RateRPS is the highest open-loop arrival rate, requests/s: 1M.
	RateRPS = 1_000_000
	// Requests is the most requests or planned arrivals one run may
	// issue, and the most requests of a trace: 100M. A run keeps nothing
	// per request in memory (histograms, and records streamed to disk)
	// and a trace streams, so the bound is time: 100M requests are some
	// 14 h at the 2,000 requests/s one machine sustains.
	Requests = 100_000_000
	// Sessions is the most agentic sessions (workload.sessions) or trace
	// sessions one run may play: 1M. A run keeps a summary of every
	// session — some 200 bytes in memory, some 500 in the results file
	// — so 1M sessions cost 200 MB and a results file of 500 MB, about
	// what one machine and a report can still take.
	Sessions = 1_000_000
	// Turns is the most turns of one agentic session: 10,000.
	Turns = 10_000
	// Retries is the most retries of one turn after a 429: 1,000.
	Retries = 1_000
	// Values is the most values of an empirical distribution: 1M (more
	// belongs in a trace).
	Values = 1_000_000
	// YAMLValues is the most values a scenario, profile or rules file
	// holds in all (scalars, lists and mappings): 3M, room for one
	// empirical distribution of Values values with its weights and a
	// million more. A parsed value costs some 300 bytes, so the biggest
	// file takes about 1 GB to read.
	YAMLValues = 3_000_000
	// SweepPoints is the most values a sweep takes: 1,000.
	SweepPoints = 1_000
	// MinBurstiness and MaxBurstiness bound the gamma arrival shape.
	MinBurstiness = 0.001
	MaxBurstiness = 1000
	// FileBytes is the largest scenario, profile or rules file: 32 MiB.
	FileBytes = 32 << 20
	// TimeScale is the most a trace's times may be stretched.
	TimeScale = 1000
	// Century is the longest duration, time offset or span of a trace's
	// timestamps: 100 years of 365.25 days.
	Century = 36525 * 24 * time.Hour
	// CenturySeconds is Century in seconds.
	CenturySeconds = float64(Century / time.Second)
)

// MinRateRPS is the lowest open-loop rate: one request a century.
var MinRateRPS = 1 / CenturySeconds

// Seconds reports whether s seconds is a time within [0, Century].
func Seconds(s float64) bool { return s >= 0 && s <= CenturySeconds && !math.IsNaN(s) }

// ReadFile reads a scenario, profile or rules file of at most FileBytes
// bytes; a bigger one is refused after reading only FileBytes+1 of it.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized to the file, not grown by doubling: a 26 MB file costs 26 MB.
	var buf bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		buf.Grow(int(min(st.Size(), FileBytes)) + bytes.MinRead) // ReadFrom wants MinRead free to see the end
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, FileBytes+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if len(data) > FileBytes {
		return nil, fmt.Errorf("%s: the file is larger than %d MiB: too big for a YAML file sixpin reads", path, FileBytes>>20)
	}
	return data, nil
}
