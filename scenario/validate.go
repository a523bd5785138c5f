package scenario

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/internal/strictyaml"
)

// Defaults applied by Parse (and, except the seed, by SetDefaults).
const (
	// DefaultSeed is the seed of a scenario that does not write one.
	DefaultSeed = 1
	// DefaultRequestTimeout bounds one request from send to last byte.
	DefaultRequestTimeout = 10 * time.Minute
	// DefaultBurst is the length of the burst window.
	DefaultBurst = 10 * time.Second
	// MaxRatioDeviation is how far (as a fraction of the expected ratio) a
	// declared pins.mix.input_output_ratio may sit from the one the prompt
	// and output pins give.
	MaxRatioDeviation = 0.25
)

// SetDefaults fills the fields a scenario may leave out: name from Path,
// request_timeout, windows.burst, windows.steady (auto), and for open loop
// the arrival process (poisson) and the gamma burstiness (1). A zero field
// counts as left out. Seed is left alone (0 is a valid seed). Use it on
// scenarios built in Go, before Validate; Parse applies the same defaults
// to keys absent from the file, and DefaultSeed to an absent seed.
func (s *Scenario) SetDefaults() { s.applyDefaults(s.present) }

// applyDefaults fills the fields that has reports absent.
func (s *Scenario) applyDefaults(has func(path string) bool) {
	if s.Name == "" && s.Path != "" {
		base := filepath.Base(s.Path)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if !has("request_timeout") {
		s.RequestTimeout = Duration(DefaultRequestTimeout)
	}
	if !has("windows.burst") {
		s.Windows.Burst = Duration(DefaultBurst)
	}
	if !has("windows.steady") {
		s.Windows.Steady = Steady{Auto: true}
	}
	w := &s.Workload
	if w.Kind == "" {
		w.Kind = WorkloadRequests
	}
	if w.Replay() {
		if w.TimeScale == 0 {
			w.TimeScale = 1
		}
		if s.Pins.Concurrency.Mode == "" {
			s.Pins.Concurrency.Mode = ModeTrace
		}
	}
	if a := w.SessionAffinity; a != nil && len(a.Headers) == 0 && !has("workload.session_affinity.headers") {
		a.Headers = []string{DefaultAffinityHeader}
	}
	if w.Agentic() {
		if w.On429 == "" {
			w.On429 = On429Backoff
		}
		if !has("workload.max_retries") {
			w.MaxRetries = DefaultMaxRetries
		}
		if w.MaxContextTokens == 0 {
			w.MaxContextTokens = s.Pins.KVCache.MaxModelLen
		}
	}
	c := &s.Pins.Concurrency
	if c.Mode == ModeOpen && !has("pins.concurrency.arrival") {
		c.Arrival = ArrivalPoisson
	}
	if c.Mode == ModeOpen && c.Arrival == ArrivalGamma && !has("pins.concurrency.burstiness") {
		c.Burstiness = 1
	}
}

// Validate checks s against every rule of the schema and returns an
// ErrorList of FieldErrors naming each offending field (no positions; Parse
// adds them), or nil. It also sets s.Warnings. Validate does not apply
// defaults (see SetDefaults); a zero field counts as absent.
func (s *Scenario) Validate() error {
	errs, warns := s.validate(s.present)
	s.Warnings = warns
	return errs.Err()
}

// present reports whether the field at a YAML path ("pins.mix.classes[0].weight")
// is set to a non-zero value in s: the reflection stand-in for "the YAML has
// this key", for scenarios that did not come from a file.
func (s *Scenario) present(path string) bool {
	v := reflect.ValueOf(s).Elem()
	for seg := range strings.SplitSeq(path, ".") {
		name, idx, indexed := strings.Cut(seg, "[")
		f, ok := strictyaml.FieldByKey(v, name)
		if !ok {
			return false
		}
		v = f
		if indexed {
			i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if err != nil || v.Kind() != reflect.Slice || i < 0 || i >= v.Len() {
				return false
			}
			v = v.Index(i)
		}
	}
	return !v.IsZero()
}

// validator collects errors and warnings against field paths.
type validator struct {
	s     *Scenario
	has   func(path string) bool
	errs  ErrorList
	warns ErrorList
}

// errorf records an error at field; string arguments (values read from
// the file) are cut short.
func (v *validator) errorf(field, format string, args ...any) {
	v.errs = append(v.errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, clip.Args(args)...)})
}

