package results

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// A session that re-sends a growing, mostly cached history: each request
// 100K prompt tokens (88% cached) every 5 s. Total TPM (cached counted in
// full) passes 450K; uncached TPM stays under 150K.
func TestRateLimitMeters(t *testing.T) {
	t.Parallel()
	c, err := NewCollector(filepath.Join(t.TempDir(), "r.spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 24; i++ {
		r := stream(i, time.Duration(i)*5*time.Second, 100*ms, 10*ms, 10, 1)
		r.Usage = record.Usage{PromptTokens: 100_000, CachedTokens: 88_000, CompletionTokens: 10}
		if i == 20 {
			r.Err, r.HTTPStatus, r.Chunks, r.HasUsage, r.Usage = record.ErrHTTP429, 429, nil, false, record.Usage{}
		}
		c.Add(r)
	}
	m, err := c.Finish(WindowSpec{}, SLO{}, Tolerances{})
	if err != nil {
		t.Fatal(err)
	}
	rep := BuildRateLimits(&RateLimits{TokensPerMinute: 450_000, UncachedTokensPerMinute: 150_000, RequestsPerMinute: 450}, m)
	by := map[string]LimitReport{}
	for _, b := range rep.Buckets {
		by[b.Bucket] = b
	}
	total, uncached := by[record.BucketTokens], by[record.BucketUncachedTokens]
	// 12 requests a minute × 100,010 tokens ≈ 1.2M: 267% of 450K, first
	// over once five requests (500K) fall in one window, at 21 s.
	if total.PeakShare < 2.5 || total.FirstOverS == nil || *total.FirstOverS != 21 {
		t.Errorf("total TPM %+v", total)
	}
	if uncached.PeakShare > 1 || uncached.FirstOverS != nil {
		t.Errorf("uncached TPM %+v", uncached)
	}
	// The 429 named no bucket: the meters attribute it to the fullest.
	if len(rep.Rejections) != 1 || rep.Rejections[0].Bucket != record.BucketTokens || !rep.Rejections[0].Inferred || total.Rejections != 1 {
		t.Errorf("rejections %+v", rep.Rejections)
	}
}

func TestBucketFromMessage(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"Tokens per minute limit exceeded - too many tokens processed.": record.BucketTokens,
		"Uncached tokens per minute limit exceeded":                     record.BucketUncachedTokens,
		"Requests per minute limit exceeded":                            record.BucketRequests,
		"Tokens per day limit exceeded":                                 record.BucketTokensPerDay,
		"Output tokens per minute limit exceeded":                       record.BucketOutputTokens,
		"Too many requests, slow down":                                  "",
	} {
		if got := record.BucketFromMessage(msg); got != want {
			t.Errorf("%q → %q, want %q", msg, got, want)
		}
	}
}

func TestSessionsSummary(t *testing.T) {
	t.Parallel()
	var recs []*record.Record
	// Session 0: three turns over 2 minutes, context 10K → 40K, one 429.
	for k, at := range []time.Duration{0, time.Minute, 2 * time.Minute} {
		r := stream(k, at, 100*ms, 10*ms, 10, 1)
		r.Session, r.Turn = 0, k
		r.Usage.PromptTokens, r.Usage.CachedTokens = 10_000+15_000*k, 8_000*k
		recs = append(recs, r)
	}
	rj := &record.Record{Session: 0, Turn: 2, Scheduled: 90 * time.Second, Sent: 90 * time.Second, End: 90*time.Second + ms, Err: record.ErrHTTP429}
	recs = append(recs[:2], append([]*record.Record{rj}, recs[2:]...)...)
	recs[len(recs)-1].SessionEnd = record.SessionEndContextWindow
	m := finish(t, WindowSpec{}, SLO{}, recs...)
	ss := m.Sessions
	if len(ss.All) != 1 {
		t.Fatalf("sessions %+v", ss)
	}
	s := ss.All[0]
	if s.Turns != 3 || s.Attempts != 4 || s.EndReason != record.SessionEndContextWindow || s.Rejections != 1 ||
		s.First429S == nil || *s.First429S < 90 || *s.First429S > 90.1 || s.FirstContextTokens != 10_000 || s.LastContextTokens != 40_000 {
		t.Errorf("session %+v", s)
	}
	if g := s.GrowthPerMin(); g < 14_900 || g > 15_000 {
		t.Errorf("growth %v tokens/min", g)
	}
	if ss.EndReasons[record.SessionEndContextWindow] != 1 || m.Tokens.CachedInput != 24_000 {
		t.Errorf("end reasons %v, tokens %+v", ss.EndReasons, m.Tokens)
	}
	if m.ByContext[0].Requests != 1 || m.ByContext[1].Requests != 2 {
		t.Errorf("by context %+v", m.ByContext)
	}
}
