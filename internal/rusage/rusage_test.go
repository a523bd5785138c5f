//go:build unix

package rusage

import (
	"runtime"
	"testing"
	"time"
)

// Self's CPU time grows while a goroutine spins on a core, by no more
// than the wall time on every core, and the peak memory covers a buffer
// the test touched.
func TestSelf(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	before, _, ok := Self()
	if !ok {
		t.Fatal("no resource use on a unix system")
	}
	start := time.Now()
	for time.Since(start) < 100*time.Millisecond {
	}
	after, rss, _ := Self()
	wall := time.Since(start)
	if grew := after - before; grew <= 0 || grew > wall*time.Duration(runtime.NumCPU())+10*time.Millisecond {
		t.Errorf("CPU time grew %v over %v of spinning on %d cores", grew, wall, runtime.NumCPU())
	}
	if rss < int64(len(buf)) {
		t.Errorf("peak resident memory %d bytes, below the %d touched", rss, len(buf))
	}
}
