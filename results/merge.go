package results

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

// ErrMergeRefused marks shards that cannot be merged: a missing or
// duplicate shard, shards of different scenarios, seeds, targets or run
// ids, or windows that do not line up (exit code 2).
var ErrMergeRefused = errors.New("merge refused")

// DefaultStartTolerance is how much later than the common start (or the
// earliest shard) a shard may start before a merged run is invalid.
const DefaultStartTolerance = time.Second

// windowTolerance is how far apart, once aligned on wall-clock time, the
// shards' warmup, burst and steady windows may be: one series step.
const windowTolerance = time.Second

// MergeOptions tune Merge.
type MergeOptions struct {
	// StartTolerance overrides DefaultStartTolerance when > 0.
	StartTolerance time.Duration
}

// Shard is one shard's results and the name (its file) refusals use.
type Shard struct {
	Name string
	Run  *Run
}

// Merge combines the results of every shard of one distributed run into
// the results of the whole, losslessly: histograms add bucket by bucket
// and every percentile is read from the sum (none is averaged); per-second
// series align on wall-clock time; counts, error classes, tokens, costs
// and rate-limit meters sum; the pins are judged again for the whole
// (concurrency is the whole plan's: the sum of the shards'). The merged
// run lists each shard's identity, start offset and schedule lag under
// "merged", and is invalid if a shard fell behind its schedule or started
// later than the tolerance. A refusal wraps ErrMergeRefused.
func Merge(shards []Shard, opts MergeOptions) (*Run, error) {
	tol := opts.StartTolerance
	if tol <= 0 {
		tol = DefaultStartTolerance
	}
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	slices.SortFunc(shards, func(a, b Shard) int { return a.Run.Shard.Index - b.Run.Shard.Index })
	first := shards[0].Run
	base := first.StartedAt
	for _, s := range shards {
		if s.Run.StartedAt.Before(base) {
			base = s.Run.StartedAt
		}
	}
	mg := &merger{shards: shards, base: base}
	for _, s := range shards {
		mg.offsets = append(mg.offsets, s.Run.StartedAt.Sub(base))
	}
	if err := mg.checkWindows(); err != nil {
		return nil, err
	}
	m, err := mg.measurement()
	if err != nil {
		return nil, err
	}

	d := Declared{Declared: first.Pins.Declared()}
	d.Concurrency = first.Shard.Whole
	d.OverContext = mg.overContext()
	run := &Run{
		Schema:        Schema,
		SixpinVersion: first.SixpinVersion,
		StartedAt:     base.UTC(),
		StartUnixNS:   base.UnixNano(),
		Scenario:      first.Scenario,
		Target:        first.Target,
		Windows:       m.Windows,
		Headline:      WindowSteady,
		Errors:        m.Errors,
		Series:        m.Series,
		Histograms:    m.Histograms,
		Tokens:        m.Tokens,
		ByContext:     m.ByContext,
		Discovery:     first.Discovery,
		Client:        mg.client(),

		ClientAddedLatencyMs: m.ClientAddedLatency,
	}
	run.Parity = &Parity{Planned: mg.planned(), Served: served(m.Tokens)}
	runs := make([]*Run, len(mg.shards))
	for k, s := range mg.shards {
		runs[k] = s.Run
	}
	if run.Peers, err = mergePeers(runs, mg.offsets); err != nil {
		return nil, err
	}
	if d.Concurrency.Mode == scenario.ModeOpen {
		run.Schedule = mg.schedule(m)
	}
	disc := record.Discovery{}
	if first.Discovery != nil {
		disc = *first.Discovery
	}
	// Every shard watched the same server: its metrics are the first
	// shard's scrapes (summing them would count the server N times).
	var serverFrom string
	for _, s := range shards {
		if s.Run.Server != nil {
			run.Server, serverFrom = s.Run.Server, shardName(s)
			break
		}
	}
	run.Pins = BuildPins(d, m, disc, run.Server, run.Headline, run.Schedule)
	for _, s := range shards {
		// A shard that could not measure the chat template's overhead
		// built its prompts without it: the whole's prompt pin can't be
		// verified either.
		if p := s.Run.Pins.Prompt; p.Verified == Unverifiable && run.Pins.Prompt.Verified != Unverifiable {
			run.Pins.Prompt.Verified, run.Pins.Prompt.Reason = Unverifiable, "shard "+shardName(s)+": "+p.Reason
		}
	}
	if len(m.Sessions.All) > 0 {
		run.Sessions = &m.Sessions
	}
	run.AllowPinMismatch = first.AllowPinMismatch
	run.Valid, run.Invalid = Validity(run.Pins, run.AllowPinMismatch)
	if reason := overBudget(first.Scenario.SLO.MaxErrorRate, m.Errors); reason != "" {
		run.Valid = false
		run.Invalid = append(run.Invalid, reason)
	}
	att, late := mg.attestation(tol)
	run.Merged = att
	if len(late) > 0 {
		run.Valid = false
		run.Invalid = append(run.Invalid, late...)
	}
	var partial []string
	for _, s := range shards {
		if s.Run.Incomplete {
			partial = append(partial, fmt.Sprintf("shard %s (%s)", shardName(s), s.Run.IncompleteReason))
		}
	}
	if len(partial) > 0 {
		run.Incomplete = true
		run.IncompleteReason = "incomplete shards: " + strings.Join(partial, "; ")
	}
	wall := time.Duration(m.Windows[WindowAll].DurationS * float64(time.Second))
	if c := first.Cost; c != nil {
		run.Cost = BuildCost(c.Pricing, c.Energy, m, wall)
	}
	var limits *RateLimits
	if r := first.RateLimits; r != nil {
		limits = &r.Limits
	}
	run.RateLimits = BuildRateLimits(limits, m)
	run.Notes = mg.notes()
	if serverFrom != "" {
		run.Notes = append(run.Notes, "server metrics: shard "+serverFrom+"'s scrapes of the server every shard loaded (its windows are that shard's)")
	}
	return run, nil
}