func (v *validator) warnf(field, format string, args ...any) {
	v.warns = append(v.warns, &FieldError{Field: field, Msg: fmt.Sprintf(format, clip.Args(args)...)})
}

// validate checks every rule; has tells whether a field was written.
func (s *Scenario) validate(has func(path string) bool) (errs, warns ErrorList) {
	v := &validator{s: s, has: has}
	v.model()
	v.limits()
	v.affinity()
	v.content()
	if s.Workload.Replay() {
		v.replay()
		v.kvCache(false)
		v.runBounds()
		v.windows()
		v.slo()
		v.target()
		return v.errs, v.warns
	}
	tokensOK := v.tokens()
	v.promptSharing(tokensOK)
	v.tolerances()
	v.concurrency()
	v.workload()
	classesOK := v.classes()
	v.kvCache(tokensOK)
	v.ratio(tokensOK && classesOK)
	v.runBounds()
	v.windows()
	v.slo()
	v.target()
	v.sweep()
	return v.errs, v.warns
}

// sweep checks a sweep: one known pin, at least one value, each valid for
// that pin, and a scenario the pin can vary in.
func (v *validator) sweep() {
	sw, p := v.s.Sweep, "sweep"
	if sw == nil {
		return
	}
	integer := false
	switch sw.Pin {
	case SweepStreams:
		integer = true
		if v.s.Pins.Concurrency.Mode != ModeClosed {
			v.errorf(p+".pin", "concurrency.streams needs pins.concurrency.mode closed")
		}
	case SweepRate:
		if v.s.Pins.Concurrency.Mode != ModeOpen {
			v.errorf(p+".pin", "concurrency.rate needs pins.concurrency.mode open")
		}
	case SweepPromptTokens, SweepOutputTokens:
		integer = true
		if len(v.s.Pins.Mix.Classes) > 0 {
			v.errorf(p+".pin", "%s cannot be swept across mix classes, each of which pins its own", sw.Pin)
		}
	case "":
		v.errorf(p+".pin", "required (%s, %s, %s or %s)", SweepStreams, SweepRate, SweepPromptTokens, SweepOutputTokens)
	default:
		v.errorf(p+".pin", "must be %s, %s, %s or %s (got %q)", SweepStreams, SweepRate, SweepPromptTokens, SweepOutputTokens, sw.Pin)
	}
	if len(sw.Values) == 0 {
		v.errorf(p+".values", "required: at least one value")
	}
	for i, x := range sw.Values {
		switch {
		case x <= 0:
			v.errorf(fmt.Sprintf("%s.values[%d]", p, i), "must be > 0 (got %s)", num(x))
		case integer && x != math.Trunc(x):
			v.errorf(fmt.Sprintf("%s.values[%d]", p, i), "must be a whole number for %s (got %s)", sw.Pin, num(x))
		}
	}
	if v.s.Workload.Replay() {
		v.errorf(p, "not with kind trace: the trace fixes every pin")
	}
}

func (v *validator) model() {
	m, p := v.s.Pins.Model, "pins.model"
	if strings.TrimSpace(m.Name) == "" {
		v.errorf(p+".name", "required")
	}
	if m.ParamsB < 0 {
		v.errorf(p+".params_b", "must be ≥ 0 (got %s)", num(m.ParamsB))
	}
	switch {
	case m.ActiveParamsB < 0:
		v.errorf(p+".active_params_b", "must be ≥ 0 (got %s)", num(m.ActiveParamsB))
	case m.ActiveParamsB > 0 && m.ParamsB == 0:
		v.errorf(p+".params_b", "required when active_params_b is set")
	case m.ActiveParamsB > m.ParamsB && m.ParamsB > 0:
		v.errorf(p+".active_params_b", "must be ≤ params_b (got %s > %s)", num(m.ActiveParamsB), num(m.ParamsB))
	}
}

// tokens checks the prompt and output token distributions, top-level and
// per class, and reports whether all are valid.
func (v *validator) tokens() bool {
	n := len(v.errs)
	pins := v.s.Pins
	v.topTokens("pins.prompt.tokens", pins.Prompt.Tokens, "prompt", func(c Class) bool { return c.ownsPromptTokens() })
	v.topTokens("pins.output.tokens", pins.Output.Tokens, "output", func(c Class) bool { return c.Output != nil })
	for i, c := range pins.Mix.Classes {
		cp := fmt.Sprintf("pins.mix.classes[%d]", i)
		if c.ownsPromptTokens() || c.Prompt != nil && v.has(cp+".prompt.tokens") {
			v.classDist(cp+".prompt.tokens", c.Prompt.Tokens)
		}
		if c.Output != nil {
			v.classDist(cp+".output.tokens", c.Output.Tokens)
		}
	}
	return len(v.errs) == n
}

