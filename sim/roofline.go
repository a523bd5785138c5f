package sim

import (
	"math"
	"time"
)

// This file is DESIGN §7's model in code. FLOPs and bytes are float64; P is
// ParamsB·1e9 parameters, peak is PeakTFLOPS·1e12 FLOP/s, bandwidth is
// MemBandwidthGBs·1e9 B/s.

// KVBytesPerToken is the KV cache size of one token in bytes:
// 2 (K and V) · Layers · KVHeads · HeadDim · KVBytes.
func (r Roofline) KVBytesPerToken() float64 {
	return 2 * float64(r.Layers) * float64(r.KVHeads) * float64(r.HeadDim) * r.KVBytes
}

// PrefillTime is the compute time of prefilling newTokens prompt tokens
// after cachedTokens already in the KV cache:
// [2·P·n + 4·L·H·d·n·(c + n/2)] / (peak · PrefillUtil). The second term is
// attention, which makes it grow faster than linearly with context. It
// includes neither StepOverhead nor RequestOverhead.
func (r Roofline) PrefillTime(newTokens, cachedTokens int) time.Duration {
	return seconds(r.prefillFLOPs(newTokens, cachedTokens) / r.prefillRate())
}

// DecodeStepTime is the time of one decode step that gives each of batch
// sequences one token, their contexts (tokens already in the KV cache)
// summing to sumContext: max(compute, memory) + StepOverhead, where memory
// is [P·b + KVBytesPerToken·sumContext] / (bandwidth · MemUtil) and compute
// is [2·P·batch + 4·L·H·d·sumContext] / (peak · ComputeUtil). A batch of 0
// takes no time.
func (r Roofline) DecodeStepTime(batch int, sumContext int) time.Duration {
	if batch <= 0 {
		return 0
	}
	flops := 2*r.params()*float64(batch) + r.attnFLOPsPerToken()*float64(sumContext)
	bytes := r.weightBytes() + r.KVBytesPerToken()*float64(sumContext)
	return r.stepTime(0, flops, bytes)
}

// SingleStreamDecodeTokS is the decode speed in tokens/s of a lone sequence
// whose context holds context tokens: 1 / DecodeStepTime(1, context). Use it
// to calibrate against an observed single-stream figure.
func (r Roofline) SingleStreamDecodeTokS(context int) float64 {
	d := r.DecodeStepTime(1, context)
	if d <= 0 {
		return math.Inf(1)
	}
	return 1 / d.Seconds()
}

func (r Roofline) params() float64      { return r.ParamsB * 1e9 }
func (r Roofline) weightBytes() float64 { return r.params() * r.BytesPerParam }
func (r Roofline) flops() float64       { return r.PeakTFLOPS * 1e12 * r.ComputeUtil }

// prefillRate is the achieved FLOP/s on prefill: PrefillUtil of peak, or
// ComputeUtil's when PrefillUtil is not set.
func (r Roofline) prefillRate() float64 {
	if r.PrefillUtil > 0 {
		return r.PeakTFLOPS * 1e12 * r.PrefillUtil
	}
	return r.flops()
}
func (r Roofline) bandwidth() float64 { return r.MemBandwidthGBs * 1e9 * r.MemUtil }

// attnFLOPsPerToken is 4·L·H·d: the attention FLOPs of one query token per
// token of context it attends to.
func (r Roofline) attnFLOPsPerToken() float64 {
	return 4 * float64(r.Layers) * float64(r.Heads) * float64(r.HeadDim)
}

func (r Roofline) prefillFLOPs(n, c int) float64 {
	fn := float64(n)
	return 2*r.params()*fn + r.attnFLOPsPerToken()*fn*(float64(c)+fn/2)
}

// stepTime is the roofline of one engine step that does prefillFLOPs and
// decodeFLOPs of compute and moves bytes of memory: max of the compute
// time and the memory time, plus the fixed overhead.
func (r Roofline) stepTime(prefillFLOPs, decodeFLOPs, bytes float64) time.Duration {
	compute := decodeFLOPs / r.flops()
	if prefillFLOPs > 0 {
		compute += prefillFLOPs / r.prefillRate()
	}
	return seconds(max(compute, bytes/r.bandwidth())) + r.StepOverhead
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * 1e9))
}
