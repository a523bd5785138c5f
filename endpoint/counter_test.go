package endpoint

import (
	"sync"
	"testing"
)

// A Counter's stripes add up, whichever stripes the adds go to.
func TestCounter(t *testing.T) {
	var c Counter
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				c.stripe(w*1000 + i).Add(2)
			}
			c.stripe(-w).Add(-1) // any index, negative too
		})
	}
	wg.Wait()
	if got := c.Load(); got != 8*2000-8 {
		t.Errorf("Load = %d, want %d", got, 8*2000-8)
	}
}
