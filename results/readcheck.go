package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sixpin/sixpin/internal/clip"
	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/internal/jsonerr"
	"github.com/sixpin/sixpin/internal/stats"
)

// Notes Read adds to a run whose file lacks an optional part, so that
// every report says what it could not show.
const (
	NoteNoHistograms = "the results file holds no histograms: no percentile curves, and no confidence intervals for percentiles"
	NoteNoSeries     = "the results file holds no per-second series: no throughput over time"
)

// fileCheck collects what is wrong with a results or set file, each
// problem positioned at its field. A check of one run of a set shares the
// set's errors and puts its paths under the run's (runs[i]).
type fileCheck struct {
	name string
	data []byte
	errs *fielderr.List
	// prefix is the path of the run checked within the file (nil: the
	// file is the run).
	prefix []string
}

func newCheck(name string, data []byte) *fileCheck {
	return &fileCheck{name: name, data: data, errs: &fielderr.List{}}
}

// run returns the check of the set's run i.
func (c *fileCheck) run(i int) *fileCheck {
	return &fileCheck{name: c.name, data: c.data, errs: c.errs, prefix: []string{"runs", strconv.Itoa(i)}}
}

// CheckRun checks run, decoded from data under path (a run inside another
// sixpin file: a capacity file's points[i].run), as Read checks a
// results file: each problem a fielderr.Error at file:line:col and its
// field under path; nil when it holds together.
func CheckRun(name string, data []byte, path []string, run *Run) error {
	c := &fileCheck{name: name, data: data, errs: &fielderr.List{}, prefix: path}
	c.check(run)
	return c.result()
}

// full is path under the checked run's.
func (c *fileCheck) full(path []string) []string {
	return append(slices.Clip(c.prefix), path...)
}

// at records a problem at the field path (JSON keys and array indices);
// string arguments are cut short.
func (c *fileCheck) at(path []string, format string, args ...any) {
	c.missing(path, jsonerr.Path(path), format, args...)
}

// missing records a problem with field (which the file may lack),
// positioned at path, the deepest part of it the file has.
func (c *fileCheck) missing(path []string, field, format string, args ...any) {
	if len(c.prefix) > 0 {
		field = jsonerr.Path(c.full(strings.Split(field, ".")))
	}
	e := &fielderr.Error{File: c.name, Field: field, Msg: fmt.Sprintf(format, clip.Args(args)...)}
	off, _ := jsonerr.Find(c.data, c.full(path)...)
	e.Line, e.Col = jsonerr.LineCol(c.data, off)
	*c.errs = append(*c.errs, e)
}

// has reports whether the file sets the field at path (null counts as
// set: the decoder then leaves a zero value, which the checks judge).
func (c *fileCheck) has(path ...string) bool {
	_, ok := jsonerr.Find(c.data, c.full(path)...)
	return ok
}

// decodeError positions an encoding/json error from decoding the file
// into t: syntax and type errors at their offset, any other (a time that
// does not parse) at the value it came from.
func (c *fileCheck) decodeError(err error, t reflect.Type) {
	field, msg := jsonerr.Describe(err)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		line, col, _ := jsonerr.Position(c.data, err)
		*c.errs = append(*c.errs, &fielderr.Error{File: c.name, Line: line, Col: col, Msg: "invalid JSON: " + msg})
		return
	case field != "":
		path := strings.Split(field, ".")
		if _, ok := jsonerr.Find(c.data, path...); !ok {
			// encoding/json names no array index (a run of a set):
			// find the value that fails.
			if p := jsonerr.Locate(c.data, t); p != nil {
				path = p
			}
		}
		c.at(path, "%s", msg)
		return
	}
	path := jsonerr.Locate(c.data, t)
	var te *time.ParseError
	if errors.As(err, &te) {
		msg = "want a time like \"2026-11-30T18:49:28Z\" (RFC 3339), got " + clip.Quote(strings.Trim(te.Value, `"`))
	}
	c.at(path, "%s", msg)
}

