package sim

import (
	"math"
	"testing"
	"time"
)

func TestKVBytesPerToken(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Roofline
		want float64
	}{
		{"llama-3-8b bf16", Roofline{Layers: 32, KVHeads: 8, HeadDim: 128, KVBytes: 2}, 131072},
		{"llama-3-70b bf16", Roofline{Layers: 80, KVHeads: 8, HeadDim: 128, KVBytes: 2}, 327680},
		{"fp8 cache", Roofline{Layers: 64, KVHeads: 4, HeadDim: 256, KVBytes: 1}, 131072},
		{"multi-head 7b", Roofline{Layers: 32, KVHeads: 32, HeadDim: 128, KVBytes: 2}, 524288},
	} {
		if got := tc.r.KVBytesPerToken(); got != tc.want {
			t.Errorf("%s: %v bytes/token, want %v", tc.name, got, tc.want)
		}
	}
}

func near(a, b time.Duration) bool { return (a - b).Abs() <= time.Microsecond }

func secs(s float64) time.Duration { return time.Duration(s * 1e9) }

func TestPrefillTime(t *testing.T) {
	r := DefaultRoofline()
	// [2·8e9·1000 + 4·32·32·128·1000·(0 + 500)] / (989e12·0.5)
	want := secs((2*8e9*1000 + 4*32*32*128*1000*500.0) / (989e12 * 0.5))
	if got := r.PrefillTime(1000, 0); !near(got, want) {
		t.Errorf("PrefillTime(1000, 0) = %v, want %v", got, want)
	}
	// Faster than linear in the new tokens (attention is quadratic) ...
	for _, n := range []int{1000, 8000, 32000} {
		if a, b := r.PrefillTime(n, 0), r.PrefillTime(2*n, 0); b <= 2*a {
			t.Errorf("PrefillTime(%d) = %v is not more than twice PrefillTime(%d) = %v", 2*n, b, n, a)
		}
	}
	// ... and the same chunk costs more behind a longer cached context.
	if a, b := r.PrefillTime(1000, 0), r.PrefillTime(1000, 50000); b <= a {
		t.Errorf("PrefillTime(1000, 50000) = %v ≤ PrefillTime(1000, 0) = %v", b, a)
	}
	// Chunking does not change the total: two halves equal the whole.
	if whole, halves := r.PrefillTime(8000, 0), r.PrefillTime(4000, 0)+r.PrefillTime(4000, 4000); !near(whole, halves) {
		t.Errorf("whole %v, in two chunks %v", whole, halves)
	}
}

func TestDecodeStepTime(t *testing.T) {
	r := DefaultRoofline()
	// One stream, empty context: weights / (3350e9·0.8) = 16e9 / 2.68e12.
	if got, want := r.DecodeStepTime(1, 0), secs(16e9/2.68e12); !near(got, want) {
		t.Errorf("DecodeStepTime(1, 0) = %v, want %v", got, want)
	}
	if got := r.DecodeStepTime(0, 100); got != 0 {
		t.Errorf("empty batch takes %v", got)
	}
	// Rises with context ...
	prev := time.Duration(0)
	for _, ctx := range []int{0, 1000, 10000, 100000} {
		got := r.DecodeStepTime(1, ctx)
		if got <= prev {
			t.Errorf("DecodeStepTime(1, %d) = %v, not above %v", ctx, got, prev)
		}
		prev = got
	}
	// ... and with batch, at a fixed context per sequence; per-stream speed
	// (batch / step) still rises with batch while memory-bound.
	prev = 0
	for _, b := range []int{1, 8, 64, 512, 4096} {
		got := r.DecodeStepTime(b, b*4000)
		if got <= prev {
			t.Errorf("DecodeStepTime(%d, %d) = %v, not above %v", b, b*4000, got, prev)
		}
		prev = got
	}
	// A huge batch with no context is compute-bound: 2·P·b FLOPs.
	if got, want := r.DecodeStepTime(8192, 0), secs(2*8e9*8192/(989e12*0.5)); !near(got, want) {
		t.Errorf("DecodeStepTime(8192, 0) = %v, want compute-bound %v", got, want)
	}
	r.StepOverhead = 3 * time.Millisecond
	if got, want := r.DecodeStepTime(1, 0), DefaultRoofline().DecodeStepTime(1, 0)+3*time.Millisecond; got != want {
		t.Errorf("with overhead %v, want %v", got, want)
	}
}

func TestSingleStreamDecodeTokS(t *testing.T) {
	r := DefaultRoofline()
	for _, tc := range []struct {
		ctx  int
		want float64
	}{
		{0, 2.68e12 / 16e9},
		{32768, 2.68e12 / (16e9 + 131072*32768)},
	} {
		if got := r.SingleStreamDecodeTokS(tc.ctx); math.Abs(got-tc.want) > 0.01 {
			t.Errorf("SingleStreamDecodeTokS(%d) = %.2f, want %.2f", tc.ctx, got, tc.want)
		}
	}
}

func TestPrefillUtil(t *testing.T) {
	// PrefillUtil slows prefill FLOPs alone: decode keeps ComputeUtil.
	r := DefaultRoofline()
	r.ComputeUtil, r.PrefillUtil = 1, 0.1
	base := DefaultRoofline()
	base.ComputeUtil, base.PrefillUtil = 1, 1
	if got, want := r.PrefillTime(4000, 1000), 10*base.PrefillTime(4000, 1000); !near(got, want) {
		t.Errorf("PrefillTime at 10%% = %v, want %v", got, want)
	}
	if got, want := r.DecodeStepTime(4096, 0), base.DecodeStepTime(4096, 0); got != want {
		t.Errorf("compute-bound decode %v, want %v (unchanged)", got, want)
	}
	// A mixed step adds both compute times.
	pf, df := r.prefillFLOPs(1000, 0), 2*r.params()
	if got, want := r.stepTime(pf, df, 0), secs(pf/(r.PeakTFLOPS*1e12*0.1)+df/(r.PeakTFLOPS*1e12)); !near(got, want) {
		t.Errorf("mixed step %v, want %v", got, want)
	}
	// Unset, it is ComputeUtil's.
	r.PrefillUtil = 0
	if got, want := r.PrefillTime(4000, 0), base.PrefillTime(4000, 0); got != want {
		t.Errorf("PrefillTime with prefill_util unset %v, want %v", got, want)
	}
}
