package analyze

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	oc "github.com/sixpin/sixpin/analyze/opencodetest"
	"github.com/sixpin/sixpin/record"

	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/trace"
)

// t0 is 2026-10-01 12:00 UTC in Unix ms.
var t0 = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC).UnixMilli()

const sec = int64(1000)

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-4*math.Max(1, math.Abs(want))
}

func checkDist(t *testing.T, what string, d *Dist, want Dist) {
	t.Helper()
	if d == nil {
		t.Errorf("%s: nil, want %+v", what, want)
		return
	}
	if d.N != want.N || !near(d.Min, want.Min) || !near(d.P10, want.P10) || !near(d.P25, want.P25) || !near(d.P50, want.P50) ||
		!near(d.P75, want.P75) || !near(d.P90, want.P90) || !near(d.Max, want.Max) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, *d, want)
	}
}

func analyzeDB(t *testing.T, opts Options) *Report {
	t.Helper()
	if opts.MinOutputTokens == 0 {
		opts.MinOutputTokens = DefaultMinOutputTokens
	}
	r, err := Analyze(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func model(t *testing.T, r *Report, key string) *ModelReport {
	t.Helper()
	for _, m := range r.Models {
		if m.Key() == key {
			return m
		}
	}
	t.Fatalf("no model %s in %v", key, r.Models)
	return nil
}

// TestPercentilesByHand: five samples of 1 s generating 50, 100, 150,
// 200, 250 tokens: 50..250 tok/s. Ranks h = 4p/100: P10 at 0.4 →
// 50 + 0.4·50 = 70; P25 at 1 → 100; P50 150; P75 200; P90 at 3.6 →
// 200 + 0.6·50 = 230.
func TestPercentilesByHand(t *testing.T) {
	d := oc.New(t, t.TempDir())
	for i, out := range []int{150, 50, 250, 100, 200} {
		at := t0 + int64(i)*60*sec
		d.User(fmt.Sprintf("msg_%02da", i), "ses_1", at-sec)
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_%02db", i), Session: "ses_1", Provider: "cloud", Model: "fast",
			Created: at, Completed: at + sec, Finish: "stop", Input: 1000, Output: out,
			Parts: []oc.Part{oc.Text(at+200, at+sec)}})
	}
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	m := model(t, r, "cloud/fast")
	if m.N != 5 || m.Generations != 5 || m.Tokens != 750 {
		t.Errorf("n %d, generations %d, tokens %d; want 5, 5, 750", m.N, m.Generations, m.Tokens)
	}
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 5, Min: 50, P10: 70, P25: 100, P50: 150, P75: 200, P90: 230, Max: 250})
	// TTFT 0.2 s each; decode over the 0.8 s from the first text to its end.
	checkDist(t, "ttft", m.TTFTS, Dist{N: 5, Min: 0.2, P10: 0.2, P25: 0.2, P50: 0.2, P75: 0.2, P90: 0.2, Max: 0.2})
	checkDist(t, "decode", m.DecodeTokS, Dist{N: 5, Min: 62.5, P10: 87.5, P25: 125, P50: 187.5, P75: 250, P90: 287.5, Max: 312.5})
	checkDist(t, "prefill share", m.PrefillShare, Dist{N: 5, Min: 0.2, P10: 0.2, P25: 0.2, P50: 0.2, P75: 0.2, P90: 0.2, Max: 0.2})
	if r.Counts.Messages != 10 || r.Counts.User != 5 || r.Counts.Assistant != 5 || r.Counts.Samples != 5 {
		t.Errorf("counts %+v", r.Counts)
	}
	if !reflect.DeepEqual(r.Counts.Skipped, Skipped{}) {
		t.Errorf("skipped %+v, want none", r.Counts.Skipped)
	}
}

