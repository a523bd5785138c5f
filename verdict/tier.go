package verdict

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sixpin/sixpin/internal/bounds"
	"github.com/sixpin/sixpin/internal/strictyaml"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// Op is a condition's comparison: the statistic at most (a ceiling) or at
// least (a floor) its bound.
type Op string

// Ops.
const (
	AtMost  Op = "<="
	AtLeast Op = ">="
)

// Condition is one bound of a tier on the steady window: a percentile of a
// per-request metric (ttft_ms.p90 <= 2000), a share of requests
// (error_rate <= 1%), or a percentile over agentic sessions
// (lifetime_min.p50 >= 10). Bound is in the metric's unit, a fraction 0–1
// for shares.
type Condition struct {
	Metric string  `json:"metric"`
	Stat   string  `json:"stat,omitempty"`
	Op     Op      `json:"op"`
	Bound  float64 `json:"bound"`
	// Source is where it was written: "tiers.yaml:3:18", "--tier", the
	// scenario's "slo".
	Source string `json:"source,omitempty"`
}

// metricKind says how a tier metric is read.
type metricKind int

const (
	// perRequest is a distribution of per-request (or per-token) values,
	// read at a percentile; judged as records arrive.
	perRequest metricKind = iota
	// share is a share of requests (errors, 429s); judged as records
	// arrive.
	share
	// perSession is a distribution over agentic sessions, read at a
	// percentile when the run has ended (a session's lifetime is known
	// only then).
	perSession
)

// Needs: what a run must offer to measure a tier metric.
const (
	needNothing     = ""
	needSessions    = "sessions"
	needServerQueue = "server queue"
)

// tierMetric is one metric a tier may bound: a figure of the registry
// (FigureOf), or one only tiers read (the server's queue, the 429 share,
// sessions' lifetime), with how the judge reads it from a record.
type tierMetric struct {
	Figure
	kind  metricKind
	needs string
	// values calls fn with r's values of the metric in its unit, each with
	// its weight (ITL: a chunk of k tokens is k gaps); for a share, one
	// call with 1 (beyond: the request is one of those counted) or 0. r is
	// a finished record whose chunk tokens are assigned.
	values func(r *record.Record, fn func(v float64, weight int64))
	// waiting, for a latency a request in flight accrues as it waits,
	// says whether one still in flight (its first token come, answered,
	// or not) is still accruing it: its value is then at least the time
	// it has waited (Judge.Censor). nil: not known before it ends.
	waiting func(answered bool) bool
}

// accrues is m with waiting set.
func accrues(m tierMetric, waiting func(answered bool) bool) tierMetric {
	m.waiting = waiting
	return m
}

// registered is the registry's figure key as a tier metric.
func registered(key string, kind metricKind, values func(*record.Record, func(float64, int64))) tierMetric {
	f, ok := FigureOf(key)
	if !ok {
		panic("verdict: no figure " + key)
	}
	return tierMetric{Figure: f, kind: kind, values: values}
}

// TierMetrics lists the keys a tier may bound, in the order errors list
// them.
func TierMetrics() []string {
	ks := make([]string, len(tierMetrics))
	for i, m := range tierMetrics {
		ks[i] = m.Key
	}
	return ks
}

// msOf is ns nanoseconds in milliseconds.
func msOf(ns float64) float64 { return ns / 1e6 }

// decodeSpan is r's decode time and output tokens when its decode was
// observed and it has more than one token (ok false otherwise), as the
// collector counts TPOT and decode tok/s.
func decodeSpan(r *record.Record) (span float64, out int, ok bool) {
	ttft, has := r.TTFT()
	if !has || !r.DecodeMeasured() {
		return 0, 0, false
	}
	out = r.OutputTokens()
	s := r.E2E() - ttft
	if out <= 1 || s <= 0 {
		return 0, 0, false
	}
	return float64(s), out, true
}

