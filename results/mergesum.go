package results

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sixpin/sixpin/record"
)

// merger is the whole of a distributed run as its shards are added, one
// at a time and in index order: the sums, the added histograms, and the
// first shard (whose settings the whole keeps), never every shard. Not
// safe for concurrent use.
type merger struct {
	base time.Time     // the earliest shard's start
	tol  time.Duration // how late a shard may start

	first     *Run // shard 0
	firstName string

	windows          map[string]*windowSum
	series           Series
	errors           Errors
	prompt, output   driftSum
	tokens           Tokens
	issued           Issued
	tokensFromChunks bool
	sessions         []*Session
	rejections       []Rejection
	byContext        []contextSum
	peers            peersSum
	schedule         Schedule
	scheduleNotes    []string
	planned          *PlannedTokens
	plannedDiffer    bool
	overContext      *OverContext
	client           ClientInfo
	attest           *Attestation
	late             []string // why the whole is invalid: shards late or behind
	notes            []string
	partial          []string // the incomplete shards
	server           *Server
	serverFrom       string
	unverifiable     string // the first shard's reason its prompt pin is unverifiable
}

func newMerger(base time.Time, tol time.Duration) *merger {
	mg := &merger{base: base, tol: tol, windows: map[string]*windowSum{}, byContext: make([]contextSum, len(ContextDepths)),
		errors: Errors{ByClass: map[string]int{}, Examples: map[string][]string{}}}
	for _, name := range WindowNames {
		mg.windows[name] = newWindowSum()
	}
	return mg
}

// add adds shard r (named name in refusals), which started off after the
// earliest shard.
func (mg *merger) add(name string, r *Run, off time.Duration) error {
	if mg.first == nil {
		mg.first, mg.firstName = r, name
		mg.client = r.Client
		mg.client.CPUs, mg.client.CPUSeconds = 0, 0
		mg.attest = &Attestation{RunID: r.Shard.RunID, Count: r.Shard.Count, StartToleranceMs: millis(mg.tol)}
	}
	if err := mg.checkWindows(name, r); err != nil {
		return err
	}
	offS := off.Seconds()
	for _, wn := range WindowNames {
		sw := r.Windows[wn]
		if sw == nil {
			return refuse("%s has no %s window", name, wn)
		}
		if err := mg.windows[wn].add(name, wn, sw, r.Histograms[wn], offS); err != nil {
			return err
		}
	}
	mg.addSeries(r.Series, int(math.Round(offS)))
	mg.addErrors(r.Errors, offS)
	if err := mg.prompt.add(r.Pins.Prompt.Observed.Drift, name); err != nil {
		return err
	}
	if err := mg.output.add(r.Pins.Output.Observed.Drift, name); err != nil {
		return err
	}
	mg.tokensFromChunks = mg.tokensFromChunks || r.Pins.Output.Observed.Source == "chunks"
	mg.tokens.Requests += r.Tokens.Requests
	mg.tokens.Input += r.Tokens.Input
	mg.tokens.CachedInput += r.Tokens.CachedInput
	mg.tokens.CacheWriteInput += r.Tokens.CacheWriteInput
	mg.tokens.Output += r.Tokens.Output
	mg.tokens.Reasoning += r.Tokens.Reasoning
	mg.issued.addServed(r.Pins.Prompt.Observed.Served, r.Pins.Output.Observed.Served)
	if r.Sessions != nil {
		for _, ss := range r.Sessions.All {
			c := *ss
			c.StartS += offS
			c.EndS += offS
			mg.sessions = append(mg.sessions, &c)
		}
	}
	for _, rj := range rateLimited(r) {
		rj.AtS += offS
		if rj.Inferred {
			rj.Bucket, rj.Inferred = "", false // the whole's meters decide again
		}
		mg.rejections = append(mg.rejections, rj)
	}
	for i := range mg.byContext {
		if i < len(r.ByContext) {
			if err := mg.byContext[i].add(r.ByContext[i], name); err != nil {
				return err
			}
		}
	}
	if err := mg.peers.add(r.Peers, offS, name); err != nil {
		return err
	}
	mg.addShard(name, r, off)
	return nil
}

