package results

import (
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v    Verdict
		want Verdict
	}{
		{"prompt: no usage", first(verifyPromptDrift(nil)), Unverifiable},
		{"prompt: within tolerance", first(verifyPromptDrift(&Drift{Requests: 10, TolerancePct: 2, MaxAbsPct: 1.5})), Verified},
		{"prompt: one request beyond", first(verifyPromptDrift(&Drift{Requests: 10, TolerancePct: 2, Outside: 1})), Contradicted},
		// A replayed dataset's texts and the model's own answers are not
		// pinned lengths: far from the requested ones, they are reported.
		{"prompt: unpinned, far off", first(verifyUnpinned("the dataset's own texts", &Drift{Requests: 10, TolerancePct: 2, Outside: 10, MeanObserved: 177, MeanRequested: 64})), Verified},
		{"prompt: unpinned, no usage", first(verifyUnpinned("the dataset's own texts", nil)), Unverifiable},
		{"output: exact holds", first(verifyOutputDrift(&Drift{Requests: 10, Exact: 10}, true)), Verified},
		{"output: exact broken once", first(verifyOutputDrift(&Drift{Requests: 10, Exact: 9}, true)), Contradicted},
		{"output: mean within 10%", first(verifyOutputDrift(&Drift{Requests: 10, TolerancePct: 10, MeanObserved: 93, MeanRequested: 100}, false)), Verified},
		{"output: mean short by 20%", first(verifyOutputDrift(&Drift{Requests: 10, TolerancePct: 10, MeanObserved: 80, MeanRequested: 100}, false)), Contradicted},
		{"closed: holds", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 7.6, MeanServedInFlight: 7.6, MaxInFlight: 8, WindowS: 60, MeanRequestS: 2})), Verified},
		{"closed: too many in flight", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 8, MeanServedInFlight: 8, MaxInFlight: 9, WindowS: 60, MeanRequestS: 2})), Contradicted},
		{"closed: short requests, client turnaround shows", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 5, MeanServedInFlight: 5, MaxInFlight: 8, WindowS: 60, MeanRequestS: 0.002})), Verified},
		// A dead server: every stream busy with requests that fail at once.
		{"closed: in flight but failing", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 7.9, MeanServedInFlight: 0.1, MaxInFlight: 8, WindowS: 60, MeanRequestS: 2})), Contradicted},
		{"closed: starved", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 3, MeanServedInFlight: 3, MaxInFlight: 8, WindowS: 60, MeanRequestS: 2})), Contradicted},
		{"closed: window shorter than a request", first(verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "closed", Streams: 8}, ConcurrencyObserved{MeanInFlight: 1, MeanServedInFlight: 1, MaxInFlight: 1, WindowS: 0.1, MeanRequestS: 2})), Unverifiable},
		{"kv: nothing exposed", first(verifyKV(scenario.KVCachePin{MaxModelLen: 32768}, KVCacheObserved{}, "")), Unverifiable},
		{"kv: agrees", first(verifyKV(scenario.KVCachePin{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 32768}, "")), Verified},
		{"kv: contradicted", first(verifyKV(scenario.KVCachePin{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 8192}, "")), Contradicted},
		{"mix: server honoured a sample off the mean", first(verifyMix(scenario.MixDeclared{InputOutputRatio: 173}, MixObserved{InputOutputRatio: 319, RequestedInputOutputRatio: 318})), Verified},
		{"mix: server cut outputs short", first(verifyMix(scenario.MixDeclared{InputOutputRatio: 2}, MixObserved{InputOutputRatio: 4, RequestedInputOutputRatio: 2})), Contradicted},
		{"model: size agrees", first(verifyModel(scenario.ModelDeclared{Requested: "q", ParamsB: 27}, ModelObserved{Listed: []string{"q"}, ParamsB: 27.3}, record.Discovery{})), Verified},
		{"model: size contradicted", first(verifyModel(scenario.ModelDeclared{Requested: "q", ParamsB: 27}, ModelObserved{Listed: []string{"q"}, ParamsB: 8}, record.Discovery{})), Contradicted},
		{"model: not listed", first(verifyModel(scenario.ModelDeclared{Requested: "q"}, ModelObserved{Listed: []string{"other"}}, record.Discovery{})), Contradicted},
		{"model: no metadata", first(verifyModel(scenario.ModelDeclared{Requested: "q"}, ModelObserved{}, record.Discovery{Err: "HTTP 404"})), Unverifiable},
		{"kv: several agree, one hidden", first(verifyKV(scenario.KVCachePin{MaxModelLen: 8192, MaxNumSeqs: 4, GPUMemoryUtilization: 0.9, Batching: "continuous"},
			KVCacheObserved{MaxModelLen: 8192, MaxNumSeqs: 4, GPUMemoryUtilization: 0.9}, "llama.cpp")), Verified},
		{"kv: batching agrees", first(verifyKV(scenario.KVCachePin{Batching: "continuous"}, KVCacheObserved{MaxModelLen: 1, Batching: "continuous"}, "vllm")), Verified},
		{"kv: batching differs", first(verifyKV(scenario.KVCachePin{Batching: "continuous"}, KVCacheObserved{MaxModelLen: 1, Batching: "static"}, "sixpin-sim")), Contradicted},
		{"kv: memory utilisation differs", first(verifyKV(scenario.KVCachePin{MaxModelLen: 8192, GPUMemoryUtilization: 0.9},
			KVCacheObserved{MaxModelLen: 8192, GPUMemoryUtilization: 0.8}, "")), Contradicted},
		{"kv: prefix caching differs", first(verifyKV(scenario.KVCachePin{PrefixCaching: &yes}, KVCacheObserved{MaxModelLen: 1, PrefixCaching: &no}, "")), Contradicted},
		{"kv: declared but hidden", first(verifyKV(scenario.KVCachePin{GPUMemoryUtilization: 0.9}, KVCacheObserved{MaxModelLen: 8192}, "")), Unverifiable},
	}
	for _, c := range cases {
		if c.v != c.want {
			t.Errorf("%s: %s, want %s", c.name, c.v, c.want)
		}
	}
	// llama-server reports its model's size; a scenario that declares none
	// cannot check it, and the reason must not say the server hid it.
	if v, reason := verifyModel(scenario.ModelDeclared{Requested: "tiny.gguf"}, ModelObserved{Listed: []string{"tiny.gguf"}, ParamsB: 0.0195}, record.Discovery{}); v != Unverifiable ||
		strings.Contains(reason, "does not report") || !strings.Contains(reason, "0.0195B") || !strings.Contains(reason, "params_b") {
		t.Errorf("a size the server reports and the scenario does not declare: %s %q", v, reason)
	}
	if _, reason := verifyKV(scenario.KVCachePin{MaxModelLen: 32768}, KVCacheObserved{MaxModelLen: 8192}, ""); !strings.Contains(reason, "32768") || !strings.Contains(reason, "8192") {
		t.Errorf("a contradiction must name both values: %q", reason)
	}
}