// tierMetrics are the metrics a tier may bound: DESIGN §2's per-request
// figures as the collector counts them (latencies from the scheduled
// start, successful requests only), the server's queue time where it
// times it, error and 429 shares, and agentic sessions' lifetime.
var tierMetrics = []tierMetric{
	accrues(registered("ttft_ms", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if t, ok := r.TTFT(); ok && !r.Failed() {
			fn(msOf(float64(t)), 1)
		}
	}), func(answered bool) bool { return !answered }),
	registered("itl_ms", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if !r.Failed() && r.DecodeMeasured() {
			r.ITLs(func(g time.Duration, k int) { fn(msOf(float64(g))/float64(k), int64(k)) })
		}
	}),
	registered("tpot_ms", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if s, out, ok := decodeSpan(r); ok && !r.Failed() {
			fn(msOf(s)/float64(out-1), 1)
		}
	}),
	accrues(registered("e2e_ms", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if !r.Failed() {
			fn(msOf(float64(r.E2E())), 1)
		}
	}), func(bool) bool { return true }),
	registered("decode_tok_s", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if s, out, ok := decodeSpan(r); ok && !r.Failed() {
			fn(float64(out-1)/(s/1e9), 1)
		}
	}),
	registered("effective_tok_s", perRequest, func(r *record.Record, fn func(float64, int64)) {
		if e := r.E2E(); !r.Failed() && e > 0 {
			fn(float64(r.OutputTokens())/e.Seconds(), 1)
		}
	}),
	{Figure: Figure{Key: "server_queue_ms", Label: "server queue", Unit: "ms", Better: LowerIsBetter, Hist: results.HistServerQueue,
		dist: func(w *results.Window) *results.Dist { return w.ServerQueueMs }},
		needs: needServerQueue,
		values: func(r *record.Record, fn func(float64, int64)) {
			if t := r.Server; !r.Failed() && t.Has && t.QueueKnown {
				fn(msOf(float64(t.Queue)), 1)
			}
		}},
	registered("error_rate", share, func(r *record.Record, fn func(float64, int64)) {
		if r.Err != record.ErrInterrupted {
			fn(b2f(r.Failed()), 1)
		}
	}),
	{Figure: Figure{Key: "http_429_rate", Label: "429 rate", Unit: "%", Fraction: true, Better: LowerIsBetter}, kind: share,
		values: func(r *record.Record, fn func(float64, int64)) {
			if r.Err != record.ErrInterrupted {
				fn(b2f(r.Err == record.ErrHTTP429), 1)
			}
		}},
	{Figure: Figure{Key: "lifetime_min", Label: "context lifetime (session minutes)", Unit: "min", Better: HigherIsBetter},
		kind: perSession, needs: needSessions},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// metricOf looks a tier metric up by key.
func metricOf(key string) (tierMetric, bool) {
	i := slices.IndexFunc(tierMetrics, func(m tierMetric) bool { return m.Key == key })
	if i < 0 {
		return tierMetric{}, false
	}
	return tierMetrics[i], true
}

// tierStats are the percentiles a tier may read (0–100): a mean, a
// minimum or a maximum has no share of values beyond it to test.
var tierStats = []string{"p10", "p50", "p90", "p95", "p99", "p99_9"}

// Key is the condition's metric as written: "ttft_ms.p90", "error_rate".
func (c Condition) Key() string {
	if c.Stat == "" {
		return c.Metric
	}
	return c.Metric + "." + c.Stat
}

// String writes the condition as a tier takes it: "ttft_ms.p90 <= 2000",
// "error_rate <= 1%".
func (c Condition) String() string {
	return c.Key() + " " + string(c.Op) + " " + c.BoundText()
}

// BoundText is the bound as written: a percentage for shares.
func (c Condition) BoundText() string {
	if m, _ := metricOf(c.Metric); m.kind == share {
		return trimPercent(c.Bound) + "%"
	}
	return trimFloat(c.Bound)
}

// Label names the condition's figure for people: "TTFT p90", "error rate".
func (c Condition) Label() string {
	m, _ := metricOf(c.Metric)
	if c.Stat == "" {
		return m.Label
	}
	return m.Label + " " + c.Stat
}

// Unit is the unit of the condition's bound ("%" for shares: Bound is a
// fraction).
func (c Condition) Unit() string {
	m, _ := metricOf(c.Metric)
	return m.Unit
}

