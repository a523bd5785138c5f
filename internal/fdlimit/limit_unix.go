//go:build unix

package fdlimit

import "syscall"

// Limit is the process's open-file limit — its soft RLIMIT_NOFILE,
// which Go's runtime raises to the hard limit at start-up — and whether
// it could be read.
func Limit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return r.Cur, true
}
