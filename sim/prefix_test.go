package sim

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// text is n distinct words starting at word from: one token each.
func text(from, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = fmt.Sprintf("w%d", from+i)
	}
	return strings.Join(ws, " ")
}

func msg(role, content string) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func cachingConfig(mut func(*Config)) Config {
	on := true
	c := Config{Timing: TimingNone, PrefixCaching: &on}
	if mut != nil {
		mut(&c)
	}
	return c
}

// usageOf sends messages (streaming or not) and returns the usage.
func usageOf(t *testing.T, url string, streaming bool, messages []map[string]any) usageJSON {
	t.Helper()
	body := req{"messages": messages, "max_tokens": 5, "ignore_eos": true}
	if streaming {
		body["stream_options"] = map[string]any{"include_usage": true}
		resp, res := stream(t, url, body)
		if resp.StatusCode != http.StatusOK || res.usage == nil {
			t.Fatalf("status %d, usage %v", resp.StatusCode, res.usage)
		}
		return *res.usage
	}
	resp, c := nonStream(t, url, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return c.Usage
}

func TestPrefixCacheHTTP(t *testing.T) {
	// An agentic loop's next request re-sends the history: the first
	// request's messages, byte for byte, then the answer and a tool
	// result. Its cached tokens are the first prompt rounded down to
	// whole 16-token blocks: the assistant prime the first prompt ended
	// with is the header of the answer's message.
	for _, tc := range []struct {
		name      string
		words     int // in the first user message
		streaming bool
	}{
		{"45-token prompt", 37, false},
		{"45-token prompt, streamed", 37, true},
		{"exactly 3 blocks", 40, true},
		{"under a block", 5, false},
		{"long", 2000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, cachingConfig(nil))
			first := []map[string]any{msg("system", "you are terse"), msg("user", text(0, tc.words))}
			u1 := usageOf(t, ts.URL, tc.streaming, first)
			if u1.PromptTokensDetails.CachedTokens != 0 {
				t.Errorf("first request: cached %d", u1.PromptTokensDetails.CachedTokens)
			}
			next := append(first[:2:2], msg("assistant", text(100000, 50)), msg("tool", text(200000, 300)))
			u2 := usageOf(t, ts.URL, tc.streaming, next)
			if want := u1.PromptTokens / 16 * 16; u2.PromptTokensDetails.CachedTokens != want {
				t.Errorf("second request: cached %d, want %d (first prompt %d)", u2.PromptTokensDetails.CachedTokens, want, u1.PromptTokens)
			}
		})
	}
}

