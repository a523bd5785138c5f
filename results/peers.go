package results

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sixpin/sixpin/record"
)

// Peers are the run's per-request figures as the other benchmarks define
// them (vLLM's `vllm bench serve`, AIPerf, GuideLLM, MLPerf's endpoints
// client), over every request of the run as those tools count theirs:
// latencies from the request's send (not sixpin's scheduled start),
// ends at the last token-bearing chunk where they end there, TPOT with
// or without the first token, every decode counted whether sixpin
// observed it or not. `sixpin report --dialect` reads them; they cannot
// be derived from sixpin's own histograms, whose per-request quantities
// are defined otherwise. Collector.Finish fills them once per finished
// record from the spill, never per chunk as it arrives. Times are run
// time (simulated time in a run made with --time-scale).
type Peers struct {
	// Requests counts the requests the run issued (interrupted ones left
	// out: no peer has them); Completed those that succeeded with at
	// least one token-bearing chunk, Failed the others (an answer without
	// a token is a failure to vLLM and AIPerf).
	Requests  int `json:"requests"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// FirstSentS is the earliest send; LastTokenS the latest last
	// token-bearing chunk of a completed request; LastEndS the latest end
	// (last byte, or failure) of any request: seconds from the start of
	// load.
	FirstSentS float64 `json:"first_sent_s"`
	LastTokenS float64 `json:"last_token_s"`
	LastEndS   float64 `json:"last_end_s"`
	// InputTokens sums the completed requests' prompt tokens: the
	// server's usage, else the planned length (as vLLM's prompt_len).
	// OutputTokens sums their output tokens (reasoning included): the
	// server's usage, else sixpin's chunk count.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// SumE2ES sums the completed requests' send → last byte (s):
	// MLPerf's Σ turn E2E.
	SumE2ES float64 `json:"sum_e2e_from_send_s"`
	// Good counts the completed requests that met the scenario's SLO
	// under each peer's definitions (nil without an SLO).
	Good *PeerGood `json:"good,omitempty"`
	// Histograms are the per-request distributions, by the names of the
	// HistPeer* specs.
	Histograms map[string]EncodedHistogram `json:"histograms,omitempty"`
}

// PeerGood counts good requests as vLLM's --goodput and AIPerf's
// --goodput do, against the scenario's slo (ttft_ms, tpot_ms, e2e_ms
// mapped to vLLM's ttft, tpot, e2el and AIPerf's time_to_first_token,
// inter_token_latency, request_latency).
type PeerGood struct {
	// VLLM: every set bound ≥ the request's value, its TPOT 0 when it
	// had one output token (vllm/benchmarks/serve.py calculate_metrics).
	VLLM int `json:"vllm"`
	// AIPerf: the same, but a request without the metric (an ITL of one
	// output token) is not good (good_request_count_metric.py _is_good).
	AIPerf int `json:"aiperf"`
}

// The peers' per-request distributions (Peers.Histograms). Every
// latency is in µs, reported in ms; sources in report/dialect.go.
var (
	// HistPeerTTFT is the send → the first token-bearing chunk.
	HistPeerTTFT = HistSpec{"ttft_from_send_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerLatency is the send → the last token-bearing chunk (vLLM's
	// latency, AIPerf's request_latency: neither counts the usage chunk).
	HistPeerLatency = HistSpec{"latency_to_last_token_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerE2E is the send → the last byte (GuideLLM's
	// request_latency, MLPerf's sample latency).
	HistPeerE2E = HistSpec{"e2e_from_send_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerTPOT is (last chunk − first chunk) / (output tokens − 1),
	// once per request of at least two output tokens: vLLM's TPOT,
	// AIPerf's inter_token_latency.
	HistPeerTPOT = HistSpec{"tpot_excl_first_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerTPOTByToken is the same value counted (output tokens − 1)
	// times: GuideLLM's inter_token_latency_ms distribution, weighted by
	// tokens.
	HistPeerTPOTByToken = HistSpec{"tpot_excl_first_by_token_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerTPOTInclFirst is (last chunk − send) / output tokens,
	// counted output-tokens times: GuideLLM's time_per_output_token_ms.
	HistPeerTPOTInclFirst = HistSpec{"tpot_incl_first_by_token_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerChunkGap is every gap between consecutive token-bearing
	// chunks, one per chunk whatever its tokens: vLLM's ITL, AIPerf's
	// inter_chunk_latency.
	HistPeerChunkGap = HistSpec{"gap_per_chunk_ms", "us", 1e3, 1, maxLatencyUS}
	// HistPeerTPSUser is 1 / HistPeerTPOT per request, in tok/s: AIPerf's
	// output_token_throughput_per_user.
	HistPeerTPSUser = HistSpec{"output_tok_s_per_user", "mtok/s", 1e3, 1, maxRateMilli}
	// HistPeerTPOTAfterChunk is (last byte − first chunk) / the output
	// tokens after the first chunk: MLPerf's endpoints TPOT.
	HistPeerTPOTAfterChunk = HistSpec{"tpot_after_first_chunk_ms", "us", 1e3, 1, maxLatencyUS}
)

// peerHists are the Peers histograms, in this order.
var peerHists = []HistSpec{HistPeerTTFT, HistPeerLatency, HistPeerE2E, HistPeerTPOT, HistPeerTPOTByToken,
	HistPeerTPOTInclFirst, HistPeerChunkGap, HistPeerTPSUser, HistPeerTPOTAfterChunk}

// peersAcc accumulates Peers over the records of a run, one record at a
// time (Collector.Finish's pass over the spill).
type peersAcc struct {
	p       Peers
	h       []*hdrhistogram.Histogram // by peerHists
	first   time.Duration
	slo     SLO
	sumE2E  time.Duration
	anySent bool
}

func newPeersAcc(slo SLO) *peersAcc {
	a := &peersAcc{slo: slo, h: make([]*hdrhistogram.Histogram, len(peerHists))}
	for i, s := range peerHists {
		a.h[i] = s.new()
	}
	if slo.set() {
		a.p.Good = &PeerGood{}
	}
	return a
}

// Indexes into peersAcc.h, in peerHists' order.
const (
	phTTFT = iota
	phLatency
	phE2E
	phTPOT
	phTPOTByToken
	phTPOTInclFirst
	phChunkGap
	phTPSUser
	phTPOTAfterChunk
)

func (a *peersAcc) add(r *record.Record) {
	if r.Err == record.ErrInterrupted {
		return
	}
	a.p.Requests++
	if !a.anySent || r.Sent < a.first {
		a.first, a.anySent = r.Sent, true
	}
	a.p.LastEndS = max(a.p.LastEndS, r.End.Seconds())
	if r.Failed() || len(r.Chunks) == 0 {
		// An answer without a token is a failure to every peer (vLLM and
		// AIPerf time nothing of it; sixpin counts it a success without a
		// TTFT).
		a.p.Failed++
		return
	}
	a.p.Completed++
	out := r.OutputTokens()
	a.p.OutputTokens += int64(out)
	if r.HasUsage {
		a.p.InputTokens += int64(r.Usage.PromptTokens)
	} else {
		a.p.InputTokens += int64(r.RequestedPromptTokens)
	}
	e2e := r.End - r.Sent
	a.sumE2E += e2e
	observeValue(a.h[phE2E], float64(e2e.Microseconds()), 1)
	first, last := r.Chunks[0].At, r.Chunks[len(r.Chunks)-1].At
	a.p.LastTokenS = max(a.p.LastTokenS, last.Seconds())
	ttft, latency := first-r.Sent, last-r.Sent
	observeValue(a.h[phTTFT], float64(ttft.Microseconds()), 1)
	observeValue(a.h[phLatency], float64(latency.Microseconds()), 1)
	for i := 1; i < len(r.Chunks); i++ {
		observeValue(a.h[phChunkGap], float64((r.Chunks[i].At - r.Chunks[i-1].At).Microseconds()), 1)
	}
	if out >= 1 {
		observeValue(a.h[phTPOTInclFirst], float64(latency.Microseconds())/float64(out), int64(out))
	}
	var tpotUS float64
	if out >= 2 {
		tpotUS = float64((last - first).Microseconds()) / float64(out-1)
		observeValue(a.h[phTPOT], tpotUS, 1)
		observeValue(a.h[phTPOTByToken], tpotUS, int64(out-1))
		if tpotUS > 0 {
			observeValue(a.h[phTPSUser], 1e6/tpotUS*1e3, 1)
		}
	}
	if after := out - int(r.Chunks[0].Tokens); after > 0 {
		observeValue(a.h[phTPOTAfterChunk], float64((r.End-first).Microseconds())/float64(after), 1)
	}
	a.good(out, ttft, time.Duration(tpotUS*float64(time.Microsecond)), latency)
}

// good counts a successful request in each peer's goodput.
func (a *peersAcc) good(out int, ttft, tpot, latency time.Duration) {
	g := a.p.Good
	if g == nil {
		return
	}
	s := a.slo
	ok := (s.TTFT <= 0 || ttft <= s.TTFT) && (s.E2E <= 0 || latency <= s.E2E)
	if ok && (s.TPOT <= 0 || tpot <= s.TPOT) {
		g.VLLM++ // a TPOT of one token is 0
	}
	if ok && (s.TPOT <= 0 || out >= 2 && tpot <= s.TPOT) {
		g.AIPerf++
	}
}

// result is the run's Peers (nil when no request was issued).
func (a *peersAcc) result() (*Peers, error) {
	if a.p.Requests == 0 {
		return nil, nil
	}
	p := a.p
	p.FirstSentS = a.first.Seconds()
	p.SumE2ES = a.sumE2E.Seconds()
	for i, s := range peerHists {
		if a.h[i].TotalCount() == 0 {
			continue
		}
		e, err := encode(s, a.h[i])
		if err != nil {
			return nil, err
		}
		if p.Histograms == nil {
			p.Histograms = map[string]EncodedHistogram{}
		}
		p.Histograms[s.Name] = e
	}
	return &p, nil
}

// peersSum is the whole's peer figures as shards are added: the shards'
// counts summed, their histograms added, each shard's span shifted onto
// the earliest shard's clock. None when any shard has none.
type peersSum struct {
	out     *Peers
	hs      []*hdrhistogram.Histogram // peerHists
	missing bool                      // a shard had none
	bad     bool                      // a shard lacked the good counts
}

func (s *peersSum) add(p *Peers, off float64, shard string) error {
	if s.missing {
		return nil
	}
	if p == nil {
		s.missing, s.out = true, nil
		return nil
	}
	if s.out == nil {
		s.out = &Peers{FirstSentS: p.FirstSentS + off}
		s.hs = make([]*hdrhistogram.Histogram, len(peerHists))
	}
	out := s.out
	out.FirstSentS = min(out.FirstSentS, p.FirstSentS+off)
	out.LastTokenS = max(out.LastTokenS, p.LastTokenS+off)
	out.LastEndS = max(out.LastEndS, p.LastEndS+off)
	out.Requests += p.Requests
	out.Completed += p.Completed
	out.Failed += p.Failed
	out.InputTokens += p.InputTokens
	out.OutputTokens += p.OutputTokens
	out.SumE2ES += p.SumE2ES
	if p.Good == nil {
		s.bad = true
	} else if !s.bad {
		if out.Good == nil {
			out.Good = &PeerGood{}
		}
		out.Good.VLLM += p.Good.VLLM
		out.Good.AIPerf += p.Good.AIPerf
	}
	for i, m := range peerHists {
		if e, ok := p.Histograms[m.Name]; ok {
			if err := addHist(&s.hs[i], m, e, shard+": peer_figures.histograms."+m.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// result is the whole's peer figures (nil when a shard had none).
func (s *peersSum) result() (*Peers, error) {
	out := s.out
	if out == nil {
		return nil, nil
	}
	if s.bad {
		out.Good = nil
	}
	for i, m := range peerHists {
		if s.hs[i] == nil {
			continue
		}
		e, err := encode(m, s.hs[i])
		if err != nil {
			return nil, err
		}
		if out.Histograms == nil {
			out.Histograms = map[string]EncodedHistogram{}
		}
		out.Histograms[m.Name] = e
	}
	return out, nil
}