// IsShare reports whether the condition bounds a share of requests
// (Bound a fraction 0–1).
func (c Condition) IsShare() bool {
	m, _ := metricOf(c.Metric)
	return m.kind == share
}

// percentile is the condition's statistic, 0–100 (0 for shares).
func (c Condition) percentile() float64 {
	p, _ := statPercentile(c.Stat)
	return max(p, 0)
}

// Allowed is the share of values (0–1) the condition lets lie beyond its
// bound: above a ceiling on the q-th percentile, 1 − q/100 of them; below
// a floor on it, q/100; for a share of requests, the bound itself.
func (c Condition) Allowed() float64 {
	switch {
	case c.IsShare():
		return c.Bound
	case c.Op == AtMost:
		return 1 - c.percentile()/100
	}
	return c.percentile() / 100
}

// Beyond reports whether value v lies beyond the bound: above a ceiling,
// below a floor.
func (c Condition) Beyond(v float64) bool {
	if c.Op == AtMost {
		return v > c.Bound
	}
	return v < c.Bound
}

// ParseCondition reads one condition: METRIC.STAT <= VALUE or >= VALUE
// (ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30), or a share at most a
// fraction or a percentage (error_rate <= 1%). The error says what is
// wrong, in the words a tiers file's errors use.
func ParseCondition(s string) (Condition, error) {
	s = strings.TrimSpace(s)
	var c Condition
	var lhs, rhs string
	for _, op := range []struct {
		text string
		op   Op
	}{{"<=", AtMost}, {">=", AtLeast}, {"≤", AtMost}, {"≥", AtLeast}} {
		if l, r, ok := strings.Cut(s, op.text); ok {
			lhs, rhs, c.Op = strings.TrimSpace(l), strings.TrimSpace(r), op.op
			break
		}
	}
	if c.Op == "" {
		if strings.ContainsAny(s, "<>=") {
			return c, fmt.Errorf("%q: the comparison must be <= (at most) or >= (at least)", s)
		}
		return c, fmt.Errorf("%q: want METRIC.STAT <= VALUE or >= VALUE (ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30, error_rate <= 1%%)", s)
	}
	c.Metric, c.Stat, _ = strings.Cut(lhs, ".")
	m, ok := metricOf(c.Metric)
	if !ok {
		return c, fmt.Errorf("unknown metric %q (want one of %s)", c.Metric, strings.Join(TierMetrics(), ", "))
	}
	switch {
	case m.kind == share && c.Stat != "":
		return c, fmt.Errorf("%s is a share of requests: no statistic after it (%s <= 1%%)", m.Key, m.Key)
	case m.kind != share && c.Stat == "":
		return c, fmt.Errorf("%s is a distribution: name a percentile, e.g. %s.p90 (one of %s)", m.Key, m.Key, strings.Join(tierStats, ", "))
	case m.kind != share && !slices.Contains(tierStats, c.Stat):
		return c, fmt.Errorf("%s: a tier bounds a percentile (one of %s), not %q: a sequential test counts the values beyond the bound",
			m.Key, strings.Join(tierStats, ", "), c.Stat)
	case m.Better == LowerIsBetter && c.Op == AtLeast:
		return c, fmt.Errorf("%s is better lower: bound it from above (%s <= …)", m.Key, c.Key())
	case m.Better == HigherIsBetter && c.Op == AtMost:
		return c, fmt.Errorf("%s is better higher: bound it from below (%s >= …)", m.Key, c.Key())
	}
	v, pct, err := parseBound(rhs)
	if err != nil {
		return c, fmt.Errorf("%s: %w", c.Key(), err)
	}
	c.Bound = v
	switch {
	case m.kind == share && pct:
		c.Bound = v / 100
	case pct:
		return c, fmt.Errorf("%s is in %s, not a percentage", c.Key(), m.Unit)
	}
	switch {
	case m.kind == share && (c.Bound <= 0 || c.Bound >= 1):
		return c, fmt.Errorf("%s: must be a share above 0 and below 100%% (got %s): no sample can confirm a rate of exactly 0",
			c.Key(), rhs)
	case c.Bound < 0:
		return c, fmt.Errorf("%s: must not be negative (got %s)", c.Key(), rhs)
	}
	return c, nil
}