// check judges a decoded run: what sixpin always writes is there and
// agrees with itself. Optional parts that are missing become notes.
func (c *fileCheck) check(run *Run) {
	if run.Schema != Schema {
		c.at([]string{"schema"}, "want %q, got %q: not a sixpin results file", Schema, run.Schema)
		return // anything else said would be noise
	}
	for _, key := range []string{"scenario", "target", "pins", "errors", "windows", "headline_window"} {
		if !c.has(key) {
			c.missing(nil, key, "missing: sixpin writes it in every results file")
		}
	}
	for _, name := range WindowNames {
		if c.has("windows") && run.Windows[name] == nil {
			c.missing([]string{"windows"}, "windows."+name, "missing: sixpin writes warmup, burst, steady and all")
		}
	}
	if run.Headline != "" && run.Windows[run.Headline] == nil {
		c.at([]string{"headline_window"}, "names window %q, which the file does not hold", run.Headline)
	}
	for _, name := range slices.Sorted(maps.Keys(run.Windows)) {
		if w := run.Windows[name]; w != nil {
			c.window(name, w)
		}
	}
	c.errors(run.Errors)
	c.parity(run)
	c.series(run)
	c.histograms(run)
	c.contentCheck(run)
	if len(run.Histograms) == 0 {
		run.Notes = append(run.Notes, NoteNoHistograms)
	}
	if len(run.Series.OutputTokens) == 0 && run.Errors.Requests > 0 {
		run.Notes = append(run.Notes, NoteNoSeries)
	}
}

// parity checks the parity evidence: counts that are not negative, cached
// input within the input, a digest that is one, and served totals that
// are the file's tokens.
func (c *fileCheck) parity(run *Run) {
	p := run.Parity
	if p == nil {
		return
	}
	totals := func(path []string, t TokenTotals) {
		for _, f := range []struct {
			key string
			n   int64
		}{{"requests", int64(t.Requests)}, {"input_tokens", t.InputTokens}, {"cached_input_tokens", t.CachedInputTokens}, {"output_tokens", t.OutputTokens}} {
			if f.n < 0 {
				c.at(append(path, f.key), "must be ≥ 0 (got %d)", f.n)
			}
		}
		if t.CachedInputTokens > t.InputTokens && t.InputTokens >= 0 {
			c.at(append(path, "cached_input_tokens"), "must be ≤ input_tokens (got %d > %d)", t.CachedInputTokens, t.InputTokens)
		}
	}
	totals([]string{"parity", "served"}, p.Served)
	if p.Served != served(run.Tokens) && c.has("tokens") {
		c.at([]string{"parity", "served"}, "must be the file's tokens (requests %d, input %d, cached_input %d, output %d)",
			run.Tokens.Requests, run.Tokens.Input, run.Tokens.CachedInput, run.Tokens.Output)
	}
	if q := p.Planned; q != nil {
		totals([]string{"parity", "planned"}, q.TokenTotals)
		if !isSHA256(q.SequenceSHA256) {
			c.at([]string{"parity", "planned", "sequence_sha256"}, "want 64 lowercase hex digits, got %q", q.SequenceSHA256)
		}
		if q.Encoding == "" {
			c.missing([]string{"parity", "planned"}, "parity.planned.encoding", "missing: the digest's byte encoding")
		}
	}
}

