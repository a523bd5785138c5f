//go:build !linux

package benchmarks

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// eventLoopCPUPerToken is the event-loop yardstick, built on Linux's
// epoll only: elsewhere it measures nothing and returns 0.
func eventLoopCPUPerToken(*testing.B, string, int, int, string, int, *hdrhistogram.Histogram) float64 {
	return 0
}