// checkWindows refuses a shard whose warmup, burst or steady window,
// counted from its own start, is more than windowTolerance from the first
// shard's (steady: auto trimmed them differently, or a shard ended
// early): their histograms would be of different spans. How late each
// shard started is the attestation's business.
func (mg *merger) checkWindows(name string, r *Run) error {
	tol := windowTolerance.Seconds()
	for _, wn := range []string{WindowWarmup, WindowBurst, WindowSteady} {
		wa, w := mg.first.Windows[wn], r.Windows[wn]
		if w == nil || wa == nil {
			return refuse("incompatible windows: %s has no %s window", name, wn)
		}
		if math.Abs(w.StartS-wa.StartS) > tol || math.Abs(w.EndS-wa.EndS) > tol {
			return refuse("incompatible windows: %s is [%s, %s) s of load in %s and [%s, %s) s in %s, more than %s apart: histograms of different spans cannot be added",
				wn, num(wa.StartS), num(wa.EndS), mg.firstName, num(w.StartS), num(w.EndS), name, windowTolerance)
		}
	}
	return nil
}

// addShard adds what the whole keeps of each shard beside its
// measurements: its schedule, plan, machine, identity and notes.
func (mg *merger) addShard(name string, r *Run, off time.Duration) {
	si := *r.Shard
	if s := r.Schedule; s != nil {
		mg.schedule.TargetRateRPS += s.TargetRateRPS
		mg.schedule.ScheduledRateRPS += s.ScheduledRateRPS
		mg.schedule.AchievedRateRPS += s.AchievedRateRPS
		mg.schedule.Requests += s.Requests
		if s.Behind {
			mg.schedule.Behind = true
			mg.scheduleNotes = append(mg.scheduleNotes, "shard "+shardName(&si)+": "+s.Note)
		}
	}
	// The whole plan's parity evidence, which every shard computed alike
	// (none when any shard lacks it or they disagree).
	if q := r.Parity; q == nil || q.Planned == nil || (mg.planned != nil && *q.Planned != *mg.planned) {
		mg.plannedDiffer = true
	} else {
		mg.planned = q.Planned
	}
	if x := r.Pins.Prompt.Observed.OverContext; x != nil {
		if mg.overContext == nil {
			mg.overContext = &OverContext{ContextTokens: x.ContextTokens, Allowed: x.Allowed}
		}
		mg.overContext.Planned += x.Planned
		mg.overContext.Exceeding += x.Exceeding
		mg.overContext.Sampled = mg.overContext.Sampled || x.Sampled
	}
	mg.client.CPUs += r.Client.CPUs
	mg.client.CPUSeconds += r.Client.CPUSeconds
	mg.client.MaxRSSBytes = max(mg.client.MaxRSSBytes, r.Client.MaxRSSBytes)

	si.StartOffsetMs = millis(off)
	mg.attest.Shards = append(mg.attest.Shards, si)
	late := si.StartLateMs
	if si.StartAt == nil {
		late = si.StartOffsetMs
	}
	if late > millis(mg.tol) {
		mg.late = append(mg.late, fmt.Sprintf("shard %s started %s ms late, more than the %s ms allowed: its windows are not the others'", shardName(&si), num(late), num(millis(mg.tol))))
	}
	if si.Behind {
		mg.late = append(mg.late, fmt.Sprintf("shard %s fell behind its schedule: a merged percentile is only as good as the worst shard", shardName(&si)))
	}

	for _, n := range r.Notes {
		if !slices.Contains(mg.notes, n) && n != NoteNoHistograms {
			mg.notes = append(mg.notes, n)
		}
	}
	if r.Incomplete {
		mg.partial = append(mg.partial, fmt.Sprintf("shard %s (%s)", shardName(&si), r.IncompleteReason))
	}
	// Every shard watched the same server: the whole keeps the first
	// shard's scrapes (summing them would count the server N times).
	if r.Server != nil && mg.server == nil {
		mg.server, mg.serverFrom = r.Server, shardName(&si)
	}
	if p := r.Pins.Prompt; p.Verified == Unverifiable && mg.unverifiable == "" {
		mg.unverifiable = "shard " + shardName(&si) + ": " + p.Reason
	}
}

