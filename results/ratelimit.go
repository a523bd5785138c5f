package results

import (
	"github.com/sixpin/sixpin/record"
)

// RateLimits are a vendor's limits (0: none). Total tokens per minute
// counts cached prompt tokens in full, as vendors do: cheap on the bill,
// not on the limit.
type RateLimits struct {
	RequestsPerMinute       int `yaml:"requests_per_minute" json:"requests_per_minute,omitempty"`
	TokensPerMinute         int `yaml:"tokens_per_minute" json:"tokens_per_minute,omitempty"`
	UncachedTokensPerMinute int `yaml:"uncached_tokens_per_minute" json:"uncached_tokens_per_minute,omitempty"`
	OutputTokensPerMinute   int `yaml:"output_tokens_per_minute" json:"output_tokens_per_minute,omitempty"`
	TokensPerDay            int `yaml:"tokens_per_day" json:"tokens_per_day,omitempty"`
}

// Set reports whether any limit is set.
func (l *RateLimits) Set() bool { return l != nil && *l != RateLimits{} }

// Rejection is one 429, when it came and the bucket it belongs to.
type Rejection struct {
	AtS float64 `json:"at_s"`
	// Bucket is what the server named; Inferred is true when it named
	// none and the client's meters chose the fullest bucket instead.
	Bucket   string `json:"bucket"`
	Inferred bool   `json:"inferred,omitempty"`
}

// LimitReport is one bucket, metered client-side over a sliding window
// (60 s; a day for tokens per day) of the run's per-second series.
type LimitReport struct {
	Bucket string `json:"bucket"`
	Limit  int    `json:"limit"`
	// Peak is the highest use in any window, PeakShare that over Limit,
	// PeakAtS the end of that window (run time, s).
	Peak      float64 `json:"peak"`
	PeakShare float64 `json:"peak_share"`
	PeakAtS   float64 `json:"peak_at_s"`
	// FirstOverS is when the window's use first passed the limit (nil:
	// never).
	FirstOverS *float64 `json:"first_over_s,omitempty"`
	// Rejections counts the 429s that belong to this bucket.
	Rejections int `json:"rejections"`
}

// RateLimitReport is the results file's "rate_limits".
type RateLimitReport struct {
	Limits     RateLimits    `json:"limits"`
	Buckets    []LimitReport `json:"buckets"`
	Rejections []Rejection   `json:"rejections,omitempty"`
	// Unattributed counts 429s no bucket could be found for.
	Unattributed int `json:"unattributed,omitempty"`
}

// bucketSeries returns, per second, what each bucket counts: requests and
// input tokens at the send, output tokens as they arrive.
func bucketSeries(s Series, bucket string) []float64 {
	n := len(s.OutputTokens)
	out := make([]float64, n)
	for i := range n {
		switch bucket {
		case record.BucketRequests:
			out[i] = float64(at(s.Started, i))
		case record.BucketTokens, record.BucketTokensPerDay:
			out[i] = float64(at(s.InputTokens, i) + at(s.OutputTokens, i))
		case record.BucketUncachedTokens:
			out[i] = float64(at(s.InputTokens, i) - at(s.CachedInputTokens, i))
		case record.BucketOutputTokens:
			out[i] = float64(at(s.OutputTokens, i))
		}
	}
	return out
}

func at(s []int64, i int) int64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// windowSums returns, for each second t, the sum of x over (t−w, t].
func windowSums(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	var sum float64
	for t := range x {
		sum += x[t]
		if t >= w {
			sum -= x[t-w]
		}
		out[t] = sum
	}
	return out
}

// BuildRateLimits meters the run against limits (nil when none are set)
// and attributes every 429 to a bucket: the one the server named, else the
// fullest bucket by the client's meters at that moment.
func BuildRateLimits(limits *RateLimits, m *Measurement) *RateLimitReport {
	if !limits.Set() {
		if len(m.Rejections) == 0 {
			return nil
		}
		limits = &RateLimits{}
	}
	rep := &RateLimitReport{Limits: *limits}
	type meter struct {
		r    *LimitReport
		sums []float64
	}
	var meters []meter
	for _, b := range []struct {
		name   string
		limit  int
		window int
	}{
		{record.BucketRequests, limits.RequestsPerMinute, 60},
		{record.BucketTokens, limits.TokensPerMinute, 60},
		{record.BucketUncachedTokens, limits.UncachedTokensPerMinute, 60},
		{record.BucketOutputTokens, limits.OutputTokensPerMinute, 60},
		{record.BucketTokensPerDay, limits.TokensPerDay, 86400},
	} {
		if b.limit <= 0 {
			continue
		}
		lr := &LimitReport{Bucket: b.name, Limit: b.limit}
		sums := windowSums(bucketSeries(m.Series, b.name), b.window)
		for t, v := range sums {
			if v > lr.Peak {
				lr.Peak, lr.PeakAtS = v, float64(t+1)
			}
			if v > float64(b.limit) && lr.FirstOverS == nil {
				s := float64(t + 1)
				lr.FirstOverS = &s
			}
		}
		lr.PeakShare = lr.Peak / float64(b.limit)
		meters = append(meters, meter{lr, sums})
	}
	for _, rj := range m.Rejections {
		if rj.Bucket == "" {
			best := -1.0
			t := int(rj.AtS)
			for _, mt := range meters {
				if t < len(mt.sums) {
					if share := mt.sums[t] / float64(mt.r.Limit); share > best {
						best, rj.Bucket, rj.Inferred = share, mt.r.Bucket, true
					}
				}
			}
		}
		found := false
		for _, mt := range meters {
			if mt.r.Bucket == rj.Bucket {
				mt.r.Rejections++
				found = true
			}
		}
		if !found {
			rep.Unattributed++
		}
		rep.Rejections = append(rep.Rejections, rj)
	}
	for _, mt := range meters {
		rep.Buckets = append(rep.Buckets, *mt.r)
	}
	return rep
}
