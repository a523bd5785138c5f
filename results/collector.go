package results

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sixpin/sixpin/internal/stats"
	"github.com/sixpin/sixpin/record"
)

// Collector receives every finished Record of a run, keeps the per-second
// series and error tallies, and spills the records to disk; Finish cuts the
// windows and fills their histograms in one pass. A Collector is owned by
// one goroutine (the consumer of the runner's channel): it is not safe for
// concurrent use, and needs no locks.
type Collector struct {
	// scorer scores the sampled answers' text as their records arrive.
	scorer record.Scorer
	// spill is where Add writes records (nil when replaying a spill file:
	// see Recover); src is the file Finish reads them back from.
	spill *spill
	src   string
	s     Series
	// events are in-flight changes (+1 at Sent, −1 at End), packed as
	// µs<<1 | start, for the exact in-flight count over any window.
	events []int64
	// okEvents are the same for the requests that succeeded.
	okEvents      []int64
	firstSched    time.Duration
	lastScheduled time.Duration
	lastEnd       time.Duration
	firstSent     time.Duration
	lastSent      time.Duration
	n             int
	examples      map[record.ErrorClass][]string
	model         string
	tokens        Tokens
	sessions      sessionAcc
	rejections    []Rejection
	// warmth follows the sessions that joined mid-life (the header's
	// Windows.WarmSessions) as records arrive: the steady window's
	// earliest start.
	warmth Warmth
}

// maxRejections bounds the 429s kept for attribution.
const maxRejections = 100_000

// maxExamples is how many distinct failure messages are kept per class.
const maxExamples = 3

// NewCollector returns a Collector that spills records to the file at
// spillPath, which must not exist ("" for a new file in the system's
// temporary directory). Call Begin before the first Add, and Close (the
// run's results are safe) or Release (keep the spill for Recover) when
// done with it.
func NewCollector(spillPath string) (*Collector, error) {
	sp, err := newSpill(spillPath)
	if err != nil {
		return nil, err
	}
	c := newCollector()
	c.spill, c.src = sp, sp.path
	return c, nil
}

func newCollector() *Collector {
	return &Collector{examples: map[record.ErrorClass][]string{}, firstSent: -1, firstSched: -1}
}

// SpillPath is the record spill's file.
func (c *Collector) SpillPath() string { return c.src }

// Begin writes the run's header at the head of the spill, so that a run
// that dies can be recovered from it.
func (c *Collector) Begin(h *Header) error {
	c.warmth = Warmth{N: h.Windows.WarmSessions}
	return c.spill.header(h)
}

// Flush writes every record added so far through to the spill file, for a
// checkpoint or Recover to read. When the file does not take them (a full
// disk), they stay in memory, and Spill says so.
func (c *Collector) Flush() { c.spill.flush() }

// Spill says where the records added so far are: whole in the spill file,
// or in memory.
func (c *Collector) Spill() SpillState { return c.spill.state() }

// Close closes and removes the spill file.
func (c *Collector) Close() error {
	if c.spill == nil {
		return nil
	}
	return c.spill.close(true)
}

// Release writes what it can of the spill (Spill then says what the file
// did not take) and closes it, keeping it for `sixpin recover`. After
// Close it does nothing.
func (c *Collector) Release() error {
	if c.spill == nil {
		return nil
	}
	return c.spill.close(false)
}

// Requests returns how many records have been added.
func (c *Collector) Requests() int { return c.n }

// Add takes a finished record. It fills in each chunk's token count
// (apportioned from usage when the client could not count them) and may
// modify r; r is not used after Add returns. It spills r: to the file,
// or, when that cannot take it, to memory (see Spill).
func (c *Collector) Add(r *record.Record) {
	assignChunkTokens(r)
	if len(r.Text) > 0 {
		r.Output, r.Text = c.scorer.Score(r.Text), nil
	}
	c.n++
	c.lastScheduled = max(c.lastScheduled, r.Scheduled)
	if c.firstSched < 0 || r.Scheduled < c.firstSched {
		c.firstSched = r.Scheduled
	}
	c.lastEnd = max(c.lastEnd, r.End)
	if c.firstSent < 0 || r.Sent < c.firstSent {
		c.firstSent = r.Sent
	}
	c.lastSent = max(c.lastSent, r.Sent)

	c.s.bump(&c.s.Started, r.Scheduled, 1)
	if r.Failed() {
		c.s.bump(&c.s.Failed, r.End, 1)
		if ex := c.examples[r.Err]; len(ex) < maxExamples && r.ErrMsg != "" && !slices.Contains(ex, r.ErrMsg) {
			c.examples[r.Err] = append(ex, r.ErrMsg)
		}
	} else {
		c.s.bump(&c.s.Completed, r.End, 1)
	}
	for _, ch := range r.Chunks {
		c.s.bump(&c.s.OutputTokens, ch.At, int64(ch.Tokens))
	}
	if c.model == "" && r.Model != "" {
		c.model = r.Model
	}
	c.tokens.add(r)
	c.sessions.add(r)
	c.warmth.Observe(r)
	if r.Err == record.ErrHTTP429 && len(c.rejections) < maxRejections {
		c.rejections = append(c.rejections, Rejection{AtS: r.Sent.Seconds(), Bucket: r.RateLimitBucket})
	}
	if r.HasUsage {
		c.s.bump(&c.s.InputTokens, r.Sent, int64(r.Usage.PromptTokens))
		c.s.bump(&c.s.CachedInputTokens, r.Sent, int64(r.Usage.CachedTokens))
	}
	c.s.addInFlight(r.Sent, r.End)
	c.events = append(c.events, us(r.Sent)<<1|1, us(r.End)<<1)
	if !r.Failed() {
		c.okEvents = append(c.okEvents, us(r.Sent)<<1|1, us(r.End)<<1)
	}
	if c.spill != nil {
		c.spill.put(r)
	}
}

