package results

import (
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMerge100Shards merges a hundred shards' results files from
// disk as `sixpin merge` does (MergeFiles); BenchmarkRead100Shards, its
// yardstick, only reads them, all held at once. The ratio of the two is
// merging's cost beyond reading the files. Both report the live heap's
// high-water mark (peak-heap-MiB, sampled every millisecond).
func BenchmarkMerge100Shards(b *testing.B) { benchMergeFiles(b, 100) }

func BenchmarkRead100Shards(b *testing.B) {
	paths := benchShards(b, 100)
	peak := watchHeap(b)
	b.ResetTimer()
	for range b.N {
		readShards(b, paths)
	}
	peak()
}

// BenchmarkMergeShards merges 100 and 400 shards' files: the peak heap
// of the two is what a merge's memory growing with its shards would show.
func BenchmarkMergeShards(b *testing.B) {
	for _, n := range []int{100, 400} {
		b.Run(fmt.Sprintf("shards=%d", n), func(b *testing.B) { benchMergeFiles(b, n) })
	}
}

// benchMergeFiles merges n shards' files as `sixpin merge` does,
// reporting the live heap's peak.
func benchMergeFiles(b *testing.B, n int) {
	paths := benchShards(b, n)
	peak := watchHeap(b)
	b.ResetTimer()
	for range b.N {
		if _, err := MergeFiles(paths, MergeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	peak()
}

// watchHeap samples the heap's live and unswept objects every millisecond
// until the returned func, which reports their peak as peak-heap-MiB.
func watchHeap(b *testing.B) func() {
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
		b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	}
}

func readShards(b *testing.B, paths []string) []Shard {
	var out []Shard
	for _, p := range paths {
		r, err := ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, Shard{Name: p, Run: r})
	}
	return out
}

// benchShards writes n shards' results files of 200 requests each.
func benchShards(b *testing.B, n int) []string {
	dir := b.TempDir()
	var paths []string
	for i := range n {
		r := shardRun(b, i, n, 200, 0)
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := WriteFile(p, r); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}