func TestPrefixCacheBoundaries(t *testing.T) {
	// The same words split into two messages are another prompt: message
	// boundaries (and roles) take part in the block hashes. With no
	// template tokens, the shared part is the first message's 20 words:
	// one whole block.
	zero := 0
	for _, tc := range []struct {
		name   string
		second []map[string]any
		want   int
	}{
		{"same messages", []map[string]any{msg("user", text(0, 40)), msg("user", "more")}, 32},
		{"split differently", []map[string]any{msg("user", text(0, 20)), msg("user", text(20, 20))}, 16},
		{"another role", []map[string]any{msg("system", text(0, 40)), msg("user", "more")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, cachingConfig(func(c *Config) { c.TemplateOverheadTokens = &zero }))
			usageOf(t, ts.URL, false, []map[string]any{msg("user", text(0, 40))})
			if got := usageOf(t, ts.URL, false, tc.second).PromptTokensDetails.CachedTokens; got != tc.want {
				t.Errorf("cached %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPrefixCacheHashesCoverPrompt(t *testing.T) {
	// The hashed keys are exactly the billed prompt: floor(prompt/16)
	// full blocks.
	for _, overhead := range []int{0, 2, 5, 9} {
		s, err := New(cachingConfig(func(c *Config) { c.TemplateOverheadTokens = &overhead }))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 13, 16, 100, 333} {
			r := genRequest{turns: []turn{{role: "system", parts: []string{"be brief"}}, {role: "user", parts: []string{text(0, n)}}}}
			j, aerr := s.plan(&r)
			if aerr != nil {
				t.Fatal(aerr)
			}
			if len(j.hashes) != j.prompt/16 {
				t.Errorf("overhead %d, %d words: %d block hashes for a %d-token prompt", overhead, n, len(j.hashes), j.prompt)
			}
		}
		s.Close()
	}
}

func TestPrefixCacheLRUHTTP(t *testing.T) {
	// Two 43-token prompts (2 whole blocks each, 3 blocks held) through a
	// 4-block cache: the second evicts the first's least recently used
	// block, its last, so the first comes back with one block cached. A
	// larger cache keeps both.
	zero := 0
	for _, tc := range []struct {
		budget int // tokens
		want   int
	}{
		{4 * 16, 16},
		{100 * 16, 32},
	} {
		t.Run(fmt.Sprintf("budget %d", tc.budget), func(t *testing.T) {
			_, ts := start(t, cachingConfig(func(c *Config) { c.TemplateOverheadTokens = &zero; c.KVBudgetTokens = tc.budget }))
			x := []map[string]any{msg("user", text(0, 40))}
			y := []map[string]any{msg("user", text(1000, 40))}
			usageOf(t, ts.URL, false, x)
			usageOf(t, ts.URL, false, y)
			if got := usageOf(t, ts.URL, false, x).PromptTokensDetails.CachedTokens; got != tc.want {
				t.Errorf("x again: cached %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPrefixCacheRoofline(t *testing.T) {
	// Through the engine: the second request reports the cached tokens the
	// engine found when it admitted it.
	on := true
	_, ts := start(t, Config{Roofline: fastRoofline(), PrefixCaching: &on})
	first := []map[string]any{msg("user", text(0, 100))}
	u1 := usageOf(t, ts.URL, true, first)
	u2 := usageOf(t, ts.URL, false, append(first, msg("assistant", "ok"), msg("user", "go on")))
	if u1.PromptTokensDetails.CachedTokens != 0 || u2.PromptTokensDetails.CachedTokens != u1.PromptTokens/16*16 {
		t.Errorf("cached %d then %d; first prompt %d", u1.PromptTokensDetails.CachedTokens, u2.PromptTokensDetails.CachedTokens, u1.PromptTokens)
	}
}

func TestMetricsPrefixCache(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"timing none", cachingConfig(nil)},
		{"roofline", func() Config {
			c := cachingConfig(nil)
			c.Timing = TimingRoofline
			c.Roofline = fastRoofline()
			return c
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ts := start(t, tc.c)
			first := []map[string]any{msg("user", text(0, 100))}
			u1 := usageOf(t, ts.URL, false, first)
			u2 := usageOf(t, ts.URL, false, append(first, msg("assistant", "ok")))
			_, b := do(t, http.MethodGet, ts.URL+"/metrics", nil)
			m := string(b)
			for _, want := range []string{
				`enable_prefix_caching="True"`,
				fmt.Sprintf(`vllm:prefix_cache_queries_total{engine="0",model_name="sim-model"} %d`, u1.PromptTokens+u2.PromptTokens),
				fmt.Sprintf(`vllm:prefix_cache_hits_total{engine="0",model_name="sim-model"} %d`, u2.PromptTokensDetails.CachedTokens),
				`vllm:num_preemptions_total{engine="0",model_name="sim-model"} 0`,
				"# TYPE vllm:prefix_cache_hits_total counter",
			} {
				if !strings.Contains(m, want) {
					t.Errorf("metrics lack %s:\n%s", want, m)
				}
			}
		})
	}
}

func TestMetricsPreemptions(t *testing.T) {
	// The first request's 97-token prompt and 15 tokens stay within its 7
	// blocks; the second's 32-token prompt takes the last 2 of 9 blocks
	// and needs a third at its first decode step: none is free, so the
	// most recently admitted sequence, the second, is preempted. It runs
	// when the first is done. Steps of 50 ms keep the first running while
	// the second arrives.
	zero := 0
	rl := fastRoofline()
	rl.StepOverhead = 50 * time.Millisecond
	s, ts := start(t, Config{Roofline: rl, KVBudgetTokens: 9 * 16, TemplateOverheadTokens: &zero})
	resp := post(context.Background(), t, ts.URL, req{"messages": []map[string]any{msg("user", text(0, 94))},
		"max_tokens": 15, "ignore_eos": true, "stream": true})
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for range 4 { // role chunk, blank, first token, blank
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	_, res := stream(t, ts.URL, req{"messages": []map[string]any{msg("user", text(1000, 29))}, "max_tokens": 5, "ignore_eos": true})
	if !res.done || res.words() != 5 {
		t.Errorf("second: done %v, %d words", res.done, res.words())
	}
	if first := readStream(br); !first.done || first.words() != 14 {
		t.Errorf("first: done %v, %d more words", first.done, first.words())
	}
	if n := s.eng.stats.preemptions.Load(); n != 1 {
		t.Errorf("%d preemptions, want 1", n)
	}
	_, b := do(t, http.MethodGet, ts.URL+"/metrics", nil)
	if !strings.Contains(string(b), `vllm:num_preemptions_total{engine="0",model_name="sim-model"} 1`) {
		t.Errorf("preemption not reported:\n%s", b)
	}
}
