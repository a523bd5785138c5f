package endpoint

import (
	"sync/atomic"
	"time"
)

// counterStripes is how many cache lines a Counter spreads over.
const counterStripes = 16

// LiveStep is how long (wall-clock time) a stream keeps its new chunks
// to itself before it adds them to its live Counter (Call.Live): a stream pays one
// atomic add per LiveStep, not one per chunk.
const LiveStep = 50 * time.Millisecond

// Counter is a count that many streams add to at once without sharing a
// cache line: each adds to its own stripe (by request index), and Load
// sums the stripes. Safe for concurrent use.
type Counter struct {
	stripes [counterStripes]struct {
		n atomic.Int64
		_ [56]byte // one stripe per 64-byte cache line
	}
}

// stripe is request index i's share of c; a nil Counter's is a
// throwaway, so that an uncounted stream adds to nothing shared.
func (c *Counter) stripe(i int) *atomic.Int64 {
	if c == nil {
		return new(atomic.Int64)
	}
	return &c.stripes[uint(i)%counterStripes].n
}

// Load is the count: the stripes' sum.
func (c *Counter) Load() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}
