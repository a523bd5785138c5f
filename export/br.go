package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/internal/atomicfile"
	"github.com/sixpin/sixpin/internal/numfmt"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// BRVersion is the llm-d Benchmark Report version sixpin writes (every
// v0.2 report is also a valid v0.2.1 one).
const BRVersion = "0.2"

// BenchmarkReport is one llm-d Benchmark Report v0.2 (llm-d-benchmark's
// br_v0_2_json_schema.json): the stack measured, the load, and the
// results of one run, or of one stage of a set or a capacity search.
//
// Its figures are sixpin's headline window's (steady: warmup, the ramp
// and the ramp-down left out), each Statistics naming its window; they
// follow the practice of llm-d-benchmark's own AIPerf and inference-perf
// importers: latencies in s, TPOT and ITL in s/token, token lengths in
// count, rates in tokens/s and queries/s. A figure sixpin does not have
// is left out, never written as zero.
type BenchmarkReport struct {
	Version  string      `json:"version"`
	Run      BRRun       `json:"run"`
	Scenario *BRScenario `json:"scenario,omitempty"`
	Results  BRResults   `json:"results"`
}

// BRRun identifies a report. UID is this report's; EID the experiment's
// (every stage of a set or a capacity search shares it, as the stages of
// an llm-d-benchmark run do). Both are UUIDv5s of the results they come
// from, so exporting a file again gives the same ids.
type BRRun struct {
	UID         string  `json:"uid"`
	EID         string  `json:"eid,omitempty"`
	Time        *BRTime `json:"time,omitempty"`
	Description string  `json:"description,omitempty"`
}

// BRTime is when the run ran, in wall-clock time: ISO-8601 timestamps
// and duration.
type BRTime struct {
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	Duration string `json:"duration,omitempty"`
}

// BRScenario is the stack measured and the load sent.
type BRScenario struct {
	Stack []BRComponent `json:"stack,omitempty"`
	Load  *BRLoad       `json:"load,omitempty"`
}

// BRComponent is the endpoint measured, as a generic component: sixpin
// sees an endpoint, not its accelerators or parallelism, which an
// inference_engine component requires.
type BRComponent struct {
	Metadata     BRMetadata `json:"metadata"`
	Standardized BRGeneric  `json:"standardized"`
	Native       BRNative   `json:"native"`
}

// BRMetadata is a component's or the load's metadata.
type BRMetadata struct {
	SchemaVersion string `json:"schema_version"`
	Label         string `json:"label,omitempty"`
	CfgID         string `json:"cfg_id,omitempty"`
	Description   string `json:"description,omitempty"`
}

// BRGeneric is a generic component: the serving engine discovery
// recognised (or "unknown"), and the model it served.
type BRGeneric struct {
	Kind        string `json:"kind"`
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	Model       string `json:"model,omitempty"`
	Simulated   bool   `json:"simulated,omitempty"`
}

// BRNative is configuration in its own tool's format.
type BRNative struct {
	Args   map[string]any `json:"args,omitempty"`
	Config any            `json:"config,omitempty"`
}

// BRLoad is the workload: sixpin's declared pins in the report's
// standard fields, and sixpin's own record of them under native.
type BRLoad struct {
	Metadata     BRMetadata         `json:"metadata"`
	Standardized BRLoadStandardized `json:"standardized"`
	Native       BRNative           `json:"native"`
}

// BRLoadStandardized is the load in the report's terms.
type BRLoadStandardized struct {
	Tool        string `json:"tool"`
	ToolVersion string `json:"tool_version"`
	// Parallelism is the number of load generators: the shards of a
	// merged run, else 1.
	Parallelism int `json:"parallelism"`
	// Source is "random": sixpin synthesises its prompts to exact
	// lengths.
	Source string `json:"source"`
	// Stage is the run's place in its set or capacity search (0 alone).
	Stage        int          `json:"stage"`
	InputSeqLen  BRSeqLen     `json:"input_seq_len"`
	OutputSeqLen *BRSeqLen    `json:"output_seq_len,omitempty"`
	MultiTurn    *BRMultiTurn `json:"multi_turn,omitempty"`
	// RateQPS is an open loop's declared rate (req/s), Concurrency a
	// closed loop's streams or agentic sessions.
	RateQPS     *float64 `json:"rate_qps,omitempty"`
	Concurrency *int     `json:"concurrency,omitempty"`
}

