package harness

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/report"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
	"github.com/sixpin/sixpin/sim"
)

const shardedSrc = `name: sharded
seed: 9
pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 50, max: 300}}
  output: {tokens: 12, exact: true}
  concurrency: {mode: closed, streams: 8}
requests: 64
windows: {burst: 1s}
`

// One run at c=8 and four shards at c=2, against the same simulator:
// the merged counts are the sum of the shards' exactly and the single
// run's, every merged histogram is the shards' histograms added (its
// percentiles read from the sum, not averaged), the merged file is an
// ordinary results file, and its headline percentiles agree with the
// single run's within noise.
func TestShardsMergeToTheWhole(t *testing.T) {
	t.Parallel()
	endpoint := simServer(t, sim.Config{Model: "m", Timing: sim.TimingFixed, Fixed: sim.Fixed{TTFT: 20 * time.Millisecond, ITL: 2 * time.Millisecond}}, nil)
	path := scenarioFile(t, shardedSrc)
	base := Config{ScenarioPath: path, Endpoint: endpoint, Model: "m", Tokenizer: "words"}
	single, err := run(t, base)
	if err != nil {
		t.Fatal(err)
	}

	const n = 4
	dir := t.TempDir()
	shards := runShards(t, base, n, "t1", dir, false)
	for i, s := range shards {
		if sh := s.Run.Shard; sh == nil || sh.Index != i || sh.Count != n || sh.RunID != "t1" || sh.Whole.Streams != 8 || s.Run.Pins.Concurrency.Declared.Streams != 2 {
			t.Fatalf("shard %d: identity %+v, declared %+v", i, sh, s.Run.Pins.Concurrency.Declared)
		}
	}
	merged, err := results.Merge(shards, results.MergeOptions{StartTolerance: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.json")
	if err := results.WriteFile(out, merged); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("the merged file is no ordinary results file: %v", err)
	}
	if err := report.WriteSummary(&discard{}, back); err != nil {
		t.Fatal(err)
	}

	// Every shard watched the same server: the merged run keeps its
	// metrics (one shard's scrapes), not their sum.
	if shards[0].Run.Server == nil {
		t.Fatal("shard 0 scraped no server metrics from the simulator")
	}
	if merged.Server == nil || merged.Server.Source != shards[0].Run.Server.Source || !slices.ContainsFunc(merged.Notes, func(n string) bool { return strings.Contains(n, "server metrics") }) {
		t.Errorf("merged server %+v, notes %q; want shard 0's, said so", merged.Server, merged.Notes)
	}

	all, one := merged.Windows[results.WindowAll], single.Run.Windows[results.WindowAll]
	sum := 0
	for _, s := range shards {
		sum += s.Run.Windows[results.WindowAll].Requests
	}
	if all.Requests != sum || all.Requests != one.Requests || all.Requests != 64 || merged.Errors.Requests != 64 {
		t.Errorf("merged %d requests (errors %d), shards %d, single run %d; want 64", all.Requests, merged.Errors.Requests, sum, one.Requests)
	}
	if merged.Tokens.Output != single.Run.Tokens.Output || all.OutputTokens != one.OutputTokens {
		t.Errorf("merged %d output tokens (window %d), single run %d (%d)", merged.Tokens.Output, all.OutputTokens, single.Run.Tokens.Output, one.OutputTokens)
	}
	if merged.Pins.Concurrency.Declared.Streams != 8 {
		t.Errorf("merged declares %d streams, want 8", merged.Pins.Concurrency.Declared.Streams)
	}
	for _, metric := range []string{"ttft_ms", "itl_ms", "e2e_ms", "prompt_tokens"} {
		var want *hdrhistogram.Histogram
		for _, s := range shards {
			h, err := s.Run.Histograms[results.WindowAll][metric].Decode()
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = h
			} else {
				want.Merge(h)
			}
		}
		got, err := merged.Histograms[results.WindowAll][metric].Decode()
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equals(want) {
			t.Errorf("%s: the merged histogram is not the shards' histograms added", metric)
		}
	}
	if got, want := all.TTFTMs.P99, float64(mustDecode(t, merged, "ttft_ms").ValueAtQuantile(99))/1e3; got != want {
		t.Errorf("merged TTFT p99 %v, the added histogram's %v", got, want)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT p50", all.TTFTMs.P50, one.TTFTMs.P50},
		{"E2E p50", all.E2EMs.P50, one.E2EMs.P50},
		{"prompt mean", all.PromptTokens.Mean, one.PromptTokens.Mean},
	} {
		if math.Abs(c.got-c.want) > 0.5*c.want {
			t.Errorf("%s: merged %v, single run %v", c.name, c.got, c.want)
		}
	}
	if all.PromptTokens.Mean != one.PromptTokens.Mean || all.PromptTokens.Min != one.PromptTokens.Min || all.PromptTokens.Max != one.PromptTokens.Max {
		t.Errorf("prompt lengths: merged %+v, single run %+v: the shards' union is the plan, so they are the same requests", all.PromptTokens, one.PromptTokens)
	}
	if merged.Merged == nil || len(merged.Merged.Shards) != n {
		t.Fatalf("no attestation: %+v", merged.Merged)
	}

	// The peers' figures add as the windows do: counts and sums exactly,
	// histograms bucket by bucket; the dialects read them.
	mp := back.Peers
	if mp == nil {
		t.Fatal("the merged run has no peer figures")
	}
	var reqs, done int
	var outTok int64
	var tpot *hdrhistogram.Histogram
	for _, s := range shards {
		p := s.Run.Peers
		reqs, done, outTok = reqs+p.Requests, done+p.Completed, outTok+p.OutputTokens
		h, err := p.Histograms[results.HistPeerTPOT.Name].Decode()
		if err != nil {
			t.Fatal(err)
		}
		if tpot == nil {
			tpot = h
		} else {
			tpot.Merge(h)
		}
	}
	if got, err := mp.Histograms[results.HistPeerTPOT.Name].Decode(); err != nil || !got.Equals(tpot) {
		t.Errorf("the merged peer TPOT histogram is not the shards' added (%v)", err)
	}
	if mp.Requests != reqs || mp.Completed != done || mp.OutputTokens != outTok || mp.Requests != 64 || mp.LastEndS < mp.FirstSentS {
		t.Errorf("merged peer figures %+v; the shards' add to %d requests, %d completed, %d output tokens", mp, reqs, done, outTok)
	}
	if d, err := results.DialectOf(back, results.DialectVLLM); err != nil || d.Unavailable != "" {
		t.Errorf("vLLM's dialect of the merged run: %v, %+v", err, d)
	}
}

func mustDecode(t *testing.T, run *results.Run, metric string) *hdrhistogram.Histogram {
	t.Helper()
	h, err := run.Histograms[results.WindowAll][metric].Decode()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// A shard needs a run id, and a sweep is not sharded.
func TestShardRefusals(t *testing.T) {
	t.Parallel()
	cfg := quiet(t, Config{ScenarioPath: scenarioFile(t, shardedSrc), Distributed: Distributed{Shard: scenario.Shard{I: 0, N: 2}}})
	if _, err := Run(context.Background(), context.Background(), cfg); !errors.Is(err, ErrBadInput) {
		t.Errorf("--shard without --run-id: %v", err)
	}
	cfg.Distributed = Distributed{Shard: scenario.Shard{I: 0, N: 9}, RunID: "x"}
	cfg.Output = filepath.Join(t.TempDir(), "r.json")
	if _, err := Run(context.Background(), context.Background(), cfg); !errors.Is(err, ErrBadInput) {
		t.Errorf("9 shards of 8 streams: %v", err)
	}
}
