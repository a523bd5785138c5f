package scenario

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/randx"
	"github.com/sixpin/sixpin/record"
)

// Stream constants keep the Plan's random streams apart: request i draws
// from PCG(seed, splitmix64(i ^ requestStream)), arrivals from PCG(seed,
// arrivalStream). Changing them changes every plan; don't.
const (
	requestStream = 0x7369_7870_696e_7271 // "sixpinrq"
	arrivalStream = 0x7369_7870_696e_6172 // "sixpinar"
	sessionStream = 0x7369_7870_696e_7373 // "sixpinss"
)

// ExpectationSamples is how many requests Plan.Expected averages over.
const ExpectationSamples = 20_000

// Expectation is what the plan's requests average to.
type Expectation struct {
	// MeanPromptTokens and MeanOutputTokens are mean lengths in tokens.
	MeanPromptTokens float64
	MeanOutputTokens float64
	// Ratio is the input:output token ratio, MeanPromptTokens /
	// MeanOutputTokens.
	Ratio float64
	// Samples is the number of requests averaged (the first ones of the
	// plan); 0 when the means are exact, from the distributions.
	Samples int
}

// meanOf is the Expectation of n requests whose prompt and output lengths
// sum to promptSum and outputSum tokens.
func meanOf(promptSum, outputSum float64, n int) Expectation {
	e := Expectation{Samples: n}
	if n > 0 {
		e.MeanPromptTokens, e.MeanOutputTokens = promptSum/float64(n), outputSum/float64(n)
	}
	if e.MeanOutputTokens > 0 {
		e.Ratio = e.MeanPromptTokens / e.MeanOutputTokens
	}
	return e
}

// effectiveClass is a request class with inherited pins resolved.
type effectiveClass struct {
	name           string
	weight         float64
	prompt, output Dist
	content        Content // nil: prose
}

// planClass is an effectiveClass prepared for drawing.
type planClass struct {
	name           string
	weight         float64
	prompt, output sampler
	// contents are the class's content classes with their shares,
	// largest first, and cumContent their cumulative shares.
	contents   []contentShare
	cumContent []float64
}

// effectiveClasses returns s's classes with their own or the top-level
// token pins; a mix without classes is one unnamed class of weight 1.
func (s *Scenario) effectiveClasses() []effectiveClass {
	top := effectiveClass{weight: 1, prompt: s.Pins.Prompt.Tokens, output: s.Pins.Output.Tokens, content: s.Pins.Prompt.Content}
	if len(s.Pins.Mix.Classes) == 0 {
		return []effectiveClass{top}
	}
	cs := make([]effectiveClass, len(s.Pins.Mix.Classes))
	for i, c := range s.Pins.Mix.Classes {
		cs[i] = effectiveClass{name: c.Name, weight: c.Weight, prompt: top.prompt, output: top.output, content: top.content}
		if c.ownsPromptTokens() {
			cs[i].prompt = c.Prompt.Tokens
		}
		if c.Prompt != nil && len(c.Prompt.Content) > 0 {
			cs[i].content = c.Prompt.Content
		}
		if c.Output != nil {
			cs[i].output = c.Output.Tokens
		}
	}
	return cs
}

// Plan is the materialised, reproducible workload of a scenario: request i
// is a pure function of (seed, i), and the arrival times a pure function of
// the seed. A Plan is safe for concurrent use; the Scenario it was made from
// must not change afterwards.
type Plan struct {
	s    *Scenario
	seed uint64
	// salt changes every prompt text, none of the lengths or arrivals
	// (0: the seed's own texts; see PromptSalt).
	salt    uint64
	classes []planClass
	cum     []float64 // cumulative class weights
	// The agentic workload's distributions, prepared.
	turns, firstPrompt, output, growth, think sampler
	// trace reads a replay's units, the trace's sessions in order of
	// start; sh is the shard of the whole plan this is (see Shard).
	trace *traceReader
	sh    Shard

	lenOnce sync.Once
	n       int
	expOnce sync.Once
	exp     Expectation
}

// PlanOption configures a Plan.
type PlanOption func(*Plan)

// PromptSalt salts every prompt text of the plan: the same seed with
// another salt gives the same lengths, classes, sessions and arrivals,
// but texts that share no prefix with the unsalted (or otherwise salted)
// ones, so a server's prefix cache cannot serve one run from another's
// prompts. Texts meant to be shared within the plan (shared prefixes, a
// session's history, a trace's blocks) stay shared: the salt is per plan,
// not per request. 0 leaves the seed's own texts.
func PromptSalt(salt uint64) PlanOption { return func(p *Plan) { p.salt = salt } }

