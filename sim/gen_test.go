package sim

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestTimingsChat(t *testing.T) {
	on := true
	_, ts := start(t, Config{Timing: TimingFixed, Fixed: Fixed{TTFT: time.Millisecond, ITL: time.Microsecond}, PrefixCaching: &on})
	history := []map[string]any{msg("user", text(0, 50))}
	for i, tc := range []struct {
		name  string
		usage bool
	}{{"usage chunk", true}, {"finish chunk", false}} {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"messages": history, "max_tokens": 6, "ignore_eos": true}
			if tc.usage {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
			_, evs := streamEvents(t, ts.URL, "/v1/chat/completions", body)
			chunks := make([]testChunk, len(evs)-1)
			for k, e := range evs[:len(evs)-1] {
				strict(t, e.data, &chunks[k])
				if k < len(chunks)-1 && chunks[k].Timings != nil {
					t.Errorf("timings in chunk %d of %d: %s", k, len(chunks), e.data)
				}
			}
			last := chunks[len(chunks)-1]
			if tc.usage {
				checkTimings(t, last.Timings, last.Usage.PromptTokens, last.Usage.PromptTokensDetails.CachedTokens, last.Usage.CompletionTokens)
				// The second request found the first's blocks.
				if i == 0 && last.Timings.CacheN != 0 || i == 1 && last.Timings.CacheN == 0 {
					t.Errorf("request %d: cache_n %d", i, last.Timings.CacheN)
				}
			} else if tm := last.Timings; tm == nil || *last.Choices[0].FinishReason != "length" || tm.PredictedN != 6 {
				t.Errorf("finish chunk %s", evs[len(evs)-2].data)
			}
		})
		history = append(history, msg("assistant", "ok"), msg("user", "go on"))
	}
	resp, b := readAll(t, ts.URL, "/v1/chat/completions", map[string]any{"messages": history, "max_tokens": 4}, nil)
	var c struct {
		completion
		Timings *testTimings `json:"timings"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	strict(t, string(b), &c)
	checkTimings(t, c.Timings, c.Usage.PromptTokens, c.Usage.PromptTokensDetails.CachedTokens, c.Usage.CompletionTokens)
}

// TestTimingsEngineClock checks the timings come from the engine's clock:
// prefill and decode are the model's step times exactly, as a sched
// driven in virtual time gives them.
func TestTimingsEngineClock(t *testing.T) {
	rl := fastRoofline()
	rl.StepOverhead = 200 * time.Microsecond
	c := Config{Roofline: rl, MaxBatchedTokens: 64} // a 100-token prompt prefills in 2 steps
	_, ts := start(t, c)
	body := map[string]any{"messages": userMsg(text(0, 92)), "max_tokens": 9, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}}
	_, evs := streamEvents(t, ts.URL, "/v1/chat/completions", body)
	var last testChunk
	strict(t, evs[len(evs)-2].data, &last)
	checkTimings(t, last.Timings, last.Usage.PromptTokens, last.Usage.PromptTokensDetails.CachedTokens, last.Usage.CompletionTokens)

	s := newSched(Defaults(c))
	q := newSeq(last.Usage.PromptTokens, 9, nil)
	s.add(q)
	var now, prefill time.Duration
	for {
		st := s.plan()
		if st.idle() {
			break
		}
		now += st.dur
		s.apply(st)
		if q.generated == 1 && prefill == 0 {
			prefill = now
		}
	}
	tm := last.Timings
	if want := float64(prefill) / 1e6; tm.PromptMS != want {
		t.Errorf("prompt_ms %v, want %v", tm.PromptMS, want)
	}
	if want := float64(now-prefill) / 1e6; tm.PredictedMS != want {
		t.Errorf("predicted_ms %v, want %v", tm.PredictedMS, want)
	}
	if last.Usage.PromptTokens != 100 || tm.PromptN != 100 || tm.PredictedN != 9 {
		t.Errorf("timings %+v, usage %+v", *tm, *last.Usage)
	}
}

func TestRequestID(t *testing.T) {
	_, ts := start(t, Config{Timing: TimingNone})
	bodies := map[string]any{
		"/v1/chat/completions": req{"messages": userMsg("x"), "max_tokens": 2},
		"/v1/completions":      map[string]any{"prompt": "x", "max_tokens": 2},
		"/v1/messages":         anthReq(2, msg("user", "x")),
		"/v1/responses":        map[string]any{"input": "x", "max_output_tokens": 2},
	}
	made := regexp.MustCompile(`^sim-[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for path, body := range bodies {
		resp, _ := readAll(t, ts.URL, path, body, map[string]string{"X-Request-Id": "trace-" + path})
		if got := resp.Header.Get("X-Request-Id"); got != "trace-"+path {
			t.Errorf("%s: X-Request-Id %q echoed as %q", path, "trace-"+path, got)
		}
		resp, _ = readAll(t, ts.URL, path, body, nil)
		id := resp.Header.Get("X-Request-Id")
		if !made.MatchString(id) || seen[id] {
			t.Errorf("%s: made-up X-Request-Id %q (seen before: %v)", path, id, seen[id])
		}
		seen[id] = true
	}
	resp, err := http.Get(ts.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("X-Request-Id"), "sim-") {
		t.Errorf("/health: X-Request-Id %q", resp.Header.Get("X-Request-Id"))
	}
}
