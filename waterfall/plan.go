package waterfall

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/sixpin/sixpin/scenario"
)

// Brochure is the name of the built-in start: the conditions a brochure
// figure is taken at.
const Brochure = "brochure"

// The brochure preset's pins.
const (
	BrochureStreams      = 1
	BrochurePromptTokens = 128
	BrochureOutputTokens = 32
)

// NewBrochure is the brochure preset for to: one stream (closed loop), a
// 128-token prompt of prose (no shared prefix), 32 tokens out, independent
// requests of one class, everything else (model, KV-cache budget, output
// exactness, bounds, windows, SLO, seed) as in to. The waterfall reads it
// in the burst window, as every start.
func NewBrochure(to *scenario.Scenario) *scenario.Scenario {
	b := *to
	b.Name, b.Description, b.Path = Brochure, "the brochure's conditions: concurrency 1, a 128-token prompt, 32 tokens out, in a burst", Brochure
	b.Sweep = nil
	b.Pins.Prompt = scenario.PromptPin{Tokens: scenario.Fixed(BrochurePromptTokens), TolerancePct: to.Pins.Prompt.TolerancePct}
	b.Pins.Output = scenario.OutputPin{Tokens: scenario.Fixed(BrochureOutputTokens), Exact: to.Pins.Output.Exact, TolerancePct: to.Pins.Output.TolerancePct}
	if to.Workload.Replay() {
		b.Pins.Output.Exact = true
	}
	b.Pins.Concurrency = scenario.ConcurrencyPin{Mode: scenario.ModeClosed, Streams: BrochureStreams}
	b.Pins.Mix = scenario.MixPin{}
	b.Workload = scenario.Workload{Kind: scenario.WorkloadRequests}
	if b.Duration == 0 && b.Requests == 0 {
		// A trace or a session count bounded the production run.
		b.Requests = 100
	}
	sum := sha256.Sum256([]byte("sixpin waterfall brochure\x00" + to.SHA256))
	b.SHA256 = hex.EncodeToString(sum[:])
	return &b
}

// DefaultMaxRuns is the default budget of exact attribution: its runs
// (2^k configurations for k moved scenario pins, times the repeats) at
// most this many.
const DefaultMaxRuns = 64

// Options choose a waterfall's steps and attribution.
type Options struct {
	// Order lists moves to take first, in this order; the rest follow in
	// DefaultOrder.
	Order []string
	// Metric holds one metric through every step ("": the default
	// decode → effective switch).
	Metric string
	// Orders is 1 (the order alone) or 2 (the order and its reverse);
	// 0, with Exact false, chooses: exact Shapley values when their runs
	// fit MaxRuns, else the order and its reverse.
	Orders int
	// Exact runs every subset of the moved scenario pins; refused when
	// its runs exceed MaxRuns.
	Exact bool
	// Repeat is how many runs measure each configuration (≥ 1).
	Repeat int
	// MaxRuns bounds exact attribution's runs (0: DefaultMaxRuns).
	MaxRuns int
}

// Plan is a waterfall before it runs: the moves in order, the skipped
// pins, and every configuration to run. It is pure data in from and to.
type Plan struct {
	From, To *scenario.Scenario
	Options
	// Order is the moved pins in step order.
	Order   []string
	Skipped []Skipped
	// Configs are the configurations to run, in the order they are
	// first needed: the start, each step's, then those only the reverse
	// order or the exact attribution need.
	Configs []Config
	// Auto is true when the attribution was chosen by default (Options
	// Orders 0 and Exact false): Exact or Orders 2 is then that choice.
	Auto bool
	// fold names the pins the workload's move carries: those a trace
	// gives, those agentic sessions take none of, and the content when a
	// side is not independent requests.
	fold []string
}

// scenarioPins are the moves that need runs of their own.
var scenarioPins = []string{PinModel, PinKVCache, PinMix, PinOutput, PinPrompt, PinContent, PinConcurrency, PinWorkload}

// view reports whether pin is a view (window, metric): no run of its own.
func view(pin string) bool { return pin == PinWindow || pin == PinMetric }

// traceGiven are the pins a trace gives: with a trace on either side they
// move with the workload.
var traceGiven = []string{PinPrompt, PinOutput, PinConcurrency, PinMix}

