package results

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkMerge100Shards merges a hundred shards' results files, read
// from disk; BenchmarkRead100Shards, its yardstick, only reads them. The
// ratio of the two is merging's cost beyond reading the files.
func BenchmarkMerge100Shards(b *testing.B) {
	paths := benchShards(b, 100)
	b.ResetTimer()
	for range b.N {
		shards := readShards(b, paths)
		if _, err := Merge(shards, MergeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead100Shards(b *testing.B) {
	paths := benchShards(b, 100)
	b.ResetTimer()
	for range b.N {
		readShards(b, paths)
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
