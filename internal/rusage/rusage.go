// Package rusage reads what this process has used so far: its CPU time
// and its peak resident memory. Safe for concurrent use.
package rusage

import "time"

// Self is this process's CPU time since it started (user and system,
// all threads) and its peak resident set size in bytes. ok is false
// where the operating system does not say (then both are zero).
func Self() (cpu time.Duration, maxRSSBytes int64, ok bool) { return self() }

// CPU is Self's CPU time: zero where the operating system does not say.
func CPU() time.Duration {
	cpu, _, _ := self()
	return cpu
}