// DefaultMaxRetries bounds the backoff retries of one agentic turn.
const DefaultMaxRetries = 5

// workload checks the workload kind and, for agentic sessions, its
// distributions and policies.
func (v *validator) workload() {
	w, p := v.s.Workload, "workload"
	switch w.Kind {
	case "", WorkloadRequests:
		for _, k := range []string{"sessions", "turns", "growth_tokens", "think_seconds", "max_context_tokens", "cost_cap_usd", "on_429", "max_retries", "start"} {
			if v.has(p + "." + k) {
				v.errorf(p+"."+k, "only for kind agentic")
			}
		}
		if v.has(p + ".preserve_reasoning") {
			v.errorf(p+".preserve_reasoning", "only for kind agentic or trace: a request of kind requests has no earlier turns")
		}
		return
	case WorkloadAgentic:
	default:
		v.errorf(p+".kind", "must be requests, agentic or trace (got %q)", w.Kind)
		return
	}
	for _, k := range []string{"file", "time_scale", "format", "sha256"} {
		if v.has(p + "." + k) {
			v.errorf(p+"."+k, "only for kind trace")
		}
	}
	if v.s.Pins.Concurrency.Mode != ModeClosed {
		v.errorf("pins.concurrency.mode", "must be closed for agentic sessions (streams = concurrent sessions)")
	}
	if len(v.s.Pins.Mix.Classes) > 0 {
		v.errorf("pins.mix.classes", "not with agentic sessions: a session's turns are its mix")
	}
	if v.s.Pins.Prompt.SharedPrefixTokens > 0 {
		v.errorf("pins.prompt.shared_prefix_tokens", "not with agentic sessions: each session shares its own history")
	}
	required := func(key string, d Dist) {
		if !v.has(p+"."+key) && d.IsZero() {
			v.errorf(p+"."+key, "required for kind agentic")
			return
		}
		v.dist(p+"."+key, d)
	}
	required("turns", w.Turns)
	if lo, _ := w.Turns.Bounds(); !w.Turns.IsZero() && lo < 1 {
		v.errorf(p+".turns", "must be ≥ 1 (got %s)", num(lo))
	}
	required("growth_tokens", w.GrowthTokens)
	if lo, _ := w.GrowthTokens.Bounds(); !w.GrowthTokens.IsZero() && lo < 1 {
		v.errorf(p+".growth_tokens", "must be ≥ 1 (got %s)", num(lo))
	}
	if !w.ThinkSeconds.IsZero() || v.has(p+".think_seconds") {
		v.dist(p+".think_seconds", w.ThinkSeconds)
		if lo, _ := w.ThinkSeconds.Bounds(); lo < 0 {
			v.errorf(p+".think_seconds", "must be ≥ 0 (got %s)", num(lo))
		}
	}
	if w.MaxContextTokens < 0 {
		v.errorf(p+".max_context_tokens", "must be ≥ 0 (got %d)", w.MaxContextTokens)
	}
	if w.Sessions < 0 {
		v.errorf(p+".sessions", "must be ≥ 0 (got %d)", w.Sessions)
	}
	if m := v.s.Pins.KVCache.MaxModelLen; m > 0 && w.MaxContextTokens > m {
		v.errorf(p+".max_context_tokens", "exceeds pins.kv_cache.max_model_len (%d > %d)", w.MaxContextTokens, m)
	}
	if w.CostCapUSD < 0 {
		v.errorf(p+".cost_cap_usd", "must be ≥ 0 (got %s)", num(w.CostCapUSD))
	}
	switch w.On429 {
	case "", On429Backoff, On429AbortSession, On429CountOnly:
	default:
		v.errorf(p+".on_429", "must be backoff, abort-session or count-only (got %q)", w.On429)
	}
	if w.MaxRetries < 0 {
		v.errorf(p+".max_retries", "must be ≥ 0 (got %d)", w.MaxRetries)
	}
	switch w.Start {
	case "", StartFresh, StartStationary:
	default:
		v.errorf(p+".start", "must be fresh or stationary (got %q)", w.Start)
	}
}

