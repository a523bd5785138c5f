package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Card is the pin card: one compact block that answers, for every figure
// of a run, the six questions to ask of any tok/s number — model and size;
// prompt and output lengths (requested → observed); concurrency (one
// stream or many, how many); KV budget (max context, memory utilisation,
// max sequences); batching; and the window the figures come from. Every
// renderer (terminal, Markdown, HTML) prints the same Card.
type Card struct {
	// Window says which window the headline figures come from.
	Window string
	Rows   []CardRow
	// Unverified names the pins not verified (contradicted or
	// unverifiable), for a warning line.
	Unverified []string
	// Sensitive, when set, says the run is content-sensitive and why.
	Sensitive string
}

// CardRow is one pin on the card.
type CardRow struct {
	N        int
	Pin      string
	Declared string
	Observed string
	Verdict  results.Verdict
	Reason   string
}

// Mark is the verdict's one-character sign.
func (r CardRow) Mark() string {
	switch r.Verdict {
	case results.Verified:
		return "✓"
	case results.Contradicted:
		return "✗"
	case verdictSensitive:
		return "!"
	}
	return "?"
}

// PinCard builds the card of run.
func PinCard(run *results.Run) Card {
	p := run.Pins
	c := Card{Window: run.Headline}
	if w := run.Windows[run.Headline]; w != nil {
		c.Window = fmt.Sprintf("%s window, %s–%s s of load", run.Headline, num(w.StartS), num(w.EndS))
	}
	if z := run.Compressed; z != nil {
		c.Window += "; " + compressedWords(z)
	}
	add := func(n int, pin, declared, observed string, v results.Verdict, reason string) {
		if v == results.Contradicted && slices.Contains(run.AllowPinMismatch, pin) {
			reason += " — accepted knowingly (--allow-pin-mismatch " + pin + "): the run is not invalid for it"
		}
		c.Rows = append(c.Rows, CardRow{n, pin, declared, observed, v, reason})
		if v != results.Verified {
			c.Unverified = append(c.Unverified, pin)
		}
	}
	observed := []struct {
		text, reason string
		v            results.Verdict
	}{
		{modelObserved(p.Model.Observed), p.Model.Reason, p.Model.Verified},
		{tokensObserved(p.Prompt.Observed), p.Prompt.Reason, p.Prompt.Verified},
		{tokensObserved(p.Output.Observed), p.Output.Reason, p.Output.Verified},
		{concurrencyObserved(p.Concurrency.Observed), p.Concurrency.Reason, p.Concurrency.Verified},
		{withServer(withServer(kvObserved(p.KVCache.Observed), kvFitShort(run)), serverKV(run)), p.KVCache.Reason, p.KVCache.Verified},
		{withServer(mixObserved(p.Mix.Observed), serverMix(run)), p.Mix.Reason, p.Mix.Verified},
	}
	if d := p.Output.Declared; d.Exact && d.Control == noControl {
		observed[2].reason = outputWithoutControl(p.Output.Verified, p.Output.Reason, run.Target.Profile, p.Output.Observed.Drift)
	}
	if proto := run.Target.Protocol; proto != "" {
		observed[0].text += "; spoken to in protocol " + proto
	}
	observed[0].text += "; " + specObserved(run)
	for i, d := range DeclaredPins(p.Declared()) {
		o := observed[i]
		add(d.N, d.Pin, d.Text, o.text, o.v, o.reason)
	}
	// The seventh line: unchecked content is not a pin left unverified
	// (no figure claims to hold across content), so it is not named
	// among them; a content-sensitive run says so on a line of its own.
	declared, obs, v, reason := contentPin(run)
	c.Rows = append(c.Rows, CardRow{len(c.Rows) + 1, "content", declared, obs, v, reason})
	if v == verdictSensitive {
		c.Sensitive = reason
	}
	return c
}

// WritePinCard renders c as text.
func WritePinCard(w io.Writer, c Card) error {
	p := &numfmt.Printer{W: w}
	p.F("PIN CARD — headline figures from the %s; ✓ verified, ✗ contradicted, ? unverifiable, ! content-sensitive\n", c.Window)
	for _, r := range c.Rows {
		p.F("  %s %d %-12s declared  %s\n", r.Mark(), r.N, r.Pin, r.Declared)
		p.F("    %-14s observed  %s\n", "", r.Observed)
		p.F("    %-14s %s\n", "", r.Reason)
	}
	if len(c.Unverified) > 0 {
		p.F("  NOT VERIFIED: %s — figures are only as strong as these pins\n", strings.Join(c.Unverified, ", "))
	}
	if c.Sensitive != "" {
		p.F("  %s\n", c.Sensitive)
	}
	return p.Err
}

// outputWithoutControl words the exact output pin's verification when
// the profile has no don't-stop-early control: lengths that came out exact
// did so with max_tokens alone, and a shortfall could not be prevented.
func outputWithoutControl(v results.Verdict, reason, profile string, dr *results.Drift) string {
	who := "the profile has"
	if profile != "" {
		who = "profile " + profile + " has"
	}
	if v == results.Verified && dr != nil && dr.Requests > 0 && dr.Exact == dr.Requests {
		return fmt.Sprintf("exact in %s of %s without any don't-stop-early control: max_tokens alone held them (%s none; verified, not enforced)",
			numfmt.Int(dr.Exact), numfmt.Count(dr.Requests, "request", ""), who)
	}
	return reason + "; nothing could enforce it: " + who + " no don't-stop-early control"
}