func first(v Verdict, _ string) Verdict { return v }

var yes, no = true, false

func TestScheduleAndOpenLoopVerification(t *testing.T) {
	t.Parallel()
	m := func(lagP99 float64, requests int, scheduled, sent time.Duration) *Measurement {
		return &Measurement{
			Windows:       map[string]*Window{WindowAll: {Requests: requests, ScheduleLagMs: &Dist{P99: lagP99}}},
			LastScheduled: scheduled, LastSent: sent,
		}
	}
	cases := []struct {
		name    string
		arrival string
		m       *Measurement
		behind  bool
		verdict Verdict
	}{
		{"constant, on time", "constant", m(2, 2001, time.Second, time.Second), false, Verified},
		{"lagging sends", "constant", m(25, 2001, time.Second, time.Second), true, Contradicted},
		{"sends 5% slow", "constant", m(2, 2001, time.Second, 1050*time.Millisecond), true, Contradicted},
		// 201 gamma arrivals (CV 1.41) drawn at 39.2/s against 40 declared:
		// the process's own spread, not a miss.
		{"gamma sample off its mean", "gamma", m(1, 201, 5102*time.Millisecond, 5102*time.Millisecond), false, Verified},
		{"constant rate wrong", "constant", m(1, 2001, 1200*time.Millisecond, 1200*time.Millisecond), false, Contradicted},
	}
	sent := BuildSchedule(2000, 1, m(2, 2001, time.Second, time.Second))
	if v, _ := verifyConcurrency(scenario.ConcurrencyDeclared{Mode: "open", RateRPS: 2000, Arrival: "constant"},
		ConcurrencyObserved{MeanInFlight: 4, MeanServedInFlight: 0.2, Schedule: sent}); v != Contradicted {
		t.Errorf("open loop sent on schedule to a failing server: %s, want %s", v, Contradicted)
	}
	for _, c := range cases {
		s := BuildSchedule(2000, 1, c.m)
		if c.arrival == "gamma" {
			s = BuildSchedule(40, 1, c.m)
		}
		if s.Behind != c.behind || (s.Behind && s.Note == "") {
			t.Errorf("%s: behind %v (%q), want %v", c.name, s.Behind, s.Note, c.behind)
		}
		d := scenario.ConcurrencyDeclared{Mode: "open", RateRPS: s.TargetRateRPS, Arrival: c.arrival, Burstiness: 0.5}
		if v, reason := verifyConcurrency(d, ConcurrencyObserved{MeanInFlight: 1, MeanServedInFlight: 1, Schedule: s}); v != c.verdict {
			t.Errorf("%s: %s (%s), want %s", c.name, v, reason, c.verdict)
		}
	}
}

