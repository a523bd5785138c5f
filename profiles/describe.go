package profiles

import (
	"fmt"
	"io"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
)

// SimFacts is what a simulator profile's sim: section resolves to (the
// harness decodes it; see harness.SimFacts).
type SimFacts struct {
	Model, Timing string
	MaxModelLen   int
}

// Describe writes a profile for `sixpin validate`: where it came from,
// its kind and endpoint (userinfo and query values redacted), the model,
// the API-key variable, how output lengths are enforced and prompts
// counted, and what it declares beyond (context, pricing, limits, power,
// request extensions).
// A simulator profile is described by sf.
func Describe(w io.Writer, p *Profile, sf SimFacts) error {
	pr := &numfmt.Printer{W: w}
	line := func(label, format string, args ...any) { pr.F("%-12s %s\n", label, fmt.Sprintf(format, args...)) }
	line("profile", "%s (%s)", p.Name, p.Source)
	if p.Simulated() {
		line("kind", "simulator: model %q, timing %s, max_model_len %s", sf.Model, sf.Timing, numfmt.Thousands(float64(sf.MaxModelLen)))
	} else {
		ep := p.BaseURL
		if ep == "" {
			ep = "none (give --endpoint)"
		}
		line("kind", "%s at %s", p.Kind, RedactURL(ep))
		line("api key", "from $%s", p.KeyEnv())
	}
	if p.Model != "" {
		line("model", "%s", p.Model)
	}
	line("output", "%s is set; don't-stop-early control: %s", p.MaxTokensField, p.OutputControl)
	tok := p.Tokenizer
	if tok == "" {
		tok = "none named (runs fall back to o200k_base and verify by usage)"
	}
	line("tokenizer", "%s", tok)
	var extra []string
	if p.ContextWindow > 0 {
		extra = append(extra, "context "+numfmt.Thousands(float64(p.ContextWindow))+" tokens")
	}
	if p.Pricing.Set() {
		extra = append(extra, "pricing")
	}
	if p.RateLimits != nil {
		extra = append(extra, "rate limits")
	}
	if p.PowerWatts > 0 {
		extra = append(extra, fmt.Sprintf("%s W at $%s/kWh", numfmt.Sig(p.PowerWatts), numfmt.Sig(p.USDPerKWh)))
	}
	if len(p.ExtraBody) > 0 {
		extra = append(extra, fmt.Sprintf("%d request extension(s)", len(p.ExtraBody)))
	}
	if len(p.Headers) > 0 {
		extra = append(extra, fmt.Sprintf("%d header(s)", len(p.Headers)))
	}
	if len(extra) > 0 {
		line("declares", "%s", strings.Join(extra, ", "))
	}
	return pr.Err
}
