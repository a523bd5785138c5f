package scenario

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// SequenceEncoding names the bytes Sequence.SHA256 digests, so that
// another tool can compute the same digest over its own planned requests
// and compare.
//
// sixpin-seq-v1: for each request of the plan, in plan order (request 0
// first), 24 bytes — its input (prompt) length in tokens, its output
// length in tokens (max_tokens), and its arrival offset from the start of
// load in whole microseconds (truncated; 0 for every request of a closed
// loop, whose requests are sent as soon as a stream is free), each an
// unsigned 64-bit big-endian integer. The digest is SHA-256 over the
// concatenation, in lowercase hex; no requests digest the empty string.
const SequenceEncoding = "sixpin-seq-v1"

// Sequence is the parity evidence of a plan: what its first Requests
// requests ask for in total, and a digest of their lengths and arrivals in
// order (SequenceEncoding). Two tools that plan the same workload plan the
// same totals and the same digest; the totals are what a server counting
// the requests it served should count (its prompt and generation token
// counters), when every request succeeds and is served its full length.
type Sequence struct {
	Requests int
	// InputTokens and OutputTokens sum the requests' prompt and output
	// lengths in tokens.
	InputTokens, OutputTokens int64
	// CachedInputTokens is the input a prefix cache can serve: for every
	// request whose shared prefix an earlier request of the plan already
	// sent, the prefix's tokens (at most the request's prompt).
	CachedInputTokens int64
	// SHA256 is the digest of the requests' (input, output, arrival)
	// sequence (SequenceEncoding), lowercase hex.
	SHA256 string
}

// Sequence returns the parity evidence of the whole plan's requests 0 to
// n-1 (of the whole plan even when p is a shard of it: a shard's requests
// are the plan's I, I+N, …; n ≤ 0: none). ok is false when the plan is
// not independent requests (agentic sessions, whose later prompts grow
// with the answers they get, and trace replays): it has no such list.
func (p *Plan) Sequence(n int) (seq Sequence, ok bool) {
	if p.s.Workload.Agentic() || p.s.Workload.Replay() {
		return Sequence{}, false
	}
	h := sha256.New()
	var a *Arrivals
	if p.s.Pins.Concurrency.Mode == ModeOpen {
		a = p.Arrivals()
		a.sh = Shard{} // the whole plan's arrivals, in order
	}
	seen := map[int]bool{}
	prefix := p.s.Pins.Prompt.SharedPrefixTokens
	var b [24]byte
	for i := range max(n, 0) {
		r := p.Request(i)
		var at uint64
		if a != nil {
			at = uint64(a.Next().Microseconds())
		}
		seq.Requests++
		seq.InputTokens += int64(r.PromptTokens)
		seq.OutputTokens += int64(r.OutputTokens)
		if r.PrefixGroup >= 0 && prefix > 0 {
			if seen[r.PrefixGroup] {
				seq.CachedInputTokens += int64(min(prefix, r.PromptTokens))
			}
			seen[r.PrefixGroup] = true
		}
		binary.BigEndian.PutUint64(b[0:], uint64(r.PromptTokens))
		binary.BigEndian.PutUint64(b[8:], uint64(r.OutputTokens))
		binary.BigEndian.PutUint64(b[16:], at)
		h.Write(b[:])
	}
	seq.SHA256 = hex.EncodeToString(h.Sum(nil))
	return seq, true
}
