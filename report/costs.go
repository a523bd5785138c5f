package report

import (
	"fmt"
	"time"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
)

// costLine is a run's cost in one line.
func costLine(c *results.Cost) string {
	if c == nil {
		return "not priced (the profile has no pricing or power draw)"
	}
	s := fmt.Sprintf("%s in all", numfmt.Money(c.TotalUSD))
	if c.Basis == "energy" {
		s += fmt.Sprintf(" (%s W for %s at %s/kWh)", numfmt.Thousands(c.Energy.PowerWatts), time.Duration(c.WallS*float64(time.Second)).Round(time.Second), numfmt.Money(c.Energy.USDPerKWh))
	} else if b := c.Bill; b != nil {
		writes := ""
		if b.CacheWriteInputTokens > 0 {
			writes = fmt.Sprintf(", cache writes %s", numfmt.Money(b.CacheWriteInputUSD))
		}
		s += fmt.Sprintf(" (input %s of which cached %s%s, output %s of which reasoning %s)",
			numfmt.Money(b.InputUSD+b.CachedInputUSD+b.CacheWriteInputUSD), numfmt.Money(b.CachedInputUSD), writes,
			numfmt.Money(b.OutputUSD+b.ReasoningUSD), numfmt.Money(b.ReasoningUSD))
	}
	s += fmt.Sprintf("; %s per hour at this pace, %s per million output tokens, %s per request",
		numfmt.Money(c.PerHourUSD), numfmt.Money(c.PerMOutputTokensUSD), numfmt.Money(c.PerRequestUSD))
	if c.PerSessionUSD > 0 {
		s += fmt.Sprintf(", %s per session", numfmt.Money(c.PerSessionUSD))
	}
	return s
}

// rateLimitLines are a run's rate-limit meters, a line per bucket.
func rateLimitLines(r *results.RateLimitReport) []string {
	if r == nil {
		return nil
	}
	var lines []string
	for _, b := range r.Buckets {
		l := fmt.Sprintf("%-27s limit %s, peak %s (%s) at %s s", b.Bucket, group(float64(b.Limit)), group(b.Peak), pct(b.PeakShare), num(b.PeakAtS))
		if b.FirstOverS != nil {
			l += fmt.Sprintf(", first over the limit at %s s", num(*b.FirstOverS))
		}
		if b.Rejections > 0 {
			l += fmt.Sprintf("; %d × 429", b.Rejections)
		}
		lines = append(lines, l)
	}
	if r.Unattributed > 0 {
		lines = append(lines, fmt.Sprintf("%d × 429 in no metered bucket", r.Unattributed))
	}
	return lines
}
