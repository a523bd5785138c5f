package results

import (
	"time"

	"github.com/sixpin/sixpin/record"
)

// Cost is a run's cost, in the results file under "cost".
type Cost struct {
	// Basis is "tokens" (a price list) or "energy" (power over wall time).
	Basis   string          `json:"basis"`
	Pricing *record.Pricing `json:"pricing,omitempty"`
	Energy  *record.Energy  `json:"energy,omitempty"`
	// Bill itemises the token bill (basis tokens).
	Bill *record.Bill `json:"bill,omitempty"`
	// WallS is the run's wall time in seconds (energy basis).
	WallS    float64 `json:"wall_s"`
	TotalUSD float64 `json:"total_usd"`
	// PerRequestUSD is the mean over requests, PerSessionUSD over
	// sessions (agentic), PerHourUSD at the observed pace, and
	// PerMOutputTokensUSD per million output tokens.
	PerRequestUSD       float64 `json:"per_request_usd"`
	PerSessionUSD       float64 `json:"per_session_usd,omitempty"`
	PerHourUSD          float64 `json:"per_hour_usd"`
	PerMOutputTokensUSD float64 `json:"per_m_output_tokens_usd"`
}

// BuildCost prices a run: by tokens when pricing is set, else by energy
// when e is set over wall; nil when neither is known.
func BuildCost(p *record.Pricing, e *record.Energy, m *Measurement, wall time.Duration) *Cost {
	t := m.Tokens
	c := &Cost{WallS: wall.Seconds()}
	switch {
	case p.Set():
		b := p.PriceCache(t.Input, t.CachedInput, t.CacheWriteInput, t.Output, t.Reasoning)
		c.Basis, c.Pricing, c.Bill, c.TotalUSD = "tokens", p, &b, b.Total
	case e != nil && e.PowerWatts > 0:
		c.Basis, c.Energy, c.TotalUSD = "energy", e, e.EnergyUSD(wall)
	default:
		return nil
	}
	if t.Requests > 0 {
		c.PerRequestUSD = c.TotalUSD / float64(t.Requests)
	}
	if n := len(m.Sessions.All); n > 0 {
		c.PerSessionUSD = c.TotalUSD / float64(n)
	}
	if wall > 0 {
		c.PerHourUSD = c.TotalUSD / wall.Hours()
	}
	if t.Output > 0 {
		c.PerMOutputTokensUSD = c.TotalUSD / float64(t.Output) * 1e6
	}
	return c
}