// contentFolds reports whether the content pin must move with the
// workload: only independent requests have a content class (an agentic
// session's or a trace's turns are prose, and Validate refuses a content
// pin beside them), so when either side's workload is not independent
// requests and either side sets a content, no configuration may hold
// one side's workload with the other's content.
func contentFolds(from, to *scenario.Scenario) bool {
	return (!from.Workload.Independent() || !to.Workload.Independent()) && (len(from.Pins.Prompt.Content) > 0 || len(to.Pins.Prompt.Content) > 0)
}

// agenticFolds are the pins that must move with the workload between
// independent requests and agentic sessions because the requests' side
// sets them where agentic sessions take none (Validate refuses them
// beside agentic sessions): mix classes, an open loop, a shared prefix.
func agenticFolds(from, to *scenario.Scenario) []string {
	req := from
	switch {
	case from.Workload.Agentic() && to.Workload.Independent():
		req = to
	case !(to.Workload.Agentic() && from.Workload.Independent()):
		return nil
	}
	var out []string
	if req.Pins.Prompt.SharedPrefixTokens > 0 {
		out = append(out, PinPrompt)
	}
	if req.Pins.Concurrency.Mode != scenario.ModeClosed {
		out = append(out, PinConcurrency)
	}
	if len(req.Pins.Mix.Classes) > 0 {
		out = append(out, PinMix)
	}
	return out
}

// foldReason is why a pin the workload carries is skipped.
func foldReason(pin string, trace bool) string {
	switch {
	case pin == PinContent:
		return "only independent requests have a content class: it moves with the workload"
	case trace:
		return "a trace gives it: it moves with the workload"
	case pin == PinPrompt:
		return "agentic sessions share no prefix across sessions: it moves with the workload"
	case pin == PinConcurrency:
		return "agentic sessions run in closed loop: it moves with the workload"
	}
	return "an agentic session's turns are its mix: it moves with the workload"
}