// isSHA256 reports whether s is a SHA-256 digest in lowercase hex.
func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// window checks one window's counts and spans.
func (c *fileCheck) window(name string, w *Window) {
	p := func(key ...string) []string { return append([]string{"windows", name}, key...) }
	switch {
	case w.StartS < 0:
		c.at(p("start_s"), "must be ≥ 0 (got %s)", exact(w.StartS))
	case w.EndS < w.StartS:
		c.at(p("end_s"), "must be ≥ start_s (got %s < %s)", exact(w.EndS), exact(w.StartS))
	}
	for _, f := range []struct {
		key string
		n   float64
	}{{"duration_s", w.DurationS}, {"requests", float64(w.Requests)}, {"completed", float64(w.Completed)},
		{"failed", float64(w.Failed)}, {"output_tokens", float64(w.OutputTokens)}, {"reasoning_tokens", float64(w.ReasoningTokens)},
		{"aggregate_output_tok_s", w.AggregateOutputTokS}, {"mean_in_flight", w.MeanInFlight}, {"max_in_flight", float64(w.MaxInFlight)},
		{"decode_unmeasured", float64(w.DecodeUnmeasured)}} {
		if f.n < 0 {
			c.at(p(f.key), "must be ≥ 0 (got %s)", exact(f.n))
		}
	}
	if w.Completed+w.Failed > w.Requests && w.Requests >= 0 && w.Completed >= 0 && w.Failed >= 0 {
		c.at(p("requests"), "must count its completed and failed requests (got %d < %d + %d)", w.Requests, w.Completed, w.Failed)
	}
	if w.DecodeUnmeasured > w.Completed && w.Completed >= 0 {
		c.at(p("decode_unmeasured"), "must be ≤ completed (got %d > %d)", w.DecodeUnmeasured, w.Completed)
	}
	if e2e := w.E2EMs; (e2e == nil && w.Completed > 0) || (e2e != nil && e2e.Count != int64(w.Completed)) {
		n := int64(0)
		if e2e != nil {
			n = e2e.Count
		}
		c.at(p("e2e_ms"), "counts %d requests, but the window completed %d: the file contradicts itself", n, w.Completed)
	}
	for class, n := range w.ErrorsByClass {
		if n < 0 {
			c.at(p("errors", class), "must be ≥ 0 (got %d)", n)
		}
	}
	for _, d := range windowDists(w) {
		if *d.dist != nil {
			c.dist(p(d.key), *d.dist)
		}
	}
}

// dist checks a distribution's summary: a count ≥ 0 and its statistics in
// order.
func (c *fileCheck) dist(path []string, d *Dist) {
	if d.Count < 0 {
		c.at(append(path, "count"), "must be ≥ 0 (got %d)", d.Count)
		return
	}
	order := []struct {
		key string
		v   float64
	}{{"min", d.Min}, {"p10", d.P10}, {"p50", d.P50}, {"p90", d.P90}, {"p95", d.P95}, {"p99", d.P99}, {"p99_9", d.P999}, {"max", d.Max}}
	for i := 1; i < len(order); i++ {
		if order[i].v < order[i-1].v {
			c.at(append(path, order[i].key), "must be ≥ %s (got %s < %s)", order[i-1].key, exact(order[i].v), exact(order[i-1].v))
			return
		}
	}
}

// errors checks the run's error tally.
func (c *fileCheck) errors(e Errors) {
	switch {
	case e.Requests < 0:
		c.at([]string{"errors", "requests"}, "must be ≥ 0 (got %d)", e.Requests)
	case e.Failed < 0:
		c.at([]string{"errors", "failed"}, "must be ≥ 0 (got %d)", e.Failed)
	case e.Failed > e.Requests:
		c.at([]string{"errors", "failed"}, "must be ≤ requests (got %d > %d)", e.Failed, e.Requests)
	case e.Rate < 0 || e.Rate > 1:
		c.at([]string{"errors", "rate"}, "must be a fraction in [0, 1] (got %s)", exact(e.Rate))
	}
	for class, n := range e.ByClass {
		if n < 0 {
			c.at([]string{"errors", "by_class", class}, "must be ≥ 0 (got %d)", n)
		}
	}
	for status, n := range e.SlowDowns {
		if n < 0 {
			c.at([]string{"errors", "slow_downs", status}, "must be ≥ 0 (got %d)", n)
		}
	}
	for class, s := range e.BackoffS {
		if s < 0 {
			c.at([]string{"errors", "backoff_s", class}, "must be ≥ 0 (got %s)", exact(s))
		}
	}
	if e.WithheldArrivals < 0 {
		c.at([]string{"errors", "withheld_arrivals"}, "must be ≥ 0 (got %d)", e.WithheldArrivals)
	}
}

