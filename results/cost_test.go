package results

import (
	"math"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// The field report's bill (CONTEXT.md §1): 3.24 minutes of a cloud
// session, 1,534,667 input tokens billed (1,264,128 cached, at the same
// $0.99/M), 34,935 output tokens (28,069 reasoning) at $1.49/M: $1.52 +
// $0.05 = $1.57. Locally, 11 minutes at 500 W and $0.1844/kWh ≈ 1.7 cents.
func TestCostMatchesTheFieldReport(t *testing.T) {
	t.Parallel()
	cloud := record.Pricing{InputPerMTok: 0.99, OutputPerMTok: 1.49}
	b := cloud.Price(1_534_667, 1_264_128, 34_935, 28_069)
	if got := math.Round((b.InputUSD+b.CachedInputUSD)*100) / 100; got != 1.52 {
		t.Errorf("input $%.4f, want $1.52", b.InputUSD+b.CachedInputUSD)
	}
	if got := math.Round((b.OutputUSD+b.ReasoningUSD)*100) / 100; got != 0.05 {
		t.Errorf("output $%.4f, want $0.05", b.OutputUSD+b.ReasoningUSD)
	}
	if got := math.Round(b.Total*100) / 100; got != 1.57 {
		t.Errorf("total $%.4f, want $1.57", b.Total)
	}
	// About $29 an hour at that pace.
	if perHour := b.Total / (3.24 / 60); perHour < 28 || perHour > 30 {
		t.Errorf("$%.2f per hour", perHour)
	}
	local := record.Energy{PowerWatts: 500, USDPerKWh: 0.1844}
	if got := local.EnergyUSD(11 * time.Minute); math.Abs(got-0.0169) > 0.0005 {
		t.Errorf("11 local minutes cost $%.4f, want about $0.017", got)
	}
	if got := local.EnergyUSD(time.Hour); math.Abs(got-0.0922) > 0.0005 {
		t.Errorf("a local hour costs $%.4f, want about 9 cents", got)
	}
}

func TestPricingCachedAndReasoningPrices(t *testing.T) {
	t.Parallel()
	half, two := 0.5, 2.0
	p := record.Pricing{InputPerMTok: 1, CachedInputPerMTok: &half, OutputPerMTok: 4, ReasoningPerMTok: &two}
	b := p.Price(1_000_000, 400_000, 100_000, 50_000)
	// 600K × $1 + 400K × $0.5 + 50K × $4 + 50K × $2 per million.
	if math.Abs(b.Total-(0.6+0.2+0.2+0.1)) > 1e-9 {
		t.Errorf("total %v", b.Total)
	}
	if p.RequestUSD(record.Usage{PromptTokens: 1_000_000, CachedTokens: 400_000, CompletionTokens: 100_000, ReasoningTokens: 50_000}) != b.Total {
		t.Error("RequestUSD disagrees with Price")
	}
}

func TestBuildCost(t *testing.T) {
	t.Parallel()
	m := &Measurement{Tokens: Tokens{Requests: 4, Input: 2_000_000, Output: 1_000_000}}
	c := BuildCost(&record.Pricing{InputPerMTok: 1, OutputPerMTok: 2}, nil, m, 30*time.Minute)
	if c.Basis != "tokens" || c.TotalUSD != 4 || c.PerHourUSD != 8 || c.PerRequestUSD != 1 || c.PerMOutputTokensUSD != 4 {
		t.Errorf("cost %+v", c)
	}
	c = BuildCost(nil, &record.Energy{PowerWatts: 1000, USDPerKWh: 0.2}, m, 30*time.Minute)
	if c.Basis != "energy" || math.Abs(c.TotalUSD-0.1) > 1e-12 {
		t.Errorf("energy cost %+v", c)
	}
	if BuildCost(nil, nil, m, time.Hour) != nil {
		t.Error("no pricing and no power must give no cost")
	}
}

// TestPricingCacheWrites: Anthropic's cache writes cost more than input,
// reads less; both are part of the input count.
func TestPricingCacheWrites(t *testing.T) {
	t.Parallel()
	read, write := 0.30, 3.75
	p := record.Pricing{InputPerMTok: 3, CachedInputPerMTok: &read, CacheWriteInputPerMTok: &write, OutputPerMTok: 15}
	// 1M input: 200K uncached × $3, 700K read × $0.30, 100K written × $3.75; 10K output × $15.
	u := record.Usage{PromptTokens: 1_000_000, CachedTokens: 700_000, CacheWriteTokens: 100_000, CompletionTokens: 10_000}
	want := 0.6 + 0.21 + 0.375 + 0.15
	if got := p.RequestUSD(u); math.Abs(got-want) > 1e-9 {
		t.Errorf("request $%v, want $%v", got, want)
	}
	b := p.PriceCache(1_000_000, 700_000, 100_000, 10_000, 0)
	if math.Abs(b.CacheWriteInputUSD-0.375) > 1e-9 || b.CacheWriteInputTokens != 100_000 || math.Abs(b.Total-want) > 1e-9 {
		t.Errorf("bill %+v", b)
	}
	// Without a write price, writes are billed as input.
	p.CacheWriteInputPerMTok = nil
	if got := p.RequestUSD(u); math.Abs(got-(0.6+0.21+0.3+0.15)) > 1e-9 {
		t.Errorf("request $%v with writes at the input price", got)
	}
}