// NewPlan plans the waterfall from from to to. By default (o.Orders 0,
// not o.Exact) the attribution is exact whenever its runs fit o.MaxRuns,
// else the order and its reverse. It refuses a sweep, an unknown or
// repeated name in o.Order, an unknown metric, Orders other than 0, 1 or
// 2, and an exact waterfall over its budget.
func NewPlan(from, to *scenario.Scenario, o Options) (*Plan, error) {
	switch {
	case from.Sweep != nil || to.Sweep != nil:
		return nil, fmt.Errorf("a waterfall moves from one scenario to one scenario, not a sweep")
	case o.Metric != "" && !slices.Contains(Metrics, o.Metric):
		return nil, fmt.Errorf("--metric %q: want one of %s", o.Metric, strings.Join(Metrics, ", "))
	case o.Orders < 0 || o.Orders > 2:
		return nil, fmt.Errorf("--orders %d: want 1 (the order alone) or 2 (the order and its reverse)", o.Orders)
	}
	if o.Repeat < 1 {
		o.Repeat = 1
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	order, err := fullOrder(o.Order)
	if err != nil {
		return nil, err
	}
	p := &Plan{From: from, To: to, Options: o}
	if from.Workload.Replay() || to.Workload.Replay() {
		p.fold = slices.Clone(traceGiven)
	}
	trace := p.fold != nil
	p.fold = append(p.fold, agenticFolds(from, to)...)
	if contentFolds(from, to) {
		// After the prompt, whose move keeps the content.
		p.fold = append(p.fold, PinContent)
	}
	for _, pin := range order {
		switch {
		case pin == PinMetric && o.Metric != "":
			p.Skipped = append(p.Skipped, Skipped{Pin: pin, Value: o.Metric, Reason: "held: --metric " + o.Metric})
		case view(pin):
			p.Order = append(p.Order, pin)
		case slices.Contains(p.fold, pin):
			p.Skipped = append(p.Skipped, Skipped{Pin: pin, Value: Value(pin, to), Reason: foldReason(pin, trace)})
		case equal(pin, from, to):
			p.Skipped = append(p.Skipped, Skipped{Pin: pin, Value: Value(pin, to), Reason: "equal in both"})
		default:
			p.Order = append(p.Order, pin)
		}
	}
	if p.fold != nil && !slices.Contains(p.Order, PinWorkload) {
		// Equal workloads replaying one trace: nothing the trace gives
		// moved. (Equal workloads are independent on both sides or on
		// neither, so the content never folds without a workload move.)
		p.fold = nil
	}
	switch fits := p.ExactRuns() <= o.MaxRuns; {
	case o.Exact && !fits:
		return nil, fmt.Errorf("--exact needs %d runs (%d configurations × %d), more than --max-runs %d: raise --max-runs, use --orders 2, or move fewer pins",
			p.ExactRuns(), p.ExactRuns()/o.Repeat, o.Repeat, o.MaxRuns)
	case o.Exact || o.Orders != 0:
		p.Options.Orders = max(o.Orders, 1)
	case fits:
		p.Auto, p.Exact, p.Options.Orders = true, true, 1
	default:
		p.Auto, p.Options.Orders = true, 2
	}
	p.Configs = p.configs()
	return p, nil
}

// ExactRuns is how many runs exact attribution takes: every subset of
// the moved scenario pins, times the repeats.
func (p *Plan) ExactRuns() int {
	return (1 << len(scenarioOnly(p.Order))) * p.Repeat
}

// fullOrder is given followed by the rest of DefaultOrder.
func fullOrder(given []string) ([]string, error) {
	var order []string
	for _, g := range given {
		switch {
		case !slices.Contains(DefaultOrder, g):
			return nil, fmt.Errorf("--order: unknown pin %q (want some of %s)", g, strings.Join(DefaultOrder, ", "))
		case slices.Contains(order, g):
			return nil, fmt.Errorf("--order: %q is named twice", g)
		}
		order = append(order, g)
	}
	for _, d := range DefaultOrder {
		if !slices.Contains(order, d) {
			order = append(order, d)
		}
	}
	return order, nil
}

// Orders are the orders the plan measures: its order, and the reverse
// when Orders is 2.
func (p *Plan) Orders() []NamedOrder {
	name := "default"
	if len(p.Options.Order) > 0 {
		name = "given"
	}
	os := []NamedOrder{{Name: name, Pins: p.Order}}
	if p.Options.Orders == 2 {
		os = append(os, NamedOrder{Name: "reverse", Pins: reversed(p.Order)})
	}
	return os
}

func reversed(xs []string) []string {
	r := slices.Clone(xs)
	slices.Reverse(r)
	return r
}

// configs lists every configuration the plan needs, in the order first
// needed.
func (p *Plan) configs() []Config {
	var cs []Config
	seen := map[string]bool{}
	add := func(set []string) {
		moved := scenarioOnly(set)
		k := Key(moved)
		if !seen[k] {
			seen[k] = true
			cs = append(cs, Config{Key: k, Moved: moved})
		}
	}
	for _, o := range p.Orders() {
		for i := range len(o.Pins) + 1 {
			add(o.Pins[:i])
		}
	}
	if p.Exact {
		var sc []string
		for _, pin := range p.Order {
			if !view(pin) {
				sc = append(sc, pin)
			}
		}
		for mask := range 1 << len(sc) {
			var set []string
			for i, pin := range sc {
				if mask&(1<<i) != 0 {
					set = append(set, pin)
				}
			}
			add(set)
		}
	}
	return cs
}

// scenarioOnly is set's scenario pins (views dropped), in DefaultOrder.
func scenarioOnly(set []string) []string {
	var out []string
	for _, pin := range scenarioPins {
		if slices.Contains(set, pin) {
			out = append(out, pin)
		}
	}
	return out
}

// Key names the configuration with moved (scenario pins) at their
// production value: them joined with "+" in DefaultOrder; "" the start.
func Key(moved []string) string { return strings.Join(scenarioOnly(moved), "+") }

// Runs is how many runs the plan takes.
func (p *Plan) Runs() int { return len(p.Configs) * p.Repeat }

// Scenario is the scenario of configuration c's repeat i (0-based): the
// start with c's pins at their production value, seed to's seed + i,
// validated.
func (p *Plan) Scenario(c Config, i int) (*scenario.Scenario, error) {
	s := *p.From
	s.Sweep = nil
	for _, pin := range c.Moved {
		move(&s, p.To, pin)
		if pin == PinWorkload {
			for _, f := range p.fold {
				move(&s, p.To, f)
			}
		}
	}
	// The frame of every run is the production scenario's.
	s.Duration, s.Requests, s.RequestTimeout = p.To.Duration, p.To.Requests, p.To.RequestTimeout
	s.Windows, s.SLO, s.Target = p.To.Windows, p.To.SLO, p.To.Target
	if s.Duration == 0 && s.Requests == 0 && !s.Workload.Replay() {
		s.Duration, s.Requests = p.From.Duration, p.From.Requests
	}
	s.Seed = p.To.Seed + int64(i)
	switch {
	case c.Key == Key(p.Order):
		s.Name = p.To.Name
	case c.Key != "":
		s.Name = p.From.Name + "+" + c.Key
	}
	s.Path = p.To.Path
	sum := sha256.Sum256([]byte("sixpin waterfall\x00" + p.From.SHA256 + "\x00" + p.To.SHA256 + "\x00" + c.Key))
	s.SHA256 = hex.EncodeToString(sum[:])
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("the step with %s moved: %w", orStart(c.Key), err)
	}
	return &s, nil
}

