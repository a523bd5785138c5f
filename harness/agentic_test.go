package harness

import (
	"testing"

	"github.com/sixpin/sixpin/record"
)

// The field report's collapse (CONTEXT.md §1): one agentic session against
// the calibrated cloud profile. Its re-sent history is mostly cached —
// cheap on the bill — yet counts in full against the total tokens-per-
// minute limit, which refuses it about a minute in while the uncached
// bucket still has room. Simulated time runs only 2× faster: compressed time
// inflates the client's and the simulator's own CPU time by the same factor,
// and at 10× or 5× a loaded machine (go test -race beside other packages)
// pushed the first 429 to 97–117 s. Every figure is in simulated time.
func TestCloudSessionHitsTotalTPM(t *testing.T) {
	t.Parallel()
	o, err := run(t, Config{ScenarioPath: "../scenarios/agentic-cloud-session.yaml", Profile: "sim-cerebras-27b", TimeScale: 0.5})
	if o == nil {
		t.Fatal(err)
	}
	r := o.Run
	ss := r.Sessions
	if ss == nil || len(ss.All) != 1 {
		t.Fatalf("sessions %+v (err %v)", ss, err)
	}
	s := ss.All[0]
	if s.EndReason != record.SessionEndRateLimited || s.First429S == nil {
		t.Fatalf("session ended %q, first 429 %v", s.EndReason, s.First429S)
	}
	if at := *s.First429S; at < 35 || at > 90 {
		t.Errorf("first 429 after %.0f s, want roughly a minute", at)
	}
	if s.LastContextTokens < 60_000 || s.Tokens.CacheHitRatio < 0.75 {
		t.Errorf("context grew to %d, cache hit %.2f", s.LastContextTokens, s.Tokens.CacheHitRatio)
	}
	rl := r.RateLimits
	if rl == nil || len(rl.Rejections) != 1 || rl.Rejections[0].Bucket != record.BucketTokens || rl.Rejections[0].Inferred {
		t.Fatalf("rejections %+v", rl)
	}
	for _, b := range rl.Buckets {
		switch b.Bucket {
		case record.BucketUncachedTokens:
			if b.PeakShare >= 1 {
				t.Errorf("uncached TPM peaked at %.0f%%: it must stay under its limit", b.PeakShare*100)
			}
		case record.BucketTokens:
			if b.Rejections != 1 || b.PeakShare < 0.6 {
				t.Errorf("total TPM %+v", b)
			}
		}
	}
	// About $29 an hour at this pace (the report's bill: $1.57 for 3.24 min).
	if c := r.Cost; c == nil || c.Basis != "tokens" || c.PerHourUSD < 15 || c.PerHourUSD > 45 {
		t.Errorf("cost %+v", c)
	}
}