// TestToolCallTruncation: a message that finished with tool calls is cut
// at its earliest tool start: 150 output + 50 reasoning tokens from
// created to the first tool start 2 s later is 100 tok/s, not the 20
// tok/s its 10 s span (tools running) would give.
func TestToolCallTruncation(t *testing.T) {
	d := oc.New(t, t.TempDir())
	d.Assistant(oc.Message{ID: "msg_1", Session: "ses_1", Provider: "p", Model: "tooly", Created: t0, Completed: t0 + 10*sec,
		Finish: "tool-calls", Input: 20000, Output: 150, Reasoning: 50,
		Parts: []oc.Part{oc.Reasoning(t0+500, t0+1000), oc.Text(t0+1000, t0+1500), oc.Tool(t0+3000, t0+9000), oc.Tool(t0+2000, t0+8000)}})
	// Tools but finished with stop: not cut (20 tok/s).
	d.Assistant(oc.Message{ID: "msg_2", Session: "ses_1", Provider: "p", Model: "tooly", Created: t0 + 20*sec, Completed: t0 + 30*sec,
		Finish: "stop", Input: 20000, Output: 200, Parts: []oc.Part{oc.Tool(t0+22*sec, t0+23*sec)}})
	// A tool that started after the message Completed: skipped, counted.
	d.Assistant(oc.Message{ID: "msg_3", Session: "ses_1", Provider: "p", Model: "tooly", Created: t0 + 40*sec, Completed: t0 + 50*sec,
		Finish: "tool-calls", Input: 20000, Output: 200, Parts: []oc.Part{oc.Tool(t0+51*sec, t0+52*sec)}})
	// ...or before it was created.
	d.Assistant(oc.Message{ID: "msg_4", Session: "ses_1", Provider: "p", Model: "tooly", Created: t0 + 60*sec, Completed: t0 + 70*sec,
		Finish: "tool-calls", Input: 20000, Output: 200, Parts: []oc.Part{oc.Tool(t0+59*sec, t0+61*sec)}})
	// No finish reason stored (older opencode) and tools: not cut, as
	// the reference does (20 tok/s; --tool-cut any-tool cuts it).
	d.Assistant(oc.Message{ID: "msg_5", Session: "ses_1", Provider: "p", Model: "tooly", Created: t0 + 80*sec, Completed: t0 + 90*sec,
		Input: 20000, Output: 200, Parts: []oc.Part{oc.Tool(t0+82*sec, t0+83*sec)}})
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	m := model(t, r, "p/tooly")
	checkDist(t, "effective tok/s", m.EffectiveTokS, Dist{N: 3, Min: 20, P10: 20, P25: 20, P50: 20, P75: 60, P90: 84, Max: 100})
	if r.Counts.Skipped.ToolOutsideSpan != 2 {
		t.Errorf("tool outside span %d, want 2", r.Counts.Skipped.ToolOutsideSpan)
	}
	if m.Generations != 5 {
		t.Errorf("generations %d, want 5 (skipped samples are still traffic)", m.Generations)
	}
	// msg_1: TTFT 0.5 s (first reasoning start), decode 200 tokens from
	// 0.5 s to the tool start at 2 s (133.3 tok/s), prefill 0.5 / 2.
	checkDist(t, "ttft", m.TTFTS, Dist{N: 1, Min: 0.5, P10: 0.5, P25: 0.5, P50: 0.5, P75: 0.5, P90: 0.5, Max: 0.5})
	checkDist(t, "decode", m.DecodeTokS, Dist{N: 1, Min: 400.0 / 3, P10: 400.0 / 3, P25: 400.0 / 3, P50: 400.0 / 3, P75: 400.0 / 3, P90: 400.0 / 3, Max: 400.0 / 3})
	checkDist(t, "prefill share", m.PrefillShare, Dist{N: 1, Min: 0.25, P10: 0.25, P25: 0.25, P50: 0.25, P75: 0.25, P90: 0.25, Max: 0.25})
}