func orStart(key string) string {
	if key == "" {
		return "no pin"
	}
	return key
}

// move sets pin of s to its value in to.
func move(s, to *scenario.Scenario, pin string) {
	switch pin {
	case PinModel:
		s.Pins.Model = to.Pins.Model
	case PinKVCache:
		s.Pins.KVCache = to.Pins.KVCache
	case PinMix:
		s.Pins.Mix = to.Pins.Mix
	case PinOutput:
		s.Pins.Output = to.Pins.Output
	case PinPrompt:
		// The prompt's shape; its content is a pin of its own.
		content := s.Pins.Prompt.Content
		s.Pins.Prompt = to.Pins.Prompt
		s.Pins.Prompt.Content = content
	case PinContent:
		// The top-level content; a mix class's own moves with the mix.
		s.Pins.Prompt.Content = to.Pins.Prompt.Content
	case PinConcurrency:
		s.Pins.Concurrency = to.Pins.Concurrency
	case PinWorkload:
		s.Workload = to.Workload
	}
	if pin == PinPrompt || pin == PinOutput || pin == PinMix || pin == PinWorkload {
		// A declared input:output ratio belongs to the pins it was
		// declared with — the workload's too: an agentic session's
		// context snowballs — to's once they all are to's, else derived.
		s.Pins.Mix.InputOutputRatio = 0
		if reflect.DeepEqual(s.Pins.Mix.Classes, to.Pins.Mix.Classes) && reflect.DeepEqual(shape(s.Pins.Prompt), shape(to.Pins.Prompt)) &&
			reflect.DeepEqual(s.Pins.Output, to.Pins.Output) && equal(PinWorkload, s, to) {
			s.Pins.Mix.InputOutputRatio = to.Pins.Mix.InputOutputRatio
		}
	}
}

// equal reports whether pin has one value in a and b.
func equal(pin string, a, b *scenario.Scenario) bool {
	switch pin {
	case PinModel:
		return a.Pins.Model == b.Pins.Model
	case PinKVCache:
		return reflect.DeepEqual(a.Pins.KVCache, b.Pins.KVCache)
	case PinMix:
		// The classes: a declared input:output ratio changes no request
		// (it moves with the prompt and output pins, see move).
		return reflect.DeepEqual(a.Pins.Mix.Classes, b.Pins.Mix.Classes)
	case PinOutput:
		return reflect.DeepEqual(a.Pins.Output, b.Pins.Output)
	case PinPrompt:
		return reflect.DeepEqual(shape(a.Pins.Prompt), shape(b.Pins.Prompt))
	case PinContent:
		return maps.Equal(a.Pins.Prompt.Content.Shares(), b.Pins.Prompt.Content.Shares())
	case PinConcurrency:
		return a.Pins.Concurrency == b.Pins.Concurrency
	case PinWorkload:
		wa, wb := a.Workload, b.Workload
		wa.Trace, wb.Trace = nil, nil
		return reflect.DeepEqual(wa, wb) && sameTrace(a, b)
	}
	return false
}

// shape is p without its content: the prompt pin's own part.
func shape(p scenario.PromptPin) scenario.PromptPin {
	p.Content = nil
	return p
}