// series checks that the per-second series are whole: one length, no
// negative count.
func (c *fileCheck) series(run *Run) {
	s := run.Series
	for key, o := range map[string]*OverTime{"ttft_over_time": s.TTFT, "e2e_over_time": s.E2E} {
		if o != nil {
			if why := o.check(); why != "" {
				c.at([]string{"series", key}, "%s", why)
			}
		}
	}
	n := len(s.OutputTokens)
	if len(s.InFlight) != n {
		c.at([]string{"series", "in_flight"}, "has %d seconds, output_tokens %d: the file was not written whole", len(s.InFlight), n)
		return
	}
	for _, f := range []struct {
		key string
		v   []int64
	}{{"output_tokens", s.OutputTokens}, {"input_tokens", s.InputTokens}, {"cached_input_tokens", s.CachedInputTokens},
		{"started", s.Started}, {"completed", s.Completed}, {"failed", s.Failed}} {
		if len(f.v) != n {
			c.at([]string{"series", f.key}, "has %d seconds, output_tokens %d: the file was not written whole", len(f.v), n)
			return
		}
		for i, x := range f.v {
			if x < 0 {
				c.at([]string{"series", f.key, strconv.Itoa(i)}, "must be ≥ 0 (got %d)", x)
				return
			}
		}
	}
}

// histograms checks that every histogram decodes, belongs to a window and
// a metric the file holds, and counts what its window's summary counts;
// and that no summary lacks its histogram when others are there.
func (c *fileCheck) histograms(run *Run) {
	metrics := map[string]HistSpec{HistClientLag.Name: HistClientLag}
	for _, m := range windowHists {
		metrics[m.Name] = m
	}
	for _, wname := range slices.Sorted(maps.Keys(run.Histograms)) {
		w := run.Windows[wname]
		if w == nil {
			if !slices.Contains(WindowNames, wname) { // a missing window is reported already
				c.at([]string{"histograms", wname}, "belongs to no window of the file")
			}
			continue
		}
		summaries := map[string]distAt{}
		for _, d := range windowDists(w) {
			summaries[d.metric.Name] = d
		}
		hs := run.Histograms[wname]
		for _, mname := range slices.Sorted(maps.Keys(hs)) {
			p := []string{"histograms", wname, mname}
			m, known := metrics[mname]
			if !known {
				c.at(p, "unknown metric")
				continue
			}
			e := hs[mname]
			if e.Unit != m.Unit || e.Scale != m.Scale {
				c.at(p, "unit %q and scale %s, want %q and %s for %s", e.Unit, exact(e.Scale), m.Unit, exact(m.Scale), mname)
				continue
			}
			h, err := decodePacked(e)
			if err != nil {
				c.at(append(p, "hdr"), "not a histogram sixpin wrote: %v", err)
				continue
			}
			var sum *Dist
			where := "the window has no summary of it"
			if mname == HistClientLag.Name {
				if d := run.ClientAddedLatencyMs; d != nil {
					sum, where = d, "client_added_latency_ms"
				}
			} else if d, ok := summaries[mname]; ok && *d.dist != nil {
				sum, where = *d.dist, "windows."+wname+"."+d.key
			}
			switch {
			case sum == nil && h.TotalCount() != 0:
				c.at(p, "counts %d values, but %s (0): the file contradicts itself", h.TotalCount(), where)
			case sum != nil && h.TotalCount() != sum.Count:
				c.at(p, "counts %d values, but %s.count (%d): the file contradicts itself", h.TotalCount(), where, sum.Count)
			case sum != nil:
				c.agrees(p, where, m, sum, h)
			}
		}
		if len(hs) == 0 {
			continue
		}
		for _, d := range windowDists(w) {
			if _, ok := hs[d.metric.Name]; !ok && *d.dist != nil && (*d.dist).Count > 0 {
				c.at([]string{"histograms", wname}, "lacks %s, which windows.%s.%s counts (%d values)", d.metric.Name, wname, d.key, (*d.dist).Count)
			}
		}
	}
}

