package results

import (
	"fmt"
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HistSpec describes one HDR histogram sixpin records: the distribution's
// name, and the geometry its integers are stored in. The histogram stores
// integer values in Unit; reports divide by Scale to get the unit in the
// name.
type HistSpec struct {
	// Name is the JSON key, with its reporting unit (ttft_ms, decode_tok_s).
	Name string
	// Unit is what the histogram's integers count ("us", "mtok/s", "tokens").
	Unit string
	// Scale converts a recorded value to the reported unit: reported =
	// recorded / Scale.
	Scale float64
	lo    int64
	hi    int64
}

// The histogram geometries: 3 significant figures; latencies in µs from 1 µs
// to 24 h; rates in milli-tokens/s up to 10M tok/s; token counts to 100M.
const (
	sigFigs      = 3
	maxLatencyUS = int64(24 * 3600 * 1e6)
	maxRateMilli = int64(1e10)
	maxTokens    = int64(1e8)
)

// The histograms recorded per window (DESIGN §2).
var (
	HistTTFT       = HistSpec{"ttft_ms", "us", 1e3, 1, maxLatencyUS}
	HistTTFTAnswer = HistSpec{"ttft_answer_ms", "us", 1e3, 1, maxLatencyUS}
	HistITL        = HistSpec{"itl_ms", "us", 1e3, 1, maxLatencyUS}
	HistTPOT       = HistSpec{"tpot_ms", "us", 1e3, 1, maxLatencyUS}
	HistE2E        = HistSpec{"e2e_ms", "us", 1e3, 1, maxLatencyUS}
	HistDecode     = HistSpec{"decode_tok_s", "mtok/s", 1e3, 1, maxRateMilli}
	HistEffective  = HistSpec{"effective_tok_s", "mtok/s", 1e3, 1, maxRateMilli}
	HistLag        = HistSpec{"schedule_lag_ms", "us", 1e3, 1, maxLatencyUS}
	HistPrompt     = HistSpec{"prompt_tokens", "tokens", 1, 1, maxTokens}
	HistOutput     = HistSpec{"output_tokens", "tokens", 1, 1, maxTokens}
	// The server's own split of TTFT, where it times its requests: its
	// queue (when it says), its prefill, and the rest of the client's TTFT
	// (network, tokenisation, the client).
	HistServerQueue   = HistSpec{"server_queue_ms", "us", 1e3, 1, maxLatencyUS}
	HistServerPrefill = HistSpec{"server_prefill_ms", "us", 1e3, 1, maxLatencyUS}
	HistTTFTRest      = HistSpec{"ttft_rest_ms", "us", 1e3, 1, maxLatencyUS}
	HistClientLag     = HistSpec{"client_added_latency_ms", "us", 1e3, 1, maxLatencyUS}
	// histDrift is |drift| of a token count, recorded in 0.001% units.
	histDrift = HistSpec{"abs_drift_pct", "0.001%", 1e3, 1, 1e8}
)

// windowHists are recorded for every window, in this order.
var windowHists = []HistSpec{HistTTFT, HistTTFTAnswer, HistITL, HistTPOT, HistE2E,
	HistDecode, HistEffective, HistLag, HistPrompt, HistOutput,
	HistServerQueue, HistServerPrefill, HistTTFTRest}

func (m HistSpec) new() *hdrhistogram.Histogram { return hdrhistogram.New(m.lo, m.hi, sigFigs) }

// Sample is a distribution built one value at a time, in a HistSpec's
// reporting unit (ms, tok/s), held as its HDR histogram: what a reader of
// records that keeps its own values (verdict.Judge) summarises the same
// way a window is. Not safe for concurrent use.
type Sample struct {
	spec HistSpec
	h    *hdrhistogram.Histogram
}

// NewSample returns an empty sample of spec's distribution.
func NewSample(spec HistSpec) *Sample { return &Sample{spec: spec, h: spec.new()} }

// Add counts v (in the reporting unit) n times.
func (s *Sample) Add(v float64, n int64) { observeValue(s.h, v*s.spec.Scale, n) }

// Dist summarises the sample (nil when empty).
func (s *Sample) Dist() *Dist { return Summarize(s.spec, s.h) }

// observeValue adds v (in the histogram's unit) n times, clamped into [0, highest]
// so an outlier is counted rather than dropped.
func observeValue(h *hdrhistogram.Histogram, v float64, n int64) {
	iv := max(int64(math.Round(v)), 0)
	if iv > h.HighestTrackableValue() {
		iv = h.HighestTrackableValue()
	}
	_ = h.RecordValues(iv, n) // cannot fail: iv is in range
}

// Dist summarises a distribution in its reporting unit.
type Dist struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P10    float64 `json:"p10"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p99_9"`
	Max    float64 `json:"max"`
}

// Summarize reads h's percentiles in m's reporting unit. It returns nil for
// an empty histogram, so that "no data" is never printed as zero.
func Summarize(m HistSpec, h *hdrhistogram.Histogram) *Dist {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	q := h.ValueAtPercentilesSlice([]float64{10, 50, 90, 95, 99, 99.9})
	s := m.Scale
	return &Dist{
		Count:  h.TotalCount(),
		Min:    float64(h.Min()) / s,
		Mean:   h.Mean() / s,
		Stddev: h.StdDev() / s,
		P10:    float64(q[0]) / s,
		P50:    float64(q[1]) / s,
		P90:    float64(q[2]) / s,
		P95:    float64(q[3]) / s,
		P99:    float64(q[4]) / s,
		P999:   float64(q[5]) / s,
		Max:    float64(h.Max()) / s,
	}
}

// EncodedHistogram is a histogram stored losslessly in a results file: the
// standard HdrHistogram V2 compressed encoding (base64), so files from
// several shards or runs merge exactly and other HDR tools can read them.
type EncodedHistogram struct {
	Unit  string  `json:"unit"`
	Scale float64 `json:"scale"`
	HDR   string  `json:"hdr"`
}

func encode(m HistSpec, h *hdrhistogram.Histogram) (EncodedHistogram, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return EncodedHistogram{}, fmt.Errorf("encode %s histogram: %w", m.Name, err)
	}
	return EncodedHistogram{Unit: m.Unit, Scale: m.Scale, HDR: string(b)}, nil
}

// Decode returns the histogram e holds.
func (e EncodedHistogram) Decode() (*hdrhistogram.Histogram, error) {
	return hdrhistogram.Decode([]byte(e.HDR))
}

// encodeAll encodes the non-empty histograms by name (nil when all
// are empty); an encoding error drops the histogram, never the figures.
func encodeAll(hs map[HistSpec]*hdrhistogram.Histogram) map[string]EncodedHistogram {
	var out map[string]EncodedHistogram
	for m, h := range hs {
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		if e, err := encode(m, h); err == nil {
			if out == nil {
				out = map[string]EncodedHistogram{}
			}
			out[m.Name] = e
		}
	}
	return out
}
