package harness

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/sim"
)

// dialectSrc varies the output length from 1 token (no TPOT: 0 in
// vLLM's goodput, not good in AIPerf's) to 12; its TPOT bound is one
// only an answer in one chunk meets (a TPOT of 0), whatever the
// machine's speed.
const dialectSrc = `name: dialect
seed: 11
pins:
  model: {name: m}
  prompt: {tokens: {dist: uniform, min: 50, max: 400}}
  output: {tokens: {dist: uniform, min: 1, max: 12}, exact: true}
  concurrency: {mode: closed, streams: 6}
requests: 90
windows: {warmup: 1s, burst: 1s}
slo: {ttft_ms: 60000, tpot_ms: 0.001, e2e_ms: 60000, max_error_rate: 0.5}
`

// peerRef is one request as the peers time it, computed here from the
// records of the run's spill, independently of results.Peers.
type peerRef struct {
	ok                     bool
	out, firstTokens       int
	inTokens               int
	sent, first, last, end time.Duration
	gaps                   []time.Duration
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 } // ms at µs resolution, as the records keep time

// numpyLinear is np.percentile(xs, p) (method "linear").
func numpyLinear(xs []float64, p float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	h := p / 100 * float64(len(s)-1)
	lo := math.Floor(h)
	return s[int(lo)] + (h-lo)*(s[int(math.Ceil(h))]-s[int(lo)])
}

// weightedNearest is GuideLLM's Percentiles.from_pdf: the smallest value
// whose cumulative weight share reaches p/100.
func weightedNearest(vs, ws []float64, p float64) float64 {
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(vs[a], vs[b]) })
	var total, cum float64
	for _, w := range ws {
		total += w
	}
	for _, i := range idx {
		cum += ws[i]
		if cum/total >= p/100 {
			return vs[i]
		}
	}
	return vs[idx[len(idx)-1]]
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func weightedMean(vs, ws []float64) float64 {
	var s, w float64
	for i := range vs {
		s += vs[i] * ws[i]
		w += ws[i]
	}
	return s / w
}

func stdOf(xs []float64) float64 {
	m := meanOf(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)))
}

