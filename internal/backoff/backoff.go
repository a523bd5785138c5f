// Package backoff is the waiting between attempts that sixpin's runner
// (connect failures, 429s) and endpoint probe share.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Jittered is an exponential backoff with "equal jitter": first·2^n capped
// at ceiling, of which the second half is random. rng is the caller's
// (not safe for concurrent use).
func Jittered(rng *rand.Rand, first, ceiling time.Duration, n int) time.Duration {
	d := ceiling
	if n < 30 && first<<n < ceiling {
		d = first << n
	}
	return d/2 + time.Duration(rng.Int64N(int64(d/2)+1))
}

// Sleep waits d or until ctx ends; it reports whether the wait ran out.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