// BRSeqLen is a declared length distribution in tokens.
type BRSeqLen struct {
	Distribution string  `json:"distribution"`
	Value        float64 `json:"value"`
	Min          *int    `json:"min,omitempty"`
	Max          *int    `json:"max,omitempty"`
}

// BRMultiTurn marks a multi-turn (agentic or trace) workload.
type BRMultiTurn struct {
	Enabled bool `json:"enabled"`
}

// BRResults are the figures.
type BRResults struct {
	RequestPerformance *BRRequestPerformance `json:"request_performance,omitempty"`
	Observability      *BRObservability      `json:"observability,omitempty"`
}

// BRRequestPerformance holds the aggregate figures.
type BRRequestPerformance struct {
	Aggregate *BRAggregate `json:"aggregate,omitempty"`
}

// BRAggregate is the headline window's figures.
type BRAggregate struct {
	Requests   *BRRequests   `json:"requests,omitempty"`
	Latency    *BRLatency    `json:"latency,omitempty"`
	Throughput *BRThroughput `json:"throughput,omitempty"`
}

// BRRequests counts the requests that started in the window: Failures
// those the endpoint failed, Incomplete those an interrupt cut off.
type BRRequests struct {
	Total        int           `json:"total"`
	Failures     *int          `json:"failures,omitempty"`
	Incomplete   *int          `json:"incomplete,omitempty"`
	InputLength  *BRStatistics `json:"input_length,omitempty"`
	OutputLength *BRStatistics `json:"output_length,omitempty"`
}

// BRLatency is sixpin's latencies, each measured from a request's
// scheduled start: TTFT, TPOT ((E2E − TTFT) / (output − 1), the first
// token excluded), ITL (every gap between tokens) and E2E.
// normalized_time_per_output_token is not a sixpin figure: left out.
type BRLatency struct {
	TimeToFirstToken   *BRStatistics `json:"time_to_first_token,omitempty"`
	TimePerOutputToken *BRStatistics `json:"time_per_output_token,omitempty"`
	InterTokenLatency  *BRStatistics `json:"inter_token_latency,omitempty"`
	RequestLatency     *BRStatistics `json:"request_latency,omitempty"`
}

// BRThroughput is the window's aggregate output rate (all streams) and
// its rate of successful requests. Input and total token rates are not
// sixpin figures per window: left out.
type BRThroughput struct {
	OutputTokenRate *BRStatistics `json:"output_token_rate,omitempty"`
	RequestRate     *BRStatistics `json:"request_rate,omitempty"`
}

// BRStatistics is a distribution in the report's units. Window names the
// sixpin window it is over (the report's schema allows keys of one's
// own here; llm-d's readers ignore it).
type BRStatistics struct {
	Units  string   `json:"units"`
	Mean   float64  `json:"mean"`
	Stddev *float64 `json:"stddev,omitempty"`
	Min    *float64 `json:"min,omitempty"`
	P0p1   *float64 `json:"p0p1,omitempty"`
	P1     *float64 `json:"p1,omitempty"`
	P5     *float64 `json:"p5,omitempty"`
	P10    *float64 `json:"p10,omitempty"`
	P25    *float64 `json:"p25,omitempty"`
	P50    *float64 `json:"p50,omitempty"`
	P75    *float64 `json:"p75,omitempty"`
	P90    *float64 `json:"p90,omitempty"`
	P95    *float64 `json:"p95,omitempty"`
	P99    *float64 `json:"p99,omitempty"`
	P99p9  *float64 `json:"p99p9,omitempty"`
	Max    *float64 `json:"max,omitempty"`
	Window string   `json:"window,omitempty"`
}