// summarized is what agrees reads of a histogram: a dense one, or the
// sparse decoding a read uses (only the populated buckets: a dense one
// clears a full counts array per histogram of the file).
type summarized interface {
	TotalCount() int64
	ValueAtPercentilesSlice(percentiles []float64) []int64
	Mean() float64
}

// geometries holds an empty histogram per spec, read only: which values
// share a bucket depends on the geometry alone.
var geometries sync.Map // HistSpec → *hdrhistogram.Histogram

// geometry is m's empty histogram, made once.
func geometry(m HistSpec) *hdrhistogram.Histogram {
	if g, ok := geometries.Load(m); ok {
		return g.(*hdrhistogram.Histogram)
	}
	g, _ := geometries.LoadOrStore(m, m.new())
	return g.(*hdrhistogram.Histogram)
}

// agrees checks that the summary sum (at where) of metric m says what
// its histogram h (at p), which counts as many values, says: its min and
// max in the same HDR bucket as h's, each percentile in the buckets of
// the values ranked at it by nearest rank or by HDR, or one rank either
// side (the token lengths are summarised from exact counts, not from h),
// and its mean within h's precision. The first statistic that does not
// agree is reported: a summary edited by hand, or a histogram of another
// window, metric or run.
func (c *fileCheck) agrees(p []string, where string, m HistSpec, sum *Dist, h summarized) {
	n := h.TotalCount()
	if n == 0 {
		return
	}
	figs := []struct {
		key string
		pct float64
		v   float64
	}{{"min", 0, sum.Min}, {"p10", 10, sum.P10}, {"p50", 50, sum.P50}, {"p90", 90, sum.P90},
		{"p95", 95, sum.P95}, {"p99", 99, sum.P99}, {"p99_9", 99.9, sum.P999}, {"max", 100, sum.Max}}
	// Every value needed, read in one pass over h: each statistic's own
	// (HDR reads 0 as the min's bucket, 100 as the max's) and the values
	// at the ranks that bound it.
	atRank := func(k int64) float64 { return 100 * float64(min(max(k, 1), n)) / float64(n) }
	bounds := make([][2]float64, len(figs))
	qs := make([]float64, 0, 3*len(figs))
	for i, st := range figs {
		bounds[i] = [2]float64{st.pct, st.pct}
		if st.pct > 0 && st.pct < 100 {
			nr, hr := stats.NearestRank(st.pct, n), stats.HDRRank(st.pct, n)
			bounds[i] = [2]float64{atRank(min(nr, hr) - 1), atRank(max(nr, hr) + 1)}
		}
		qs = append(qs, st.pct, bounds[i][0], bounds[i][1])
	}
	slices.Sort(qs)
	vals := h.ValueAtPercentilesSlice(qs)
	at := func(q float64) int64 { i, _ := slices.BinarySearch(qs, q); return vals[i] }
	for i, st := range figs {
		v, lo, hi := int64(math.Round(st.v*m.Scale)), at(bounds[i][0]), at(bounds[i][1])
		if g := geometry(m); !(v >= lo || g.ValuesAreEquivalent(v, lo)) || !(v <= hi || g.ValuesAreEquivalent(v, hi)) {
			c.at(p, "puts %s at %s, but %s.%s is %s: the file contradicts itself", st.key, exact(float64(at(st.pct))/m.Scale), where, st.key, exact(st.v))
			return
		}
	}
	if mean := h.Mean() / m.Scale; math.Abs(sum.Mean-mean) > meanPrecision*math.Abs(mean)+1e-9 {
		c.at(p, "puts the mean at %s, but %s.mean is %s: the file contradicts itself", exact(mean), where, exact(sum.Mean))
	}
}