func TestMalformedRowsAreSkippedAndCounted(t *testing.T) {
	d := oc.New(t, t.TempDir())
	good := func(id string, at int64) oc.Message {
		return oc.Message{ID: id, Session: "ses_1", Provider: "p", Model: "m", Created: at, Completed: at + 2*sec, Finish: "stop", Input: 100, Output: 100}
	}
	d.Assistant(good("msg_01", t0))
	d.Raw("msg_02", "ses_1", t0+1, `{not json`)
	d.Raw("msg_03", "ses_1", t0+2, `{"role":"system"}`)
	d.Raw("msg_04", "ses_1", t0+3, `[1,2,3]`)
	d.Raw("msg_05", "ses_1", t0+4, `{"role":"assistant","providerID":"p","time":{"created":1},"tokens":{"input":1,"output":1}}`) // no modelID
	d.Raw("msg_06", "ses_1", t0+5, `{"role":"assistant","providerID":"p","modelID":"m","time":{"created":1}}`)                   // no tokens (0, as the reference reads them), not completed
	d.Raw("msg_07", "ses_1", t0+6, `{"role":"assistant","providerID":"p","modelID":"m","time":{"created":"soon"},"tokens":{"input":1,"output":1}}`)
	inc := good("msg_08", t0+7)
	inc.Completed = 0
	d.Assistant(inc)
	back := good("msg_09", t0+8)
	back.Completed = t0
	d.Assistant(back)
	e := good("msg_10", t0+9)
	e.Error = "MessageAbortedError"
	d.Assistant(e)
	bad := good("msg_11", t0+10)
	d.Assistant(bad)
	d.RawPart("msg_11", "ses_1", t0+10, `{"type":"tool","state":`)
	d.RawPart("msg_11", "ses_1", t0+10, `"a string"`)
	short := good("msg_12", t0+11)
	short.Output = 49
	d.Assistant(short)
	fast := good("msg_13", t0+12)
	fast.Completed = fast.Created + 199
	d.Assistant(fast)
	slow := good("msg_14", t0+13)
	slow.Completed = slow.Created + 3600*sec + 1
	d.Assistant(slow)
	d.Assistant(good("msg_15", t0+14))
	r := analyzeDB(t, Options{DBs: []string{d.Close()}})
	want := Skipped{MalformedMessages: 2, UnknownTypes: map[string]int{"message.role=system": 1}, MissingFields: 2, Errored: 1, Incomplete: 3,
		BelowMinOutput: 1, DurationOutOfRange: 2}
	if !reflect.DeepEqual(r.Counts.Skipped, want) {
		t.Errorf("skipped:\n got %+v\nwant %+v", r.Counts.Skipped, want)
	}
	if r.Counts.Samples != 3 || r.Counts.Generations != 6 || r.Counts.Messages != 15 || r.Counts.MalformedParts != 2 || r.Counts.MalformedPartMessages != 1 {
		t.Errorf("counts %+v, want 3 samples (msg_11's unreadable parts ignored), 6 generations, 15 messages, 2 unreadable parts in 1", r.Counts)
	}
}