// NewPlan returns the plan of a valid scenario (as returned by Load).
func NewPlan(s *Scenario, opts ...PlanOption) *Plan {
	p := &Plan{s: s, seed: uint64(s.Seed)}
	for _, o := range opts {
		o(p)
	}
	var total float64
	for _, c := range s.effectiveClasses() {
		c.prompt.Values, c.prompt.Weights = slices.Clone(c.prompt.Values), slices.Clone(c.prompt.Weights)
		c.output.Values, c.output.Weights = slices.Clone(c.output.Values), slices.Clone(c.output.Weights)
		pc := planClass{name: c.name, weight: c.weight, prompt: c.prompt.prepare(), output: c.output.prepare(), contents: c.content.classes()}
		var cum float64
		for _, x := range pc.contents {
			cum += x.share
			pc.cumContent = append(pc.cumContent, cum)
		}
		p.classes = append(p.classes, pc)
		total += c.weight
		p.cum = append(p.cum, total)
	}
	if w := s.Workload; w.Agentic() {
		p.turns, p.growth, p.think = w.Turns.prepare(), w.GrowthTokens.prepare(), w.ThinkSeconds.prepare()
		p.firstPrompt, p.output = p.classes[0].prompt, p.classes[0].output
	}
	if w := s.Workload; w.Replay() && w.Trace != nil {
		p.trace = &traceReader{f: w.Trace}
	}
	return p
}

// Scenario returns the scenario the plan was made from.
func (p *Plan) Scenario() *Scenario { return p.s }

// Request returns request i (from 0). It depends only on the seed and i,
// so any worker can compute any request in any order. From request i's own
// stream it draws, in order: the class (when there are several), the prompt
// tokens, the output tokens, and Seed. Arrival is left 0; see Materialize
// and Arrivals.
func (p *Plan) Request(i int) record.Request {
	r := rand.New(rand.NewPCG(p.seed, splitmix64(uint64(i)^requestStream)))
	c := p.classes[0]
	if len(p.classes) > 1 {
		u := r.Float64() * p.cum[len(p.cum)-1]
		j := sort.Search(len(p.cum), func(j int) bool { return p.cum[j] > u })
		c = p.classes[min(j, len(p.classes)-1)]
	}
	req := record.Request{
		Index:        i,
		Class:        c.name,
		PromptTokens: c.prompt.sampleInt(r),
		OutputTokens: c.output.sampleInt(r),
		Seed:         p.Salt(r.Uint64()),
		PrefixGroup:  -1,
	}
	if pp := p.s.Pins.Prompt; pp.SharedPrefixTokens > 0 {
		req.PrefixGroup = r.IntN(max(pp.PrefixGroups, 1))
	}
	// The content is drawn last, and only from a mix of contents, so
	// that declaring one leaves every other draw of the plan as it was.
	if len(c.contents) > 0 {
		req.Content = c.contents[0].class
	}
	if len(c.contents) > 1 {
		u := r.Float64() * c.cumContent[len(c.cumContent)-1]
		j := sort.Search(len(c.cumContent), func(j int) bool { return c.cumContent[j] > u })
		req.Content = c.contents[min(j, len(c.contents)-1)].class
	}
	return req
}

// prefixStream seeds the shared prefixes' text, apart from the requests'.
const prefixStream = 0x7369_7870_696e_7078 // "sixpinpx"

// SharedPrefix returns the length in tokens and the text seed of shared
// prefix g (see Request.PrefixGroup); tokens is 0 when prompts share none.
func (p *Plan) SharedPrefix(g int) (tokens int, seed uint64) {
	pp := p.s.Pins.Prompt
	if pp.SharedPrefixTokens <= 0 || g < 0 {
		return 0, 0
	}
	return pp.SharedPrefixTokens, p.Salt(splitmix64(p.seed ^ prefixStream ^ uint64(g)*0x9e3779b97f4a7c15))
}

// Salt returns a text seed salted by the plan's prompt salt (unchanged
// when the salt is 0), for every text the plan's requests are built from.
func (p *Plan) Salt(textSeed uint64) uint64 {
	if p.salt == 0 {
		return textSeed
	}
	return splitmix64(textSeed ^ p.salt)
}