// BRObservability is the server's own metrics over the window, where
// sixpin scraped them.
type BRObservability struct {
	Components []BRComponentObservability `json:"components"`
}

// BRComponentObservability is one component's metrics.
type BRComponentObservability struct {
	ComponentLabel string             `json:"component_label"`
	Aggregate      *BRResourceMetrics `json:"aggregate,omitempty"`
}

// BRResourceMetrics are the server's gauges over the window: KV-cache
// usage and prefix-cache hit rate in percent, requests running and
// waiting as counts (mean and peak over the scrapes).
type BRResourceMetrics struct {
	KVCacheUsage    *BRStatistics `json:"kv_cache_usage,omitempty"`
	CacheHitRate    *BRStatistics `json:"cache_hit_rate,omitempty"`
	RunningRequests *BRStatistics `json:"running_requests,omitempty"`
	WaitingRequests *BRStatistics `json:"waiting_requests,omitempty"`
}

// The report's units sixpin uses.
const (
	unitCount      = "count"
	unitPercent    = "percent"
	unitS          = "s"
	unitSPerToken  = "s/token"
	unitTokensPerS = "tokens/s"
	unitQueriesPer = "queries/s"
)

// stage places a report in its experiment.
type stage struct {
	index int
	// label names the stage ("concurrency.streams = 4", "point 3: 2
	// streams (bracket)"; "" alone).
	label string
	// eid is the experiment's identity (a UUIDv5 is made of it).
	eid string
	// extra is sixpin's own record of the stage, beside the run's, in
	// the load's native config.
	extra map[string]any
}

// BenchmarkReportOf is the Benchmark Report of one run (a run alone, or
// one merged from shards).
func BenchmarkReportOf(run *results.Run) *BenchmarkReport {
	return benchmarkReport(run, stage{eid: runIdentity(run)})
}

// BenchmarkReportsOfSet are a set's reports, one per run: a sweep's
// points and repeats are stages of one experiment (one eid, stage i, as
// llm-d-benchmark reports the stages of one load generator's run); a
// bake-off's vendors are separate experiments, each its own stage 0.
func BenchmarkReportsOfSet(set *results.Set) []*BenchmarkReport {
	out := make([]*BenchmarkReport, 0, len(set.Runs))
	eid := "set/" + set.Kind + "/" + set.Scenario
	if len(set.Runs) > 0 {
		eid += "/" + runIdentity(set.Runs[0])
	}
	for i, run := range set.Runs {
		st := stage{index: i, eid: eid, label: setLabel(set, i),
			extra: map[string]any{"set": map[string]any{"kind": set.Kind, "index": i, "of": len(set.Runs), "label": setLabel(set, i)}}}
		if set.Kind == results.SetBakeoff {
			st.index, st.eid = 0, runIdentity(run)
		}
		out = append(out, benchmarkReport(run, st))
	}
	return out
}

// setLabel names run i of set.
func setLabel(set *results.Set, i int) string {
	switch {
	case set.Kind == results.SetSweep && i < len(set.Values):
		return set.Pin + " = " + numfmt.Plain(set.Values[i])
	case set.Kind == results.SetBakeoff && i < len(set.Profiles):
		return "profile " + set.Profiles[i]
	}
	return fmt.Sprintf("run %d (seed %d)", i+1, set.Runs[i].Scenario.Seed)
}

