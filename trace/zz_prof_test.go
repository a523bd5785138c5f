package trace

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestProfBig(t *testing.T) {
	t0 := time.Now()
	tr, err := Read(os.Getenv("F"))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("%v err=%v total=%dMB heap=%dMB", time.Since(t0), err, ms.TotalAlloc>>20, ms.HeapAlloc>>20)
	_ = tr
	runtime.KeepAlive(tr)
}