// Materialize returns requests 0 to n-1 with, in open loop, their arrival
// times filled in.
func (p *Plan) Materialize(n int) []record.Request {
	if n <= 0 {
		return nil
	}
	reqs := make([]record.Request, n)
	var a *Arrivals
	if p.s.Pins.Concurrency.Mode == ModeOpen {
		a = p.Arrivals()
	}
	for i := range reqs {
		reqs[i] = p.Request(i)
		if a != nil {
			reqs[i].Arrival = a.Next()
		}
	}
	return reqs
}

// Len returns the number of requests the run issues: in open loop with a
// duration, the arrivals before it (capped by requests when set); else the
// scenario's requests when set; else -1 (closed loop until the duration).
// A shard's is its share of the whole plan's.
func (p *Plan) Len() int {
	p.lenOnce.Do(func() {
		s := p.s
		p.n = -1
		if s.Requests > 0 {
			p.n = s.Requests
		}
		c := s.Pins.Concurrency
		if c.Mode != ModeOpen || c.Rate <= 0 || s.Duration <= 0 {
			return
		}
		a, n := p.Arrivals(), 0
		// Validate bounds the arrivals; the cap keeps a scenario built
		// in Go without it from looping for ever.
		a.sh = Shard{} // count the whole plan's arrivals; the shard's are every N-th
		for (p.n < 0 || n < p.n) && n <= bounds.Requests && a.Next() < s.Duration.D() {
			n++
		}
		p.n = n
	})
	return p.sh.share(p.n)
}

// Expected returns the mean prompt and output lengths and their ratio over
// the plan's first ExpectationSamples requests (deterministic for a seed).
func (p *Plan) Expected() Expectation {
	p.expOnce.Do(func() {
		if p.s.Workload.Agentic() {
			p.exp = p.expectedSessions()
			return
		}
		if t := p.s.Workload.Trace; p.s.Workload.Replay() && t != nil {
			p.exp = TraceMeans(t.Summary())
			return
		}
		if e, ok := p.exactExpectation(); ok {
			p.exp = e
			return
		}
		var sp, so float64
		for i := range ExpectationSamples {
			r := p.Request(i)
			sp += float64(r.PromptTokens)
			so += float64(r.OutputTokens)
		}
		p.exp = meanOf(sp, so, ExpectationSamples)
	})
	return p.exp
}

// exactExpectation is the population mean of the plan's lengths when
// every class's distributions have one in closed form (fixed, uniform,
// empirical), weighted by the classes' weights: {1000, 33000} means
// 17,000, not what 20,000 draws happen to average. Samples is 0.
func (p *Plan) exactExpectation() (Expectation, bool) {
	var sp, so, total float64
	for _, c := range p.classes {
		mp, ok1 := exactMean(c.prompt.d)
		mo, ok2 := exactMean(c.output.d)
		if !ok1 || !ok2 {
			return Expectation{}, false
		}
		sp += c.weight * mp
		so += c.weight * mo
		total += c.weight
	}
	if total <= 0 {
		return Expectation{}, false
	}
	e := Expectation{MeanPromptTokens: sp / total, MeanOutputTokens: so / total}
	if e.MeanOutputTokens > 0 {
		e.Ratio = e.MeanPromptTokens / e.MeanOutputTokens
	}
	return e, true
}

// exactMean is the mean of d.SampleInt where it has a closed form.
func exactMean(d Dist) (float64, bool) {
	lo, hi := d.Bounds()
	lo, hi = math.Ceil(lo), math.Floor(hi)
	clamp := func(v float64) float64 {
		v = math.Round(v)
		if lo <= hi {
			v = min(max(v, lo), hi)
		}
		return v
	}
	switch d.Kind {
	case DistFixed:
		return clamp(d.Value), true
	case DistUniform:
		if lo > hi {
			return 0, false
		}
		return (lo + hi) / 2, true
	case DistEmpirical:
		var sum, weight float64
		for i, v := range d.Values {
			w := 1.0
			if len(d.Weights) == len(d.Values) {
				w = max(d.Weights[i], 0)
			}
			sum += w * clamp(v)
			weight += w
		}
		if weight <= 0 {
			return 0, false
		}
		return sum / weight, true
	}
	return 0, false
}