// BenchmarkReportsOfCapacity are a capacity search's reports, one per
// point that ran, in the order they ran: stages of one experiment, each
// with its point's value, role and tier verdicts in its native config.
func BenchmarkReportsOfCapacity(f *capacity.File) []*BenchmarkReport {
	var out []*BenchmarkReport
	eid := "capacity/" + f.ScenarioName
	for _, p := range f.Points {
		if p.Run != nil {
			eid += "/" + runIdentity(p.Run)
			break
		}
	}
	for k, p := range f.Points {
		if p.Run == nil {
			continue
		}
		label := fmt.Sprintf("point %d: %s %s (%s)", k+1, f.Plan.Axis.Pin, numfmt.Plain(p.Value), p.Role)
		verdicts := make([]map[string]any, 0, len(p.Verdicts))
		for _, v := range p.Verdicts {
			verdicts = append(verdicts, map[string]any{"tier": v.Tier, "outcome": v.Outcome})
		}
		st := stage{index: len(out), eid: eid, label: label, extra: map[string]any{"capacity": map[string]any{
			"point": k + 1, "pin": f.Plan.Axis.Pin, "value": p.Value, "role": p.Role, "valid": p.Valid,
			"invalid": p.Invalid, "judged": p.Judged, "verdicts": verdicts}}}
		out = append(out, benchmarkReport(p.Run, st))
	}
	return out
}

// runIdentity is what makes a run itself: its start, its scenario and
// its prompt salt.
func runIdentity(run *results.Run) string {
	return fmt.Sprintf("%d/%s/%s/%s", run.StartUnixNS, run.Scenario.Name, run.Scenario.SHA256, run.Scenario.PromptSalt)
}

// brUUID is the UUIDv5 of name in sixpin's namespace.
func brUUID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://sixpin.dev/br/"+name)).String()
}

// benchmarkReport is run's report as stage st.
func benchmarkReport(run *results.Run, st stage) *BenchmarkReport {
	wname := run.Headline
	if wname == "" {
		wname = results.WindowSteady
	}
	w := run.Windows[wname]
	br := &BenchmarkReport{Version: BRVersion}
	br.Run = BRRun{
		UID:         brUUID(fmt.Sprintf("%s/stage/%d/%s", st.eid, st.index, runIdentity(run))),
		EID:         brUUID(st.eid),
		Time:        runTime(run),
		Description: description(run, st),
	}
	stack := stackOf(run)
	br.Scenario = &BRScenario{Stack: []BRComponent{stack}, Load: loadOf(run, st, wname, w)}
	if w != nil {
		br.Results.RequestPerformance = &BRRequestPerformance{Aggregate: aggregateOf(run, wname, w)}
	}
	if run.Server != nil {
		if sw := run.Server.Windows[wname]; sw != nil {
			if rm := resourcesOf(sw, wname); rm != nil {
				br.Results.Observability = &BRObservability{Components: []BRComponentObservability{{ComponentLabel: stack.Metadata.Label, Aggregate: rm}}}
			}
		}
	}
	return br
}

// description is llm-d-benchmark's default run label, "<model>
// [<experiment>]", with the stage's label.
func description(run *results.Run, st stage) string {
	model := run.Target.Model
	if model == "" {
		model = run.Pins.Model.Declared.Name
	}
	exp := "sixpin " + run.Scenario.Name
	if st.label != "" {
		exp += ", " + st.label
	}
	return model + " [" + exp + "]"
}

// runTime is the run's wall-clock time: from the start of load to the
// end of the last request (the all window, in wall time when the run
// was compressed).
func runTime(run *results.Run) *BRTime {
	if run.StartedAt.IsZero() {
		return nil
	}
	t := &BRTime{Start: run.StartedAt.UTC().Format(time.RFC3339Nano)}
	if all := run.Windows[results.WindowAll]; all != nil {
		d := all.DurationS
		if c := run.Compressed; c != nil && c.Scale > 0 {
			d *= c.Scale
		}
		t.End = run.StartedAt.Add(time.Duration(d * float64(time.Second))).UTC().Format(time.RFC3339Nano)
		t.Duration = "PT" + strconv.FormatFloat(d, 'f', -1, 64) + "S"
	}
	return t
}

