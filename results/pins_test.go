package results

import (
	"strings"
	"testing"
)

func TestVerify(t *testing.T) {
	cases := []struct {
		name string
		v    Verdict
		want Verdict
	}{
		{"drift: no usage", first(verifyDrift(nil, 2, false)), Unverifiable},
		{"drift: within tolerance", first(verifyDrift(&Drift{Requests: 10, MeanAbsPct: 1.5}, 2, false)), Verified},
		{"drift: beyond tolerance", first(verifyDrift(&Drift{Requests: 10, MeanAbsPct: 2.5}, 2, false)), Contradicted},
		{"drift: exact holds", first(verifyDrift(&Drift{Requests: 10, Exact: 10}, 10, true)), Verified},
		{"drift: exact broken once", first(verifyDrift(&Drift{Requests: 10, Exact: 9, MeanAbsPct: 0.1}, 10, true)), Contradicted},
		{"closed: holds", first(verifyConcurrency(ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 7.6, MaxInFlight: 8})), Verified},
		{"closed: too many in flight", first(verifyConcurrency(ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 8, MaxInFlight: 9})), Contradicted},
		{"closed: starved", first(verifyConcurrency(ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 5, MaxInFlight: 8})), Contradicted},
		{"open: rate held", first(verifyConcurrency(ConcurrencyDeclared{Mode: "open", RateRPS: 10}, ConcurrencyObserved{MeanInFlight: 3, AchievedRateRPS: 9.8})), Verified},
		{"open: rate missed", first(verifyConcurrency(ConcurrencyDeclared{Mode: "open", RateRPS: 10}, ConcurrencyObserved{MeanInFlight: 3, AchievedRateRPS: 9})), Contradicted},
		{"kv: nothing exposed", first(verifyKV(KVCacheDeclared{MaxModelLen: 32768}, KVCacheObserved{})), Unverifiable},
		{"kv: agrees", first(verifyKV(KVCacheDeclared{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 32768, Source: "/v1/models"})), Verified},
		{"kv: contradicted", first(verifyKV(KVCacheDeclared{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 8192})), Contradicted},
		{"mix: server honoured a sample off the mean", first(verifyMix(MixDeclared{InputOutputRatio: 173}, MixObserved{InputOutputRatio: 319, RequestedInputOutputRatio: 318})), Verified},
		{"mix: server cut outputs short", first(verifyMix(MixDeclared{InputOutputRatio: 2}, MixObserved{InputOutputRatio: 4, RequestedInputOutputRatio: 2})), Contradicted},
		{"model: size agrees", first(verifyModel(ModelDeclared{Requested: "q", ParamsB: 27}, ModelObserved{Listed: []string{"q"}, ParamsB: 27.3}, Discovery{})), Verified},
		{"model: size contradicted", first(verifyModel(ModelDeclared{Requested: "q", ParamsB: 27}, ModelObserved{Listed: []string{"q"}, ParamsB: 8}, Discovery{})), Contradicted},
		{"model: not listed", first(verifyModel(ModelDeclared{Requested: "q"}, ModelObserved{Listed: []string{"other"}}, Discovery{})), Contradicted},
		{"model: no metadata", first(verifyModel(ModelDeclared{Requested: "q"}, ModelObserved{}, Discovery{Err: "HTTP 404"})), Unverifiable},
	}
	for _, c := range cases {
		if c.v != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.v, c.want)
		}
	}
	if _, reason := verifyKV(KVCacheDeclared{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 8192}); !strings.Contains(reason, "32768") || !strings.Contains(reason, "8192") {
		t.Errorf("a contradiction must name both values: %q", reason)
	}
}

func first(v Verdict, _ string) Verdict { return v }