// meanPrecision is how far, relatively, a mean summarised from exact
// values may be from its histogram's: each value is read back as the
// middle of its HDR bucket, off by at most half the bucket (1/2,048 of
// the value at 3 significant figures).
const meanPrecision = 1e-3

// decodePacked decodes e sparse — its populated buckets alone, which a
// read checks and a merge adds — turning a panic of the decoder on bytes
// it did not expect into an error.
func decodePacked(e EncodedHistogram) (h *hdrhistogram.PackedHistogram, err error) {
	defer func() {
		if r := recover(); r != nil {
			h, err = nil, fmt.Errorf("undecodable (%v)", r)
		}
	}()
	return hdrhistogram.DecodePacked([]byte(e.HDR))
}

// distAt is one of a window's summaries: its metric (whose histogram
// the window keeps), its JSON key in the window, and where it is held.
// exact marks the lengths, summarised from exact counts rather than from
// the histogram (winAcc).
type distAt struct {
	metric HistSpec
	key    string
	dist   **Dist
	exact  bool
}

// windowDists lists w's summaries of the window metrics: the one list
// the collector fills and the reader checks.
func windowDists(w *Window) []distAt {
	return []distAt{
		{HistTTFT, "ttft_ms", &w.TTFTMs, false},
		{HistTTFTAnswer, "ttft_answer_ms", &w.TTFTAnswerMs, false},
		{HistITL, "itl_ms", &w.ITLMs, false},
		{HistTPOT, "tpot_ms", &w.TPOTMs, false},
		{HistE2E, "e2e_ms", &w.E2EMs, false},
		{HistDecode, "decode_tok_s", &w.DecodeTokS, false},
		{HistEffective, "effective_tok_s", &w.EffectiveTokS, false},
		{HistLag, "schedule_lag_ms", &w.ScheduleLagMs, false},
		{HistPrompt, "prompt_tokens_per_request", &w.PromptTokens, true},
		{HistOutput, "output_tokens_per_request", &w.OutputPerReq, true},
		{HistServerQueue, "server_queue_ms", &w.ServerQueueMs, false},
		{HistServerPrefill, "server_prefill_ms", &w.ServerPrefillMs, false},
		{HistTTFTRest, "ttft_rest_ms", &w.TTFTRestMs, false},
	}
}

// exact formats x in the shortest form that reads back exactly.
func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// checkSet judges a decoded set: its schema and kind, its points' labels
// one per run, and every run as check judges a results file.
func (c *fileCheck) checkSet(set *Set) {
	if set.Schema != SetSchema {
		c.at([]string{"schema"}, "want %q, got %q: not a sixpin set file", SetSchema, set.Schema)
		return
	}
	for _, key := range []string{"kind", "scenario", "runs"} {
		if !c.has(key) {
			c.missing(nil, key, "missing: sixpin writes it in every set file")
		}
	}
	switch set.Kind {
	case SetSweep:
		if set.Pin == "" {
			c.missing(nil, "pin", "missing: a sweep names its swept pin")
		}
		if len(set.Values) != len(set.Runs) {
			c.at([]string{"values"}, "has %d values for %d runs: the file was not written whole", len(set.Values), len(set.Runs))
		}
	case SetBakeoff:
		if len(set.Profiles) != len(set.Runs) {
			c.at([]string{"profiles"}, "has %d profiles for %d runs: the file was not written whole", len(set.Profiles), len(set.Runs))
		}
	case SetRepeat:
	default:
		c.at([]string{"kind"}, "want %s, %s or %s, got %q", SetSweep, SetRepeat, SetBakeoff, set.Kind)
	}
	for i, run := range set.Runs {
		if run == nil {
			c.at([]string{"runs", strconv.Itoa(i)}, "null: want a run's results")
			continue
		}
		c.run(i).check(run)
	}
}