// shardName is "I/N".
func shardName(s Shard) string { return fmt.Sprintf("%d/%d", s.Run.Shard.Index, s.Run.Shard.Count) }

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMergeRefused}, args...)...)
}

// checkShards refuses a set of shards that is not one whole distributed
// run.
func checkShards(shards []Shard) error {
	if len(shards) == 0 {
		return refuse("no shard given")
	}
	for _, s := range shards {
		if s.Run.Shard == nil {
			return refuse("%s: not a shard's results (no \"shard\": run it with --shard I/N --run-id ID)", s.Name)
		}
	}
	a := shards[0]
	ai := a.Run.Shard
	seen := map[int]string{}
	for _, s := range shards {
		si := s.Run.Shard
		differ := func(what string, x, y any) error {
			return refuse("%s and %s are shards of different %s (%v and %v)", a.Name, s.Name, what, x, y)
		}
		switch {
		case si.Count != ai.Count:
			return differ("splits (N)", ai.Count, si.Count)
		case si.ScenarioSHA256 != ai.ScenarioSHA256:
			return differ("scenarios (sha256)", ai.ScenarioSHA256, si.ScenarioSHA256)
		case si.Seed != ai.Seed:
			return differ("seeds", ai.Seed, si.Seed)
		case si.RunID != ai.RunID:
			return differ("run ids", ai.RunID, si.RunID)
		case s.Run.Target.Endpoint != a.Run.Target.Endpoint || s.Run.Target.Model != a.Run.Target.Model || s.Run.Target.Profile != a.Run.Target.Profile:
			return differ("targets", a.Run.Target.Endpoint+" "+a.Run.Target.Model, s.Run.Target.Endpoint+" "+s.Run.Target.Model)
		case s.Run.Scenario.PromptSalt != a.Run.Scenario.PromptSalt:
			return differ("prompt salts", a.Run.Scenario.PromptSalt, s.Run.Scenario.PromptSalt)
		case s.Run.Scenario.Windows != a.Run.Scenario.Windows:
			return refuse("incompatible windows: %s and %s declare different windows", a.Name, s.Name)
		}
		if other, dup := seen[si.Index]; dup {
			return refuse("shard %d/%d given twice (%s and %s)", si.Index, si.Count, other, s.Name)
		}
		seen[si.Index] = s.Name
	}
	var missing []string
	for i := range ai.Count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return refuse("shard %s of %d missing (run id %q): a merged run needs every shard", strings.Join(missing, ", "), ai.Count, ai.RunID)
	}
	return nil
}

