package scenario

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"
)

// The digest's encoding is a contract with other tools: its value for a
// known sequence is pinned here as computed outside Go (Python's
// hashlib.sha256(b"".join(struct.pack(">QQQ", 512, 128, 0) for _ in
// range(3))).hexdigest()).
func TestSequenceDigestIsTheDocumentedEncoding(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `pins:
  model: {name: m}
  prompt: {tokens: 512}
  output: {tokens: 128, exact: true}
  concurrency: {mode: closed, streams: 8}
requests: 3
`)
	seq, ok := NewPlan(s).Sequence(3)
	if !ok {
		t.Fatal("a plan of requests has a sequence")
	}
	want := Sequence{Requests: 3, InputTokens: 1536, OutputTokens: 384,
		SHA256: "d14eb2a0df06fa26d3c6005456df3d9edabe017d85ccc977a05b9b00fd33cd5e"}
	if seq != want {
		t.Errorf("sequence %+v, want %+v", seq, want)
	}
	if none, _ := NewPlan(s).Sequence(0); none.SHA256 != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("no requests digest %s, want SHA-256 of nothing", none.SHA256)
	}
}

// An open loop's digest covers its arrivals, in whole microseconds, and
// the same seed gives the same digest while another seed does not; a
// shard's plan digests the whole plan.
func TestSequenceCoversArrivalsAndSeed(t *testing.T) {
	t.Parallel()
	s := openScenario(t, ArrivalPoisson)
	p := NewPlan(s)
	reqs := p.Materialize(50)
	h := sha256.New()
	var b [24]byte
	var in, out int64
	for _, r := range reqs {
		binary.BigEndian.PutUint64(b[0:], uint64(r.PromptTokens))
		binary.BigEndian.PutUint64(b[8:], uint64(r.OutputTokens))
		binary.BigEndian.PutUint64(b[16:], uint64(r.Arrival.Microseconds()))
		h.Write(b[:])
		in += int64(r.PromptTokens)
		out += int64(r.OutputTokens)
	}
	seq, _ := p.Sequence(50)
	if seq.SHA256 != hex.EncodeToString(h.Sum(nil)) || seq.InputTokens != in || seq.OutputTokens != out {
		t.Errorf("sequence %+v disagrees with the materialised plan (input %d, output %d)", seq, in, out)
	}
	shard, err := p.Shard(Shard{I: 1, N: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := shard.Sequence(50); got != seq {
		t.Errorf("a shard's sequence %+v, want the whole plan's %+v", got, seq)
	}
	other := *s
	other.Seed++
	if got, _ := NewPlan(&other).Sequence(50); got.SHA256 == seq.SHA256 {
		t.Error("another seed gave the same digest")
	}
}

// Requests that share a prefix an earlier request already sent plan it as
// cacheable; agentic sessions have no list of requests.
func TestSequenceCachedAndAgentic(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `pins:
  model: {name: m}
  prompt: {tokens: 1000, shared_prefix_tokens: 400, prefix_groups: 2}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 2}
requests: 20
`)
	seq, _ := NewPlan(s).Sequence(20)
	groups := map[int]bool{}
	for i := range 20 {
		groups[NewPlan(s).Request(i).PrefixGroup] = true
	}
	if want := int64(400 * (20 - len(groups))); seq.CachedInputTokens != want {
		t.Errorf("cached %d, want %d (20 requests, %d groups first sent once each)", seq.CachedInputTokens, want, len(groups))
	}
	a := mustParse(t, `pins:
  model: {name: m}
  prompt: {tokens: 1000}
  output: {tokens: 10}
  concurrency: {mode: closed, streams: 2}
workload: {kind: agentic, turns: 3, growth_tokens: 100, think_seconds: 0}
duration: 1m
`)
	if _, ok := NewPlan(a).Sequence(5); ok {
		t.Error("agentic sessions have no planned sequence")
	}
}
