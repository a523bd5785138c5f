package bounds

import (
	"math"
	"testing"
	"time"
)

func TestCenturyFitsADuration(t *testing.T) {
	if Century <= 0 || Century > math.MaxInt64/2 || Century.Hours() != 876600 {
		t.Fatalf("Century = %v", Century)
	}
	if !Seconds(0) || !Seconds(CenturySeconds) || Seconds(CenturySeconds+1) || Seconds(-1) || Seconds(math.NaN()) || Seconds(math.Inf(1)) {
		t.Error("Seconds misjudges the edges")
	}
	if d := time.Duration(CenturySeconds * 1e9); d != Century {
		t.Errorf("CenturySeconds in ns = %v, want %v", d, Century)
	}
}