// addSeries adds a shard's per-second series, shifted by its start offset
// (k seconds, rounded) onto the earliest shard's clock.
func (mg *merger) addSeries(r Series, k int) {
	addOverTime(&mg.series.TTFT, r.TTFT, time.Duration(k)*time.Second)
	addOverTime(&mg.series.E2E, r.E2E, time.Duration(k)*time.Second)
	s := &mg.series
	shiftAdd := func(dst *[]int64, src []int64) {
		*dst = grow(*dst, len(src)+k)
		for i, v := range src {
			(*dst)[i+k] += v
		}
	}
	shiftAdd(&s.OutputTokens, r.OutputTokens)
	shiftAdd(&s.InputTokens, r.InputTokens)
	shiftAdd(&s.CachedInputTokens, r.CachedInputTokens)
	shiftAdd(&s.Started, r.Started)
	shiftAdd(&s.Completed, r.Completed)
	shiftAdd(&s.Failed, r.Failed)
	s.InFlight = grow(s.InFlight, len(r.InFlight)+k)
	for i, v := range r.InFlight {
		s.InFlight[i+k] += v
	}
}

// addErrors adds a shard's failures.
func (mg *merger) addErrors(r Errors, off float64) {
	e := &mg.errors
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
	for _, o := range r.Outages {
		o.StartS += off
		o.EndS += off
		e.Outages = append(e.Outages, o)
	}
}

// measurement is the whole run's Measurement, once every shard is added.
func (mg *merger) measurement() (*Measurement, error) {
	m := &Measurement{Windows: map[string]*Window{}, Histograms: map[string]map[string]EncodedHistogram{}}
	for _, name := range WindowNames {
		w, hs, err := mg.windows[name].result(name)
		if err != nil {
			return nil, err
		}
		m.Windows[name], m.Histograms[name] = w, hs
	}
	if e, ok := m.Histograms[WindowAll][HistClientLag.Name]; ok {
		h, _ := e.Decode()
		m.ClientAddedLatency = Summarize(HistClientLag, h)
	}
	s := mg.series
	n := 0
	for _, x := range [][]int64{s.OutputTokens, s.InputTokens, s.CachedInputTokens, s.Started, s.Completed, s.Failed} {
		n = max(n, len(x))
	}
	s.pad(max(n, len(s.InFlight)))
	m.Series = s
	if b := m.Windows[WindowBurst]; b != nil {
		perSecond := make([]float64, len(s.OutputTokens))
		for i, v := range s.OutputTokens {
			perSecond[i] = float64(v)
		}
		b.PeakAggregateOutputTokS, b.PeakStartS = peakRate(perSecond, secDur(b.DurationS))
	}
	m.Errors = mg.errors
	slices.SortFunc(m.Errors.Outages, func(a, b record.Outage) int { return cmp.Compare(a.StartS, b.StartS) })
	interrupted := m.Errors.ByClass[string(record.ErrInterrupted)]
	if n := m.Errors.Requests - interrupted; n > 0 {
		m.Errors.Rate = float64(m.Errors.Failed-interrupted) / float64(n)
	}
	m.ReportedModel = mg.first.Pins.Model.Observed.Reported
	var err error
	if m.PromptDrift, err = mg.prompt.result(); err != nil {
		return nil, err
	}
	if m.OutputDrift, err = mg.output.result(); err != nil {
		return nil, err
	}
	m.TokensFromChunks = mg.tokensFromChunks
	m.Tokens, m.Issued = mg.tokens, mg.issued
	m.Tokens.finish()
	slices.SortFunc(mg.sessions, func(x, y *Session) int { return x.Index - y.Index })
	m.Sessions = summarizeSessions(mg.sessions)
	m.Rejections = mg.rejections
	slices.SortFunc(m.Rejections, func(x, y Rejection) int { return cmp.Compare(x.AtS, y.AtS) })
	for i, depth := range ContextDepths {
		m.ByContext = append(m.ByContext, mg.byContext[i].result(depth))
	}
	if mg.plannedDiffer {
		mg.planned = nil
	}
	return m, nil
}