func TestFilters(t *testing.T) {
	d := oc.New(t, t.TempDir())
	day := 24 * 3600 * sec
	add := func(id, provider, model string, at int64, out int) {
		d.Assistant(oc.Message{ID: id, Session: "ses_" + id, Provider: provider, Model: model, Created: at, Completed: at + sec, Finish: "stop", Input: 500, Output: out})
	}
	add("a", "cerebras", "qwen-3.8-27b", t0, 1000)
	add("b", "cerebras", "qwen-3.8-27b", t0+day, 1000)
	add("c", "local", "qwen-3.8-27b", t0+2*day, 100)
	add("d", "local", "Qwen/Qwen3.8-27B-GGUF", t0+3*day, 100)
	add("e", "openai", "gpt-5", t0+4*day, 60)
	add("f", "openai", "gpt-5-mini", t0+5*day, 40)
	path := d.Close()
	ms := func(days int64) time.Time { return time.UnixMilli(t0 + days*day) }
	for _, c := range []struct {
		name    string
		opts    Options
		models  map[string]int // key → samples
		samples int
	}{
		{"all", Options{}, map[string]int{"cerebras/qwen-3.8-27b": 2, "local/qwen-3.8-27b": 1, "local/Qwen/Qwen3.8-27B-GGUF": 1, "openai/gpt-5": 1, "openai/gpt-5-mini": 0}, 5},
		{"since", Options{Since: ms(1)}, map[string]int{"cerebras/qwen-3.8-27b": 1, "local/qwen-3.8-27b": 1, "local/Qwen/Qwen3.8-27B-GGUF": 1, "openai/gpt-5": 1, "openai/gpt-5-mini": 0}, 4},
		{"until", Options{Until: ms(1)}, map[string]int{"cerebras/qwen-3.8-27b": 1}, 1},
		{"since+until", Options{Since: ms(2), Until: ms(4)}, map[string]int{"local/qwen-3.8-27b": 1, "local/Qwen/Qwen3.8-27B-GGUF": 1}, 2},
		{"provider", Options{Providers: []string{"LOCAL"}}, map[string]int{"local/qwen-3.8-27b": 1, "local/Qwen/Qwen3.8-27B-GGUF": 1}, 2},
		{"model substring", Options{Models: []string{"qwen3.8"}}, map[string]int{"local/Qwen/Qwen3.8-27B-GGUF": 1}, 1},
		{"model glob", Options{Models: []string{"gpt-5"}}, map[string]int{"openai/gpt-5": 1, "openai/gpt-5-mini": 0}, 1},
		{"model exact glob", Options{Models: []string{"gpt-5*", "*27b"}}, map[string]int{"openai/gpt-5": 1, "openai/gpt-5-mini": 0, "cerebras/qwen-3.8-27b": 2, "local/qwen-3.8-27b": 1}, 4},
		{"two models", Options{Models: []string{"gpt-5-mini", "qwen-3.8"}, MinOutputTokens: 40}, map[string]int{"openai/gpt-5-mini": 1, "cerebras/qwen-3.8-27b": 2, "local/qwen-3.8-27b": 1}, 4},
		{"min output", Options{MinOutputTokens: 101}, map[string]int{"cerebras/qwen-3.8-27b": 2, "local/qwen-3.8-27b": 0, "local/Qwen/Qwen3.8-27B-GGUF": 0, "openai/gpt-5": 0, "openai/gpt-5-mini": 0}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.DBs = []string{path}
			r := analyzeDB(t, c.opts)
			got := map[string]int{}
			for _, m := range r.Models {
				got[m.Key()] = m.N
			}
			if fmt.Sprint(got) != fmt.Sprint(c.models) {
				t.Errorf("models %v, want %v", got, c.models)
			}
			if r.Counts.Samples != c.samples {
				t.Errorf("samples %d, want %d", r.Counts.Samples, c.samples)
			}
			// Rows more than a day outside --since/--until are not read.
			if c.opts.Since.IsZero() && c.opts.Until.IsZero() && r.Counts.Filtered+r.Counts.Generations != 6 {
				t.Errorf("filtered %d + generations %d ≠ 6", r.Counts.Filtered, r.Counts.Generations)
			}
		})
	}
}

