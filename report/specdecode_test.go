package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
)

// TestSpecObserved: the card and the summary's server section say what
// the server speculated in the headline window — vLLM's counters first,
// then llama.cpp's per-request counts — and "unknown", never "off", when
// it said nothing.
func TestSpecObserved(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	vllm := &results.SpecDecode{State: results.SpecOn, Source: results.SpecSourceVLLM, Drafts: n(400), DraftTokens: n(1600),
		AcceptedTokens: n(656), AcceptanceRatePct: f(41), MeanAcceptanceLength: f(2.64), PerPositionAcceptancePct: []float64{70, 45, 30, 19}}
	llama := &results.SpecDecode{State: results.SpecOn, Source: results.SpecSourceLlamaCpp, Requests: 12, DraftTokens: n(840), AcceptedTokens: n(462), AcceptanceRatePct: f(55)}
	sglang := &results.SpecDecode{State: results.SpecOn, Source: results.SpecSourceSGLang, Requests: 64, Drafts: n(3000), DraftTokens: n(9000),
		AcceptedTokens: n(4200), AcceptanceRatePct: f(46.7), MeanAcceptanceLength: f(2.4)}
	sglangNoWidth := &results.SpecDecode{State: results.SpecOn, Source: results.SpecSourceSGLang, Requests: 64, Drafts: n(3000),
		AcceptedTokens: n(4200), MeanAcceptanceLength: f(2.4)}
	sglangGauge := &results.SpecDecode{State: results.SpecOn, Source: results.SpecSourceSGLangGauge, Scrapes: 12, MeanAcceptanceLength: f(2.5)}
	unknown := &results.SpecDecode{State: results.SpecUnknown}
	run := func(client *results.SpecDecode, server *results.SpecDecode, scraped bool) *results.Run {
		r := &results.Run{Headline: results.WindowSteady, Windows: map[string]*results.Window{results.WindowSteady: {SpecDecode: client}}}
		if scraped {
			r.Server = &results.Server{Source: "vllm GET /metrics", Windows: map[string]*results.ServerWindow{results.WindowSteady: {Scrapes: 5, SpecDecode: server}}}
		}
		return r
	}
	tests := []struct {
		name       string
		run        *results.Run
		card, summ string
	}{
		{"vllm", run(unknown, vllm, true),
			"speculative decoding: on, 2.64 tokens per step, acceptance 41% (steady window, vllm /metrics)",
			"Speculative decoding (steady window, vllm /metrics): on, 2.64 tokens per step, acceptance 41%; 656 of 1,600 draft tokens accepted in 400 drafts; by draft position 70% 45% 30% 19%"},
		{"vllm before llama.cpp", run(llama, vllm, true),
			"speculative decoding: on, 2.64 tokens per step, acceptance 41% (steady window, vllm /metrics)", "in 400 drafts"},
		{"llama.cpp", run(llama, nil, true),
			"speculative decoding: on, acceptance 55% (steady window, llama.cpp timings)",
			"Speculative decoding (steady window, llama.cpp timings): on, acceptance 55%; 462 of 840 draft tokens accepted over 12 requests"},
		{"sglang", run(llama, sglang, true),
			"speculative decoding: on, 2.40 tokens per step, acceptance 47% (steady window, sglang /metrics)",
			"Speculative decoding (steady window, sglang /metrics): on, 2.40 tokens per step, acceptance 47%; 4,200 of 9,000 draft tokens accepted in 3,000 verification steps of 64 requests finished"},
		{"sglang, draft width unknown", run(unknown, sglangNoWidth, true),
			"speculative decoding: on, 2.40 tokens per step, acceptance unknown (steady window, sglang /metrics)",
			"4,200 draft tokens accepted in 3,000 verification steps of 64 requests finished"},
		{"sglang's gauge", run(unknown, sglangGauge, true),
			"speculative decoding: on, 2.50 tokens per step, acceptance unknown (steady window, sglang /metrics gauge)",
			"Speculative decoding (steady window, sglang /metrics gauge): on, 2.50 tokens per step, acceptance unknown; mean of 12 scrapes of its spec_accept_length (each over its last decode-log interval)"},
		{"says nothing", run(unknown, nil, true),
			"speculative decoding: unknown (the server exposes no counters)", "Speculative decoding: unknown (the server exposes no counters)"},
		{"not scraped", run(unknown, nil, false),
			"speculative decoding: unknown (no draft counts in the server's timings; its /metrics was not scraped)", "Speculative decoding: unknown"},
		{"an older results file", run(nil, nil, true),
			"speculative decoding: unknown (the server exposes no counters)", "Speculative decoding: unknown"},
	}
	// "off" only where the server says so: llama.cpp's /props names the
	// speculative decoding it was started with.
	said := func(types string) *results.Run {
		r := run(unknown, nil, true)
		r.Discovery = &record.Discovery{Speculative: types, From: map[string]string{"speculative": "/props default_generation_settings.params.speculative.types"}}
		return r
	}
	for _, c := range []struct{ types, want string }{
		{"none", "speculative decoding: off (/props default_generation_settings.params.speculative.types: none)"},
		{"draft-simple", "speculative decoding: unknown (/props default_generation_settings.params.speculative.types: draft-simple, but no draft counts arrived)"},
	} {
		if got := specObserved(said(c.types)); got != c.want {
			t.Errorf("the server says %s:\n got %s\nwant %s", c.types, got, c.want)
		}
	}
	if got := specObserved(func() *results.Run {
		r := said("none")
		r.Server.Windows[results.WindowSteady].SpecDecode = vllm
		return r
	}()); !strings.HasPrefix(got, "speculative decoding: on,") {
		t.Errorf("counts beside a server that says none: %s", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := specObserved(tt.run); got != tt.card {
				t.Errorf("card:\n got %s\nwant %s", got, tt.card)
			}
			var b bytes.Buffer
			if err := (SummarySection{write: writeServerSummary}).Write(&b, tt.run); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.summ) {
				t.Errorf("summary:\n%s\nwant it to hold %q", b.String(), tt.summ)
			}
			if strings.Contains(b.String()+tt.card, "off") {
				t.Errorf("says off: %s", b.String())
			}
		})
	}
}