// A real run against the simulator — chunks of 3 tokens, outputs of 1 to
// 12 tokens, every ninth request failing, an SLO —
// reported in each peer's dialect: every figure equals the same figure
// computed here, by the peer's own formula and percentile method, from
// the per-request records of the run (its kept spill), within the HDR
// histograms' 3 significant figures; counts, totals, durations and
// goodputs exactly. Each figure carries a definition.
func TestDialectsAgreeWithTheRunsRecords(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	fails := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/chat/completions") && n.Add(1)%9 == 0 {
				http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	endpoint := simServer(t, sim.Config{Model: "m", TokensPerChunk: 3, Tokenizer: "words"}, fails)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	o := &Outcome{}
	cfg := quiet(t, Config{ScenarioPath: scenarioFile(t, dialectSrc), Endpoint: endpoint, Model: "m", Tokenizer: "words",
		Output: out, FallbackDirs: []string{},
		WriteResults: func(p string, run *results.Run) error {
			o.Run = run // kept, and refused: the spill stays for this test to read
			return &os.PathError{Op: "write", Path: p, Err: syscall.ENOSPC}
		}})
	if _, err := Run(context.Background(), context.Background(), cfg); err == nil || o.Run == nil {
		t.Fatalf("err %v: want the results unwritable", err)
	}
	run := o.Run
	if run.Peers == nil {
		t.Fatal("the run has no peer figures")
	}

	var refs []peerRef
	if _, err := results.ReadSpill(out+".spill", func(*results.Header) error { return nil }, func(r *record.Record) error {
		if r.Err == record.ErrInterrupted {
			return nil
		}
		ref := peerRef{sent: r.Sent, end: r.End, ok: !r.Failed() && len(r.Chunks) > 0}
		if ref.ok {
			ref.first, ref.last = r.Chunks[0].At, r.Chunks[len(r.Chunks)-1].At
			ref.firstTokens = int(r.Chunks[0].Tokens)
			for _, ch := range r.Chunks {
				ref.out += int(ch.Tokens)
			}
			if r.HasUsage {
				ref.out, ref.inTokens = r.Usage.CompletionTokens, r.Usage.PromptTokens
			} else {
				ref.inTokens = r.RequestedPromptTokens
			}
			for i := 1; i < len(r.Chunks); i++ {
				ref.gaps = append(ref.gaps, r.Chunks[i].At-r.Chunks[i-1].At)
			}
		}
		refs = append(refs, ref)
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// The peers' per-request quantities, by their own formulas.
	var ttft, latency, e2e, tpot, gaps, tpsUser, mlTPOT []float64
	var glITL, glITLw, glTPOT, glTPOTw []float64
	var completed, failed, goodV, goodA int
	var inTok, outTok, sumE2E float64
	firstSent, lastEnd, lastToken := time.Duration(math.MaxInt64), time.Duration(0), time.Duration(0)
	slo := run.Scenario.SLO
	oneToken := 0
	for _, r := range refs {
		firstSent, lastEnd = min(firstSent, r.sent), max(lastEnd, r.end)
		if !r.ok {
			failed++
			continue
		}
		completed++
		lastToken = max(lastToken, r.last)
		inTok += float64(r.inTokens)
		outTok += float64(r.out)
		sumE2E += (r.end - r.sent).Seconds()
		t1, lat := msOf(r.first-r.sent), msOf(r.last-r.sent)
		ttft, latency, e2e = append(ttft, t1), append(latency, lat), append(e2e, msOf(r.end-r.sent))
		for _, g := range r.gaps {
			gaps = append(gaps, msOf(g))
		}
		glTPOT, glTPOTw = append(glTPOT, lat/float64(r.out)), append(glTPOTw, float64(r.out))
		vTPOT := 0.0 // vLLM: a TPOT of 0 for goodput when one token came
		if r.out >= 2 {
			vTPOT = (lat - t1) / float64(r.out-1)
			tpot = append(tpot, vTPOT)
			glITL, glITLw = append(glITL, vTPOT), append(glITLw, float64(r.out-1))
			if vTPOT > 0 {
				tpsUser = append(tpsUser, 1000/vTPOT)
			}
		} else {
			oneToken++
		}
		if after := r.out - r.firstTokens; after > 0 {
			mlTPOT = append(mlTPOT, msOf(r.end-r.first)/float64(after))
		}
		good := t1 <= slo.TTFTMs && lat <= slo.E2EMs
		if good && vTPOT <= slo.TPOTMs {
			goodV++
		}
		if good && r.out >= 2 && vTPOT <= slo.TPOTMs {
			goodA++
		}
	}
	// Only answers that came in one chunk (up to 3 tokens) have a TPOT
	// of 0 and are good: all of them to vLLM, those of 2 or 3 tokens to
	// AIPerf.
	if failed == 0 || oneToken == 0 || goodV != goodA+oneToken || goodA == 0 {
		t.Fatalf("the run does not exercise the definitions: %d failed, %d of one token, %d of %d good to vLLM, %d to AIPerf",
			failed, oneToken, goodV, completed, goodA)
	}
	t.Logf("%d completed, %d failed, %d of one token, %d good to vLLM, %d to AIPerf; TTFT p50 %.2f ms, TPOT p50 %.3f ms, latency p50 %.2f ms",
		completed, failed, oneToken, goodV, goodA, numpyLinear(ttft, 50), numpyLinear(tpot, 50), numpyLinear(latency, 50))

	vDur := lastEnd.Seconds()
	aDur := (lastToken - firstSent).Seconds()
	gDur := (lastEnd - firstSent).Seconds()
	wantAll := map[string]map[string]float64{
		results.DialectVLLM: {
			"Successful requests": float64(completed), "Failed requests": float64(failed),
			"Benchmark duration (s)": vDur, "Total input tokens": inTok, "Total generated tokens": outTok,
			"Request throughput (req/s)": float64(completed) / vDur, "Request goodput (req/s)": float64(goodV) / vDur,
			"Output token throughput (tok/s)": outTok / vDur, "Total token throughput (tok/s)": (inTok + outTok) / vDur,
			"Mean TTFT (ms)": meanOf(ttft), "Median TTFT (ms)": numpyLinear(ttft, 50), "P99 TTFT (ms)": numpyLinear(ttft, 99),
			"Mean TPOT (ms)": meanOf(tpot), "Median TPOT (ms)": numpyLinear(tpot, 50), "P99 TPOT (ms)": numpyLinear(tpot, 99),
			"Mean ITL (ms)": meanOf(gaps), "Median ITL (ms)": numpyLinear(gaps, 50), "P99 ITL (ms)": numpyLinear(gaps, 99),
			"Mean E2EL (ms)": meanOf(latency), "Median E2EL (ms)": numpyLinear(latency, 50), "P99 E2EL (ms)": numpyLinear(latency, 99),
		},
		results.DialectAIPerf: {
			"time_to_first_token mean": meanOf(ttft), "time_to_first_token p90": numpyLinear(ttft, 90), "time_to_first_token std": stdOf(ttft),
			"inter_token_latency mean": meanOf(tpot), "inter_token_latency p50": numpyLinear(tpot, 50), "inter_token_latency p99": numpyLinear(tpot, 99),
			"inter_chunk_latency p90": numpyLinear(gaps, 90), "request_latency p99": numpyLinear(latency, 99),
			"output_token_throughput_per_user mean": meanOf(tpsUser),
			"output_token_throughput_per_user p50":  numpyLinear(tpsUser, 50),
			"request_count":                         float64(completed), "error_request_count": float64(failed), "benchmark_duration": aDur,
			"request_throughput": float64(completed) / aDur, "output_token_throughput": outTok / aDur, "goodput": float64(goodA) / aDur,
		},
		results.DialectGuideLLM: {
			"time_to_first_token_ms mean": meanOf(ttft), "time_to_first_token_ms p50": weightedNearest(ttft, ones(len(ttft)), 50),
			"time_to_first_token_ms p99":  weightedNearest(ttft, ones(len(ttft)), 99),
			"inter_token_latency_ms mean": weightedMean(glITL, glITLw), "inter_token_latency_ms p50": weightedNearest(glITL, glITLw, 50),
			"inter_token_latency_ms p90":    weightedNearest(glITL, glITLw, 90),
			"time_per_output_token_ms mean": weightedMean(glTPOT, glTPOTw), "time_per_output_token_ms p50": weightedNearest(glTPOT, glTPOTw, 50),
			"time_per_output_token_ms p99": weightedNearest(glTPOT, glTPOTw, 99),
			"request_latency p90":          weightedNearest(e2e, ones(len(e2e)), 90) / 1e3,
			"successful requests":          float64(completed), "errored requests": float64(failed), "duration": gDur,
			"requests_per_second mean": float64(completed) / gDur, "output_tokens_per_second mean": outTok / gDur,
		},
		results.DialectMLPerf: {
			"TTFT p90": numpyLinear(ttft, 90), "TTFT p99": numpyLinear(ttft, 99),
			"TPOT p90": numpyLinear(mlTPOT, 90), "TPOT p99": numpyLinear(mlTPOT, 99),
			"tps_per_user":      1000 / numpyLinear(mlTPOT, 90),
			"e2e_interactivity": outTok / sumE2E,
		},
	}
	// Figures read from a histogram agree within its 3 significant
	// figures (a bucket's median lies within 1/2048 of its values, and
	// times are kept to the µs); counts, totals, durations and the rates
	// made of them are exact.
	fromHist := func(unit, fig string) bool {
		return unit == "ms" || unit == "tok/s/user" || fig == "tps_per_user" || fig == "request_latency p90"
	}
	for _, name := range results.Dialects {
		t.Run(name, func(t *testing.T) {
			d, err := results.DialectOf(run, name)
			if err != nil {
				t.Fatal(err)
			}
			if d.Unavailable != "" || d.Source == "" || !strings.Contains(d.Window, "every request of the run") || d.Percentiles == "" {
				t.Errorf("report head: %+v", d)
			}
			figs := map[string]results.DialectFigure{}
			for _, f := range d.Figures {
				figs[f.Name] = f
				if f.Definition == "" || f.Unit == "" {
					t.Errorf("%s: no definition or unit", f.Name)
				}
				if f.Value == nil {
					t.Errorf("%s: unavailable (%s)", f.Name, f.Unavailable)
				}
			}
			for fig, w := range wantAll[name] {
				f, ok := figs[fig]
				if !ok || f.Value == nil {
					t.Errorf("no figure %q", fig)
					continue
				}
				got := *f.Value
				tol := math.Abs(w) * 1e-9
				if fromHist(f.Unit, fig) {
					tol = math.Abs(w)/1000 + 0.002
				}
				if math.Abs(got-w) > tol {
					t.Errorf("%s = %v, the records give %v (tolerance %v)", fig, got, w, tol)
				}
			}
		})
	}

	// vLLM's ITL is a gap per chunk: with 3 tokens a chunk, well above
	// sixpin's, which splits a chunk's gap among its tokens.
	v, _ := results.DialectOf(run, results.DialectVLLM)
	for _, f := range v.Figures {
		if own := run.Windows[results.WindowAll].ITLMs; f.Name == "Mean ITL (ms)" && own != nil && !(*f.Value > 1.5*own.Mean) {
			t.Errorf("vLLM's mean ITL %v ms, sixpin's %v ms: want the per-chunk gaps of 3 tokens well above", *f.Value, own.Mean)
		}
	}

	// The definitions say what differs between the peers.
	defs := map[string]string{}
	for _, name := range results.Dialects {
		d, _ := results.DialectOf(run, name)
		for _, f := range d.Figures {
			defs[name+"/"+f.Name] = f.Definition
		}
	}
	for key, words := range map[string][]string{
		"vllm/Mean TPOT (ms)":                          {"(output tokens − 1)", "first token excluded"},
		"vllm/Mean ITL (ms)":                           {"one per chunk"},
		"vllm/Mean TTFT (ms)":                          {"send"},
		"aiperf/inter_token_latency mean":              {"(output_sequence_length − 1)", "first token excluded"},
		"guidellm/time_per_output_token_ms mean":       {"first token INCLUDED", "weighted by output_tokens"},
		"guidellm/inter_token_latency_ms mean":         {"first token excluded"},
		"mlperf/tps_per_user":                          {"1000 / TPOT p90"},
		"mlperf/e2e_interactivity":                     {"Σ output tokens / Σ turn E2E"},
		"aiperf/output_token_throughput_per_user mean": {"1 / inter_token_latency"},
	} {
		for _, w := range words {
			if !strings.Contains(defs[key], w) {
				t.Errorf("%s is defined as %q: want %q in it", key, defs[key], w)
			}
		}
	}
}

func ones(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
