package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sixpin/sixpin/record"
)

// protocolScenario is a small agentic run: two sessions of four turns,
// backing off on 429.
const protocolScenario = `name: agentic-proto
seed: 5
pins:
  model: {name: sim-proto}
  prompt: {tokens: 600}
  output: {tokens: 12, exact: true}
  concurrency: {mode: closed, streams: 2}
  kv_cache: {prefix_caching: true}
workload:
  kind: agentic
  sessions: 2
  turns: 4
  growth_tokens: {dist: uniform, min: 100, max: 200}
  think_seconds: 0.5
  max_context_tokens: 20000
  on_429: backoff
  max_retries: 50
requests: 100
`

// protocolProfile is a simulator spoken to in PROTO, priced like
// Anthropic (cache writes above input, reads below) and rate limited to 2
// requests a minute, so that some turns meet a 429 and back off: the
// sessions' first turns fill the minute, and the next turn meets it.
const protocolProfile = `name: sim-proto
kind: simulator
protocol: PROTO
output_control: ignore_eos
tokenizer: words
pricing: {input_per_mtok: 3, cached_input_per_mtok: 0.3, cache_write_input_per_mtok: 3.75, output_per_mtok: 15}
rate_limits: {requests_per_minute: 2}
sim:
  model: sim-proto
  timing: none
  tokenizer: words
  prefix_caching: true
  rate_limits: {requests_per_minute: 2}
`

// Agentic sessions with prompt caching, rate limits and cost, end to end
// over Anthropic's Messages API and OpenAI's Responses API against the
// simulator (time compressed 100×, so a minute's rate-limit window
// passes in 0.6 s): every turn succeeds after backing off, the cache is
// read, the 429s are metered with their bucket, and the bill prices cache
// writes where the protocol reports them. Three requests fall within one
// minute however slow the machine, short of a stall of half a second:
// before, at 5 a minute compressed 500×, a loaded machine spread the 8
// turns over more than the 0.12 s a minute was, and none met a 429.
func TestProtocolsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"messages", "responses"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			scPath, profPath := filepath.Join(dir, "s.yaml"), filepath.Join(dir, "p.yaml")
			os.WriteFile(scPath, []byte(protocolScenario), 0o644)
			os.WriteFile(profPath, []byte(strings.Replace(protocolProfile, "PROTO", proto, 1)), 0o644)
			var out, errOut bytes.Buffer
			cfg := Config{ScenarioPath: scPath, Profile: profPath, Output: filepath.Join(dir, "r.json"), TimeScale: 0.01,
				Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
			o, err := Run(context.Background(), context.Background(), cfg)
			if o == nil {
				t.Fatalf("no outcome: %v\n%s", err, errOut.String())
			}
			run := o.Run
			if run.Target.Protocol != proto {
				t.Errorf("target protocol %q", run.Target.Protocol)
			}
			if run.Errors.ByClass[string(record.ErrHTTP429)] == 0 {
				t.Errorf("no 429 at 2 requests a minute: errors %+v", run.Errors)
			}
			if rl := run.RateLimits; rl == nil || len(rl.Rejections) == 0 || rl.Rejections[0].Bucket != record.BucketRequests {
				t.Errorf("rate limits %+v: want the 429s on the requests bucket", rl)
			}
			if s := run.Sessions; s == nil || len(s.All) != 2 || s.All[0].Turns != 4 || s.All[1].Turns != 4 {
				t.Fatalf("sessions %+v: want 2 of 4 turns", s)
			}
			tk := run.Tokens
			if tk.CachedInput == 0 {
				t.Errorf("tokens %+v: want cache reads", tk)
			}
			c := run.Cost
			if c == nil || c.Bill == nil || c.PerSessionUSD <= 0 {
				t.Fatalf("cost %+v", c)
			}
			if want := proto == "messages"; (tk.CacheWriteInput > 0) != want || (c.Bill.CacheWriteInputUSD > 0) != want {
				t.Errorf("cache writes %d tokens, $%v: want some only where the protocol reports them", tk.CacheWriteInput, c.Bill.CacheWriteInputUSD)
			}
		})
	}
}