// each replays the records added, in order.
func (c *Collector) each(fn func(r *record.Record)) error {
	if c.spill != nil {
		return c.spill.each(fn)
	}
	_, err := eachRecord(c.src, -1, c.n, nil, fn)
	return err
}

// assignChunkTokens sets each chunk's token count where the client left it
// unknown: one token per chunk when the server's usage says no more, else
// the usage total apportioned across chunks by text length (every chunk at
// least one token; cumulative rounding keeps the sum exact).
func assignChunkTokens(r *record.Record) {
	if len(r.Chunks) == 0 || r.Chunks[0].Tokens > 0 {
		return
	}
	extra := 0
	if r.HasUsage {
		extra = r.Usage.CompletionTokens - len(r.Chunks)
	}
	if extra <= 0 {
		for i := range r.Chunks {
			r.Chunks[i].Tokens = 1
		}
		return
	}
	var total int64
	for _, ch := range r.Chunks {
		total += int64(ch.Bytes)
	}
	var cum, given int64
	for i := range r.Chunks {
		cum += int64(r.Chunks[i].Bytes)
		var upto int64
		if total > 0 {
			upto = (cum*int64(extra) + total/2) / total
		} else {
			upto = int64(extra) * int64(i+1) / int64(len(r.Chunks))
		}
		r.Chunks[i].Tokens = int32(1 + upto - given)
		given = upto
	}
}

// outputTokens is the request's generated token count (reasoning
// included): the server's usage, else the chunks' count.
// SLO bounds a good request for goodput; zero fields are not checked.
type SLO struct {
	TTFT time.Duration
	TPOT time.Duration
	E2E  time.Duration
}

func (s SLO) set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2E > 0 }

// Measurement is what a run measured, window by window.
type Measurement struct {
	Windows    map[string]*Window
	Series     Series
	Errors     Errors
	Histograms map[string]map[string]EncodedHistogram
	// ClientAddedLatency is receive time − the server's send stamp over all
	// chunks, when the server stamps them (sixpin's simulator does).
	ClientAddedLatency *Dist
	// MSERTrim is how much steady: auto trimmed off the steady start.
	MSERTrim time.Duration
	// FirstSent and LastSent bound the send times, FirstScheduled and
	// LastScheduled the scheduled starts (open loop: scheduled vs achieved
	// rate).
	FirstSent, LastSent           time.Duration
	FirstScheduled, LastScheduled time.Duration
	// TokensFromChunks is true when some successful request had no usage,
	// so its token count is the client's chunk count.
	TokensFromChunks bool
	// ReportedModel is the model id the server put in its responses.
	ReportedModel string
	// PromptDrift and OutputDrift compare usage with the requested token
	// counts over successful requests (nil without usage).
	PromptDrift, OutputDrift *Drift
	// Tokens totals usage over the run.
	Tokens Tokens
	// Sessions summarises agentic sessions (empty otherwise).
	Sessions Sessions
	// ByContext is per-request speed by context depth, whole run.
	ByContext []ContextBucket
	// Rejections are the run's 429s.
	Rejections []Rejection
	// Issued sums what the issued requests asked for, and what those that
	// succeeded asked for.
	Issued Issued
	// Peers are the run's figures as other benchmarks define them (nil
	// when no request was issued).
	Peers *Peers
	// Server is the server's metrics scraped during the run, per window
	// (nil: not scraped). Finish leaves it nil: whoever scraped sets it
	// (Scrapes.Server of m.Windows) before Assemble, which judges the pins
	// by it too.
	Server *Server
}

// Issued sums the requested lengths of the issued requests (interrupted
// ones left out) and of those that succeeded, in tokens: the workload
// asked for against the workload served.
type Issued struct {
	Requests, Failed     int
	PromptAll, OutputAll int64
	PromptOK, OutputOK   int64
}