// replay checks a trace replay: the trace gives the prompt, output,
// concurrency and mix pins, so the scenario must not declare them.
func (v *validator) replay() {
	w, p := v.s.Workload, "workload"
	for _, k := range []string{"pins.prompt", "pins.output", "pins.mix"} {
		if v.has(k) {
			v.errorf(k, "not with kind trace: the trace gives it")
		}
	}
	mlperf := w.MLPerfReplay()
	switch c := v.s.Pins.Concurrency; {
	case mlperf && (c.Mode != "" && c.Mode != ModeTrace && c.Mode != ModeClosed || c.Rate != 0 || c.MaxInFlight != 0):
		v.errorf("pins.concurrency", "with format %s only streams: how many conversations run at once (MLPerf's target_concurrency; default all)", FormatMLPerfAgentic)
	case mlperf && c.Streams < 0:
		v.errorf("pins.concurrency.streams", "must be ≥ 1 (got %d)", c.Streams)
	case !mlperf && ((c.Mode != "" && c.Mode != ModeTrace) || c.Streams != 0 || c.Rate != 0 || c.MaxInFlight != 0):
		v.errorf("pins.concurrency", "not with kind trace: the trace's sessions arrive as recorded (scale them with workload.time_scale)")
	}
	for _, k := range []string{"sessions", "turns", "growth_tokens", "think_seconds", "cost_cap_usd", "on_429", "max_retries", "max_context_tokens", "start"} {
		if v.has(p+"."+k) && !(mlperf && k == "sessions") {
			v.errorf(p+"."+k, "only for kind agentic")
		}
	}
	switch {
	case w.Format != "" && w.Format != FormatMLPerfAgentic:
		v.errorf(p+".format", "must be %s or absent (sixpin's JSONL and Mooncake's, Azure's and Weka's traces are detected; got %q)", FormatMLPerfAgentic, w.Format)
	case w.SHA256 != "" && !mlperf:
		v.errorf(p+".sha256", "only with format %s", FormatMLPerfAgentic)
	case w.SHA256 != "" && !isSHA256(w.SHA256):
		v.errorf(p+".sha256", "must be 64 hex digits (got %q)", w.SHA256)
	case mlperf && w.Sessions < 0:
		v.errorf(p+".sessions", "must be ≥ 0 (got %d)", w.Sessions)
	}
	if w.File == "" {
		v.errorf(p+".file", "required for kind trace")
	}
	if w.TimeScale < 0 {
		v.errorf(p+".time_scale", "must be > 0 (got %s)", num(w.TimeScale))
	}
	switch {
	case w.readErr != nil:
		v.errorf(p+".file", "%v", w.readErr)
	case w.File != "" && w.Trace == nil:
		v.errorf(p+".file", "the trace was not read (load the scenario with Load or Parse)")
	case w.Trace != nil && w.Trace.Summary().Requests == 0:
		v.errorf(p+".file", "the trace %s holds no requests", w.File)
	case w.Trace != nil && v.s.Pins.KVCache.MaxModelLen > 0:
		v.traceFits(v.s.Pins.KVCache.MaxModelLen)
	}
	if !mlperf && w.KeepsReasoning() && w.Trace != nil && w.Trace.Summary().BlockTokens > 0 {
		// runner.replayMessages sends such a turn as its blocks alone.
		v.errorf(p+".preserve_reasoning", "the trace's prompts are built from its hash_ids, each turn's whole: no earlier answer is re-sent to carry its reasoning (leave it false)")
	}
	if mlperf && w.MLPerf != nil {
		for _, c := range w.MLPerf.Conversations {
			if c.System == "" {
				// agentic_inference_strategy.py, _validate_salt_system_prompts
				v.errorf(p+".file", "%s:%d: conversation %q has no system prompt: MLPerf salts each trajectory around it, and its rules require salting", w.File, c.Line, c.ID)
				break
			}
		}
	}
}

