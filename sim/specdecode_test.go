package sim

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// specSeries are the names of the spec-decode counters in /metrics.
const (
	seriesDrafts   = "vllm:spec_decode_num_drafts_total"
	seriesDraftTok = "vllm:spec_decode_num_draft_tokens_total"
	seriesAccepted = "vllm:spec_decode_num_accepted_tokens_total"
	seriesPerPos   = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
)

// TestSpecDecodeCounters checks /metrics' spec-decode counters against
// the responses: accepted and draft tokens are the sums of the
// responses' draft_n_accepted and draft_n; the tokens generated are the
// first tokens, one per decode step (a step with drafts, or a request's
// last step when it has no room to draft) and the accepted tokens;
// per-position counts fall with the position and sum to the accepted.
func TestSpecDecodeCounters(t *testing.T) {
	const k = 3
	_, ts := start(t, specConfig(k))
	var drafted, accepted, out, n int
	for class, prompt := range classPrompts {
		for _, tokens := range []int{1, 2, 40, 257} {
			body := req{"max_tokens": tokens, "ignore_eos": true}
			for key, v := range prompt {
				body[key] = v
			}
			_, c := nonStream(t, ts.URL, body)
			tm := c.Timings
			if tm == nil {
				t.Fatalf("%s, %d tokens: no timings", class, tokens)
			}
			// The first token is the prefill's, the last is the
			// target's own: only a third token can be drafted.
			if tokens <= 2 && (tm.DraftN != 0 || tm.DraftNAccepted != nil) {
				t.Errorf("%s, %d tokens: draft_n %d, draft_n_accepted %v; want neither", class, tokens, tm.DraftN, tm.DraftNAccepted)
			}
			if tokens > 2 {
				if tm.DraftN == 0 || tm.DraftNAccepted == nil || *tm.DraftNAccepted > tm.DraftN {
					t.Fatalf("%s, %d tokens: draft_n %d, draft_n_accepted %v", class, tokens, tm.DraftN, tm.DraftNAccepted)
				}
				drafted += tm.DraftN
				accepted += *tm.DraftNAccepted
			}
			out += c.Usage.CompletionTokens
			n++
		}
	}
	m := scrape(t, ts.URL)
	drafts := int(m[sample(seriesDrafts)])
	if got := int(m[sample(seriesAccepted)]); got != accepted || accepted == 0 {
		t.Errorf("%s = %d, responses' draft_n_accepted sum to %d", seriesAccepted, got, accepted)
	}
	if got := int(m[sample(seriesDraftTok)]); got != drafted {
		t.Errorf("%s = %d, responses' draft_n sum to %d", seriesDraftTok, got, drafted)
	}
	multi := n - len(classPrompts) // requests of more than one token
	if plain := out - n - drafts - accepted; plain < 0 || plain > multi || int(m[sample("vllm:generation_tokens_total")]) != out {
		t.Errorf("%d tokens out (generation_tokens_total %g) = %d first + %d drafted steps + %d accepted + %d undrafted last steps, want 0..%d of those",
			out, m[sample("vllm:generation_tokens_total")], n, drafts, accepted, plain, multi)
	}
	sum, prev := 0, drafts
	for i := range k {
		v := int(m[sample(seriesPerPos, fmt.Sprintf(`position="%d"`, i))])
		if v > prev {
			t.Errorf("position %d accepted %d > position %d's %d", i, v, i-1, prev)
		}
		sum, prev = sum+v, v
	}
	if _, ok := m[sample(seriesPerPos, fmt.Sprintf(`position="%d"`, k))]; ok || sum != accepted {
		t.Errorf("per-position counts sum to %d, want %d (positions 0..%d only)", sum, accepted, k-1)
	}
}

// decodeTokS is a stream's decode speed in tokens per second of its
// clock: the tokens after the first over the time from the first content
// chunk's send stamp to the last's.
func decodeTokS(t *testing.T, s *streamResult) float64 {
	t.Helper()
	var first, last int64
	n := 0
	for _, c := range s.chunks {
		for _, ch := range c.Choices {
			if d := ch.Delta.Content; d != nil && *d != "" {
				if first == 0 {
					first = c.Stamp
				}
				last = c.Stamp
				n += len(strings.Fields(*d))
			}
		}
	}
	if last <= first {
		t.Fatalf("no decode span in %d chunks", len(s.chunks))
	}
	return float64(n-1) / (float64(last-first) / 1e9)
}