// sameTrace reports whether a and b replay the same trace file (or none).
func sameTrace(a, b *scenario.Scenario) bool {
	return a.Workload.Trace == b.Workload.Trace || a.Workload.File == b.Workload.File && a.Workload.File != "" && a.Path == b.Path
}

// Value is pin's value in s, compactly ("uniform [9000, 13000] tokens",
// "closed, 2 streams", "code 75%, prose 25%"; a view's name at the start
// or end for views). A content pin is "prose" when unset, and "prose,
// agentic turns" or "the trace's" for a workload that is not independent
// requests.
func Value(pin string, s *scenario.Scenario) string {
	ps := s.Pins
	switch pin {
	case PinModel:
		v := ps.Model.Name
		if ps.Model.ParamsB > 0 {
			v += " " + num(ps.Model.ParamsB) + "B"
		}
		if ps.Model.Dtype != "" {
			v += " " + ps.Model.Dtype
		}
		return v
	case PinKVCache:
		var parts []string
		kv := ps.KVCache
		if kv.MaxModelLen > 0 {
			parts = append(parts, "max_model_len "+strconv.Itoa(kv.MaxModelLen))
		}
		if kv.MaxNumSeqs > 0 {
			parts = append(parts, "max_num_seqs "+strconv.Itoa(kv.MaxNumSeqs))
		}
		if kv.GPUMemoryUtilization > 0 {
			parts = append(parts, "gpu_memory_utilization "+num(kv.GPUMemoryUtilization))
		}
		if kv.Batching != "" {
			parts = append(parts, kv.Batching+" batching")
		}
		if kv.PrefixCaching != nil {
			parts = append(parts, "prefix_caching "+strconv.FormatBool(*kv.PrefixCaching))
		}
		if len(parts) == 0 {
			return "undeclared"
		}
		return strings.Join(parts, ", ")
	case PinMix:
		if len(ps.Mix.Classes) == 0 {
			return "one class"
		}
		names := make([]string, len(ps.Mix.Classes))
		for i, c := range ps.Mix.Classes {
			names[i] = c.Name + " " + num(c.Weight)
		}
		return strconv.Itoa(len(names)) + " classes (" + strings.Join(names, ", ") + ")"
	case PinOutput:
		if s.Workload.Replay() {
			return "the trace's"
		}
		v := ps.Output.Tokens.String() + " tokens"
		if ps.Output.Exact {
			v += ", exact"
		}
		return v
	case PinPrompt:
		if s.Workload.Replay() {
			return "the trace's"
		}
		v := ps.Prompt.Tokens.String() + " tokens"
		if ps.Prompt.SharedPrefixTokens > 0 {
			v += fmt.Sprintf(", %d shared", ps.Prompt.SharedPrefixTokens)
		}
		return v
	case PinContent:
		switch {
		case s.Workload.Agentic():
			return scenario.ContentProse + ", agentic turns"
		case s.Workload.Replay():
			return "the trace's"
		}
		return ps.Prompt.Content.String()
	case PinConcurrency:
		c := ps.Concurrency
		switch c.Mode {
		case scenario.ModeOpen:
			return fmt.Sprintf("open, %s/s %s", num(c.Rate), c.Arrival)
		case scenario.ModeTrace:
			return "the trace's sessions"
		}
		if c.Streams == 1 {
			return "closed, 1 stream"
		}
		return fmt.Sprintf("closed, %d streams", c.Streams)
	case PinWorkload:
		w := s.Workload
		switch {
		case w.Agentic():
			return fmt.Sprintf("agentic sessions, %s turns", w.Turns)
		case w.Replay():
			return "trace " + w.File
		}
		return "independent requests"
	}
	return ""
}

// viewValue is a view's value at the start (at = false) or end.
func (p *Plan) viewValue(pin string, at bool) string {
	switch {
	case pin == PinWindow && at:
		return WindowTo
	case pin == PinWindow:
		return WindowFrom
	case p.Metric != "":
		return p.Metric
	case at:
		return SwitchTo
	}
	return SwitchFrom
}

// PinValue is pin's value at the start (end = false) or at the end.
func (p *Plan) PinValue(pin string, end bool) string {
	if view(pin) {
		return p.viewValue(pin, end)
	}
	if end {
		return Value(pin, p.To)
	}
	return Value(pin, p.From)
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