// stackOf is the endpoint as a generic component.
func stackOf(run *results.Run) BRComponent {
	engine := run.Pins.Model.Observed.Engine
	if engine == "" {
		engine = "unknown"
	}
	version := ""
	if run.Discovery != nil {
		version = run.Discovery.Version
	}
	model := run.Target.Model
	if model == "" {
		model = run.Pins.Model.Observed.Reported
	}
	// The results file keeps the endpoint without its secrets.
	args := map[string]any{"endpoint": run.Target.Endpoint, "profile": run.Target.Profile}
	if run.Target.Protocol != "" {
		args["protocol"] = run.Target.Protocol
	}
	native := BRNative{Args: args}
	if run.Discovery != nil {
		native.Config = map[string]any{"sixpin_discovery": run.Discovery}
	}
	c := BRComponent{
		Metadata:     BRMetadata{SchemaVersion: "0.0.1", Label: engine, Description: "the endpoint sixpin measured"},
		Standardized: BRGeneric{Kind: "generic", Tool: engine, ToolVersion: version, Model: model, Simulated: run.Target.Simulated},
		Native:       native,
	}
	c.Metadata.CfgID = cfgID(c.Native)
	if run.Target.Simulated {
		c.Metadata.Description = "sixpin's built-in simulator: simulated figures, not a measurement of real hardware"
	}
	return c
}

