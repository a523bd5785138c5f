package results

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// TestSpecDecodeFromTimings: a window's llama.cpp draft counts are the
// sum over its successful requests that sent them; none sent, unknown.
func TestSpecDecodeFromTimings(t *testing.T) {
	timed := func(drafted, accepted int) *record.Record {
		return &record.Record{Server: record.ServerTimings{Has: true, DraftTokens: drafted, DraftAccepted: accepted}}
	}
	tests := []struct {
		name                string
		recs                []*record.Record
		state               string
		requests            int
		draftTokens, accept int64
		ratePct             float64
	}{
		{"summed", []*record.Record{timed(84, 41), timed(16, 9), timed(0, 0), {}}, SpecOn, 2, 100, 50, 50},
		{"timed but no drafts", []*record.Record{timed(0, 0)}, SpecUnknown, 0, -1, -1, 0},
		{"no timings", []*record.Record{{}}, SpecUnknown, 0, -1, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a specAcc
			for _, r := range tt.recs {
				a.add(r)
			}
			s := a.result()
			if s.State != tt.state || s.Requests != tt.requests || count(s.DraftTokens) != tt.draftTokens || count(s.AcceptedTokens) != tt.accept {
				t.Fatalf("got %+v", s)
			}
			if tt.state == SpecUnknown {
				if s.Source != "" || s.AcceptanceRatePct != nil {
					t.Errorf("unknown says %+v", s)
				}
				return
			}
			if s.Source != SpecSourceLlamaCpp || s.AcceptanceRatePct == nil || *s.AcceptanceRatePct != tt.ratePct {
				t.Errorf("source %q, rate %v; want %q, %v", s.Source, s.AcceptanceRatePct, SpecSourceLlamaCpp, tt.ratePct)
			}
			if s.Drafts != nil || s.MeanAcceptanceLength != nil || s.PerPositionAcceptancePct != nil {
				t.Errorf("llama.cpp does not count drafts, yet %+v", s)
			}
		})
	}
}

// TestServerSpecDecode: a server window's speculative decoding is the
// rise of vLLM's counters over the scrapes that cover it (the last at or
// before its start, the first at or after its end):
// acceptance rate accepted ÷ draft tokens, mean acceptance length 1 +
// accepted ÷ drafts, per position accepted ÷ drafts.
func TestServerSpecDecode(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sample := func(s time.Duration, drafts, tokens, accepted float64, perPos ...float64) record.ServerSample {
		return record.ServerSample{T: s * time.Second, SpecDrafts: f(drafts), SpecDraftTokens: f(tokens), SpecAccepted: f(accepted), SpecAcceptedPerPos: perPos}
	}
	samples := []record.ServerSample{
		sample(0, 100, 400, 200, 80, 60, 40, 20),
		sample(1, 200, 800, 420, 170, 125, 85, 40),
		sample(2, 600, 2400, 1380, 520, 395, 295, 170),
	}
	srv := BuildServer("vllm GET /metrics", time.Second, samples, 0, "", map[string]*Window{
		"w": {StartS: 1, EndS: 2}, "inside": {StartS: 1.2, EndS: 1.8}, "across": {StartS: 0.5, EndS: 1.5}})
	s := srv.Windows["w"].SpecDecode
	if s == nil || s.State != SpecOn || s.Source != SpecSourceVLLM || s.Drafts == nil || *s.Drafts != 400 ||
		count(s.DraftTokens) != 1600 || count(s.AcceptedTokens) != 960 {
		t.Fatalf("got %+v", s)
	}
	if *s.AcceptanceRatePct != 60 || math.Abs(*s.MeanAcceptanceLength-3.4) > 1e-12 {
		t.Errorf("rate %v%%, length %v; want 60%%, 3.4", *s.AcceptanceRatePct, *s.MeanAcceptanceLength)
	}
	if want := []float64{87.5, 67.5, 52.5, 32.5}; !slices.Equal(s.PerPositionAcceptancePct, want) {
		t.Errorf("per position %v, want %v", s.PerPositionAcceptancePct, want)
	}
	if s := srv.Windows["inside"].SpecDecode; s == nil || *s.Drafts != 400 || count(s.AcceptedTokens) != 960 {
		t.Errorf("a window between two scrapes: %+v, want the rise between them", s)
	}
	if s := srv.Windows["across"].SpecDecode; s == nil || *s.Drafts != 500 || count(s.DraftTokens) != 2000 || count(s.AcceptedTokens) != 1180 {
		t.Errorf("a window across a scrape: %+v, want the rise from the first to the last", s)
	}
	one := BuildServer("vllm GET /metrics", time.Second, samples[:1], 0, "", map[string]*Window{"w": {StartS: 0, EndS: 1}})
	if s := one.Windows["w"].SpecDecode; s != nil {
		t.Errorf("one scrape: %+v", s)
	}
	plain := BuildServer("vllm GET /metrics", time.Second, []record.ServerSample{{T: 0}, {T: time.Second}}, 0, "",
		map[string]*Window{"w": {StartS: 0, EndS: 1}})
	if s := plain.Windows["w"].SpecDecode; s != nil {
		t.Errorf("a server without the series: %+v", s)
	}
}