// isSHA256 reports whether s is a hex SHA-256 digest.
func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range strings.ToLower(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// traceFits checks that every request of the trace fits in maxModelLen
// tokens, prompt and output together, naming the largest that does not.
func (v *validator) traceFits(maxModelLen int) {
	if l := v.s.Workload.Trace.Summary().Largest; l.Input+l.Output > maxModelLen {
		v.errorf("workload.file", "session %q turn %d needs %d + %d tokens, more than pins.kv_cache.max_model_len %d",
			l.Session, l.Turn, l.Input, l.Output, maxModelLen)
	}
}

// promptSharing checks the shared-prefix settings: top-level only, and the
// shared prefix shorter than every prompt.
func (v *validator) promptSharing(tokensOK bool) {
	pp, p := v.s.Pins.Prompt, "pins.prompt"
	if pp.SharedPrefixTokens < 0 {
		v.errorf(p+".shared_prefix_tokens", "must be ≥ 0 (got %d)", pp.SharedPrefixTokens)
	}
	switch {
	case pp.PrefixGroups < 0:
		v.errorf(p+".prefix_groups", "must be ≥ 1 (got %d)", pp.PrefixGroups)
	case pp.PrefixGroups > 0 && pp.SharedPrefixTokens == 0:
		v.errorf(p+".prefix_groups", "only with shared_prefix_tokens")
	}
	if pp.SharedPrefixTokens > 0 && tokensOK {
		for _, c := range v.s.effectiveClasses() {
			if lo, _ := c.prompt.Bounds(); float64(pp.SharedPrefixTokens) >= lo {
				v.errorf(p+".shared_prefix_tokens", "must be shorter than every prompt (got %d ≥ prompt min %s)",
					pp.SharedPrefixTokens, num(lo))
				break
			}
		}
	}
	for i, c := range v.s.Pins.Mix.Classes {
		cp := fmt.Sprintf("pins.mix.classes[%d].prompt", i)
		if c.Prompt != nil && (c.Prompt.SharedPrefixTokens != 0 || c.Prompt.PrefixGroups != 0) {
			v.errorf(cp+".shared_prefix_tokens", "only at the top-level prompt pin (pins.prompt)")
		}
		if c.Prompt != nil && c.Prompt.TolerancePct != nil {
			v.errorf(cp+".tolerance_pct", "only at the top-level prompt pin (pins.prompt)")
		}
		if c.Output != nil && c.Output.TolerancePct != nil {
			v.errorf(fmt.Sprintf("pins.mix.classes[%d].output.tolerance_pct", i), "only at the top-level output pin (pins.output)")
		}
	}
}

// tolerances checks the drift tolerances.
func (v *validator) tolerances() {
	if t := v.s.Pins.Prompt.TolerancePct; t != nil && (*t < 0 || *t > 100) {
		v.errorf("pins.prompt.tolerance_pct", "must be in [0, 100] (got %s)", num(*t))
	}
	o := v.s.Pins.Output
	if t := o.TolerancePct; t != nil {
		switch {
		case *t < 0 || *t > 100:
			v.errorf("pins.output.tolerance_pct", "must be in [0, 100] (got %s)", num(*t))
		case o.Exact:
			v.errorf("pins.output.tolerance_pct", "not used with exact: true (exact means no drift)")
		}
	}
}

// topTokens checks a top-level token pin, which is required unless every
// mix class has its own (own tells).
func (v *validator) topTokens(path string, d Dist, pin string, own func(Class) bool) {
	if v.has(path) || !d.IsZero() {
		v.tokenDist(path, d)
		return
	}
	classes := v.s.Pins.Mix.Classes
	if len(classes) == 0 {
		v.errorf(path, "required")
		return
	}
	for _, c := range classes {
		if !own(c) {
			v.errorf(path, "required: mix class %q has no %s pin of its own", c.Name, pin)
			return
		}
	}
}

// classDist checks a class's own token distribution, which its pin, once
// written, must give.
func (v *validator) classDist(path string, d Dist) {
	if !v.has(path) && d.IsZero() {
		v.errorf(path, "required")
		return
	}
	v.tokenDist(path, d)
}

// tokenDist checks a token-count distribution: a valid Dist whose values
// are all ≥ 1.
func (v *validator) tokenDist(path string, d Dist) {
	v.dist(path, d)
	switch d.Kind {
	case DistFixed:
		if (v.bare(path) || v.has(path+".value")) && d.Value < 1 {
			v.errorf(v.paramPath(path, "value"), "must be ≥ 1 (got %s)", num(d.Value))
		}
	case DistEmpirical:
		for i, x := range d.Values {
			if x < 1 {
				v.errorf(fmt.Sprintf("%s.values[%d]", path, i), "must be ≥ 1 (got %s)", num(x))
			}
		}
	case DistUniform, DistNormal, DistLognormal:
		if v.has(path+".min") && d.Min < 1 {
			v.errorf(path+".min", "must be ≥ 1 (got %s)", num(d.Min))
		}
	}
}

// paramPath names a Dist parameter, or the Dist itself when it was written
// as a bare number (which stands for dist: fixed, value: N).
func (v *validator) paramPath(path, key string) string {
	if v.bare(path) {
		return path
	}
	return path + "." + key
}

// bare reports whether the Dist at path was written as a bare number.
func (v *validator) bare(path string) bool {
	return v.has(path) && !v.has(path+".dist")
}

// dist checks d, written at path.
func (v *validator) dist(path string, d Dist) {
	kinds := strings.Join(distKinds, ", ")
	params, known := distParams[d.Kind]
	switch {
	case d.Kind == "":
		v.errorf(path+".dist", "required (want %s)", kinds)
		return
	case !known:
		v.errorf(path+".dist", "unknown distribution %q (want %s)", d.Kind, kinds)
		return
	case d.Kind == DistFixed && v.bare(path):
		return // a bare number: nothing more to check
	}
	for _, k := range allDistParams {
		if !slices.Contains(params, k) && v.has(path+"."+k) {
			v.errorf(path+"."+k, "not used by dist %s", d.Kind)
		}
	}
	required := func(keys ...string) bool {
		ok := true
		for _, k := range keys {
			if v.has(path + "." + k) {
				continue
			}
			ok = false
			if k == "min" || k == "max" {
				v.errorf(path+"."+k, "required for dist %s (bounds are explicit)", d.Kind)
			} else {
				v.errorf(path+"."+k, "required for dist %s", d.Kind)
			}
		}
		return ok
	}
	positive := func(k string, x float64) {
		if x <= 0 {
			v.errorf(path+"."+k, "must be > 0 (got %s)", num(x))
		}
	}
	bounds := func() bool {
		if d.Max < d.Min {
			v.errorf(path+".max", "must be ≥ min (got %s < %s)", num(d.Max), num(d.Min))
			return false
		}
		return true
	}
	within := func(k string, x float64) {
		if x < d.Min || x > d.Max {
			v.errorf(path+"."+k, "must be within [min, max] (got %s outside [%s, %s])", num(x), num(d.Min), num(d.Max))
		}
	}
	switch d.Kind {
	case DistFixed:
		required("value")
	case DistUniform:
		if required("min", "max") {
			bounds()
		}
	case DistNormal:
		required("mean", "stddev")
		if v.has(path + ".stddev") {
			positive("stddev", d.Stddev)
		}
		if required("min", "max") && bounds() && v.has(path+".mean") {
			within("mean", d.Mean)
		}
	case DistLognormal:
		required("median", "sigma")
		if v.has(path + ".median") {
			positive("median", d.Median)
		}
		if v.has(path + ".sigma") {
			positive("sigma", d.Sigma)
		}
		if required("min", "max") && bounds() && v.has(path+".median") {
			within("median", d.Median)
		}
	case DistEmpirical:
		if !required("values") {
			break
		}
		if len(d.Values) == 0 {
			v.errorf(path+".values", "must hold at least one value")
			break
		}
		if len(d.Weights) == 0 {
			break
		}
		if len(d.Weights) != len(d.Values) {
			v.errorf(path+".weights", "must have one weight per value (got %d weights for %d values)", len(d.Weights), len(d.Values))
			break
		}
		var sum float64
		for i, w := range d.Weights {
			if w < 0 {
				v.errorf(fmt.Sprintf("%s.weights[%d]", path, i), "must be ≥ 0 (got %s)", num(w))
			}
			sum += max(w, 0)
		}
		if sum == 0 {
			v.errorf(path+".weights", "must not all be 0")
		}
	}
}

func (v *validator) concurrency() {
	c, p := v.s.Pins.Concurrency, "pins.concurrency"
	switch c.Mode {
	case "":
		v.errorf(p+".mode", "required (closed or open)")
	case ModeClosed:
		if !v.has(p + ".streams") {
			v.errorf(p+".streams", "required when mode is closed")
		} else if c.Streams < 1 {
			v.errorf(p+".streams", "must be ≥ 1 (got %d)", c.Streams)
		}
		for _, k := range []string{"rate", "arrival", "burstiness", "max_in_flight"} {
			if v.has(p + "." + k) {
				v.errorf(p+"."+k, "not allowed when mode is closed (open loop only)")
			}
		}
	case ModeOpen:
		if !v.has(p + ".rate") {
			v.errorf(p+".rate", "required when mode is open (requests per second)")
		} else if c.Rate <= 0 {
			v.errorf(p+".rate", "must be > 0 (got %s)", num(c.Rate))
		}
		switch c.Arrival {
		case ArrivalConstant, ArrivalPoisson, ArrivalGamma:
		default:
			v.errorf(p+".arrival", "must be constant, poisson or gamma (got %q)", c.Arrival)
		}
		if v.has(p + ".burstiness") {
			if c.Arrival != ArrivalGamma {
				v.errorf(p+".burstiness", "only for arrival gamma")
			} else if c.Burstiness <= 0 {
				v.errorf(p+".burstiness", "must be > 0 (got %s)", num(c.Burstiness))
			}
		}
		if c.MaxInFlight < 0 {
			v.errorf(p+".max_in_flight", "must be ≥ 0 (got %d)", c.MaxInFlight)
		}
		if v.has(p + ".streams") {
			v.errorf(p+".streams", "not allowed when mode is open (max_in_flight caps requests in flight)")
		}
	default:
		v.errorf(p+".mode", "must be closed or open (got %q)", c.Mode)
	}
	if v.has(p+".queueing") && c.Queueing != QueueingAllowed {
		v.errorf(p+".queueing", "must be %s (a queueing study: the server may queue part of the streams) or left out (got %q)", QueueingAllowed, c.Queueing)
	}
}

// classes checks the mix's classes and reports whether they are valid.
func (v *validator) classes() bool {
	n := len(v.errs)
	first := map[string]int{}
	for i, c := range v.s.Pins.Mix.Classes {
		cp := fmt.Sprintf("pins.mix.classes[%d]", i)
		if strings.TrimSpace(c.Name) == "" {
			v.errorf(cp+".name", "required")
		} else if j, dup := first[c.Name]; dup {
			v.errorf(cp+".name", "duplicate class name %q (first at classes[%d])", c.Name, j)
		} else {
			first[c.Name] = i
		}
		if !v.has(cp + ".weight") {
			v.errorf(cp+".weight", "required (> 0)")
		} else if c.Weight <= 0 {
			v.errorf(cp+".weight", "must be > 0 (got %s)", num(c.Weight))
		}
	}
	return len(v.errs) == n
}

func (v *validator) kvCache(tokensOK bool) {
	k, p := v.s.Pins.KVCache, "pins.kv_cache"
	if k.MaxModelLen < 0 {
		v.errorf(p+".max_model_len", "must be ≥ 0 (got %d)", k.MaxModelLen)
	} else if k.MaxModelLen > 0 && tokensOK {
		var worst effectiveClass
		var worstP, worstO int
		for _, c := range v.s.effectiveClasses() {
			_, pm := c.prompt.Bounds()
			_, om := c.output.Bounds()
			if pi, oi := int(math.Round(pm)), int(math.Round(om)); pi+oi > worstP+worstO {
				worst, worstP, worstO = c, pi, oi
			}
		}
		if worstP+worstO > k.MaxModelLen {
			of := ""
			if worst.name != "" {
				of = fmt.Sprintf(" of class %q", worst.name)
			}
			v.errorf(p+".max_model_len", "prompt max + output max%s exceeds it (%d + %d > %d)", of, worstP, worstO, k.MaxModelLen)
		}
	}
	if g := k.GPUMemoryUtilization; v.has(p+".gpu_memory_utilization") && (g <= 0 || g > 1) {
		v.errorf(p+".gpu_memory_utilization", "must be in (0, 1] (got %s)", num(g))
	}
	if k.MaxNumSeqs < 0 {
		v.errorf(p+".max_num_seqs", "must be ≥ 0 (got %d)", k.MaxNumSeqs)
	}
	switch k.Batching {
	case "", "continuous", "static":
	default:
		v.errorf(p+".batching", "must be continuous or static (got %q)", k.Batching)
	}
	c := v.s.Pins.Concurrency
	if c.Mode == ModeClosed && k.MaxNumSeqs > 0 && c.Streams > k.MaxNumSeqs {
		v.warnf("pins.concurrency.streams", "exceeds pins.kv_cache.max_num_seqs (%d > %d): the server runs at most %d at once and queues the rest",
			c.Streams, k.MaxNumSeqs, k.MaxNumSeqs)
	}
}

// ratio checks a declared input:output ratio against the pins'.
func (v *validator) ratio(pinsOK bool) {
	r, p := v.s.Pins.Mix.InputOutputRatio, "pins.mix.input_output_ratio"
	if r < 0 {
		v.errorf(p, "must be ≥ 0 (got %s)", num(r))
		return
	}
	if r == 0 || !pinsOK {
		return
	}
	e := NewPlan(v.s).Expected()
	if math.Abs(r-e.Ratio) > MaxRatioDeviation*e.Ratio {
		v.errorf(p, "declared %s but the pins give %s (mean prompt %s / mean output %s tokens): more than %d%% apart",
			num(r), ratio(e.Ratio), numfmt.Thousands(e.MeanPromptTokens), numfmt.Thousands(e.MeanOutputTokens), int(MaxRatioDeviation*100))
	}
}

// runBounds checks duration, requests and request_timeout.
func (v *validator) runBounds() {
	s := v.s
	if s.Duration < 0 {
		v.errorf("duration", "must be ≥ 0 (got %s)", s.Duration)
	}
	if s.Requests < 0 {
		v.errorf("requests", "must be ≥ 0 (got %d)", s.Requests)
	}
	if s.Duration == 0 && s.Requests == 0 && !s.Workload.Replay() {
		v.errorf("duration", "required unless requests is set (at least one must be > 0)")
	}
	if s.RequestTimeout <= 0 {
		v.errorf("request_timeout", "must be > 0 (got %s)", s.RequestTimeout)
	}
}

func (v *validator) windows() {
	w, d := v.s.Windows, v.s.Duration.D()
	if w.Warmup < 0 {
		v.errorf("windows.warmup", "must be ≥ 0 (got %s)", w.Warmup)
	} else if d > 0 && w.Warmup.D() >= d {
		v.errorf("windows.warmup", "must be < duration (got %s ≥ %s)", w.Warmup, shortDur(d))
	}
	if w.Burst <= 0 {
		v.errorf("windows.burst", "must be > 0 (got %s)", w.Burst)
	}
	st := w.Steady
	if st.Auto {
		if st.Start != 0 || st.End != 0 {
			v.errorf("windows.steady", "auto takes no start or end")
		}
		return
	}
	switch {
	case st.Start < 0:
		v.errorf("windows.steady.start", "must be ≥ 0 (got %s)", shortDur(st.Start))
	case d > 0 && st.Start >= d:
		v.errorf("windows.steady.start", "must be < duration (got %s ≥ %s)", shortDur(st.Start), shortDur(d))
	}
	switch {
	case st.End == 0:
		// to the last scheduled arrival
	case st.End <= st.Start:
		v.errorf("windows.steady.end", "must be > start (got %s ≤ %s)", shortDur(st.End), shortDur(st.Start))
	case d > 0 && st.End > d:
		v.errorf("windows.steady.end", "must be ≤ duration (got %s > %s)", shortDur(st.End), shortDur(d))
	}
}

func (v *validator) slo() {
	s := v.s.SLO
	for _, f := range []struct {
		key string
		x   float64
	}{{"ttft_ms", s.TTFTMs}, {"tpot_ms", s.TPOTMs}, {"e2e_ms", s.E2EMs}} {
		if f.x < 0 {
			v.errorf("slo."+f.key, "must be ≥ 0 (got %s)", num(f.x))
		}
	}
	if s.MaxErrorRate < 0 || s.MaxErrorRate > 1 {
		v.errorf("slo.max_error_rate", "must be in [0, 1], a fraction: 0.01 = 1%% (got %s)", num(s.MaxErrorRate))
	}
	if s.MaxDegenerateShare < 0 || s.MaxDegenerateShare > 1 {
		v.errorf("slo.max_degenerate_share", "must be in [0, 1], a fraction: 0.1 = 10%% (got %s)", num(s.MaxDegenerateShare))
	}
}

func (v *validator) target() {
	e := v.s.Target.Endpoint
	if e == "" {
		return
	}
	u, err := url.Parse(e)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.errorf("target.endpoint", "must be an http(s) URL (got %q)", e)
	}
}

// ratio formats an input:output ratio to about three significant digits:
// 227, 34.7, 2.5.
func ratio(r float64) string {
	prec := 2
	switch {
	case r >= 100:
		prec = 0
	case r >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(r, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
