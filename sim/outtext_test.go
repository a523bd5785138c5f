package sim

import (
	"strings"
	"testing"
)

// specConfig is a roofline simulator with speculative decoding: K draft
// tokens, the example acceptances.
func specConfig(k int) Config {
	return Config{Roofline: fastRoofline(), SpecDecode: &SpecDecode{DraftTokens: k, Acceptance: map[string]float64{
		ClassProse: 0.55, ClassCode: 0.7, ClassJSON: 0.8, ClassToolCalls: 0.8, ClassRepetitive: 0.95}}}
}

// classPrompts are a chat request's messages (and tools) per content class.
var classPrompts = map[string]req{
	ClassProse:      {"messages": userMsg("Tell me a story about a lighthouse keeper and the ships that pass in the night.")},
	ClassCode:       {"messages": userMsg("func main() { fmt.Println(sum(xs)); }\nWhy does this not compile?")},
	ClassJSON:       {"messages": userMsg(`{"task": "extend", "items": [{"id": 1, "name": "a"}]}`)},
	ClassToolCalls:  {"messages": userMsg("What is the weather in Lyon?"), "tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "weather"}}}},
	ClassRepetitive: {"messages": userMsg(strings.Repeat("all work and no play ", 12))},
}

// TestOutputFollowsClass checks that with spec_decode the output of each
// class's prompt reads as that class (the classifier, run on the output,
// agrees; tool calls read as JSON), one word per token, the same streamed
// and not, and that only the repetitive class repeats itself.
func TestOutputFollowsClass(t *testing.T) {
	_, ts := start(t, specConfig(4))
	for class, prompt := range classPrompts {
		t.Run(class, func(t *testing.T) {
			body := req{"max_tokens": 300, "ignore_eos": true}
			for k, v := range prompt {
				body[k] = v
			}
			_, c := nonStream(t, ts.URL, body)
			text := c.Choices[0].Message.Content
			want := class
			if class == ClassToolCalls {
				want = ClassJSON
			}
			if got := classifyText(text); got != want {
				t.Errorf("output reads as %q, want %q:\n%.300s", got, want, text)
			}
			if n := len(strings.Fields(text)); n != 300 {
				t.Errorf("%d words, want 300 (one per token)", n)
			}
			_, s := stream(t, ts.URL, body)
			if got := strings.Join(s.content, ""); got != text {
				t.Errorf("streamed text differs from the completion's:\n%.200q\n%.200q", got, text)
			}
			o := outText{class: class, hash: 12345}
			r := o.repetitiveness(300)
			if class == ClassRepetitive && r < 0.9 || class != ClassRepetitive && r > 0.02 {
				t.Errorf("repetitiveness %.3f", r)
			}
		})
	}
}

// TestLoopPastEOS checks that under loop_past_eos a forced length repeats
// the last phrase before the natural end, and that without it, or
// without a forced length, the output does not loop.
func TestLoopPastEOS(t *testing.T) {
	const natural, out = 20, 200
	for _, tc := range []struct {
		name      string
		loop      bool
		ignoreEOS bool
		wantLoop  bool
	}{
		{"loop past a forced length", true, true, true},
		{"natural length", true, false, false},
		{"no loop_past_eos", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, Config{Timing: TimingNone, NaturalOutputTokens: natural, LoopPastEOS: tc.loop})
			body := req{"messages": userMsg("Tell me a story."), "max_tokens": out, "ignore_eos": tc.ignoreEOS}
			_, c := nonStream(t, ts.URL, body)
			w := strings.Fields(c.Choices[0].Message.Content)
			if !tc.ignoreEOS {
				if len(w) >= out {
					t.Fatalf("natural length %d, want < %d", len(w), out)
				}
				return
			}
			// The natural end is where the loop starts: find the first
			// token from which the output repeats with period 6 to the end.
			from := len(w)
			for from > LoopPhraseTokens && w[from-1] == w[from-1-LoopPhraseTokens] {
				from--
			}
			looped := len(w) - from
			if tc.wantLoop && looped < out/2 || !tc.wantLoop && looped > 2*LoopPhraseTokens {
				t.Errorf("the last %d of %d words repeat with period %d:\n%s", looped, len(w), LoopPhraseTokens, strings.Join(w, " "))
			}
		})
	}
}

// TestRepetitivenessOfLoop checks the measure on a loop: it is the share
// of tokens past the loop's first phrase and n-gram.
func TestRepetitivenessOfLoop(t *testing.T) {
	o := outText{hash: 7, loopFrom: 16}
	got := o.repetitiveness(256)
	// The output is periodic from 10, the loop's phrase; windows wholly
	// inside it end at 10 + 8 − 1 = 17 or later, and each of the 6
	// phases is new once, so repeats begin at 23.
	if want := float64(256-23) / 256; got < want-0.01 || got > want+0.01 {
		t.Errorf("repetitiveness = %.3f, want %.3f", got, want)
	}
}
