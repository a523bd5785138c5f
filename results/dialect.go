package results

import (
	"fmt"
	"math"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Dialect names: the tools whose metric definitions `sixpin report
// --dialect` prints a run's figures in.
const (
	DialectVLLM     = "vllm"
	DialectAIPerf   = "aiperf"
	DialectGuideLLM = "guidellm"
	DialectMLPerf   = "mlperf"
)

// Dialects lists the dialects in help order.
var Dialects = []string{DialectVLLM, DialectAIPerf, DialectGuideLLM, DialectMLPerf}

// DialectReport is one run's figures under one peer's metric
// definitions, each with its definition: what a user puts beside the
// peer's own report, line by line.
type DialectReport struct {
	Dialect string `json:"dialect"`
	// Peer names the tool and Source the code whose definitions are
	// followed, with its version and commit.
	Peer   string `json:"peer"`
	Source string `json:"source"`
	// Window says which requests the figures cover: every request of the
	// run, as the peers count theirs (not sixpin's steady window).
	Window string `json:"window"`
	// Percentiles says how percentiles are read, as the peer computes
	// them, from what sixpin kept.
	Percentiles string `json:"percentiles"`
	// Unavailable says why no figure of the file can be given (a file
	// without peer figures); "" when each figure says for itself.
	Unavailable string          `json:"unavailable,omitempty"`
	Figures     []DialectFigure `json:"figures"`
	// Notes are what differs between the peer's client and sixpin's in
	// ways the figures cannot undo.
	Notes []string `json:"notes,omitempty"`
}

// DialectFigure is one figure: its name as the peer prints it, its value
// in Unit, and its definition. Value is nil when the results file lacks
// what the figure needs; Unavailable says why.
type DialectFigure struct {
	Name        string   `json:"name"`
	Value       *float64 `json:"value"`
	Unit        string   `json:"unit"`
	Definition  string   `json:"definition"`
	Unavailable string   `json:"unavailable,omitempty"`
}

// UnknownDialectError is the error of a dialect not in Dialects.
type UnknownDialectError struct{ Name string }

func (e *UnknownDialectError) Error() string {
	return fmt.Sprintf("unknown dialect %q (want one of %s)", e.Name, strings.Join(Dialects, ", "))
}

// DialectOf computes run's figures under the named dialect's
// definitions. Its only error is an unknown dialect; a figure the file
// cannot give (a file from before the peers' figures were recorded, no
// SLO for goodput) is in the report, unavailable, with
// its reason.
func DialectOf(run *Run, name string) (*DialectReport, error) {
	var d *DialectReport
	f := newPeerFigures(run.Peers, run)
	switch name {
	case DialectVLLM:
		d = f.vllm()
	case DialectAIPerf:
		d = f.aiperf()
	case DialectGuideLLM:
		d = f.guidellm()
	case DialectMLPerf:
		d = f.mlperf()
	default:
		return nil, &UnknownDialectError{Name: name}
	}
	d.Dialect = name
	d.Unavailable = f.missing
	if p := run.Peers; p != nil {
		d.Window = fmt.Sprintf("every request of the run, as the peer counts its benchmark (not sixpin's steady window): "+
			"%d issued (interrupted ones left out), %d completed with a token, %d failed; %s–%s s of load; warm-up requests included",
			p.Requests, p.Completed, p.Failed, plain(p.FirstSentS), plain(p.LastEndS))
	} else {
		d.Window = "every request of the run"
	}
	return d, nil
}

// peerFigures builds figures from a run's Peers.
type peerFigures struct {
	p   *Peers
	run *Run
	// missing is why every figure is unavailable ("" when p is set).
	missing string
	hs      map[string]*peerValues
}

func newPeerFigures(p *Peers, run *Run) *peerFigures {
	f := &peerFigures{p: p, run: run, hs: map[string]*peerValues{}}
	if p == nil {
		f.missing = "this results file holds no peer figures (peer_figures): it was written before sixpin recorded them; rerun the scenario, or sixpin recover a kept spill"
		if run.Merged != nil {
			f.missing = "this merged run holds no peer figures: a shard's results file has none (written before sixpin recorded them)"
		}
	}
	return f
}

// values decodes the named Peers histogram (nil and why when it cannot).
func (f *peerFigures) values(spec HistSpec) (*peerValues, string) {
	if f.p == nil {
		return nil, f.missing
	}
	if v, ok := f.hs[spec.Name]; ok {
		return v, ""
	}
	e, ok := f.p.Histograms[spec.Name]
	if !ok {
		return nil, "no request of the run has this figure (peer_figures.histograms." + spec.Name + " is absent)"
	}
	h, err := e.Decode()
	if err != nil {
		return nil, fmt.Sprintf("peer_figures.histograms.%s does not decode: %v", spec.Name, err)
	}
	v := newPeerValues(h, spec.Scale)
	f.hs[spec.Name] = v
	return v, ""
}

// stat is one summary statistic of a distribution.
type stat struct {
	label string
	read  func(*peerValues) float64
}

func mean() stat   { return stat{"mean", (*peerValues).mean} }
func stddev() stat { return stat{"std", (*peerValues).std} }
func linear(p float64) stat {
	return stat{fmt.Sprintf("p%s", plain(p)), func(v *peerValues) float64 { return v.linear(p) }}
}
func nearest(p float64) stat {
	return stat{fmt.Sprintf("p%s", plain(p)), func(v *peerValues) float64 { return v.nearestRank(p) }}
}

// dist is a figure read from a Peers histogram.
func (f *peerFigures) dist(name, unit string, spec HistSpec, s stat, def string) DialectFigure {
	fig := DialectFigure{Name: name, Unit: unit, Definition: def}
	v, why := f.values(spec)
	if v == nil {
		fig.Unavailable = why
		return fig
	}
	x := s.read(v)
	fig.Value = &x
	return fig
}

// ratio is num / den, unavailable when it cannot be computed.
func (f *peerFigures) ratio(name, unit, def string, num, den float64, whyZero string) DialectFigure {
	fig := DialectFigure{Name: name, Unit: unit, Definition: def}
	switch {
	case f.p == nil:
		fig.Unavailable = f.missing
	case den <= 0:
		fig.Unavailable = whyZero
	default:
		x := num / den
		fig.Value = &x
	}
	return fig
}

// count is a figure counted exactly.
func (f *peerFigures) count(name string, n func(*Peers) float64, def string) DialectFigure {
	fig := DialectFigure{Name: name, Unit: "requests", Definition: def}
	if f.p == nil {
		fig.Unavailable = f.missing
		return fig
	}
	x := n(f.p)
	fig.Value = &x
	return fig
}

// good is a goodput figure: good requests per second of dur.
func (f *peerFigures) good(name, def string, n func(*PeerGood) int, dur float64) DialectFigure {
	fig := f.ratio(name, "req/s", def, 0, dur, "the benchmark's duration is zero")
	if f.p != nil && f.p.Good == nil {
		fig.Value, fig.Unavailable = nil, "the scenario declares no slo (ttft_ms, tpot_ms, e2e_ms): goodput needs one"
	} else if fig.Value != nil {
		x := float64(n(f.p.Good)) / dur
		fig.Value = &x
	}
	return fig
}

// sloWords is the scenario's SLO as the peer's --goodput flag.
func (f *peerFigures) sloWords(ttft, tpot, e2e string) string {
	s := f.run.Scenario.SLO
	var parts []string
	if s.TTFTMs > 0 {
		parts = append(parts, ttft+":"+plain(s.TTFTMs))
	}
	if s.TPOTMs > 0 {
		parts = append(parts, tpot+":"+plain(s.TPOTMs))
	}
	if s.E2EMs > 0 {
		parts = append(parts, e2e+":"+plain(s.E2EMs))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// dur fields of p, 0 when p is nil.
func (f *peerFigures) span(from, to func(*Peers) float64) float64 {
	if f.p == nil {
		return 0
	}
	return to(f.p) - from(f.p)
}

func zeroStart(*Peers) float64      { return 0 }
func firstSent(p *Peers) float64    { return p.FirstSentS }
func lastEnd(p *Peers) float64      { return p.LastEndS }
func lastToken(p *Peers) float64    { return p.LastTokenS }
func completed(p *Peers) float64    { return float64(p.Completed) }
func failed(p *Peers) float64       { return float64(p.Failed) }
func (f *peerFigures) in() float64  { return f.sum(func(p *Peers) int64 { return p.InputTokens }) }
func (f *peerFigures) out() float64 { return f.sum(func(p *Peers) int64 { return p.OutputTokens }) }
func (f *peerFigures) sum(v func(*Peers) int64) float64 {
	if f.p == nil {
		return 0
	}
	return float64(v(f.p))
}

// The sources each dialect follows. Every definition below is taken from
// this code.
const (
	vllmSource     = "github.com/vllm-project/vllm vllm/benchmarks/serve.py calculate_metrics and benchmark @009e6d4a; vllm/benchmarks/lib/endpoint_request_func.py async_request_openai_chat_completions @02cfb534"
	aiperfSource   = "github.com/ai-dynamo/aiperf 0.1.1 @db4f6397: aiperf/metrics/types/{ttft,inter_token_latency,inter_chunk_latency,request_latency,output_token_throughput,request_throughput,goodput,good_request_count,benchmark_duration}_metric.py, aiperf/metrics/metric_dicts.py (np.percentile), aiperf/parsers"
	guidellmSource = "github.com/vllm-project/guidellm v0.5.4 @fc31a9eb: src/guidellm/schemas/request_stats.py, benchmark/schemas/generative/metrics.py, schemas/statistics.py (Percentiles.from_pdf, rate_distribution_from_timings)"
	mlperfSource   = "github.com/mlcommons/endpoints @ea332753: src/inference_endpoint/async_utils/services/metrics_aggregator/metrics_table.py (TTFT, TpotTrigger, sample latency), metrics/early_stopping.py (np.percentile); MLPerf Endpoints rules v1.0 draft (tps_per_user, e2e_interactivity)"
	numpyLinear    = "numpy's default linear interpolation (np.percentile), read from HDR histograms of 3 significant figures: within 0.1% of the peer's over the same values"
)

const (
	defTTFT   = "the request's send → its first token-bearing chunk, content or reasoning (sixpin's own TTFT starts at the scheduled start)"
	defTPOT   = "(latency − TTFT) / (output tokens − 1) per request of at least 2 output tokens, i.e. (last token chunk − first token chunk) / (output tokens − 1); first token excluded; every such request, whether sixpin observed its decode or not"
	outTokens = "output tokens: the server's usage (completion_tokens, reasoning included), else sixpin's chunk count"
)

func (f *peerFigures) vllm() *DialectReport {
	d := &DialectReport{Peer: "vLLM's benchmark (vllm bench serve, benchmarks/benchmark_serving.py)", Source: vllmSource, Percentiles: numpyLinear}
	dur := f.span(zeroStart, lastEnd)
	noDur := "the benchmark's duration is zero"
	durDef := "benchmark duration: the start of load → the last request's end (vLLM: benchmark_start_time → every task gathered)"
	add := func(fs ...DialectFigure) { d.Figures = append(d.Figures, fs...) }
	add(
		f.count("Successful requests", completed, "requests answered with at least one chunk with choices (vLLM's success: first_chunk_received)"),
		f.count("Failed requests", failed, "requests that failed or returned no token chunk"),
		f.ratio("Benchmark duration (s)", "s", durDef, dur, 1, noDur),
		f.ratio("Total input tokens", "tokens", "Σ prompt_len of successful requests: the server's usage prompt_tokens, else the planned length", f.in(), 1, ""),
		f.ratio("Total generated tokens", "tokens", "Σ output tokens of successful requests; "+outTokens, f.out(), 1, ""),
		f.ratio("Request throughput (req/s)", "req/s", "successful requests / benchmark duration", f.sum(func(p *Peers) int64 { return int64(p.Completed) }), dur, noDur),
		f.good("Request goodput (req/s)", "successful requests whose every --goodput bound (the scenario's slo as "+f.sloWords("ttft", "tpot", "e2el")+") ≥ their TTFT, TPOT (0 for one output token) and E2EL, / benchmark duration", func(g *PeerGood) int { return g.VLLM }, dur),
		f.ratio("Output token throughput (tok/s)", "tok/s", "total generated tokens / benchmark duration", f.out(), dur, noDur),
		f.ratio("Total token throughput (tok/s)", "tok/s", "(total input + total generated tokens) / benchmark duration", f.in()+f.out(), dur, noDur),
	)
	lat := []struct {
		title string
		spec  HistSpec
		def   string
	}{
		{"TTFT", HistPeerTTFT, "TTFT: " + defTTFT},
		{"TPOT", HistPeerTPOT, "TPOT (excl. 1st token): " + defTPOT},
		{"ITL", HistPeerChunkGap, "ITL: every gap between consecutive chunks with choices, one per chunk whatever its tokens (sixpin's ITL splits a chunk of k tokens into k gaps)"},
		{"E2EL", HistPeerLatency, "E2EL: send → the last token chunk (the trailing usage chunk and [DONE] do not count)"},
	}
	for _, l := range lat {
		add(f.dist("Mean "+l.title+" (ms)", "ms", l.spec, mean(), l.def),
			f.dist("Median "+l.title+" (ms)", "ms", l.spec, linear(50), l.def),
			f.dist("P99 "+l.title+" (ms)", "ms", l.spec, linear(99), l.def))
	}
	d.Notes = []string{
		"vLLM's client starts TTFT at the first chunk with choices, even an empty one (vLLM's server sends the role delta with the first token); sixpin's records keep token-bearing chunks only.",
		"vLLM's own warm-up requests (--num-warmups) are not measured; sixpin's warmup window is included here.",
		"Percentiles are vLLM's defaults (--metric-percentiles 99, median); the E2EL lines are those vLLM prints with --percentile-metrics ttft,tpot,itl,e2el.",
	}
	return d
}

func (f *peerFigures) aiperf() *DialectReport {
	d := &DialectReport{Peer: "AIPerf (aiperf profile)", Source: aiperfSource, Percentiles: numpyLinear}
	dur := f.span(firstSent, lastToken)
	noDur := "the benchmark's duration is zero"
	add := func(fs ...DialectFigure) { d.Figures = append(d.Figures, fs...) }
	stats := []stat{mean(), linear(50), linear(90), linear(99), stddev()}
	metrics := []struct {
		tag, unit string
		spec      HistSpec
		def       string
	}{
		{"time_to_first_token", "ms", HistPeerTTFT, "request start → the first response with content: " + defTTFT},
		{"inter_token_latency", "ms", HistPeerTPOT, "(request_latency − time_to_first_token) / (output_sequence_length − 1), records of OSL ≥ 2; first token excluded (sixpin's TPOT); OSL: " + outTokens},
		{"inter_chunk_latency", "ms", HistPeerChunkGap, "every gap between consecutive content responses of a record, one per chunk"},
		{"request_latency", "ms", HistPeerLatency, "request start → the final content response (responses without content, as the usage chunk, are dropped by AIPerf's parser)"},
		{"output_token_throughput_per_user", "tok/s/user", HistPeerTPSUser, "1 / inter_token_latency (s) per record"},
	}
	for _, m := range metrics {
		for _, s := range stats {
			add(f.dist(m.tag+" "+s.label, m.unit, m.spec, s, m.def))
		}
	}
	durDef := "benchmark_duration: the first request's start → the last record's final content response"
	add(
		f.count("request_count", completed, "valid records: requests answered with at least one content response"),
		f.count("error_request_count", failed, "requests that failed or returned no content"),
		f.ratio("benchmark_duration", "s", durDef, dur, 1, noDur),
		f.ratio("request_throughput", "req/s", "request_count / benchmark_duration", f.sum(func(p *Peers) int64 { return int64(p.Completed) }), dur, noDur),
		f.ratio("output_token_throughput", "tok/s", "Σ output_sequence_length / benchmark_duration; OSL: "+outTokens, f.out(), dur, noDur),
		f.good("goodput", "records meeting every --goodput bound (the scenario's slo as "+f.sloWords("time_to_first_token", "inter_token_latency", "request_latency")+"; a record without the metric, as an ITL of one output token, is not good) / benchmark_duration", func(g *PeerGood) int { return g.AIPerf }, dur),
	)
	d.Notes = []string{
		"AIPerf 0.1.1 counts output_sequence_length with its own tokenizer over the response text; sixpin uses the server's usage.",
		"AIPerf's --warmup-request-count requests are not measured; sixpin's warmup window is included here.",
	}
	return d
}

func (f *peerFigures) guidellm() *DialectReport {
	d := &DialectReport{Peer: "GuideLLM (guidellm benchmark)", Source: guidellmSource,
		Percentiles: "nearest rank, as GuideLLM's Percentiles.from_pdf (np.searchsorted over the CDF), read from HDR histograms of 3 significant figures; token-weighted where GuideLLM weights by tokens"}
	dur := f.span(firstSent, lastEnd)
	noDur := "the benchmark's duration is zero"
	add := func(fs ...DialectFigure) { d.Figures = append(d.Figures, fs...) }
	metrics := []struct {
		name, unit string
		spec       HistSpec
		scale      float64
		def        string
	}{
		{"time_to_first_token_ms", "ms", HistPeerTTFT, 1, "request_start → first_token_iteration: " + defTTFT},
		{"inter_token_latency_ms", "ms", HistPeerTPOTByToken, 1, "(last_token_iteration − first_token_iteration) / (output_tokens − 1), each request weighted by output_tokens − 1; first token excluded (sixpin's TPOT)"},
		{"time_per_output_token_ms", "ms", HistPeerTPOTInclFirst, 1, "(last_token_iteration − request_start) / output_tokens, each request weighted by output_tokens; first token INCLUDED (not sixpin's TPOT, nor vLLM's)"},
		{"request_latency", "s", HistPeerE2E, 1e-3, "request_start → request_end (the stream's last byte)"},
	}
	for _, m := range metrics {
		for _, s := range []stat{mean(), nearest(50), nearest(90), nearest(99)} {
			fig := f.dist(m.name+" "+s.label, m.unit, m.spec, s, m.def)
			if fig.Value != nil {
				*fig.Value *= m.scale
			}
			add(fig)
		}
	}
	add(
		f.count("successful requests", completed, "requests answered with at least one token"),
		f.count("errored requests", failed, "requests that failed or returned no token"),
		f.ratio("duration", "s", "the first request's start → the last request's end", dur, 1, noDur),
		f.ratio("requests_per_second mean", "req/s", "successful requests / duration (the duration-weighted mean of GuideLLM's rate distribution)", f.sum(func(p *Peers) int64 { return int64(p.Completed) }), dur, noDur),
		f.ratio("output_tokens_per_second mean", "tok/s", "Σ output_tokens of successful requests / duration; "+outTokens, f.out(), dur, noDur),
	)
	d.Notes = []string{"GuideLLM v0.5.4 reports no goodput; its console's TPOT column is time_per_output_token_ms, which includes the first token."}
	return d
}

func (f *peerFigures) mlperf() *DialectReport {
	d := &DialectReport{Peer: "MLPerf Endpoints (mlcommons/endpoints)", Source: mlperfSource, Percentiles: numpyLinear}
	tpotDef := "TPOT: (complete − the first chunk) / the output tokens after the first chunk: first chunk excluded, the window ending at the response's completion (last byte)"
	add := func(fs ...DialectFigure) { d.Figures = append(d.Figures, fs...) }
	add(
		f.dist("TTFT p90", "ms", HistPeerTTFT, linear(90), "TTFT: issue → the first non-empty fragment of any kind: "+defTTFT),
		f.dist("TTFT p99", "ms", HistPeerTTFT, linear(99), "TTFT: issue → the first non-empty fragment of any kind: "+defTTFT),
		f.dist("TPOT p90", "ms", HistPeerTPOTAfterChunk, linear(90), tpotDef),
		f.dist("TPOT p99", "ms", HistPeerTPOTAfterChunk, linear(99), tpotDef),
	)
	tps := f.dist("tps_per_user", "tok/s", HistPeerTPOTAfterChunk, linear(90), "1000 / TPOT p90 (ms)")
	if tps.Value != nil {
		if *tps.Value > 0 {
			*tps.Value = 1000 / *tps.Value
		} else {
			tps.Value, tps.Unavailable = nil, "TPOT p90 is zero"
		}
	}
	add(tps,
		f.ratio("e2e_interactivity", "tok/s", "Σ output tokens / Σ turn E2E (issue → completion) over completed requests; "+outTokens,
			f.out(), f.sumE2E(), "no request completed"))
	d.Notes = []string{"MLPerf counts output tokens with the model's tokenizer over the output; sixpin uses the server's usage and its chunks' token counts for the first chunk."}
	return d
}

func (f *peerFigures) sumE2E() float64 {
	if f.p == nil {
		return 0
	}
	return f.p.SumE2ES
}

// peerValues are a histogram's recorded values in the reporting unit,
// each bucket read at its median-equivalent value, ascending, with their
// counts.
type peerValues struct {
	v []float64
	c []int64
	n int64
}

func newPeerValues(h *hdrhistogram.Histogram, scale float64) *peerValues {
	pv := &peerValues{}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		pv.v = append(pv.v, float64(b.From+(b.To-b.From+1)/2)/scale)
		pv.c = append(pv.c, b.Count)
		pv.n += b.Count
	}
	return pv
}

// at is the k-th smallest value (from 0).
func (pv *peerValues) at(k int64) float64 {
	var cum int64
	for i, c := range pv.c {
		cum += c
		if k < cum {
			return pv.v[i]
		}
	}
	return pv.v[len(pv.v)-1]
}

// linear is the p-th percentile (0–100) by numpy's default method: the
// value at rank p/100·(n−1), interpolated between its neighbours.
func (pv *peerValues) linear(p float64) float64 {
	h := p / 100 * float64(pv.n-1)
	lo := math.Floor(h)
	a, b := pv.at(int64(lo)), pv.at(int64(math.Ceil(h)))
	return a + (h-lo)*(b-a)
}

// nearestRank is the p-th percentile (0–100) as np.searchsorted(cdf,
// p/100, side="left") reads it: the smallest value whose cumulative share
// reaches p/100.
func (pv *peerValues) nearestRank(p float64) float64 {
	var cum int64
	for i, c := range pv.c {
		cum += c
		if float64(cum)/float64(pv.n) >= p/100 {
			return pv.v[i]
		}
	}
	return pv.v[len(pv.v)-1]
}

func (pv *peerValues) mean() float64 {
	var s float64
	for i, v := range pv.v {
		s += v * float64(pv.c[i])
	}
	return s / float64(pv.n)
}

// std is the population standard deviation (np.std).
func (pv *peerValues) std() float64 {
	m := pv.mean()
	var s float64
	for i, v := range pv.v {
		s += (v - m) * (v - m) * float64(pv.c[i])
	}
	return math.Sqrt(s / float64(pv.n))
}

// plain formats v without trailing zeros.
func plain(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
