package results

import (
	"errors"
	"math"
	"testing"
)

// Percentiles read from a histogram as the peers read theirs from the
// values: numpy's linear interpolation (np.percentile) and GuideLLM's
// nearest rank, on values whose answers are known.
func TestPeerValuesReadAsThePeers(t *testing.T) {
	t.Parallel()
	s := NewSample(HistPeerTTFT)
	for _, v := range []float64{10, 20, 30, 40, 100} { // ms
		s.Add(v, 1)
	}
	pv := newPeerValues(s.h, HistPeerTTFT.Scale)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		// np.percentile([10,20,30,40,100], q)
		{"linear p50", pv.linear(50), 30},
		{"linear p90", pv.linear(90), 76},
		{"linear p99", pv.linear(99), 97.6},
		{"linear p0", pv.linear(0), 10},
		{"linear p100", pv.linear(100), 100},
		// searchsorted(cumsum([.2]*5), q, "left")
		{"nearest p50", pv.nearestRank(50), 30},
		{"nearest p90", pv.nearestRank(90), 100},
		{"nearest p40", pv.nearestRank(40), 20},
		{"mean", pv.mean(), 40},
		{"std", pv.std(), math.Sqrt((900 + 400 + 100 + 0 + 3600) / 5.0)},
	} {
		if math.Abs(c.got-c.want) > c.want/1000+1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// An unknown dialect is an error that lists the known ones; a run
// without peer figures gives every figure unavailable, with why.
func TestDialectOf(t *testing.T) {
	t.Parallel()
	_, err := DialectOf(&Run{}, "k6")
	var u *UnknownDialectError
	if !errors.As(err, &u) || err.Error() != `unknown dialect "k6" (want one of vllm, aiperf, guidellm, mlperf)` {
		t.Errorf("err %v", err)
	}
	for _, name := range Dialects {
		d, err := DialectOf(&Run{Merged: &Attestation{}}, name)
		if err != nil {
			t.Fatal(err)
		}
		if d.Unavailable == "" || len(d.Figures) == 0 {
			t.Errorf("%s: %+v", name, d)
		}
		for _, f := range d.Figures {
			if f.Value != nil || f.Unavailable != d.Unavailable || f.Definition == "" {
				t.Errorf("%s: %+v", name, f)
			}
		}
	}
}
