package results

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/record"
)

// A run's TTFT over time counts each successful request in the second of
// its first token, and a second's percentiles read within a bucket (4.4%)
// of the exact ones; failed requests are not counted.
func TestTTFTOverTime(t *testing.T) {
	t.Parallel()
	var recs []*record.Record
	var want [3][]float64 // exact TTFTs in ms by second of first token
	for k := range 300 {
		start := time.Duration(k) * 9 * ms
		ttft := time.Duration(5+k%97) * ms
		r := stream(k, start, ttft, 2*ms, 4, 1)
		recs = append(recs, r)
		sec := int((start + ttft) / time.Second)
		want[sec] = append(want[sec], float64(ttft)/float64(ms))
	}
	failed := stream(300, 0, 7*ms, ms, 1, 1)
	failed.Err = record.ErrHTTP5xx
	recs = append(recs, failed)
	m := finish(t, WindowSpec{Burst: time.Second}, SLO{}, recs...)
	o := m.Series.TTFT
	if o == nil || o.StepS != 1 || len(o.Steps) != 3 {
		t.Fatalf("TTFT over time %+v", o)
	}
	for sec, vals := range want {
		slices.Sort(vals)
		if n := o.Count(sec); n != int64(len(vals)) {
			t.Errorf("second %d: %d requests, want %d", sec, n, len(vals))
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			exact := vals[int(math.Ceil(q*float64(len(vals))))-1]
			got, ok := o.QuantileMs(sec, q)
			if !ok || math.Abs(got-exact)/exact > 0.045 {
				t.Errorf("second %d p%g: %v ms, exact %v", sec, q*100, got, exact)
			}
		}
	}
	if e := m.Series.E2E; e == nil || e.Count(0)+e.Count(1)+e.Count(2) != 300 {
		t.Errorf("E2E over time %+v", e)
	}
}

// Merged shards' latencies over time are the sum of theirs, aligned on
// wall-clock time; a step of another length is re-counted in the coarser.
func TestOverTimeAdds(t *testing.T) {
	t.Parallel()
	a, b := shardRun(t, 0, 2, 30, 0), shardRun(t, 1, 2, 30, 2*time.Second)
	m, err := Merge(shards(a, b), MergeOptions{StartTolerance: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	total := func(o *OverTime) (n int64) {
		for i := range o.Steps {
			n += o.Count(i)
		}
		return n
	}
	if n := total(m.Series.TTFT); n != 60 {
		t.Errorf("merged TTFT over time counts %d, want 60", n)
	}
	if got, want := len(m.Series.TTFT.Steps), len(a.Series.TTFT.Steps)+2; got != want {
		t.Errorf("merged over %d steps, want %d (the second shard 2 s later)", got, want)
	}
	coarse := &OverTime{StepS: 10, Steps: [][]int64{{3, 1}}}
	addOverTime(&coarse, a.Series.TTFT, 0)
	if coarse.StepS != 10 || total(coarse) != 31 || len(coarse.Steps) != 1 {
		t.Errorf("1-s steps added into 10-s ones: %+v", coarse)
	}
}

// A hand-edited latency over time is refused at its field.
func TestOverTimeChecked(t *testing.T) {
	t.Parallel()
	r := shardRun(t, 0, 1, 5, 0)
	r.Series.TTFT.Steps[0] = []int64{9, 1, 4, 2}
	_, err := Read("r.json", mustJSON(t, r))
	var list fielderr.List
	if !errors.As(err, &list) || !strings.Contains(err.Error(), "series.ttft_over_time") || !strings.Contains(err.Error(), "buckets ascend") {
		t.Errorf("a descending bucket list: %v", err)
	}
}