// cfgID is a configuration's id as llm-d-benchmark makes it: the
// SHA-256 of its JSON with sorted keys.
func cfgID(v any) string {
	b, err := json.Marshal(v) // maps marshal sorted; structs in field order
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// loadOf is the declared load.
func loadOf(run *results.Run, st stage, wname string, w *results.Window) *BRLoad {
	d := run.Pins.Declared()
	std := BRLoadStandardized{Tool: "sixpin", ToolVersion: run.SixpinVersion, Parallelism: 1, Source: "random", Stage: st.index,
		InputSeqLen: seqLen(d.Prompt)}
	if run.Merged != nil && run.Merged.Count > 1 {
		std.Parallelism = run.Merged.Count
	}
	if d.Output.Mean > 0 {
		o := seqLen(d.Output.TokensDeclared)
		std.OutputSeqLen = &o
	}
	switch c := d.Concurrency; {
	case c.Mode == scenario.ModeOpen && c.RateRPS > 0:
		std.RateQPS = &c.RateRPS
	case c.Mode == scenario.ModeClosed && c.Streams > 0:
		std.Concurrency = &c.Streams
	}
	if d.Concurrency.Sessions {
		std.MultiTurn = &BRMultiTurn{Enabled: true}
	}
	verdicts := map[string]any{}
	for _, p := range []struct {
		name string
		v    results.Verdict
		why  string
	}{{"model", run.Pins.Model.Verified, run.Pins.Model.Reason}, {"prompt", run.Pins.Prompt.Verified, run.Pins.Prompt.Reason},
		{"output", run.Pins.Output.Verified, run.Pins.Output.Reason}, {"concurrency", run.Pins.Concurrency.Verified, run.Pins.Concurrency.Reason},
		{"kv_cache", run.Pins.KVCache.Verified, run.Pins.KVCache.Reason}, {"mix", run.Pins.Mix.Verified, run.Pins.Mix.Reason}} {
		verdicts[p.name] = map[string]any{"verified": p.v, "reason": p.why}
	}
	six := map[string]any{
		"schema": run.Schema, "scenario": run.Scenario, "declared": d, "verified": verdicts,
		"valid": run.Valid, "incomplete": run.Incomplete, "simulated": run.Target.Simulated,
	}
	if len(run.Invalid) > 0 {
		six["invalid"] = run.Invalid
	}
	if w != nil {
		six["window"] = map[string]any{"name": wname, "start_s": w.StartS, "end_s": w.EndS, "duration_s": w.DurationS}
	}
	for k, v := range st.extra {
		six[k] = v
	}
	native := BRNative{Config: map[string]any{"sixpin": six}}
	return &BRLoad{
		Metadata:     BRMetadata{SchemaVersion: "0.0.1", CfgID: cfgID(native), Description: loadDescription(run, wname, w)},
		Standardized: std,
		Native:       native,
	}
}

// loadDescription says what the figures are over, and whether they can
// be trusted.
func loadDescription(run *results.Run, wname string, w *results.Window) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sixpin scenario %s", run.Scenario.Name)
	if run.Scenario.Description != "" {
		fmt.Fprintf(&b, " (%s)", run.Scenario.Description)
	}
	if w != nil {
		all := 0.0
		if a := run.Windows[results.WindowAll]; a != nil {
			all = a.DurationS
		}
		fmt.Fprintf(&b, "; every figure is over its %s window, %s–%s s of the run's %s s (warmup, the ramp and the ramp-down left out)",
			wname, numfmt.Plain(round3(w.StartS)), numfmt.Plain(round3(w.EndS)), numfmt.Plain(round3(all)))
	}
	if run.Target.Simulated {
		b.WriteString("; simulated: the built-in simulator, not real hardware")
	}
	if run.Compressed != nil {
		fmt.Fprintf(&b, "; in compressed time (--time-scale %s): latencies in simulated time", numfmt.Plain(run.Compressed.Scale))
	}
	switch {
	case run.Incomplete:
		b.WriteString("; INCOMPLETE: " + run.IncompleteReason)
	case !run.Valid:
		b.WriteString("; INVALID: " + strings.Join(run.Invalid, "; "))
	}
	return b.String()
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// aggregateOf is a window's figures.
func aggregateOf(run *results.Run, wname string, w *results.Window) *BRAggregate {
	interrupted := w.ErrorsByClass[string(record.ErrInterrupted)]
	failures := w.Failed - interrupted
	a := &BRAggregate{Requests: &BRRequests{Total: w.Requests, Failures: &failures, Incomplete: &interrupted}}
	hist := func(spec results.HistSpec, d *results.Dist, div float64, units string) *BRStatistics {
		return statistics(run, wname, spec, d, div, units)
	}
	a.Requests.InputLength = hist(results.HistPrompt, w.PromptTokens, 1, unitCount)
	a.Requests.OutputLength = hist(results.HistOutput, w.OutputPerReq, 1, unitCount)
	lat := &BRLatency{
		TimeToFirstToken:   hist(results.HistTTFT, w.TTFTMs, 1000, unitS),
		TimePerOutputToken: hist(results.HistTPOT, w.TPOTMs, 1000, unitSPerToken),
		InterTokenLatency:  hist(results.HistITL, w.ITLMs, 1000, unitSPerToken),
		RequestLatency:     hist(results.HistE2E, w.E2EMs, 1000, unitS),
	}
	if *lat != (BRLatency{}) {
		a.Latency = lat
	}
	if w.DurationS > 0 {
		a.Throughput = &BRThroughput{
			OutputTokenRate: &BRStatistics{Units: unitTokensPerS, Mean: w.AggregateOutputTokS, Window: wname},
			RequestRate:     &BRStatistics{Units: unitQueriesPer, Mean: float64(w.Completed) / w.DurationS, Window: wname},
		}
	}
	return a
}

// brPercentiles are the report's percentiles, in its order.
var brPercentiles = []float64{0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9}

// statistics is a window's distribution d of spec in the report's units
// (sixpin's unit divided by div), every percentile the report has read
// from the window's HDR histogram where the file keeps it (the same
// reading as the results' own percentiles), else d's. nil when d is.
func statistics(run *results.Run, wname string, spec results.HistSpec, d *results.Dist, div float64, units string) *BRStatistics {
	if d == nil || d.Count == 0 {
		return nil
	}
	v := func(x float64) *float64 { x = tidy(x / div); return &x }
	s := &BRStatistics{Units: units, Mean: tidy(d.Mean / div), Stddev: v(d.Stddev), Min: v(d.Min), Max: v(d.Max), Window: wname}
	if e, ok := run.Histograms[wname][spec.Name]; ok {
		if h, err := e.Decode(); err == nil && h.TotalCount() == d.Count {
			// Recorded integers divided once: 21231 µs is 0.021231 s.
			q := h.ValueAtPercentilesSlice(brPercentiles)
			at := func(i int) *float64 { x := tidy(float64(q[i]) / (spec.Scale * div)); return &x }
			s.P0p1, s.P1, s.P5, s.P10, s.P25, s.P50 = at(0), at(1), at(2), at(3), at(4), at(5)
			s.P75, s.P90, s.P95, s.P99, s.P99p9 = at(6), at(7), at(8), at(9), at(10)
			s.Min, s.Max = v(float64(h.Min())/spec.Scale), v(float64(h.Max())/spec.Scale)
			return s
		}
	}
	s.P10, s.P50, s.P90, s.P95, s.P99, s.P99p9 = v(d.P10), v(d.P50), v(d.P90), v(d.P95), v(d.P99), v(d.P999)
	return s
}

// tidy rounds x to 12 significant digits: what a unit's conversion
// adds past them is the floating point's (21.231 ms / 1000 is
// 0.021231000000000003 s), not the measurement's.
func tidy(x float64) float64 {
	y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil {
		return x
	}
	return y
}

// resourcesOf is the server's gauges over a window (nil: none).
func resourcesOf(sw *results.ServerWindow, wname string) *BRResourceMetrics {
	gauge := func(m *results.MeanPeak, units string) *BRStatistics {
		if m == nil {
			return nil
		}
		peak := m.Peak
		return &BRStatistics{Units: units, Mean: m.Mean, Max: &peak, Window: wname}
	}
	rm := &BRResourceMetrics{
		KVCacheUsage:    gauge(sw.KVUsagePct, unitPercent),
		RunningRequests: gauge(sw.Running, unitCount),
		WaitingRequests: gauge(sw.Waiting, unitCount),
	}
	if p := sw.PrefixCacheHitPct; p != nil {
		rm.CacheHitRate = &BRStatistics{Units: unitPercent, Mean: *p, Window: wname}
	}
	if *rm == (BRResourceMetrics{}) {
		return nil
	}
	return rm
}

// seqLen is a declared token-count pin as the report's sequence length.
func seqLen(t scenario.TokensDeclared) BRSeqLen {
	s := BRSeqLen{Distribution: "other", Value: t.Mean}
	switch {
	case t.Min == t.Max && t.Min > 0:
		s.Distribution = "fixed"
	case strings.HasPrefix(t.Dist, "uniform"):
		s.Distribution = "uniform"
	case strings.HasPrefix(t.Dist, "normal"):
		s.Distribution = "gaussian"
	}
	if t.Max >= 1 {
		lo, hi := int(t.Min), int(t.Max)
		s.Min, s.Max = &lo, &hi
	}
	return s
}

// WriteBenchmarkReports writes reports to w: one as an indented JSON
// document, several as JSON Lines (a report per line, in order).
func WriteBenchmarkReports(w io.Writer, reports []*BenchmarkReport) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if len(reports) == 1 {
		enc.SetIndent("", "  ")
	}
	for _, r := range reports {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write benchmark report: %w", err)
		}
	}
	return nil
}

// BenchmarkReportPaths are the files WriteBenchmarkReportFiles writes n
// reports to: path itself for one; for several, path's stem, "_i" and
// its extension (report_0.json, report_1.json, …: llm-d-benchmark's
// naming of several reports of one results file).
func BenchmarkReportPaths(path string, n int) []string {
	if n == 1 {
		return []string{path}
	}
	ext := filepath.Ext(path)
	stem := strings.TrimSuffix(path, ext)
	out := make([]string, n)
	for i := range out {
		out[i] = stem + "_" + strconv.Itoa(i) + ext
	}
	return out
}

// WriteBenchmarkReportFiles writes each report, indented, atomically to
// its file of BenchmarkReportPaths(path, len(reports)), and returns them.
func WriteBenchmarkReportFiles(path string, reports []*BenchmarkReport) ([]string, error) {
	paths := BenchmarkReportPaths(path, len(reports))
	for i := range reports {
		if err := atomicfile.Write(paths[i], func(w io.Writer) error { return WriteBenchmarkReports(w, reports[i:i+1]) }); err != nil {
			return paths[:i], err
		}
	}
	return paths, nil
}