// llama-server's counters are vLLM's under its own prefix: their rise is
// read alike and named llama.cpp's /metrics; the same counters at zero
// since the server started (it exposes them without a draft model) say
// nothing.
func TestServerSpecDecodeLlamaCpp(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	sample := func(s time.Duration, drafts, tokens, accepted float64) record.ServerSample {
		return record.ServerSample{T: s * time.Second, SpecDrafts: f(drafts), SpecDraftTokens: f(tokens), SpecAccepted: f(accepted), SpecEngine: llamaCpp}
	}
	srv := BuildServer("llama.cpp GET /metrics", time.Second, []record.ServerSample{sample(0, 48, 185, 78), sample(1, 4204, 16631, 6052)}, 0, "",
		map[string]*Window{"w": {StartS: 0, EndS: 1}})
	s := srv.Windows["w"].SpecDecode
	if s == nil || s.Source != SpecSourceLlamaCppMetrics || *s.Drafts != 4156 || count(s.DraftTokens) != 16446 || count(s.AcceptedTokens) != 5974 {
		t.Fatalf("got %+v, want llama.cpp's rise: 4156 drafts, 16446 draft tokens, 5974 accepted", s)
	}
	idle := BuildServer("llama.cpp GET /metrics", time.Second, []record.ServerSample{sample(0, 0, 0, 0), sample(1, 0, 0, 0)}, 0, "",
		map[string]*Window{"w": {StartS: 0, EndS: 1}})
	if s := idle.Windows["w"].SpecDecode; s != nil {
		t.Errorf("a llama-server that never drafted: %+v, want nothing said", s)
	}
}

// TestMergeSpecDecode: a merged window's llama.cpp draft counts are its
// shards' sums; a shard that said nothing (or an older sixpin's, without
// the field) adds nothing, and none said anything leaves it unknown.
func TestMergeSpecDecode(t *testing.T) {
	t.Parallel()
	on := func(requests int, draft, accepted int64) *SpecDecode {
		return newSpecDecodeLlama(requests, draft, accepted)
	}
	tests := []struct {
		name                string
		a, b                *SpecDecode
		state               string
		requests            int
		draftTokens, accept int64
	}{
		{"both", on(10, 800, 300), on(6, 400, 200), SpecOn, 16, 1200, 500},
		{"one unknown", on(10, 800, 300), &SpecDecode{State: SpecUnknown}, SpecOn, 10, 800, 300},
		{"one older", nil, on(6, 400, 200), SpecOn, 6, 400, 200},
		{"none", &SpecDecode{State: SpecUnknown}, nil, SpecUnknown, 0, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := shardRun(t, 0, 2, 10, 0), shardRun(t, 1, 2, 6, 3*ms)
			a.Windows[WindowAll].SpecDecode, b.Windows[WindowAll].SpecDecode = tt.a, tt.b
			m, err := Merge(shards(a, b), MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := m.Windows[WindowAll].SpecDecode
			if s == nil || s.State != tt.state || s.Requests != tt.requests || count(s.DraftTokens) != tt.draftTokens || count(s.AcceptedTokens) != tt.accept {
				t.Errorf("merged %+v", s)
			}
		})
	}
}

// newSpecDecodeLlama is a window's figures from llama.cpp's counts.
func newSpecDecodeLlama(requests int, draft, accepted int64) *SpecDecode {
	a := specAcc{requests: requests, draftTokens: draft, accept: accepted}
	return a.result()
}