func (s *Issued) add(r *record.Record) {
	if r.Err == record.ErrInterrupted {
		return
	}
	s.Requests++
	s.PromptAll += int64(r.RequestedPromptTokens)
	s.OutputAll += int64(r.RequestedOutputTokens)
	if r.Failed() {
		s.Failed++
		return
	}
	s.PromptOK += int64(r.RequestedPromptTokens)
	s.OutputOK += int64(r.RequestedOutputTokens)
}

// minServedTolPct is the least a served mean may differ from the issued
// one before the pin counts as changed by its failures (an exact output
// pin has no tolerance of its own).
const minServedTolPct = 2.0

func (s Issued) served(all, ok, tol float64) *Served {
	if s.Requests == 0 {
		return nil
	}
	v := &Served{Issued: s.Requests, Failed: s.Failed, MeanAll: all, MeanOK: ok, Tolerance: tol}
	if s.Failed == s.Requests {
		v.OffPct = 100
		return v
	}
	v.OffPct = pctOff(ok, all)
	return v
}

func (s Issued) prompt(tolPct float64) *Served {
	n, ok := float64(s.Requests), float64(s.Requests-s.Failed)
	return s.served(float64(s.PromptAll)/n, float64(s.PromptOK)/max(ok, 1), max(tolPct, minServedTolPct))
}

func (s Issued) output(tolPct float64) *Served {
	n, ok := float64(s.Requests), float64(s.Requests-s.Failed)
	return s.served(float64(s.OutputAll)/n, float64(s.OutputOK)/max(ok, 1), max(tolPct, minServedTolPct))
}

func (s Issued) ratio() *Served {
	if s.OutputAll == 0 {
		return nil
	}
	ok := 0.0
	if s.OutputOK > 0 {
		ok = float64(s.PromptOK) / float64(s.OutputOK)
	}
	return s.served(float64(s.PromptAll)/float64(s.OutputAll), ok, MixTolerancePct)
}

