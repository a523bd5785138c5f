package record

import "time"

// One definition of each per-request figure (DESIGN.md §2), for the
// collector's windows and for live views that fold records as they
// arrive.

// Lag is how late the request was sent: Sent − Scheduled.
func (r *Record) Lag() time.Duration { return r.Sent - r.Scheduled }

// E2E is the scheduled start → the last chunk (or the failure).
func (r *Record) E2E() time.Duration { return r.End - r.Scheduled }

// TTFT is the scheduled start → the first token-bearing chunk; false when
// the request has none.
func (r *Record) TTFT() (time.Duration, bool) {
	if len(r.Chunks) == 0 {
		return 0, false
	}
	return r.Chunks[0].At - r.Scheduled, true
}

// ITLs calls fn for every chunk after the first with the gap before it
// and its tokens (k ≥ 1). The ITL histogram counts it as k gaps of gap/k,
// so coalesced chunks neither inflate nor hide the per-token latency.
// Chunks' token counts must be assigned (Collector.Add does). The gaps
// are the server's only where DecodeMeasured: callers that report them as
// its ITL check that first.
func (r *Record) ITLs(fn func(gap time.Duration, k int)) {
	for i := 1; i < len(r.Chunks); i++ {
		fn(r.Chunks[i].At-r.Chunks[i-1].At, max(int(r.Chunks[i].Tokens), 1))
	}
}

// Decode is observed when its tokens after the first came in at least
// MinDecodeReads arrivals of their own (Record.TokenReads), over at least
// MinDecodeSpan:
// otherwise the gaps between them are the client's parse of one read (a
// server that buffers its answer, or a short answer sent at once), and a
// decode rate or ITL from them would be the client's speed, not the
// server's.
const (
	MinDecodeReads = 2
	MinDecodeSpan  = time.Millisecond
)

// DecodeMeasured reports whether the request's decode was observed: its
// token-bearing chunks after the first read came in at least
// MinDecodeReads further reads, and the first and last chunk are at least
// MinDecodeSpan apart. A record that does not know its reads (from before
// they were counted) is judged by the span alone.
func (r *Record) DecodeMeasured() bool {
	if len(r.Chunks) < 2 || r.TokenReads > 0 && r.TokenReads-1 < MinDecodeReads {
		return false
	}
	return r.Chunks[len(r.Chunks)-1].At-r.Chunks[0].At >= MinDecodeSpan
}

// OutputTokens is the request's generated token count, reasoning
// included: the server's usage, else its chunks' tokens.
func (r *Record) OutputTokens() int {
	if r.HasUsage {
		return r.Usage.CompletionTokens
	}
	n := 0
	for _, ch := range r.Chunks {
		n += int(ch.Tokens)
	}
	return n
}