// scheduled is the whole's open-loop pacing: the shards' rates add (each
// carried rate/N), the lag is the added histograms', and the whole fell
// behind if any shard did.
func (mg *merger) scheduled(m *Measurement) *Schedule {
	s := mg.schedule
	if all := m.Windows[WindowAll]; all != nil {
		s.LagMs = all.ScheduleLagMs
	}
	s.Note = strings.Join(mg.scheduleNotes, "; ")
	return &s
}

// windowSum is one window of every shard added so far: its span on the
// earliest shard's clock, its counts summed, its in-flight figures as
// areas over the span, its histograms added, and the token lengths'
// exact moments pooled.
type windowSum struct {
	w                                                                 *Window
	hs                                                                map[string]*hdrhistogram.Histogram
	inFlight, served, littles, good                                   float64
	sumE2E, sumTTFT, sumPrompt, sumOutput, sumReqOutput, sumReqPrompt float64
	goodput                                                           bool
	notes                                                             []string
	prompt, output                                                    pooled
	spec                                                              specAcc
}

func newWindowSum() *windowSum {
	return &windowSum{w: &Window{ErrorsByClass: map[string]int{}, StartS: math.Inf(1)}, hs: map[string]*hdrhistogram.Histogram{}}
}

// add adds shard's window name (sw, its histograms hists), off seconds
// after the earliest shard's start.
func (ws *windowSum) add(shard, name string, sw *Window, hists map[string]EncodedHistogram, off float64) error {
	w := ws.w
	w.StartS, w.EndS = min(w.StartS, sw.StartS+off), max(w.EndS, sw.EndS+off)
	w.Requests += sw.Requests
	w.Completed += sw.Completed
	w.DecodeUnmeasured += sw.DecodeUnmeasured
	w.Failed += sw.Failed
	w.OutputTokens += sw.OutputTokens
	w.ReasoningTokens += sw.ReasoningTokens
	w.MaxInFlight += sw.MaxInFlight
	addOutput(&w.Output, sw.Output)
	ws.spec.addWindow(sw.SpecDecode)
	for c, n := range sw.ErrorsByClass {
		w.ErrorsByClass[c] += n
	}
	// Time-weighted means over the shard's span, as areas.
	ws.inFlight += sw.MeanInFlight * sw.DurationS
	ws.served += sw.MeanServedInFlight * sw.DurationS
	ws.littles += sw.LittlesLawInFlight * sw.DurationS
	if g := sw.Goodput; g != nil {
		ws.goodput = true
		ws.good += float64(g.Requests)
	}
	if sw.E2EMs != nil && sw.TTFTMs != nil {
		e2e := sw.E2EMs.Mean * float64(sw.E2EMs.Count)
		ws.sumE2E += e2e
		ws.sumTTFT += sw.PrefillShare * e2e
	}
	if p, o := sw.PromptTokens, sw.OutputPerReq; p != nil && o != nil {
		ws.sumPrompt += p.Mean * float64(p.Count)
		out := o.Mean * float64(o.Count)
		ws.sumOutput += out
		ws.sumReqOutput += out
		ws.sumReqPrompt += sw.RequestedInputOutputRatio * out
	}
	ws.prompt.add(sw.PromptTokens)
	ws.output.add(sw.OutputPerReq)
	if sw.Note != "" && !slices.Contains(ws.notes, sw.Note) {
		ws.notes = append(ws.notes, sw.Note)
	}
	for mname, e := range hists {
		mt, ok := histByName[mname]
		if !ok {
			return refuse("%s: histograms.%s.%s: unknown metric", shard, name, mname)
		}
		h := ws.hs[mname]
		if err := addHist(&h, mt, e, shard+": histograms."+name+"."+mname); err != nil {
			return refuse("%v", err)
		}
		ws.hs[mname] = h
	}
	return nil
}