// Window holds one window's figures. Requests belong to the window in
// which they were scheduled to start; aggregate throughput counts every
// chunk by its arrival time.
type Window struct {
	StartS    float64 `json:"start_s"`
	EndS      float64 `json:"end_s"`
	DurationS float64 `json:"duration_s"`
	// Requests started (were scheduled) in the window; Completed of them
	// succeeded, Failed did not.
	Requests  int `json:"requests"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	// DecodeUnmeasured counts the completed requests of more than one
	// output token whose decode was not observed (Record.DecodeMeasured):
	// they are left out of decode tok/s, ITL and TPOT.
	DecodeUnmeasured int `json:"decode_unmeasured"`
	// OutputTokens arrived inside the window (reasoning included).
	OutputTokens int64 `json:"output_tokens"`
	// ReasoningTokens is the usage's reasoning share of the output of the
	// successful requests that started in the window (counted apart from
	// answer tokens; OutputTokens includes them).
	ReasoningTokens int64 `json:"reasoning_tokens"`
	// AggregateOutputTokS is OutputTokens / DurationS: all streams together.
	AggregateOutputTokS float64 `json:"aggregate_output_tok_s"`
	// MeanInFlight and MaxInFlight are the observed concurrency.
	MeanInFlight float64 `json:"mean_in_flight"`
	MaxInFlight  int     `json:"max_in_flight"`
	// MeanServedInFlight counts only the requests that succeeded: the
	// concurrency the server served (a failed request held a stream, and
	// one failing at once held it for next to nothing).
	MeanServedInFlight float64 `json:"mean_served_in_flight"`
	// LittlesLawInFlight is Little's law over this window: the requests
	// that started in it and succeeded, each counted for its time in
	// flight inside the window, over the window's length (start rate ×
	// mean time in flight, both within the window). 0: none succeeded.
	LittlesLawInFlight float64 `json:"littles_law_in_flight"`
	// AggregatePerStreamTokS is the aggregate divided by MeanInFlight: what
	// one stream got on average while streams overlapped.
	AggregatePerStreamTokS float64 `json:"aggregate_per_stream_tok_s"`
	// PeakAggregateOutputTokS is the highest aggregate over any span of the
	// burst length (burst window only): the brochure number.
	PeakAggregateOutputTokS float64 `json:"peak_aggregate_output_tok_s,omitempty"`
	PeakStartS              float64 `json:"peak_start_s,omitempty"`
	// Goodput counts successful requests that met the SLO (nil without one).
	Goodput *Goodput `json:"goodput,omitempty"`
	// Output is what the sampled answers of the window's successful
	// requests were (nil: none was sampled).
	Output *OutputWindow `json:"output,omitempty"`
	// SpecDecode is the server's speculative decoding by the draft counts
	// in its timings of the window's successful requests (llama.cpp's),
	// summed; state unknown when none carried any. vLLM's counters are
	// in the server's window (ServerWindow.SpecDecode).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
	// PrefillShare is Σ TTFT / Σ E2E over successful requests.
	PrefillShare float64 `json:"prefill_share"`
	// InputOutputRatio is Σ prompt tokens / Σ output tokens (successful,
	// with usage); RequestedInputOutputRatio is the same ratio of what those
	// requests asked for.
	InputOutputRatio          float64 `json:"input_output_ratio"`
	RequestedInputOutputRatio float64 `json:"requested_input_output_ratio"`

	TTFTMs *Dist `json:"ttft_ms"`
	// ServerQueueMs and ServerPrefillMs are the server's own timings of
	// the successful requests that sent them (llama.cpp's timings, the
	// simulator's); TTFTRestMs is each one's TTFT less those (network,
	// tokenisation, the client; the server's queue too when it does not
	// say it). nil: no request was timed by the server.
	ServerQueueMs   *Dist          `json:"server_queue_ms,omitempty"`
	ServerPrefillMs *Dist          `json:"server_prefill_ms,omitempty"`
	TTFTRestMs      *Dist          `json:"ttft_rest_ms,omitempty"`
	TTFTAnswerMs    *Dist          `json:"ttft_answer_ms"`
	ITLMs           *Dist          `json:"itl_ms"`
	TPOTMs          *Dist          `json:"tpot_ms"`
	E2EMs           *Dist          `json:"e2e_ms"`
	DecodeTokS      *Dist          `json:"decode_tok_s"`
	EffectiveTokS   *Dist          `json:"effective_tok_s"`
	ScheduleLagMs   *Dist          `json:"schedule_lag_ms"`
	PromptTokens    *Dist          `json:"prompt_tokens_per_request"`
	OutputPerReq    *Dist          `json:"output_tokens_per_request"`
	ErrorsByClass   map[string]int `json:"errors"`
	Note            string         `json:"note,omitempty"`
}

// Goodput is the SLO-meeting share of a window.
type Goodput struct {
	Requests int     `json:"requests"`
	RateRPS  float64 `json:"rate_rps"`
	Fraction float64 `json:"fraction"`
}

// Errors tallies failures over the whole run.
type Errors struct {
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// Rate is failures / requests, excluding requests cut off by an
	// interrupt (not the endpoint's fault).
	Rate     float64             `json:"rate"`
	ByClass  map[string]int      `json:"by_class"`
	Examples map[string][]string `json:"examples,omitempty"`
	// Reconnects counts requests sent again on a new connection because
	// the server had closed the kept-alive one without reading them
	// (Record.Reconnects, summed). They are not failures.
	Reconnects int `json:"reconnects"`
	// SlowDowns counts the answers that asked sixpin to slow down, by
	// HTTP status ("429", "503", "529"; AsksToSlowDown).
	SlowDowns map[string]int `json:"slow_downs,omitempty"`
	// BackoffS is how long sixpin waited before sending again, in
	// seconds of run time, by the class of the failure it waited after
	// (Record.Backoff, summed: over streams in closed loop and sessions,
	// the pause of all arrivals in open loop). Never part of a latency.
	BackoffS map[string]float64 `json:"backoff_s,omitempty"`
	// WithheldArrivals counts open-loop arrivals that fell inside a pause
	// and were not sent (never sent late; k6's dropped iterations).
	WithheldArrivals int `json:"withheld_arrivals,omitempty"`
	// Outages are the times the endpoint could not be reached, as the
	// client saw them (endpoint.Client.Outages).
	Outages []record.Outage `json:"outages,omitempty"`
}

// backedOff tallies what r says of backing off: its wait, the answer
// when it asked to slow down, the arrivals it withheld.
func (e *Errors) backedOff(r *record.Record) {
	if r.Failed() && record.AsksToSlowDown(r.HTTPStatus) {
		if e.SlowDowns == nil {
			e.SlowDowns = map[string]int{}
		}
		e.SlowDowns[strconv.Itoa(r.HTTPStatus)]++
	}
	if r.Backoff > 0 {
		if e.BackoffS == nil {
			e.BackoffS = map[string]float64{}
		}
		e.BackoffS[string(r.Err)] += r.Backoff.Seconds()
	}
	e.WithheldArrivals += r.Withheld
}

// winAcc accumulates one window during the final pass.
type winAcc struct {
	name                 string
	span                 Span
	w                    *Window
	h                    map[string]*hdrhistogram.Histogram
	sumTTFT, sumE2E      float64
	sumPrompt, sumOutput int64
	// sumReqPrompt and sumReqOutput are what those same requests asked for.
	sumReqPrompt, sumReqOutput int64
	good                       int
	// inWindowS sums, over the successful requests, their time in flight
	// inside the window (s), for Little's law.
	inWindowS float64
	// prompts and outputs count the exact token lengths (value → requests):
	// lengths are integers and are shown exactly, not through a histogram.
	prompts, outputs exactCounts
	output           outputAcc
	spec             specAcc
}

// warmAt is when the sessions that joined mid-life had all been answered
// (spec.WarmSessions; 0 when none joined); the last end when they never
// all were.
func (c *Collector) warmAt(spec WindowSpec) time.Duration {
	switch {
	case spec.WarmSessions <= 0:
		return 0
	case !c.warmth.Warm():
		return c.lastEnd
	}
	return c.warmth.At()
}

// Finish cuts the windows and computes every window's figures from the
// spilled records, and each request's token drift against tol. It may be
// called once.
func (c *Collector) Finish(spec WindowSpec, slo SLO, tol Tolerances) (*Measurement, error) {
	c.s.pad(int(c.lastEnd/time.Second) + 1)
	perSecond := make([]float64, len(c.s.OutputTokens))
	for i, v := range c.s.OutputTokens {
		perSecond[i] = float64(v)
	}
	ct := cutWindows(spec, perSecond, c.lastScheduled, c.lastEnd, c.warmAt(spec), c.warmth.Starved())
	m := &Measurement{
		Windows:        map[string]*Window{},
		Series:         c.s,
		Histograms:     map[string]map[string]EncodedHistogram{},
		MSERTrim:       ct.mserTrim,
		FirstSent:      max(c.firstSent, 0),
		LastSent:       c.lastSent,
		FirstScheduled: max(c.firstSched, 0),
		LastScheduled:  c.lastScheduled,
		ReportedModel:  c.model,
	}
	promptDrift := driftAcc{tolPct: tol.PromptPct, minTokens: 1}
	outputDrift := driftAcc{tolPct: tol.OutputPct}
	accs := make([]*winAcc, 0, len(WindowNames))
	for _, name := range WindowNames {
		sp := ct.spans[name]
		a := &winAcc{name: name, span: sp, h: map[string]*hdrhistogram.Histogram{},
			w: &Window{StartS: sp.Start.Seconds(), EndS: sp.End.Seconds(), DurationS: sp.Len().Seconds(),
				ErrorsByClass: map[string]int{}, Note: ct.notes[name]},
			prompts: exactCounts{}, outputs: exactCounts{}}
		for _, mt := range windowHists {
			a.h[mt.Name] = mt.new()
		}
		accs = append(accs, a)
		m.Windows[name] = a.w
	}
	clientLag := HistClientLag.new()
	byContext := newContextAcc()
	errs := Errors{ByClass: map[string]int{}, Examples: map[string][]string{}}
	interrupted := 0

	var issued Issued
	peers := newPeersAcc(slo)
	ttftOver, e2eOver := newOverTimeAcc(c.lastEnd), newOverTimeAcc(c.lastEnd)
	err := c.each(func(r *record.Record) {
		issued.add(r)
		if !r.Failed() {
			if ttft, ok := r.TTFT(); ok {
				ttftOver.observe(r.Chunks[0].At, ttft)
			}
			e2eOver.observe(r.End, r.E2E())
		}
		peers.add(r)
		errs.Requests++
		errs.Reconnects += r.Reconnects
		errs.backedOff(r)
		if r.Failed() {
			errs.Failed++
			errs.ByClass[string(r.Err)]++
			if r.Err == record.ErrInterrupted {
				interrupted++
			}
		} else if !r.HasUsage {
			m.TokensFromChunks = true
		} else {
			promptDrift.add(r.Usage.PromptTokens, r.RequestedPromptTokens)
			outputDrift.add(r.Usage.CompletionTokens, r.RequestedOutputTokens)
		}
		byContext.add(r)
		for _, ch := range r.Chunks {
			if ch.ClientLagUS >= 0 {
				observeValue(clientLag, float64(ch.ClientLagUS), 1)
			}
			for _, a := range accs {
				if a.name == WindowAll || a.span.Contains(ch.At) {
					a.w.OutputTokens += int64(ch.Tokens)
				}
			}
		}
		for _, a := range accs {
			if a.name == WindowAll || a.span.Contains(r.Scheduled) {
				a.add(r, slo)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if n := errs.Requests - interrupted; n > 0 {
		errs.Rate = float64(errs.Failed-interrupted) / float64(n)
	}
	for cl, ex := range c.examples {
		errs.Examples[string(cl)] = ex
	}
	m.Errors = errs
	m.PromptDrift, m.OutputDrift = promptDrift.result(), outputDrift.result()
	m.Issued = issued
	m.Series.TTFT, m.Series.E2E = ttftOver.result(), e2eOver.result()
	if m.Peers, err = peers.result(); err != nil {
		return nil, err
	}
	c.tokens.finish()
	m.Tokens = c.tokens
	m.Sessions = c.sessions.result()
	m.ByContext = byContext.result()
	m.Rejections = c.rejections
	m.ClientAddedLatency = Summarize(HistClientLag, clientLag)

	slices.Sort(c.events)
	slices.Sort(c.okEvents)
	for _, a := range accs {
		a.finish(slo, c.events, c.okEvents)
		hs := map[string]EncodedHistogram{}
		for _, mt := range windowHists {
			if h := a.h[mt.Name]; h.TotalCount() > 0 {
				e, err := encode(mt, h)
				if err != nil {
					return nil, err
				}
				hs[mt.Name] = e
			}
		}
		if a.name == WindowAll && clientLag.TotalCount() > 0 {
			e, err := encode(HistClientLag, clientLag)
			if err != nil {
				return nil, err
			}
			hs[HistClientLag.Name] = e
		}
		m.Histograms[a.name] = hs
	}
	if b := m.Windows[WindowBurst]; b != nil {
		b.PeakAggregateOutputTokS, b.PeakStartS = peakRate(perSecond, ct.spans[WindowBurst].Len())
	}
	return m, nil
}

// add records one request that started in the window.
func (a *winAcc) add(r *record.Record, slo SLO) {
	w := a.w
	w.Requests++
	lag := r.Sent - r.Scheduled
	observeValue(a.h[HistLag.Name], float64(lag.Microseconds()), 1)
	if r.Failed() {
		w.Failed++
		w.ErrorsByClass[string(r.Err)]++
		return
	}
	w.Completed++
	a.output.add(r)
	a.spec.add(r)
	w.ReasoningTokens += int64(r.Usage.ReasoningTokens)
	out := r.OutputTokens()
	e2e := r.End - r.Scheduled
	observeValue(a.h[HistE2E.Name], float64(e2e.Microseconds()), 1)
	if end := min(r.End, a.span.End); a.name == WindowAll {
		a.inWindowS += (r.End - r.Sent).Seconds()
	} else if end > r.Sent {
		a.inWindowS += (end - r.Sent).Seconds()
	}
	a.outputs[int64(out)]++
	if r.HasUsage {
		a.prompts[int64(r.Usage.PromptTokens)]++
		observeValue(a.h[HistPrompt.Name], float64(r.Usage.PromptTokens), 1)
		a.sumPrompt += int64(r.Usage.PromptTokens)
		a.sumReqPrompt += int64(r.RequestedPromptTokens)
		a.sumReqOutput += int64(r.RequestedOutputTokens)
	}
	observeValue(a.h[HistOutput.Name], float64(out), 1)
	a.sumOutput += int64(out)
	if e2e > 0 {
		observeValue(a.h[HistEffective.Name], float64(out)/e2e.Seconds()*1e3, 1)
	}
	if len(r.Chunks) == 0 {
		return
	}
	ttft := r.Chunks[0].At - r.Scheduled
	observeValue(a.h[HistTTFT.Name], float64(ttft.Microseconds()), 1)
	for _, ch := range r.Chunks {
		if !ch.Reasoning {
			observeValue(a.h[HistTTFTAnswer.Name], float64((ch.At - r.Scheduled).Microseconds()), 1)
			break
		}
	}
	if t := r.Server; t.Has {
		rest := ttft - t.Prefill
		if t.QueueKnown {
			observeValue(a.h[HistServerQueue.Name], float64(t.Queue.Microseconds()), 1)
			rest -= t.Queue
		}
		observeValue(a.h[HistServerPrefill.Name], float64(t.Prefill.Microseconds()), 1)
		observeValue(a.h[HistTTFTRest.Name], float64(max(rest, 0).Microseconds()), 1)
	}
	a.sumTTFT += ttft.Seconds()
	a.sumE2E += e2e.Seconds()
	// ITL: a chunk of k tokens after a gap g counts as k gaps of g/k, so
	// coalesced chunks neither inflate nor hide the per-token latency.
	// Only where the decode was observed: gaps inside one read are the
	// client's parse.
	if r.DecodeMeasured() {
		itl := a.h[HistITL.Name] // once per record, not per chunk
		r.ITLs(func(g time.Duration, k int) {
			observeValue(itl, float64(g.Microseconds())/float64(k), int64(k))
		})
	}
	good := true
	switch decodeSpan := e2e - ttft; {
	case out <= 1 || decodeSpan <= 0:
	case !r.DecodeMeasured():
		w.DecodeUnmeasured++
	default:
		tpot := decodeSpan / time.Duration(out-1)
		observeValue(a.h[HistTPOT.Name], float64(tpot.Microseconds()), 1)
		dec := float64(out-1) / decodeSpan.Seconds()
		observeValue(a.h[HistDecode.Name], dec*1e3, 1)
		a.output.decode(r, dec)
		if slo.TPOT > 0 && tpot > slo.TPOT {
			good = false
		}
	}
	if slo.TTFT > 0 && ttft > slo.TTFT || slo.E2E > 0 && e2e > slo.E2E {
		good = false
	}
	if good {
		a.good++
	}
}

// finish computes the window's derived figures.
func (a *winAcc) finish(slo SLO, events, okEvents []int64) {
	w := a.w
	w.Output = a.output.result()
	w.SpecDecode = a.spec.result()
	d := a.span.Len().Seconds()
	if d > 0 {
		w.AggregateOutputTokS = float64(w.OutputTokens) / d
		w.LittlesLawInFlight = a.inWindowS / d
	}
	w.MeanInFlight, w.MaxInFlight = inFlight(events, a.span)
	w.MeanServedInFlight, _ = inFlight(okEvents, a.span)
	if w.MeanInFlight > 0 {
		w.AggregatePerStreamTokS = w.AggregateOutputTokS / w.MeanInFlight
	}
	if slo.set() && w.Requests > 0 {
		w.Goodput = &Goodput{Requests: a.good, Fraction: float64(a.good) / float64(w.Requests)}
		if d > 0 {
			w.Goodput.RateRPS = float64(a.good) / d
		}
	}
	if a.sumE2E > 0 {
		w.PrefillShare = a.sumTTFT / a.sumE2E
	}
	if a.sumOutput > 0 {
		w.InputOutputRatio = float64(a.sumPrompt) / float64(a.sumOutput)
	}
	if a.sumReqOutput > 0 {
		w.RequestedInputOutputRatio = float64(a.sumReqPrompt) / float64(a.sumReqOutput)
	}
	for _, d := range windowDists(w) {
		if !d.exact {
			*d.dist = Summarize(d.metric, a.h[d.metric.Name])
		}
	}
	w.PromptTokens = a.prompts.dist()
	w.OutputPerReq = a.outputs.dist()
}

// inFlight returns the time-weighted mean and the maximum number of
// requests in flight during span, from sorted events (µs<<1 | start). At
// equal times ends sort before starts, so a closed-loop worker's next
// request never counts as overlapping its last.
func inFlight(events []int64, span Span) (mean float64, peak int) {
	if span.Len() <= 0 {
		return 0, 0
	}
	lo, hi := us(span.Start), us(span.End)
	cur, i := 0, 0
	for ; i < len(events) && events[i]>>1 <= lo; i++ {
		cur += eventDelta(events[i])
	}
	peak = cur
	prev := lo
	var area float64
	for ; i < len(events) && events[i]>>1 < hi; i++ {
		t := events[i] >> 1
		area += float64(cur) * float64(t-prev)
		prev = t
		cur += eventDelta(events[i])
		peak = max(peak, cur)
	}
	area += float64(cur) * float64(hi-prev)
	return area / float64(hi-lo), peak
}

func eventDelta(e int64) int {
	if e&1 == 1 {
		return 1
	}
	return -1
}

// peakRate returns the highest mean of the per-second series over any run
// of whole seconds as long as span, and where that run starts (s).
func peakRate(perSecond []float64, span time.Duration) (rate, startS float64) {
	k := int(math.Round(span.Seconds()))
	if k <= 0 || len(perSecond) == 0 {
		return 0, 0
	}
	k = min(k, len(perSecond))
	var sum float64
	for _, v := range perSecond[:k] {
		sum += v
	}
	best, at := sum, 0
	for i := k; i < len(perSecond); i++ {
		sum += perSecond[i] - perSecond[i-k]
		if sum > best {
			best, at = sum, i-k+1
		}
	}
	return best / float64(k), float64(at)
}

// Series is the run's per-second time series; slot i covers [i, i+1) s
// from the start of load.
type Series struct {
	StepS int `json:"step_s"`
	// OutputTokens arrived in each second (reasoning included).
	OutputTokens []int64 `json:"output_tokens"`
	// InFlight is the time-weighted mean number of requests in flight.
	InFlight []float64 `json:"in_flight"`
	// InputTokens and CachedInputTokens are the prompt tokens (usage) of
	// the requests sent in each second, for rate-limit meters.
	InputTokens       []int64 `json:"input_tokens"`
	CachedInputTokens []int64 `json:"cached_input_tokens"`
	// Started, Completed and Failed count requests by scheduled start and
	// by end.
	Started   []int64 `json:"started"`
	Completed []int64 `json:"completed"`
	Failed    []int64 `json:"failed"`
	// TTFT and E2E are the successful requests' latencies over time: TTFT
	// in the step of the first token, E2E in the step of the end (nil in
	// files from before they were kept, and when no request succeeded).
	TTFT *OverTime `json:"ttft_over_time,omitempty"`
	E2E  *OverTime `json:"e2e_over_time,omitempty"`
}

func grow[T int64 | float64](s []T, n int) []T {
	if len(s) < n {
		s = append(s, make([]T, n-len(s))...)
	}
	return s
}

// pad gives every series the same length n.
func (s *Series) pad(n int) {
	s.StepS = 1
	s.OutputTokens = grow(s.OutputTokens, n)
	s.InFlight = grow(s.InFlight, n)
	s.Started = grow(s.Started, n)
	s.InputTokens = grow(s.InputTokens, n)
	s.CachedInputTokens = grow(s.CachedInputTokens, n)
	s.Completed = grow(s.Completed, n)
	s.Failed = grow(s.Failed, n)
}

func (s *Series) bump(dst *[]int64, at time.Duration, n int64) {
	i := max(int(at/time.Second), 0)
	*dst = grow(*dst, i+1)
	(*dst)[i] += n
}

// addInFlight adds the request's presence over [from, to) to InFlight.
func (s *Series) addInFlight(from, to time.Duration) {
	s.StepS = 1
	if to <= from {
		return
	}
	last := int(to / time.Second)
	s.InFlight = grow(s.InFlight, last+1)
	for i := int(from / time.Second); i <= last; i++ {
		a := max(from, time.Duration(i)*time.Second)
		b := min(to, time.Duration(i+1)*time.Second)
		if b > a {
			s.InFlight[i] += (b - a).Seconds()
		}
	}
}

// String is for debugging.
func (s Span) String() string { return fmt.Sprintf("[%v, %v)", s.Start, s.End) }

// Tolerances bound how far the server's token counts may drift from the
// pinned ones before a run is invalid.
type Tolerances struct {
	// PromptPct applies per request, and is never tighter than one token.
	PromptPct float64
	// OutputPct applies per request too (0 when the output pin is exact).
	OutputPct float64
}

// driftAcc accumulates per-request drift of a token count, in percent, and
// counts the requests beyond the tolerance: |got − want| > max(tolPct% of
// want, minTokens).
type driftAcc struct {
	abs             *hdrhistogram.Histogram // |drift| in 0.001% units
	d               Drift
	tolPct          float64
	minTokens       float64
	sum, sumAb      float64
	sumGot, sumWant int64
}

func (a *driftAcc) add(got, want int) {
	if want <= 0 {
		return
	}
	diff := float64(got - want)
	pct := diff / float64(want) * 100
	a.d.Requests++
	a.sum += pct
	a.sumAb += math.Abs(pct)
	a.sumGot += int64(got)
	a.sumWant += int64(want)
	a.d.MaxAbsPct = max(a.d.MaxAbsPct, math.Abs(pct))
	if a.abs == nil {
		a.abs = histDrift.new()
	}
	observeValue(a.abs, math.Abs(pct)*1e3, 1)
	if got == want {
		a.d.Exact++
	}
	if math.Abs(diff) > max(a.tolPct/100*float64(want), a.minTokens) {
		a.d.Outside++
	}
}

func (a *driftAcc) result() *Drift {
	if a.d.Requests == 0 {
		return nil
	}
	d := a.d
	n := float64(d.Requests)
	d.TolerancePct = a.tolPct
	d.MeanPct = a.sum / n
	d.MeanAbsPct = a.sumAb / n
	d.MeanObserved = float64(a.sumGot) / n
	d.MeanRequested = float64(a.sumWant) / n
	d.AbsPct = Summarize(histDrift, a.abs)
	if e, ok := encodeAll(map[HistSpec]*hdrhistogram.Histogram{histDrift: a.abs})[histDrift.Name]; ok {
		d.Histogram = &e
	}
	return &d
}

// exactCounts counts integer values exactly (value → how many): token
// lengths, whose distinct values are few beside the requests, shown to the
// token rather than through a 3-significant-figure histogram.
type exactCounts map[int64]int64

// dist summarises the counts as Summarize does a histogram (nearest-rank
// percentiles), exactly; nil when empty.
func (e exactCounts) dist() *Dist {
	if len(e) == 0 {
		return nil
	}
	vals := make([]int64, 0, len(e))
	var n int64
	var sum float64
	for v, k := range e {
		vals = append(vals, v)
		n += k
		sum += float64(v) * float64(k)
	}
	slices.Sort(vals)
	mean := sum / float64(n)
	var sq float64
	for v, k := range e {
		sq += (float64(v) - mean) * (float64(v) - mean) * float64(k)
	}
	qs := []float64{10, 50, 90, 95, 99, 99.9}
	out := make([]float64, len(qs))
	var cum int64
	j := 0
	for _, v := range vals {
		cum += e[v]
		for j < len(qs) && cum >= stats.NearestRank(qs[j], n) {
			out[j] = float64(v)
			j++
		}
	}
	return &Dist{Count: n, Min: float64(vals[0]), Mean: mean, Stddev: math.Sqrt(sq / float64(n)),
		P10: out[0], P50: out[1], P90: out[2], P95: out[3], P99: out[4], P999: out[5], Max: float64(vals[len(vals)-1])}
}