// parseBound reads a number, or a percentage ("1%": pct true, v 1).
func parseBound(s string) (v float64, pct bool, err error) {
	t := strings.TrimSpace(s)
	t, pct = strings.CutSuffix(t, "%")
	v, err = strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, fmt.Errorf("the bound must be a number (got %q)", s)
	}
	return v, pct, nil
}

// Tier is a service level: a name and conditions that must all hold on a
// run's steady window.
type Tier struct {
	Name       string      `json:"name"`
	Conditions []Condition `json:"conditions"`
	// Source is where the tier was declared ("tiers.yaml:3:1", "--tier",
	// "scenario slo").
	Source string `json:"source,omitempty"`
}

// String writes the tier as --tier takes it: "interactive: ttft_ms.p90 <=
// 2000, decode_tok_s.p10 >= 30".
func (t Tier) String() string {
	cs := make([]string, len(t.Conditions))
	for i, c := range t.Conditions {
		cs[i] = c.String()
	}
	return t.Name + ": " + strings.Join(cs, ", ")
}

// ParseTier reads a tier named name from its conditions as written (a
// tiers file's, or a scenario's abort_on), each error positioned at its
// condition: file:line:col and the field path field[i].
func ParseTier(file, field, name string, conds scenario.Conditions) (Tier, error) {
	t := Tier{Name: name}
	var errs strictyaml.ErrorList
	for i, ct := range conds {
		c, err := ParseCondition(ct.Text)
		where := fmt.Sprintf("%s:%d:%d", file, ct.Line, ct.Col)
		if ct.Line == 0 {
			where = file
		}
		if err != nil {
			f := fmt.Sprintf("%s[%d]", field, i)
			if field == "" {
				f = fmt.Sprintf("condition %d", i+1)
			}
			errs = append(errs, &strictyaml.FieldError{File: file, Line: ct.Line, Col: ct.Col, Field: f, Msg: err.Error()})
			continue
		}
		c.Source = where
		t.Conditions = append(t.Conditions, c)
	}
	if len(conds) == 0 {
		errs = append(errs, &strictyaml.FieldError{File: file, Field: field, Msg: "no condition (want e.g. ttft_ms.p90 <= 2000)"})
	}
	if len(errs) > 0 {
		errs.Sort()
		return Tier{}, errs
	}
	if len(conds) > 0 && conds[0].Line > 0 {
		t.Source = fmt.Sprintf("%s:%d:%d", file, conds[0].Line, conds[0].Col)
	}
	return t, nil
}

// ParseTierFlag reads a tier as --tier takes it: "NAME: COND, COND, …"
// ("interactive: ttft_ms.p90<=2000, decode_tok_s.p10>=30").
func ParseTierFlag(s string) (Tier, error) {
	name, rest, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, "<>=,") {
		return Tier{}, fmt.Errorf("--tier %q: want NAME: CONDITION, CONDITION, … (interactive: ttft_ms.p90<=2000, decode_tok_s.p10>=30)", s)
	}
	t, err := ParseTier("--tier "+name, "", name, scenario.SplitConditions(rest, 0, 0))
	if err != nil {
		return Tier{}, err
	}
	t.Source = "--tier"
	for i := range t.Conditions {
		t.Conditions[i].Source = "--tier"
	}
	return t, nil
}

// LoadTiers reads a tiers file: a YAML mapping of tier name → its
// conditions, a list or one comma-separated string,
//
//	interactive: [ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30]
//	batch: "e2e_ms.p90 <= 60000, error_rate <= 1%"
//
// decoded strictly: an unknown metric or a bad bound is an error at
// file:line:col. Tiers keep file order.
func LoadTiers(path string) ([]Tier, error) {
	data, err := bounds.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tiers: %w", err)
	}
	return ParseTiers(path, data)
}