// result is the whole's window name and its histograms, encoded.
func (ws *windowSum) result(name string) (*Window, map[string]EncodedHistogram, error) {
	w := ws.w
	if name == WindowAll || w.StartS > w.EndS {
		w.StartS = max(min(w.StartS, w.EndS), 0)
	}
	w.DurationS = w.EndS - w.StartS
	w.Note = strings.Join(ws.notes, "; ")
	if d := w.DurationS; d > 0 {
		w.AggregateOutputTokS = float64(w.OutputTokens) / d
		w.MeanInFlight, w.MeanServedInFlight, w.LittlesLawInFlight = ws.inFlight/d, ws.served/d, ws.littles/d
	}
	if w.MeanInFlight > 0 {
		w.AggregatePerStreamTokS = w.AggregateOutputTokS / w.MeanInFlight
	}
	if ws.goodput && w.Requests > 0 {
		w.Goodput = &Goodput{Requests: int(ws.good), Fraction: ws.good / float64(w.Requests)}
		if w.DurationS > 0 {
			w.Goodput.RateRPS = ws.good / w.DurationS
		}
	}
	if ws.sumE2E > 0 {
		w.PrefillShare = ws.sumTTFT / ws.sumE2E
	}
	if ws.sumOutput > 0 {
		w.InputOutputRatio = ws.sumPrompt / ws.sumOutput
	}
	if ws.sumReqOutput > 0 {
		w.RequestedInputOutputRatio = ws.sumReqPrompt / ws.sumReqOutput
	}
	enc := map[string]EncodedHistogram{}
	for mname, h := range ws.hs {
		e, err := encode(histByName[mname], h)
		if err != nil {
			return nil, nil, err
		}
		enc[mname] = e
	}
	sum := func(m HistSpec) *Dist { return Summarize(m, ws.hs[m.Name]) }
	w.TTFTMs, w.TTFTAnswerMs, w.ITLMs, w.TPOTMs = sum(HistTTFT), sum(HistTTFTAnswer), sum(HistITL), sum(HistTPOT)
	w.E2EMs, w.DecodeTokS, w.EffectiveTokS, w.ScheduleLagMs = sum(HistE2E), sum(HistDecode), sum(HistEffective), sum(HistLag)
	w.ServerQueueMs, w.ServerPrefillMs, w.TTFTRestMs = sum(HistServerQueue), sum(HistServerPrefill), sum(HistTTFTRest)
	// Token lengths: percentiles from the added histograms; count, mean,
	// spread and extremes exact, from the shards' exact summaries.
	w.PromptTokens = ws.prompt.onto(sum(HistPrompt))
	w.OutputPerReq = ws.output.onto(sum(HistOutput))
	w.SpecDecode = ws.spec.result()
	return w, enc, nil
}

// pooled is the count, mean, spread and extremes of the union of the
// distributions added, one summary at a time — exact, by the pairwise
// update of Chan, Golub and LeVeque (no shard's values are needed).
type pooled struct {
	n        int64
	mean, m2 float64 // m2: the sum of squared deviations from mean
	lo, hi   float64
}

