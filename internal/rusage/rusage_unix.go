//go:build unix

package rusage

import (
	"runtime"
	"syscall"
	"time"
)

func self() (time.Duration, int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		rss *= 1024 // Linux and the BSDs count KiB; Darwin counts bytes
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss, true
}
