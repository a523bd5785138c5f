//go:build !unix

package fdlimit

// Limit is unknown here (false): no RLIMIT_NOFILE to read.
func Limit() (uint64, bool) { return 0, false }
