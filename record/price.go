package record

import "time"

// Pricing is a vendor's price list in US dollars per million tokens. Zero
// prices are free; a nil CachedInput bills cached reads as input, a nil
// Reasoning bills reasoning tokens as output.
type Pricing struct {
	InputPerMTok       float64  `yaml:"input_per_mtok" json:"input_per_mtok"`
	CachedInputPerMTok *float64 `yaml:"cached_input_per_mtok" json:"cached_input_per_mtok,omitempty"`
	OutputPerMTok      float64  `yaml:"output_per_mtok" json:"output_per_mtok"`
	ReasoningPerMTok   *float64 `yaml:"reasoning_per_mtok" json:"reasoning_per_mtok,omitempty"`
	// CacheWriteInputPerMTok prices prompt tokens written to a prompt
	// cache (Anthropic's cache_creation_input_tokens, 1.25× input for a
	// five-minute cache); nil bills them as input.
	CacheWriteInputPerMTok *float64 `yaml:"cache_write_input_per_mtok" json:"cache_write_input_per_mtok,omitempty"`
}

// Energy prices a local endpoint by its power draw over wall time.
type Energy struct {
	PowerWatts float64 `json:"power_watts"`
	USDPerKWh  float64 `json:"usd_per_kwh"`
}

// Set reports whether p prices anything.
func (p *Pricing) Set() bool {
	return p != nil && (p.InputPerMTok > 0 || p.OutputPerMTok > 0 || p.CachedInputPerMTok != nil || p.ReasoningPerMTok != nil ||
		p.CacheWriteInputPerMTok != nil)
}

// Bill is a token count priced: the parts add up to Total (USD).
type Bill struct {
	InputTokens       int64   `json:"input_tokens"`
	CachedInputTokens int64   `json:"cached_input_tokens"`
	OutputTokens      int64   `json:"output_tokens"`
	ReasoningTokens   int64   `json:"reasoning_tokens"`
	InputUSD          float64 `json:"input_usd"`
	CachedInputUSD    float64 `json:"cached_input_usd"`
	OutputUSD         float64 `json:"output_usd"`
	ReasoningUSD      float64 `json:"reasoning_usd"`
	// CacheWriteInputTokens of InputTokens were written to a prompt
	// cache, at CacheWriteInputUSD (0 where the protocol reports none).
	CacheWriteInputTokens int64   `json:"cache_write_input_tokens,omitempty"`
	CacheWriteInputUSD    float64 `json:"cache_write_input_usd,omitempty"`
	Total                 float64 `json:"total_usd"`
}

// Price bills usage: input tokens (of which cached are billed at the
// cached price) and output tokens (of which reasoning are billed at the
// reasoning price). Counts are totals over any number of requests.
func (p Pricing) Price(input, cached, output, reasoning int64) Bill {
	return p.PriceCache(input, cached, 0, output, reasoning)
}

// PriceCache is Price with written of the input tokens written to a
// prompt cache, billed at the cache-write price (Anthropic's Messages API
// reports them apart).
func (p Pricing) PriceCache(input, cached, written, output, reasoning int64) Bill {
	writePrice := p.InputPerMTok
	if p.CacheWriteInputPerMTok != nil {
		writePrice = *p.CacheWriteInputPerMTok
	}
	cachedPrice := p.InputPerMTok
	if p.CachedInputPerMTok != nil {
		cachedPrice = *p.CachedInputPerMTok
	}
	reasoningPrice := p.OutputPerMTok
	if p.ReasoningPerMTok != nil {
		reasoningPrice = *p.ReasoningPerMTok
	}
	b := Bill{InputTokens: input, CachedInputTokens: cached, OutputTokens: output, ReasoningTokens: reasoning,
		CacheWriteInputTokens: written}
	b.InputUSD = float64(input-cached-written) * p.InputPerMTok / 1e6
	b.CachedInputUSD = float64(cached) * cachedPrice / 1e6
	b.CacheWriteInputUSD = float64(written) * writePrice / 1e6
	b.OutputUSD = float64(output-reasoning) * p.OutputPerMTok / 1e6
	b.ReasoningUSD = float64(reasoning) * reasoningPrice / 1e6
	b.Total = b.InputUSD + b.CachedInputUSD + b.CacheWriteInputUSD + b.OutputUSD + b.ReasoningUSD
	return b
}

// RequestUSD prices one request's usage.
func (p Pricing) RequestUSD(u Usage) float64 {
	return p.PriceCache(int64(u.PromptTokens), int64(u.CachedTokens), int64(u.CacheWriteTokens),
		int64(u.CompletionTokens), int64(u.ReasoningTokens)).Total
}

// EnergyUSD is what running for d costs at e's power and price.
func (e Energy) EnergyUSD(d time.Duration) float64 {
	return e.PowerWatts * d.Hours() / 1000 * e.USDPerKWh
}