// ParseTiers parses a tiers file's data (file names it in errors).
func ParseTiers(file string, data []byte) ([]Tier, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, fmt.Errorf("%s: no tiers (want e.g. interactive: [ttft_ms.p90 <= 2000, decode_tok_s.p10 >= 30])", file)
	}
	var m map[string]scenario.Conditions
	doc, errs := strictyaml.Decode(file, data, &m, strictyaml.Kind{Noun: "tiers", Keys: "interactive: [ttft_ms.p90 <= 2000], ..."})
	if doc == nil {
		return nil, errs.Err()
	}
	type placed struct {
		Tier
		line, col int
	}
	var tiers []placed
	for name, conds := range m {
		if doc.Failed(name) {
			continue
		}
		pos := doc.Place(&strictyaml.FieldError{Field: name})
		t, err := ParseTier(file, name, name, conds)
		if err != nil {
			var l strictyaml.ErrorList
			if errors.As(err, &l) {
				for _, e := range l {
					if e.Line == 0 {
						e.Line, e.Col = pos.Line, pos.Col
					}
				}
				errs = append(errs, l...)
			}
			continue
		}
		t.Source = fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Col)
		tiers = append(tiers, placed{t, pos.Line, pos.Col})
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	slices.SortFunc(tiers, func(a, b placed) int { return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col)) })
	out := make([]Tier, len(tiers))
	for i, t := range tiers {
		out[i] = t.Tier
	}
	return out, nil
}

// SLOPercentile is the percentile a scenario's slo: is read at as a tier:
// 90% of the steady window's requests within each bound (DistServe's SLO
// attainment of 90%).
const SLOPercentile = "p90"

// SLOTier is the scenario's slo: as one tier named "slo": its TTFT, TPOT
// and E2E bounds at SLOPercentile, and its error budget; ok false when it
// declares none.
func SLOTier(slo scenario.SLO) (Tier, bool) {
	t := Tier{Name: "slo", Source: "scenario slo"}
	add := func(metric, stat string, bound float64) {
		if bound > 0 {
			t.Conditions = append(t.Conditions, Condition{Metric: metric, Stat: stat, Op: AtMost, Bound: bound, Source: "scenario slo"})
		}
	}
	add("ttft_ms", SLOPercentile, slo.TTFTMs)
	add("tpot_ms", SLOPercentile, slo.TPOTMs)
	add("e2e_ms", SLOPercentile, slo.E2EMs)
	if slo.MaxErrorRate < 1 {
		add("error_rate", "", slo.MaxErrorRate)
	}
	return t, len(t.Conditions) > 0
}

// Measurable says what a run can measure, for refusing a tier before any
// load.
type Measurable struct {
	// Sessions is true for agentic work: sessions have a lifetime.
	Sessions bool
	// ServerQueue is true when the server times each request's queue (the
	// simulator does; llama.cpp's timings carry none, vLLM times no single
	// request).
	ServerQueue bool
}

// CheckTiers refuses tiers that name a metric the run cannot measure, naming
// the tier and the metric, and tiers named twice.
func CheckTiers(tiers []Tier, m Measurable) error {
	seen := map[string]bool{}
	var problems []string
	for _, t := range tiers {
		if seen[t.Name] {
			problems = append(problems, fmt.Sprintf("tier %s is declared twice (%s)", t.Name, t.Source))
		}
		seen[t.Name] = true
		for _, c := range t.Conditions {
			tm, _ := metricOf(c.Metric)
			switch {
			case tm.needs == needSessions && !m.Sessions:
				problems = append(problems, fmt.Sprintf("tier %s: %s: this run cannot measure it: context lifetime needs agentic sessions (workload.kind: agentic)", t.Name, c.Key()))
			case tm.needs == needServerQueue && !m.ServerQueue:
				problems = append(problems, fmt.Sprintf("tier %s: %s: this run cannot measure it: the server does not time its queue per request (the simulator does; llama.cpp's timings and vLLM do not)", t.Name, c.Key()))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// Validate checks a condition read back from a file.
func (c Condition) Validate() error {
	back, err := ParseCondition(c.String())
	if err != nil {
		return err
	}
	if back.Metric != c.Metric || back.Stat != c.Stat || back.Op != c.Op {
		return fmt.Errorf("%s: does not read back", c)
	}
	return nil
}