func (p *pooled) add(d *Dist) {
	if d == nil || d.Count == 0 {
		return
	}
	if p.n == 0 {
		p.lo, p.hi = d.Min, d.Max
	}
	p.lo, p.hi = min(p.lo, d.Min), max(p.hi, d.Max)
	n, c := float64(p.n+d.Count), float64(d.Count)
	delta := d.Mean - p.mean
	p.m2 += d.Stddev*d.Stddev*c + delta*delta*float64(p.n)*c/n
	p.mean += delta * c / n
	p.n += d.Count
}

// onto sets d's count, mean, standard deviation and extremes to the
// pooled ones; d's percentiles stay. nil when d is.
func (p *pooled) onto(d *Dist) *Dist {
	if d == nil || p.n == 0 {
		return d
	}
	d.Count, d.Mean, d.Stddev, d.Min, d.Max = p.n, p.mean, math.Sqrt(p.m2/float64(p.n)), p.lo, p.hi
	return d
}

// driftSum pools the shards' drift of one token count.
type driftSum struct {
	d                     *Drift
	h                     *hdrhistogram.Histogram
	sum, sumAbs, obs, req float64
}

func (s *driftSum) add(x *Drift, shard string) error {
	if x == nil || x.Requests == 0 {
		return nil
	}
	if s.d == nil {
		s.d = &Drift{TolerancePct: x.TolerancePct}
	}
	d, n := s.d, float64(x.Requests)
	d.Requests += x.Requests
	d.Exact += x.Exact
	d.Outside += x.Outside
	d.MaxAbsPct = max(d.MaxAbsPct, x.MaxAbsPct)
	s.sum += x.MeanPct * n
	s.sumAbs += x.MeanAbsPct * n
	s.obs += x.MeanObserved * n
	s.req += x.MeanRequested * n
	if x.Histogram != nil {
		if err := addHist(&s.h, histDrift, *x.Histogram, shard+": drift histogram"); err != nil {
			return refuse("%v", err)
		}
	}
	return nil
}

// result is the pooled drift (nil when no shard had any).
func (s *driftSum) result() (*Drift, error) {
	d := s.d
	if d == nil {
		return nil, nil
	}
	n := float64(d.Requests)
	d.MeanPct, d.MeanAbsPct, d.MeanObserved, d.MeanRequested = s.sum/n, s.sumAbs/n, s.obs/n, s.req/n
	if s.h != nil && s.h.TotalCount() == int64(d.Requests) {
		d.AbsPct = Summarize(histDrift, s.h)
		e, err := encode(histDrift, s.h)
		if err != nil {
			return nil, err
		}
		d.Histogram = &e
	}
	return d, nil
}

// contextSum is one context-depth bucket of the shards added.
type contextSum struct {
	requests int
	hs       [3]*hdrhistogram.Histogram // contextHists
}

// contextHists are the histograms a context-depth bucket keeps.
var contextHists = [3]HistSpec{HistEffective, HistDecode, HistTTFT}

func (c *contextSum) add(b ContextBucket, shard string) error {
	c.requests += b.Requests
	for i, m := range contextHists {
		if e, ok := b.Histograms[m.Name]; ok {
			if err := addHist(&c.hs[i], m, e, shard+": by_context histogram"); err != nil {
				return refuse("%v", err)
			}
		}
	}
	return nil
}

func (c *contextSum) result(depth ContextDepth) ContextBucket {
	b := ContextBucket{ContextDepth: depth, Requests: c.requests}
	b.EffectiveTokS, b.DecodeTokS, b.TTFTMs = Summarize(HistEffective, c.hs[0]), Summarize(HistDecode, c.hs[1]), Summarize(HistTTFT, c.hs[2])
	b.Histograms = encodeAll(map[HistSpec]*hdrhistogram.Histogram{HistEffective: c.hs[0], HistDecode: c.hs[1], HistTTFT: c.hs[2]})
	return b
}