func modelObserved(o results.ModelObserved) string {
	var parts []string
	if o.Reported != "" {
		parts = append(parts, fmt.Sprintf("answered as %q", o.Reported))
	}
	if o.ParamsB > 0 {
		parts = append(parts, numfmt.Short(o.ParamsB)+"B params")
	}
	if o.Quantization != "" {
		parts = append(parts, o.Quantization)
	} else if o.Dtype != "" {
		parts = append(parts, o.Dtype)
	}
	if o.Engine != "" {
		parts = append(parts, "engine "+o.Engine)
	}
	if len(parts) == 0 {
		return "nothing reported"
	}
	return strings.Join(parts, ", ")
}

func tokensObserved(o results.TokensObserved) string {
	s := tokensServed(o)
	if v := o.Served; v != nil && v.Failed > 0 {
		s += fmt.Sprintf("; %s of %s failed: requested mean %s over all issued, %s over those served",
			numfmt.Int(v.Failed), numfmt.Count(v.Issued, "request", ""), num(v.MeanAll), num(v.MeanOK))
	}
	if oc := o.OverContext; oc != nil && oc.Exceeding > 0 {
		s += "; " + oc.String()
	}
	return s
}

func tokensServed(o results.TokensObserved) string {
	if o.PerRequest == nil {
		return "no successful request reported usage"
	}
	s := fmt.Sprintf("p50 %s, mean %s, range [%s, %s] tokens (%s, whole run)", group(o.PerRequest.P50),
		group(o.PerRequest.Mean), group(o.PerRequest.Min), group(o.PerRequest.Max), o.Source)
	if d := o.Drift; d != nil {
		s += fmt.Sprintf("; drift vs requested: mean %+.2f%%, worst %.2f%%, %d of %d exact", d.MeanPct, d.MaxAbsPct, d.Exact, d.Requests)
	}
	return s
}

func concurrencyObserved(o results.ConcurrencyObserved) string {
	little := "unknown (no request succeeded)"
	if o.LittlesLaw > 0 {
		little = num(o.LittlesLaw)
	}
	s := fmt.Sprintf("mean %s in flight, max %d (%s window); %s req/s started; Little's law %s",
		num(o.MeanInFlight), o.MaxInFlight, o.Window, num(o.StartRateRPS), little)
	if o.MeanServedInFlight > 0 && o.MeanServedInFlight < 0.95*o.MeanInFlight {
		s += fmt.Sprintf("; %s in flight on requests that succeeded", num(o.MeanServedInFlight))
	}
	if o.MaxSessions > 0 {
		s = fmt.Sprintf("mean %s sessions under way, max %d; ", num(o.MeanSessions), o.MaxSessions) + s
	}
	if sc := o.Schedule; sc != nil {
		s += fmt.Sprintf("; sent %s req/s of %s scheduled", num(sc.AchievedRateRPS), num(sc.ScheduledRateRPS))
	}
	if v := o.Server; v != nil {
		s += fmt.Sprintf("; server: %s running, %s queued on average", num(v.Served), num(v.Queued))
		if v.QueuedTTFTShare != nil {
			s += fmt.Sprintf(", %s of TTFT in its queue", pct(*v.QueuedTTFTShare))
		}
	}
	return s
}

func kvObserved(o results.KVCacheObserved) string {
	var parts []string
	if o.MaxModelLen > 0 {
		parts = append(parts, "max_model_len "+group(float64(o.MaxModelLen)))
	}
	if o.BudgetTokens > 0 {
		b := "KV budget " + group(float64(o.BudgetTokens)) + " tokens"
		if o.BlockSize > 0 {
			b += fmt.Sprintf(" (blocks of %d)", o.BlockSize)
		}
		parts = append(parts, b)
	}
	if o.GPUMemoryUtilization > 0 {
		parts = append(parts, "gpu_memory_utilization "+numfmt.Plain(o.GPUMemoryUtilization))
	}
	if o.MaxNumSeqs > 0 {
		parts = append(parts, fmt.Sprintf("max_num_seqs %d", o.MaxNumSeqs))
	}
	if o.PrefixCaching != nil {
		parts = append(parts, "prefix caching "+scenario.SwitchWords(o.PrefixCaching))
	}
	if o.Batching != "" {
		parts = append(parts, o.Batching+" batching")
	}
	if len(parts) == 0 {
		return "nothing exposed"
	}
	return strings.Join(parts, ", ")
}

func mixObserved(o results.MixObserved) string {
	ratio := RatioLabel(o.InputOutputRatio)
	if o.InputOutputRatio > 0 {
		ratio += " (requested " + num(o.RequestedInputOutputRatio) + ")"
	}
	return fmt.Sprintf("input:output %s, prefill %s of wall time (Σ TTFT / Σ E2E), whole run", ratio, PrefillLabel(o.PrefillShare))
}

// compressedHead says a run was in compressed time at scale, and what
// is not scaled.
func compressedHead(scale float64) string {
	return fmt.Sprintf("COMPRESSED TIME (%s× faster): time outside the simulator's model is not scaled", strconv.FormatFloat(1/scale, 'g', 3, 64))
}

// compressedWords is a compressed run's caveat, short enough for a card:
// what is not scaled, and how far it moves TTFT.
func compressedWords(z *results.Compressed) string {
	s := compressedHead(z.Scale)
	if z.TTFTOverPct > 0 {
		s += fmt.Sprintf(" (TTFT p50 ~%s%% high)", strconv.FormatFloat(z.TTFTOverPct, 'f', 0, 64))
	}
	return s + ", so latencies and the rates made of them are distorted: see the note"
}