// merger holds the shards, sorted by index, and each one's start offset
// from the earliest.
type merger struct {
	shards  []Shard
	base    time.Time
	offsets []time.Duration
}

// checkWindows refuses shards whose warmup, burst or steady windows, each
// counted from its shard's own start, are more than windowTolerance apart
// (steady: auto trimmed them differently, or a shard ended early): their
// histograms would be of different spans. How late each shard started is
// the attestation's business.
func (mg *merger) checkWindows() error {
	tol := windowTolerance.Seconds()
	for _, name := range []string{WindowWarmup, WindowBurst, WindowSteady} {
		a := mg.shards[0]
		wa := a.Run.Windows[name]
		for _, s := range mg.shards {
			w := s.Run.Windows[name]
			if w == nil || wa == nil {
				return refuse("incompatible windows: %s has no %s window", s.Name, name)
			}
			if math.Abs(w.StartS-wa.StartS) > tol || math.Abs(w.EndS-wa.EndS) > tol {
				return refuse("incompatible windows: %s is [%s, %s) s of load in %s and [%s, %s) s in %s, more than %s apart: histograms of different spans cannot be added",
					name, num(wa.StartS), num(wa.EndS), a.Name, num(w.StartS), num(w.EndS), s.Name, windowTolerance)
			}
		}
	}
	return nil
}

// addHist adds e (of histogram m) into *dst, creating it.
func addHist(dst **hdrhistogram.Histogram, m HistSpec, e EncodedHistogram, where string) error {
	// Decoded sparse (only the populated buckets) and added bucket to
	// bucket: a dense decode cleared a full counts array per shard and
	// histogram, most of a hundred shards' merge.
	h, err := decodePacked(e)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if *dst == nil {
		*dst = m.new()
	}
	if dropped := h.MergeInto(*dst); dropped > 0 {
		return fmt.Errorf("%s: %d values out of range", where, dropped)
	}
	return nil
}

// histByName is every histogram a window's or the run's histograms hold.
var histByName = func() map[string]HistSpec {
	m := map[string]HistSpec{HistClientLag.Name: HistClientLag}
	for _, mt := range windowHists {
		m[mt.Name] = mt
	}
	return m
}()