// TestSpecDecodeSpeed measures, from the streams' chunk stamps, the
// decode speed of a prose request, a repetitive one and a degenerate one
// (prose that loops past its natural end), each alone on the default
// roofline at a tenth of its time: the repetitive and degenerate ones
// must be at least 1.8× the prose one, as their acceptance (0.95, and
// about 0.93 from the loop's repetitiveness, against 0.55 at K = 4) says
// they should be: 4.5 and 4.3 tokens per step against 2.1.
func TestSpecDecodeSpeed(t *testing.T) {
	c := specConfig(4)
	c.Roofline, c.TimeScale, c.NaturalOutputTokens = DefaultRoofline(), 0.1, 16
	_, healthy := start(t, c)
	c.LoopPastEOS = true
	_, looping := start(t, c)
	const prose, out = "Tell me a story about a lighthouse keeper and the ships that pass in the night.", 600
	speed := map[string]float64{}
	for _, tc := range []struct {
		name, url, prompt string
	}{
		{"prose", healthy.URL, prose},
		{"repetitive", healthy.URL, strings.Repeat("all work and no play ", 12)},
		{"degenerate", looping.URL, prose},
	} {
		_, s := stream(t, tc.url, req{"messages": userMsg(tc.prompt), "max_tokens": out, "ignore_eos": true})
		speed[tc.name] = decodeTokS(t, s)
	}
	t.Logf("decode tok/s (compressed time): %v; repetitive/prose %.2f, degenerate/prose %.2f",
		speed, speed["repetitive"]/speed["prose"], speed["degenerate"]/speed["prose"])
	for _, arm := range []string{"repetitive", "degenerate"} {
		if r := speed[arm] / speed["prose"]; r < 1.8 {
			t.Errorf("%s decodes %.2f× prose's speed, want ≥ 1.8×", arm, r)
		}
	}
}

// TestSpecDecodeAbsent checks that without spec_decode /metrics has no
// spec-decode series, timings have no draft counts, and decode takes
// exactly one roofline step per token, as before speculative decoding.
func TestSpecDecodeAbsent(t *testing.T) {
	rl := fastRoofline()
	rl.StepOverhead = 200 * time.Microsecond
	_, ts := start(t, Config{Roofline: rl})
	const out = 20
	_, b := readAll(t, ts.URL, "/v1/chat/completions", req{"messages": userMsg("Tell me a story."), "max_tokens": out, "ignore_eos": true}, nil)
	if strings.Contains(string(b), "draft_n") {
		t.Errorf("draft counts without spec_decode: %s", b)
	}
	_, c := nonStream(t, ts.URL, req{"messages": userMsg("Tell me a story."), "max_tokens": out, "ignore_eos": true})
	var want time.Duration
	for g := 1; g < out; g++ {
		want += rl.DecodeStepTime(1, c.Usage.PromptTokens+g)
	}
	if got := c.Timings.PredictedMS; math.Abs(got-float64(want)/1e6) > 1e-6 {
		t.Errorf("predicted_ms %v, want %v: one plain decode step per token", got, float64(want)/1e6)
	}
	if _, body := do(t, "GET", ts.URL+"/metrics", nil); strings.Contains(string(body), "spec_decode") {
		t.Errorf("spec-decode series without spec_decode")
	}
}

// TestSpecDecodePerClass checks each class's decode speed by the
// server's own clock (timings.predicted_per_second) against prose's: the
// ratio is that of their expected tokens per step at the configured
// acceptances, within 5% — what a content check should find.
func TestSpecDecodePerClass(t *testing.T) {
	const k, out = 4, 4000
	c := specConfig(k)
	_, ts := start(t, c)
	tokS := map[string]float64{}
	for class, prompt := range classPrompts {
		body := req{"max_tokens": out, "ignore_eos": true}
		for key, v := range prompt {
			body[key] = v
		}
		_, cm := nonStream(t, ts.URL, body)
		tokS[class] = cm.Timings.PredictedPerSecond
	}
	a := c.SpecDecode.Acceptance
	for class, v := range tokS {
		got := v / tokS[ClassProse]
		want := ExpectedTokensPerStep(a[class], k) / ExpectedTokensPerStep(a[ClassProse], k)
		t.Logf("%s: %.3f× prose (want %.3f)", class, got, want)
		if math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s decodes %.3f× prose, want %.3f× within 5%%", class, got, want)
		}
	}
}