// Batching is compared where the server says it, and where it cannot
// (llama.cpp), the card says why rather than a silent ✓.
func TestVerifyBatching(t *testing.T) {
	t.Parallel()
	v, why := verifyKV(scenario.KVCachePin{MaxModelLen: 4096, Batching: "continuous"}, KVCacheObserved{MaxModelLen: 4096}, "llama.cpp")
	if v != Verified || !strings.Contains(why, "not exposed: batching (llama.cpp batches continuously unless started with --no-cont-batching") {
		t.Errorf("%s: %s", v, why)
	}
	v, why = verifyKV(scenario.KVCachePin{Batching: "static"}, KVCacheObserved{MaxModelLen: 4096, Batching: "continuous"}, "vllm")
	if v != Contradicted || why != "batching declared static, server continuous" {
		t.Errorf("%s: %s", v, why)
	}
}

// In compressed time (--time-scale) the send lag is read in run time,
// 1/scale times its wall time: the 10 ms allowance is wall time, the
// client's own, so a 7 ms wall lag at scale 0.2 (36 ms of run time) is on
// schedule and a 12 ms one (60 ms) is behind, said in both clocks.
func TestScheduleLagInCompressedTime(t *testing.T) {
	t.Parallel()
	m := func(lagP99 float64) *Measurement {
		return &Measurement{Windows: map[string]*Window{WindowAll: {Requests: 201, ScheduleLagMs: &Dist{P99: lagP99}}},
			LastScheduled: 5 * time.Second, LastSent: 5 * time.Second}
	}
	if s := BuildSchedule(40, 0.2, m(36)); s.Behind {
		t.Errorf("7 ms of wall time at scale 0.2 judged behind: %s", s.Note)
	}
	s := BuildSchedule(40, 0.2, m(60))
	if !s.Behind || !strings.Contains(s.Note, "p99 send lag 60.0 ms (12.0 ms of wall time at --time-scale 0.2) exceeds 10 ms of wall time") {
		t.Errorf("behind %v: %q", s.Behind, s.Note)
	}
	if s := BuildSchedule(40, 1, m(12)); !s.Behind || !strings.Contains(s.Note, "p99 send lag 12.0 ms exceeds 10 ms;") {
		t.Errorf("real time: behind %v: %q", s.Behind, s.Note)
	}
}