// measurement is the whole run's Measurement, from the shards' results.
func (mg *merger) measurement() (*Measurement, error) {
	m := &Measurement{Windows: map[string]*Window{}, Histograms: map[string]map[string]EncodedHistogram{}}
	for _, name := range WindowNames {
		w, hs, err := mg.window(name)
		if err != nil {
			return nil, err
		}
		m.Windows[name], m.Histograms[name] = w, hs
	}
	if e, ok := m.Histograms[WindowAll][HistClientLag.Name]; ok {
		h, _ := e.Decode()
		m.ClientAddedLatency = Summarize(HistClientLag, h)
	}
	m.Series = mg.series()
	if b := m.Windows[WindowBurst]; b != nil {
		perSecond := make([]float64, len(m.Series.OutputTokens))
		for i, v := range m.Series.OutputTokens {
			perSecond[i] = float64(v)
		}
		b.PeakAggregateOutputTokS, b.PeakStartS = peakRate(perSecond, secDur(b.DurationS))
	}
	m.Errors = mg.errors()
	first := mg.shards[0].Run
	m.ReportedModel = first.Pins.Model.Observed.Reported
	var err error
	if m.PromptDrift, err = mergeDrift(mg.shards, func(r *Run) *Drift { return r.Pins.Prompt.Observed.Drift }); err != nil {
		return nil, err
	}
	if m.OutputDrift, err = mergeDrift(mg.shards, func(r *Run) *Drift { return r.Pins.Output.Observed.Drift }); err != nil {
		return nil, err
	}
	var sessions []*Session
	for k, s := range mg.shards {
		r := s.Run
		m.TokensFromChunks = m.TokensFromChunks || r.Pins.Output.Observed.Source == "chunks"
		m.Tokens.Requests += r.Tokens.Requests
		m.Tokens.Input += r.Tokens.Input
		m.Tokens.CachedInput += r.Tokens.CachedInput
		m.Tokens.CacheWriteInput += r.Tokens.CacheWriteInput
		m.Tokens.Output += r.Tokens.Output
		m.Tokens.Reasoning += r.Tokens.Reasoning
		m.Issued.addServed(r.Pins.Prompt.Observed.Served, r.Pins.Output.Observed.Served)
		off := mg.offsets[k].Seconds()
		if r.Sessions != nil {
			for _, ss := range r.Sessions.All {
				c := *ss
				c.StartS += off
				c.EndS += off
				sessions = append(sessions, &c)
			}
		}
		for _, rj := range rateLimited(r) {
			rj.AtS += off
			if rj.Inferred {
				rj.Bucket, rj.Inferred = "", false // the whole's meters decide again
			}
			m.Rejections = append(m.Rejections, rj)
		}
	}
	m.Tokens.finish()
	slices.SortFunc(sessions, func(x, y *Session) int { return x.Index - y.Index })
	m.Sessions = summarizeSessions(sessions)
	slices.SortFunc(m.Rejections, func(x, y Rejection) int { return cmpFloat(x.AtS, y.AtS) })
	m.ByContext, err = mg.byContext()
	if err != nil {
		return nil, err
	}
	return m, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rateLimited is a run's 429s.
func rateLimited(r *Run) []Rejection {
	if r.RateLimits == nil {
		return nil
	}
	return r.RateLimits.Rejections
}

// addServed adds a shard's issued workload, as its pins record it.
func (s *Issued) addServed(prompt, output *Served) {
	if prompt == nil || output == nil {
		return
	}
	n, ok := float64(prompt.Issued), float64(prompt.Issued-prompt.Failed)
	s.Requests += prompt.Issued
	s.Failed += prompt.Failed
	s.PromptAll += int64(math.Round(prompt.MeanAll * n))
	s.PromptOK += int64(math.Round(prompt.MeanOK * ok))
	s.OutputAll += int64(math.Round(output.MeanAll * n))
	s.OutputOK += int64(math.Round(output.MeanOK * ok))
}

// window merges one window of every shard: its span on the earliest
// shard's clock, its counts summed, its in-flight figures added over the
// span, and every distribution read from the shards' histograms added.
func (mg *merger) window(name string) (*Window, map[string]EncodedHistogram, error) {
	w := &Window{ErrorsByClass: map[string]int{}, StartS: math.Inf(1)}
	hs := map[string]*hdrhistogram.Histogram{}
	var inFlight, served, littles, good, sumE2E, sumTTFT, sumPrompt, sumOutput, sumReqOutput, sumReqPrompt float64
	var goodput bool
	var notes []string
	for k, s := range mg.shards {
		sw := s.Run.Windows[name]
		off := mg.offsets[k].Seconds()
		w.StartS, w.EndS = min(w.StartS, sw.StartS+off), max(w.EndS, sw.EndS+off)
		w.Requests += sw.Requests
		w.Completed += sw.Completed
		w.DecodeUnmeasured += sw.DecodeUnmeasured
		w.Failed += sw.Failed
		w.OutputTokens += sw.OutputTokens
		w.ReasoningTokens += sw.ReasoningTokens
		w.MaxInFlight += sw.MaxInFlight
		for c, n := range sw.ErrorsByClass {
			w.ErrorsByClass[c] += n
		}
		// Time-weighted means over the shard's span, as areas.
		inFlight += sw.MeanInFlight * sw.DurationS
		served += sw.MeanServedInFlight * sw.DurationS
		littles += sw.LittlesLawInFlight * sw.DurationS
		if g := sw.Goodput; g != nil {
			goodput = true
			good += float64(g.Requests)
		}
		if sw.E2EMs != nil && sw.TTFTMs != nil {
			e2e := sw.E2EMs.Mean * float64(sw.E2EMs.Count)
			sumE2E += e2e
			sumTTFT += sw.PrefillShare * e2e
		}
		if p, o := sw.PromptTokens, sw.OutputPerReq; p != nil && o != nil {
			sumPrompt += p.Mean * float64(p.Count)
			out := o.Mean * float64(o.Count)
			sumOutput += out
			sumReqOutput += out
			sumReqPrompt += sw.RequestedInputOutputRatio * out
		}
		if sw.Note != "" && !slices.Contains(notes, sw.Note) {
			notes = append(notes, sw.Note)
		}
		for mname, e := range s.Run.Histograms[name] {
			mt, ok := histByName[mname]
			if !ok {
				return nil, nil, refuse("%s: histograms.%s.%s: unknown metric", s.Name, name, mname)
			}
			h := hs[mname]
			if err := addHist(&h, mt, e, s.Name+": histograms."+name+"."+mname); err != nil {
				return nil, nil, refuse("%v", err)
			}
			hs[mname] = h
		}
	}
	if name == WindowAll || w.StartS > w.EndS {
		w.StartS = max(min(w.StartS, w.EndS), 0)
	}
	w.DurationS = w.EndS - w.StartS
	w.Note = strings.Join(notes, "; ")
	if d := w.DurationS; d > 0 {
		w.AggregateOutputTokS = float64(w.OutputTokens) / d
		w.MeanInFlight, w.MeanServedInFlight, w.LittlesLawInFlight = inFlight/d, served/d, littles/d
	}
	if w.MeanInFlight > 0 {
		w.AggregatePerStreamTokS = w.AggregateOutputTokS / w.MeanInFlight
	}
	if goodput && w.Requests > 0 {
		w.Goodput = &Goodput{Requests: int(good), Fraction: good / float64(w.Requests)}
		if w.DurationS > 0 {
			w.Goodput.RateRPS = good / w.DurationS
		}
	}
	if sumE2E > 0 {
		w.PrefillShare = sumTTFT / sumE2E
	}
	if sumOutput > 0 {
		w.InputOutputRatio = sumPrompt / sumOutput
	}
	if sumReqOutput > 0 {
		w.RequestedInputOutputRatio = sumReqPrompt / sumReqOutput
	}
	enc := map[string]EncodedHistogram{}
	for mname, h := range hs {
		e, err := encode(histByName[mname], h)
		if err != nil {
			return nil, nil, err
		}
		enc[mname] = e
	}
	sum := func(m HistSpec) *Dist { return Summarize(m, hs[m.Name]) }
	w.TTFTMs, w.TTFTAnswerMs, w.ITLMs, w.TPOTMs = sum(HistTTFT), sum(HistTTFTAnswer), sum(HistITL), sum(HistTPOT)
	w.E2EMs, w.DecodeTokS, w.EffectiveTokS, w.ScheduleLagMs = sum(HistE2E), sum(HistDecode), sum(HistEffective), sum(HistLag)
	w.ServerQueueMs, w.ServerPrefillMs, w.TTFTRestMs = sum(HistServerQueue), sum(HistServerPrefill), sum(HistTTFTRest)
	// Token lengths: percentiles from the added histograms; count, mean,
	// spread and extremes exact, from the shards' exact summaries.
	w.PromptTokens = exactMoments(sum(HistPrompt), mg.dists(name, func(w *Window) *Dist { return w.PromptTokens }))
	w.OutputPerReq = exactMoments(sum(HistOutput), mg.dists(name, func(w *Window) *Dist { return w.OutputPerReq }))
	return w, enc, nil
}

// dists is every shard's summary of one distribution of window name.
func (mg *merger) dists(name string, of func(*Window) *Dist) []*Dist {
	var ds []*Dist
	for _, s := range mg.shards {
		if d := of(s.Run.Windows[name]); d != nil {
			ds = append(ds, d)
		}
	}
	return ds
}

// exactMoments sets d's count, mean, standard deviation and extremes to
// those of the union of the distributions ds summarise (pooled exactly);
// d's percentiles stay. nil when d is.
func exactMoments(d *Dist, ds []*Dist) *Dist {
	if d == nil || len(ds) == 0 {
		return d
	}
	var n int64
	var sum, sq float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range ds {
		n += x.Count
		sum += x.Mean * float64(x.Count)
		lo, hi = min(lo, x.Min), max(hi, x.Max)
	}
	mean := sum / float64(n)
	for _, x := range ds {
		sq += float64(x.Count) * (x.Stddev*x.Stddev + (x.Mean-mean)*(x.Mean-mean))
	}
	d.Count, d.Mean, d.Stddev, d.Min, d.Max = n, mean, math.Sqrt(sq/float64(n)), lo, hi
	return d
}

// series adds the shards' per-second series, each shifted by its start
// offset (rounded to the second) onto the earliest shard's clock.
func (mg *merger) series() Series {
	var s Series
	shiftAdd := func(dst *[]int64, src []int64, k int) {
		*dst = grow(*dst, len(src)+k)
		for i, v := range src {
			(*dst)[i+k] += v
		}
	}
	for j, sh := range mg.shards {
		k := int(math.Round(mg.offsets[j].Seconds()))
		r := sh.Run.Series
		shiftAdd(&s.OutputTokens, r.OutputTokens, k)
		shiftAdd(&s.InputTokens, r.InputTokens, k)
		shiftAdd(&s.CachedInputTokens, r.CachedInputTokens, k)
		shiftAdd(&s.Started, r.Started, k)
		shiftAdd(&s.Completed, r.Completed, k)
		shiftAdd(&s.Failed, r.Failed, k)
		s.InFlight = grow(s.InFlight, len(r.InFlight)+k)
		for i, v := range r.InFlight {
			s.InFlight[i+k] += v
		}
	}
	n := 0
	for _, x := range [][]int64{s.OutputTokens, s.InputTokens, s.CachedInputTokens, s.Started, s.Completed, s.Failed} {
		n = max(n, len(x))
	}
	s.pad(max(n, len(s.InFlight)))
	return s
}

// errors sums the shards' failures.
func (mg *merger) errors() Errors {
	e := Errors{ByClass: map[string]int{}, Examples: map[string][]string{}}
	for k, s := range mg.shards {
		r := s.Run.Errors
		e.Requests += r.Requests
		e.Failed += r.Failed
		e.Reconnects += r.Reconnects
		e.WithheldArrivals += r.WithheldArrivals
		for c, n := range r.ByClass {
			e.ByClass[c] += n
		}
		for st, n := range r.SlowDowns {
			if e.SlowDowns == nil {
				e.SlowDowns = map[string]int{}
			}
			e.SlowDowns[st] += n
		}
		for c, s := range r.BackoffS {
			if e.BackoffS == nil {
				e.BackoffS = map[string]float64{}
			}
			e.BackoffS[c] += s
		}
		for c, ex := range r.Examples {
			for _, x := range ex {
				if len(e.Examples[c]) < maxExamples && !slices.Contains(e.Examples[c], x) {
					e.Examples[c] = append(e.Examples[c], x)
				}
			}
		}
		off := mg.offsets[k].Seconds()
		for _, o := range r.Outages {
			o.StartS += off
			o.EndS += off
			e.Outages = append(e.Outages, o)
		}
	}
	slices.SortFunc(e.Outages, func(a, b record.Outage) int { return cmpFloat(a.StartS, b.StartS) })
	interrupted := e.ByClass[string(record.ErrInterrupted)]
	if n := e.Requests - interrupted; n > 0 {
		e.Rate = float64(e.Failed-interrupted) / float64(n)
	}
	return e
}

// mergeDrift pools the shards' drift of one token count (nil when none
// has any).
func mergeDrift(shards []Shard, of func(*Run) *Drift) (*Drift, error) {
	var d *Drift
	var h *hdrhistogram.Histogram
	var sum, sumAbs, obs, req float64
	for _, s := range shards {
		x := of(s.Run)
		if x == nil || x.Requests == 0 {
			continue
		}
		if d == nil {
			d = &Drift{TolerancePct: x.TolerancePct}
		}
		n := float64(x.Requests)
		d.Requests += x.Requests
		d.Exact += x.Exact
		d.Outside += x.Outside
		d.MaxAbsPct = max(d.MaxAbsPct, x.MaxAbsPct)
		sum += x.MeanPct * n
		sumAbs += x.MeanAbsPct * n
		obs += x.MeanObserved * n
		req += x.MeanRequested * n
		if x.Histogram != nil {
			if err := addHist(&h, histDrift, *x.Histogram, s.Name+": drift histogram"); err != nil {
				return nil, refuse("%v", err)
			}
		}
	}
	if d == nil {
		return nil, nil
	}
	n := float64(d.Requests)
	d.MeanPct, d.MeanAbsPct, d.MeanObserved, d.MeanRequested = sum/n, sumAbs/n, obs/n, req/n
	if h != nil && h.TotalCount() == int64(d.Requests) {
		d.AbsPct = Summarize(histDrift, h)
		e, err := encode(histDrift, h)
		if err != nil {
			return nil, err
		}
		d.Histogram = &e
	}
	return d, nil
}

// byContext adds the shards' context-depth buckets from their histograms.
func (mg *merger) byContext() ([]ContextBucket, error) {
	var out []ContextBucket
	for i, depth := range ContextDepths {
		b := ContextBucket{ContextDepth: depth}
		hs := map[string]*hdrhistogram.Histogram{}
		for _, s := range mg.shards {
			if i >= len(s.Run.ByContext) {
				continue
			}
			sb := s.Run.ByContext[i]
			b.Requests += sb.Requests
			for _, m := range []HistSpec{HistEffective, HistDecode, HistTTFT} {
				if e, ok := sb.Histograms[m.Name]; ok {
					h := hs[m.Name]
					if err := addHist(&h, m, e, s.Name+": by_context histogram"); err != nil {
						return nil, refuse("%v", err)
					}
					hs[m.Name] = h
				}
			}
		}
		b.EffectiveTokS, b.DecodeTokS, b.TTFTMs = Summarize(HistEffective, hs[HistEffective.Name]), Summarize(HistDecode, hs[HistDecode.Name]), Summarize(HistTTFT, hs[HistTTFT.Name])
		b.Histograms = encodeAll(map[HistSpec]*hdrhistogram.Histogram{HistEffective: hs[HistEffective.Name], HistDecode: hs[HistDecode.Name], HistTTFT: hs[HistTTFT.Name]})
		out = append(out, b)
	}
	return out, nil
}

// schedule is the whole's open-loop pacing: the shards' rates add (each
// carried rate/N), the lag is the added histograms', and the whole fell
// behind if any shard did.
func (mg *merger) schedule(m *Measurement) *Schedule {
	s := &Schedule{}
	var notes []string
	for _, sh := range mg.shards {
		r := sh.Run.Schedule
		if r == nil {
			continue
		}
		s.TargetRateRPS += r.TargetRateRPS
		s.ScheduledRateRPS += r.ScheduledRateRPS
		s.AchievedRateRPS += r.AchievedRateRPS
		s.Requests += r.Requests
		if r.Behind {
			s.Behind = true
			notes = append(notes, "shard "+shardName(sh)+": "+r.Note)
		}
	}
	if all := m.Windows[WindowAll]; all != nil {
		s.LagMs = all.ScheduleLagMs
	}
	s.Note = strings.Join(notes, "; ")
	return s
}

// overContext sums the shards' planned over-context prompts.
// planned is the whole plan's parity evidence, which every shard computed
// alike (nil when any shard lacks it or they disagree).
func (mg *merger) planned() *PlannedTokens {
	var p *PlannedTokens
	for _, s := range mg.shards {
		q := s.Run.Parity
		if q == nil || q.Planned == nil || (p != nil && *q.Planned != *p) {
			return nil
		}
		p = q.Planned
	}
	return p
}

func (mg *merger) overContext() *OverContext {
	var oc *OverContext
	for _, s := range mg.shards {
		x := s.Run.Pins.Prompt.Observed.OverContext
		if x == nil {
			continue
		}
		if oc == nil {
			oc = &OverContext{ContextTokens: x.ContextTokens, Allowed: x.Allowed}
		}
		oc.Planned += x.Planned
		oc.Exceeding += x.Exceeding
		oc.Sampled = oc.Sampled || x.Sampled
	}
	return oc
}

// client sums the shards' machines.
func (mg *merger) client() ClientInfo {
	c := mg.shards[0].Run.Client
	c.CPUs, c.CPUSeconds = 0, 0
	for _, s := range mg.shards {
		c.CPUs += s.Run.Client.CPUs
		c.CPUSeconds += s.Run.Client.CPUSeconds
		c.MaxRSSBytes = max(c.MaxRSSBytes, s.Run.Client.MaxRSSBytes)
	}
	return c
}

// attestation lists every shard's identity and start offset, and says why
// the merged run is invalid: a shard fell behind its schedule, or started
// later than tol after the common start (or, without one, after the
// earliest shard).
func (mg *merger) attestation(tol time.Duration) (*Attestation, []string) {
	first := mg.shards[0].Run.Shard
	a := &Attestation{RunID: first.RunID, Count: first.Count, StartToleranceMs: millis(tol)}
	var invalid []string
	for k, s := range mg.shards {
		si := *s.Run.Shard
		si.StartOffsetMs = millis(mg.offsets[k])
		a.Shards = append(a.Shards, si)
		late := si.StartLateMs
		if si.StartAt == nil {
			late = si.StartOffsetMs
		}
		if late > millis(tol) {
			invalid = append(invalid, fmt.Sprintf("shard %s started %s ms late, more than the %s ms allowed: its windows are not the others'", shardName(s), num(late), num(millis(tol))))
		}
		if si.Behind {
			invalid = append(invalid, fmt.Sprintf("shard %s fell behind its schedule: a merged percentile is only as good as the worst shard", shardName(s)))
		}
	}
	return a, invalid
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// notes are the shards' notes, each once, then what merging adds.
func (mg *merger) notes() []string {
	var out []string
	for _, s := range mg.shards {
		for _, n := range s.Run.Notes {
			if !slices.Contains(out, n) && n != NoteNoHistograms {
				out = append(out, n)
			}
		}
	}
	return append(out, fmt.Sprintf("merged from %d shards (run id %q): histograms added, series aligned on wall-clock time; max_in_flight is the sum of the shards' maxima (an upper bound)",
		len(mg.shards), mg.shards[0].Run.Shard.RunID))
}