// Arrivals returns a new iterator over the open-loop arrival offsets, from
// its own random stream of the seed (independent of Request's): every call
// gives the same sequence. A shard's iterator gives the whole plan's
// arrivals I, I+N, I+2N, … (see Arrivals.Unit).
func (p *Plan) Arrivals() *Arrivals {
	c := p.s.Pins.Concurrency
	return &Arrivals{
		sh:    p.sh,
		r:     rand.New(rand.NewPCG(p.seed, arrivalStream)),
		open:  c.Mode == ModeOpen,
		kind:  c.Arrival,
		rate:  c.Rate,
		shape: c.Burstiness,
	}
}

// Arrivals iterates over open-loop arrival times. It is not safe for
// concurrent use.
type Arrivals struct {
	r     *rand.Rand
	open  bool
	kind  string
	rate  float64 // requests per second
	shape float64 // gamma burstiness
	i     int     // arrivals drawn so far, the whole plan's
	t     float64 // seconds from the start of load
	// sh is the shard whose arrivals Next returns.
	sh Shard
}

// Next returns the next arrival of the plan (of its shard, for a shard's
// plan) as an offset from the start of load; see draw.
func (a *Arrivals) Next() time.Duration {
	skip := a.sh.n() - 1
	if a.i == 0 {
		skip = a.sh.I
	}
	for range skip {
		a.draw()
	}
	return a.draw()
}

// Unit returns the index in the whole plan of the arrival Next returned
// last (the request to send at it); -1 before the first.
func (a *Arrivals) Unit() int { return a.i - 1 }

// draw returns the whole plan's next arrival as an offset from the start
// of load. The first is 0; the gaps after it are 1/rate (constant), exponential with
// mean 1/rate (poisson), or Gamma(shape = burstiness, scale = 1/(rate ·
// burstiness)) (gamma, vLLM's convention: mean 1/rate, coefficient of
// variation 1/√burstiness). In closed loop every offset is 0.
func (a *Arrivals) draw() time.Duration {
	if !a.open || a.rate <= 0 {
		return 0
	}
	i := a.i
	a.i++
	switch {
	case i == 0:
	case a.kind == ArrivalConstant:
		a.t = float64(i) / a.rate
	case a.kind == ArrivalGamma && a.shape > 0:
		a.t += randx.Gamma(a.r, a.shape) / (a.rate * a.shape)
	default: // poisson
		a.t += a.r.ExpFloat64() / a.rate
	}
	return seconds(a.t)
}

// seconds converts seconds to a Duration, saturating.
func seconds(t float64) time.Duration {
	if ns := t * float64(time.Second); ns < math.MaxInt64 {
		return time.Duration(ns)
	}
	return math.MaxInt64
}

// splitmix64 scrambles x so that neighbouring request indices seed
// unrelated PCG streams.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Session is one planned agentic session: a loop of turns, each re-sending
// the whole history plus a new tool result. The lengths are the plan's;
// the runner builds the history from what the server actually answered.
type Session struct {
	// Index is the session's position in the plan, from 0.
	Index int
	// Turns is how many turns the session takes at most.
	Turns int
	// FirstPromptTokens is the first turn's prompt: the system prompt and
	// the files read, in tokens.
	FirstPromptTokens int
	// Growth[k] is the tool result added before turn k, in tokens
	// (Growth[0] is 0).
	Growth []int
	// Outputs[k] is turn k's output pin, in tokens.
	Outputs []int
	// Think[k] is the wait before turn k (Think[0] is 0).
	Think []time.Duration
	// Seed seeds the session's texts (through Plan.Salt) and its backoff
	// jitter (as it is: the salt changes no timing).
	Seed uint64
	// ID names the session on the wire, in the session-affinity
	// headers (Plan.Affinity): "sixpin-INDEX-HEX", a pure function of the
	// seed, the prompt salt and Index.
	ID string
}

// Session returns agentic session i (from 0), a pure function of the seed
// and i, like Request.
func (p *Plan) Session(i int) Session {
	var s Session
	p.drawSession(i, func(head Session) {
		s = head
		s.Growth = make([]int, s.Turns)
		s.Outputs = make([]int, s.Turns)
		s.Think = make([]time.Duration, s.Turns)
	}, func(k, output, growth int, think time.Duration) bool {
		s.Outputs[k], s.Growth[k], s.Think[k] = output, growth, think
		return true
	})
	s.ID = p.sessionID(s.Index, s.Seed)
	return s
}