// count is *p, or -1 when p is nil (unknown).
func count(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestServerSpecDecodeSGLang: SGLang's counters rise like vLLM's over the
// scrapes that cover a window: the verification steps are the drafts,
// the accepted draft tokens the generated tokens less one per finished
// request and one per step, the draft tokens the steps times the tokens
// each proposes (spec_num_draft_tokens − 1) while that gauge holds one
// value. Without the counters, the acceptance-length gauge's mean over
// the scrapes after the window's start up to the first at or after its
// end, its zeros (not speculating) left out.
func TestServerSpecDecodeSGLang(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	counted := func(s time.Duration, verify, gen, requests float64, width *float64) record.ServerSample {
		return record.ServerSample{T: s * time.Second, SpecVerifySteps: f(verify), GenerationTokens: f(gen), FinishedRequests: f(requests), SpecDraftWidth: width}
	}
	gauged := func(s float64, length float64, width *float64) record.ServerSample {
		return record.ServerSample{T: time.Duration(s * float64(time.Second)), SpecAcceptLength: f(length), SpecDraftWidth: width}
	}
	w := map[string]*Window{"w": {StartS: 1, EndS: 3}}
	tests := []struct {
		name    string
		samples []record.ServerSample
		source  string
		// drafts, draft tokens, accepted and requests (-1: unknown).
		drafts, draftTokens, accepted int64
		requests, scrapes             int
		length, ratePct               float64 // 0: unknown
	}{
		// 2,000 steps of 40 requests that generated 5,040 tokens: 3,000
		// accepted, 2.5 tokens a step; 3 proposed a step: 6,000, 50%.
		{"counters", []record.ServerSample{
			counted(0, 100, 500, 10, nil), counted(1, 1000, 2560, 20, f(4)),
			counted(2, 2000, 5000, 40, f(4)), counted(3, 3000, 7600, 60, f(4))},
			SpecSourceSGLang, 2000, 6000, 3000, 40, 0, 2.5, 50},
		{"adaptive: the draft width changed", []record.ServerSample{
			counted(1, 1000, 2560, 20, f(4)), counted(3, 3000, 7600, 60, f(6))},
			SpecSourceSGLang, 2000, -1, 3000, 40, 0, 2.5, 0},
		{"schedulers that disagree on the draft width", []record.ServerSample{
			counted(1, 1000, 2560, 20, f(4.5)), counted(3, 3000, 7600, 60, f(4.5))},
			SpecSourceSGLang, 2000, -1, 3000, 40, 0, 2.5, 0},
		{"an SGLang before spec_num_draft_tokens", []record.ServerSample{
			counted(1, 1000, 2560, 20, nil), counted(3, 3000, 7600, 60, nil)},
			SpecSourceSGLang, 2000, -1, 3000, 40, 0, 2.5, 0},
		// The reading at the start is of the steps before the window,
		// the first after its end of its last steps.
		{"gauge", []record.ServerSample{
			gauged(0, 0, nil), gauged(1, 2.2, nil), gauged(2, 2.6, nil), gauged(3.5, 2.9, nil), gauged(4, 3.5, nil)},
			SpecSourceSGLangGauge, -1, -1, -1, 0, 2, 2.75, 0},
		{"gauge with the draft width", []record.ServerSample{
			gauged(1, 2.2, f(4)), gauged(2, 0, f(4)), gauged(3, 2.8, f(4))},
			SpecSourceSGLangGauge, -1, -1, -1, 0, 1, 2.8, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := BuildServer("sglang GET /metrics", time.Second, tt.samples, 0, "", w).Windows["w"].SpecDecode
			if s == nil || s.State != SpecOn || s.Source != tt.source || count(s.Drafts) != tt.drafts || count(s.DraftTokens) != tt.draftTokens ||
				count(s.AcceptedTokens) != tt.accepted || s.Requests != tt.requests || s.Scrapes != tt.scrapes {
				t.Fatalf("got %+v", s)
			}
			if s.MeanAcceptanceLength == nil || math.Abs(*s.MeanAcceptanceLength-tt.length) > 1e-9 {
				t.Errorf("mean acceptance length %v, want %v", s.MeanAcceptanceLength, tt.length)
			}
			if got := s.AcceptanceRatePct; tt.ratePct == 0 && got != nil || tt.ratePct != 0 && (got == nil || math.Abs(*got-tt.ratePct) > 1e-9) {
				t.Errorf("acceptance %v%%, want %v%% (0: unknown)", got, tt.ratePct)
			}
		})
	}
	for name, samples := range map[string][]record.ServerSample{
		"not speculating: its gauge at 0": {gauged(0, 0, nil), gauged(2, 0, f(0)), gauged(4, 0, nil)},
		"an SGLang without the series":    {{T: 0}, {T: 2 * time.Second}, {T: 4 * time.Second}},
	} {
		if s := BuildServer("sglang GET /metrics", time.Second, samples, 0, "", w).Windows["w"].SpecDecode; s != nil {
			t.Errorf("%s: %+v, want none (unknown)", name, s)
		}
	}
}