// TestTrafficFigures works out context, ratios, cache share, context
// buckets, cost and per-session rate limits by hand.
func TestTrafficFigures(t *testing.T) {
	d := oc.New(t, t.TempDir())
	// One session, three turns 10 s apart, each 1 s long: prompts of
	// 11K, 60K and 130K (cache reads 0, 50K, 120K; a 1K cache write on
	// the last), 100 output + 100 reasoning tokens each.
	type turn struct{ input, read, write int }
	for i, tn := range []turn{{11000, 0, 0}, {10000, 50000, 0}, {9000, 120000, 1000}} {
		at := t0 + int64(i)*10*sec
		d.Assistant(oc.Message{ID: fmt.Sprintf("msg_%d", i), Session: "ses_a", Provider: "cloud", Model: "m", Created: at, Completed: at + sec,
			Finish: "stop", Input: tn.input, CacheRead: tn.read, CacheWrite: tn.write, Output: 100, Reasoning: 100})
	}
	// A second session of one turn, two minutes later.
	d.Assistant(oc.Message{ID: "msg_9", Session: "ses_b", Provider: "cloud", Model: "m", Created: t0 + 120*sec, Completed: t0 + 122*sec,
		Finish: "stop", Input: 5000, Output: 200})
	price := 0.1
	r := analyzeDB(t, Options{DBs: []string{d.Close()}, Profile: "test",
		Pricing: &record.Pricing{InputPerMTok: 1, CachedInputPerMTok: &price, OutputPerMTok: 2},
		Limits:  &results.RateLimits{TokensPerMinute: 150000, UncachedTokensPerMinute: 40000, RequestsPerMinute: 2}})
	m := model(t, r, "cloud/m")
	checkDist(t, "context", m.ContextTokens, Dist{N: 4, Min: 5000, P10: 6800, P25: 9500, P50: 35500, P75: 77500, P90: 109000, Max: 130000})
	// Ratios 55, 300, 650, 25: sorted 25 55 300 650.
	checkDist(t, "input:output", m.InputOutputRatio, Dist{N: 4, Min: 25, P10: 34, P25: 47.5, P50: 177.5, P75: 387.5, P90: 545, Max: 650})
	if want := 170000.0 / 206000; !near(m.CacheReadShare, want) {
		t.Errorf("cache read share %v, want %v", m.CacheReadShare, want)
	}
	wantBuckets := []int{2, 0, 1, 1} // 11K and 5K; none; 60K; 130K
	for i, b := range m.ByContext {
		n := 0
		if b.EffectiveTokS != nil {
			n = b.EffectiveTokS.N
		}
		if n != wantBuckets[i] {
			t.Errorf("bucket %s: %d samples, want %d", b.Name, n, wantBuckets[i])
		}
	}
	// Bill: 206,000 prompt tokens of which 170,000 cached, 800 generated.
	if r.Cost == nil || r.Cost.Basis != "tokens" {
		t.Fatalf("cost %+v", r.Cost)
	}
	wantUSD := 36000*1.0/1e6 + 170000*0.1/1e6 + 800*2.0/1e6
	if !near(r.Cost.TotalUSD, wantUSD) || m.CostUSD == nil || !near(*m.CostUSD, wantUSD) {
		t.Errorf("cost %v (model %v), want %v", r.Cost.TotalUSD, m.CostUSD, wantUSD)
	}
	if !near(r.Cost.PerSessionUSD, wantUSD/2) {
		t.Errorf("per session %v, want %v", r.Cost.PerSessionUSD, wantUSD/2)
	}
	// Rate limits. Session a, within one minute: 3 requests; total tokens
	// 11,000 + 200 + 60,000 + 200 + 130,000 + 200 = 201,600; uncached
	// 11,000 + 10,000 + 10,000 = 31,000; output 600. Session b: 1
	// request, 5,200 tokens, 5,000 uncached, 200 output.
	if r.Sessions.Sessions != 2 {
		t.Fatalf("sessions %d, want 2", r.Sessions.Sessions)
	}
	want := map[string]struct {
		max, min float64
		over     int
		share    float64
	}{
		record.BucketRequests:       {3, 1, 1, 1.5},
		record.BucketTokens:         {201600, 5200, 1, 201600.0 / 150000},
		record.BucketUncachedTokens: {31000, 5000, 0, 31000.0 / 40000},
		record.BucketOutputTokens:   {600, 200, 0, 0},
	}
	for _, b := range r.Sessions.Buckets {
		w, ok := want[b.Bucket]
		if !ok {
			t.Errorf("unexpected bucket %s", b.Bucket)
			continue
		}
		if b.Peak.Max != w.max || b.Peak.Min != w.min || b.Over != w.over || !near(b.PeakShare, w.share) || b.PeakSession != "ses_a" {
			t.Errorf("%s: peak %+v over %d share %v session %s; want max %v min %v over %d share %v ses_a", b.Bucket, *b.Peak, b.Over, b.PeakShare, b.PeakSession, w.max, w.min, w.over, w.share)
		}
	}
}

func TestPeakWindow(t *testing.T) {
	// Events at 0, 30 s, 60 s and 61 s: the window (t−60 s, t] never
	// holds the first with the third.
	ev := []event{{at: 0, tokens: 10}, {at: 30000, tokens: 20}, {at: 60000, tokens: 40}, {at: 61000, tokens: 1}}
	if got := peak(ev, 60000, func(e *event) int64 { return e.tokens }); got != 61 {
		t.Errorf("peak %d, want 61 (20 + 40 + 1)", got)
	}
}

func TestEnergyCost(t *testing.T) {
	d := oc.New(t, t.TempDir())
	// Two generations of 90 s of model time (one cut at its tool start).
	d.Assistant(oc.Message{ID: "msg_1", Session: "ses_1", Provider: "local", Model: "m", Created: t0, Completed: t0 + 90*sec, Finish: "stop", Input: 10, Output: 100})
	d.Assistant(oc.Message{ID: "msg_2", Session: "ses_1", Provider: "local", Model: "m", Created: t0 + 100*sec, Completed: t0 + 300*sec, Finish: "tool-calls",
		Input: 10, Output: 100, Parts: []oc.Part{oc.Tool(t0+190*sec, t0+300*sec)}})
	r := analyzeDB(t, Options{DBs: []string{d.Close()}, Energy: &record.Energy{PowerWatts: 500, USDPerKWh: 0.2}})
	want := 500 * (180.0 / 3600) / 1000 * 0.2
	if r.Cost == nil || r.Cost.Basis != "energy" || !near(r.Cost.TotalUSD, want) || r.Cost.ModelTimeS != 180 {
		t.Errorf("cost %+v, want energy $%v over 180 s", r.Cost, want)
	}
}

func TestOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{}, "no database"},
		{Options{DBs: []string{"x"}, Since: time.Unix(10, 0), Until: time.Unix(5, 0)}, "is not before --until"},
		{Options{DBs: []string{"x"}, MinOutputTokens: -1}, "--min-output must be ≥ 0"},
	} {
		if _, err := Analyze(context.Background(), c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.opts, err, c.want)
		}
	}
}

// TestExportTrace: the generations become a trace (sessions by start,
// turns in order, offsets, think times and tokens), which survives a
// round trip through sixpin's trace format.
func TestExportTrace(t *testing.T) {
	d := oc.New(t, t.TempDir())
	a := t0 + 5*sec
	d.User("msg_a0", "ses_a", a-sec)
	d.Assistant(oc.Message{ID: "msg_a1", Session: "ses_a", Provider: "p", Model: "m", Created: a, Completed: a + sec, Finish: "tool-calls",
		Input: 11000, Output: 200, Reasoning: 100, Parts: []oc.Part{oc.Tool(a+900, a+950)}})
	d.Assistant(oc.Message{ID: "msg_a2", Session: "ses_a", Provider: "p", Model: "m", Created: a + 10*sec, Completed: a + 12*sec, Finish: "tool-calls",
		Input: 2500, CacheRead: 11000, CacheWrite: 300, Output: 20}) // below --min-output: still traffic
	d.Assistant(oc.Message{ID: "msg_a3", Session: "ses_a", Provider: "p", Model: "m", Created: a + 13*sec, Completed: a + 14*sec, Error: "MessageAbortedError",
		Input: 1, Output: 1}) // errored: not a turn
	d.Assistant(oc.Message{ID: "msg_a4", Session: "ses_a", Provider: "p", Model: "m", Created: a + 25*sec, Completed: a + 30*sec, Finish: "stop",
		Input: 1000, CacheRead: 13500, Output: 400})
	d.Assistant(oc.Message{ID: "msg_b1", Session: "ses_b", Provider: "q", Model: "n", Created: t0, Completed: t0 + 3*sec, Finish: "stop",
		Input: 500, Output: 60})
	path := d.Close()
	r := analyzeDB(t, Options{DBs: []string{path}, Trace: true})
	want := []trace.Session{
		{ID: "ses_b", Start: 0, Turns: []trace.Turn{{InputTokens: 500, OutputTokens: 60}}},
		{ID: "ses_a", Start: 5 * time.Second, Turns: []trace.Turn{
			{InputTokens: 11000, OutputTokens: 300, ReasoningTokens: 100},
			{Offset: 10 * time.Second, Think: 9 * time.Second, InputTokens: 13800, CachedTokens: 11000, OutputTokens: 20},
			{Offset: 25 * time.Second, Think: 13 * time.Second, InputTokens: 14500, CachedTokens: 13500, OutputTokens: 400},
		}},
	}
	if !reflect.DeepEqual(r.Trace.Sessions, want) {
		t.Fatalf("trace:\n got %+v\nwant %+v", r.Trace.Sessions, want)
	}
	var buf bytes.Buffer
	if err := trace.Write(&buf, r.Trace); err != nil {
		t.Fatal(err)
	}
	back, err := trace.Decode("export.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Sessions, want) {
		t.Errorf("after a round trip:\n got %+v\nwant %+v", back.Sessions, want)
	}
	// Filters apply to the trace too.
	r = analyzeDB(t, Options{DBs: []string{path}, Trace: true, Providers: []string{"q"}})
	if len(r.Trace.Sessions) != 1 || r.Trace.Sessions[0].ID != "ses_b" {
		t.Errorf("filtered trace %+v, want ses_b alone", r.Trace.Sessions)
	}
}