// drawSession draws session i: its head (Index, Turns, FirstPromptTokens,
// Seed), then turn by turn its output, the tool result before it (0 for
// turn 0) and the think time before it, until turn returns false. The
// draws are Session's, in its order, so a caller that stops early saw
// what Session would have returned.
func (p *Plan) drawSession(i int, head func(Session), turn func(k, output, growth int, think time.Duration) bool) {
	r := rand.New(rand.NewPCG(p.seed, splitmix64(uint64(i)^sessionStream)))
	s := Session{
		Index:             i,
		Turns:             max(p.turns.sampleInt(r), 1),
		FirstPromptTokens: p.firstPrompt.sampleInt(r),
		Seed:              r.Uint64(),
	}
	head(s)
	thinks := !p.s.Workload.ThinkSeconds.IsZero()
	for k := range s.Turns {
		output, growth, think := p.output.sampleInt(r), 0, time.Duration(0)
		if k > 0 {
			growth = p.growth.sampleInt(r)
			if thinks {
				think = time.Duration(max(p.think.sample(r), 0) * float64(time.Second))
			}
		}
		if !turn(k, output, growth, think) {
			return
		}
	}
}

// PromptTokens returns turn k's planned prompt content in tokens: the
// first prompt, every earlier output and every tool result so far.
func (s Session) PromptTokens(k int) int {
	n := s.FirstPromptTokens
	for j := 0; j < k; j++ {
		n += s.Outputs[j] + s.Growth[j+1]
	}
	return n
}

// startStream seeds the phase a stationary session joins at.
const startStream = 0x7369_7870_696e_7374 // "sixpinst"

// Joining is where a session running when load starts joins its life
// under a stationary start (Workload.Start): at turn Turn, after Wait.
type Joining struct {
	// Turn is the first turn sent (from 0); the turns before it are
	// its history, sent cold with the planned outputs as answers.
	Turn int
	// Wait is the rest of the think time before Turn, in run time: a
	// uniform share of it, as if load had started mid-think.
	Wait time.Duration
}

// Joining draws where s joins its life under a stationary start, as the
// stratum-th of strata sessions running at the start (from 0): a turn
// drawn uniformly from the stratum-th of strata equal shares of the
// turns it would take (those whose prompt and output fit the workload's
// max_context_tokens, or all of Turns), a pure function of the seed and
// s.Index. Stratified rather than independent: N sessions drawn
// independently may all be deep at once, or all shallow — a configuration
// a short window then judges as if it lasted — while N strata spread them
// over their lives as a long run mixes them, so the total context in
// flight starts near its long-run mean. Uniform over turns, not over
// time: later turns, behind longer prompts, last a little longer, so the
// start is a little shallower than a long run's average.
func (p *Plan) Joining(s Session, stratum, strata int) Joining {
	life, limit := 0, p.s.Workload.MaxContextTokens
	for k := range s.Turns {
		if limit > 0 && s.PromptTokens(k)+s.Outputs[k] > limit {
			break
		}
		life = k + 1
	}
	if life <= 1 || strata < 1 || stratum < 0 || stratum >= strata {
		return Joining{}
	}
	r := rand.New(rand.NewPCG(p.seed, splitmix64(uint64(s.Index)^startStream)))
	k := min(int((float64(stratum)+r.Float64())/float64(strata)*float64(life)), life-1)
	return Joining{Turn: k, Wait: time.Duration(r.Float64() * float64(s.Think[k]))}
}

// expectedSessions averages the turns of the plan's first sessions, each
// cut where its context would pass the workload's maximum. It draws only
// the turns it averages.
func (p *Plan) expectedSessions() Expectation {
	var sp, so float64
	n := 0
	limit := p.s.Workload.MaxContextTokens
	for i := 0; n < ExpectationSamples && i < ExpectationSamples; i++ {
		var pt, lastOut int
		p.drawSession(i, func(s Session) { pt = s.FirstPromptTokens }, func(k, output, growth int, _ time.Duration) bool {
			if k > 0 {
				pt += lastOut + growth // PromptTokens(k)
			}
			if limit > 0 && pt+output > limit {
				return false
			}
			sp += float64(pt)
			so += float64(output)
			lastOut = output
			n++
			return true
		})
	}
	return meanOf(sp, so, n)
}
