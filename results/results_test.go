package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

const ms = time.Millisecond

// stream builds a successful record scheduled at start whose first chunk
// arrives after ttft and every later one after itl, tokensPerChunk each.
func stream(idx int, start, ttft, itl time.Duration, chunks, tokensPerChunk int) *record.Record {
	r := &record.Record{Index: idx, Session: -1, Scheduled: start, Sent: start, RequestedPromptTokens: 100,
		RequestedOutputTokens: chunks * tokensPerChunk, HasUsage: true,
		Usage: record.Usage{PromptTokens: 100, CompletionTokens: chunks * tokensPerChunk}}
	at := start + ttft
	for i := 0; i < chunks; i++ {
		r.Chunks = append(r.Chunks, record.Chunk{At: at, Bytes: int32(6 * tokensPerChunk), ClientLagUS: -1})
		at += itl
	}
	r.End = r.Chunks[len(r.Chunks)-1].At
	return r
}

func finish(t testing.TB, spec WindowSpec, slo SLO, recs ...*record.Record) *Measurement {
	t.Helper()
	c, err := NewCollector(filepath.Join(t.TempDir(), "r.spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Begin(&Header{Windows: spec}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		c.Add(r)
	}
	m, err := c.Finish(spec, slo, Tolerances{PromptPct: 2, OutputPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

func TestMetricsOfOneStream(t *testing.T) {
	t.Parallel()
	// 100 chunks of 1 token: TTFT 500 ms, ITL 20 ms → E2E 2480 ms.
	r := stream(0, 0, 500*ms, 20*ms, 100, 1)
	m := finish(t, WindowSpec{Burst: 10 * time.Second, SteadyAuto: false}, SLO{}, r)
	w := m.Windows[WindowAll]
	near(t, "TTFT p50", w.TTFTMs.P50, 500, 0.5)
	near(t, "ITL p50", w.ITLMs.P50, 20, 0.05)
	near(t, "E2E", w.E2EMs.P50, 2480, 2)
	// TPOT = (E2E − TTFT)/(N − 1) = 1980/99 = 20 ms; decode = 99/1.98 s = 50 tok/s.
	near(t, "TPOT", w.TPOTMs.P50, 20, 0.05)
	near(t, "decode tok/s", w.DecodeTokS.P50, 50, 0.1)
	// effective = N / E2E = 100 / 2.48 s.
	near(t, "effective tok/s", w.EffectiveTokS.P50, 100/2.48, 0.1)
	if w.ITLMs.Count != 99 {
		t.Errorf("ITL samples = %d, want 99 (one per gap)", w.ITLMs.Count)
	}
	near(t, "prefill share", w.PrefillShare, 500.0/2480, 1e-3)
	near(t, "input:output", w.InputOutputRatio, 1, 1e-9)
}

func TestCoalescedChunksDoNotInflateITL(t *testing.T) {
	t.Parallel()
	// 3 tokens per chunk every 30 ms: the per-token ITL is 10 ms, and there
	// are 3 samples per gap; TPOT agrees with mean ITL.
	r := stream(0, 0, 100*ms, 30*ms, 50, 3)
	m := finish(t, WindowSpec{}, SLO{}, r)
	w := m.Windows[WindowAll]
	near(t, "ITL p50", w.ITLMs.P50, 10, 0.02)
	if w.ITLMs.Count != 49*3 {
		t.Errorf("ITL samples = %d, want %d", w.ITLMs.Count, 49*3)
	}
	if w.OutputTokens != 150 {
		t.Errorf("output tokens = %d, want 150", w.OutputTokens)
	}
	// TPOT = (E2E − TTFT)/(150 − 1) = 1470/149 ms.
	near(t, "TPOT", w.TPOTMs.P50, 1470.0/149, 0.02)
}

func TestAssignChunkTokens(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		bytes []int32
		usage int
		has   bool
		want  []int32
	}{
		{"no usage: one per chunk", []int32{5, 5, 5}, 0, false, []int32{1, 1, 1}},
		{"usage equals chunks", []int32{5, 9, 1}, 3, true, []int32{1, 1, 1}},
		{"usage below chunks", []int32{5, 5, 5}, 2, true, []int32{1, 1, 1}},
		{"proportional to bytes", []int32{6, 18, 6}, 7, true, []int32{2, 3, 2}},
		{"sum is exact", []int32{1, 1, 1, 1, 1, 1, 1}, 10, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := &record.Record{HasUsage: c.has, Usage: record.Usage{CompletionTokens: c.usage}}
			for _, b := range c.bytes {
				r.Chunks = append(r.Chunks, record.Chunk{Bytes: b})
			}
			assignChunkTokens(r)
			sum := int32(0)
			for i, ch := range r.Chunks {
				if ch.Tokens < 1 {
					t.Fatalf("chunk %d has %d tokens", i, ch.Tokens)
				}
				if c.want != nil && ch.Tokens != c.want[i] {
					t.Fatalf("chunk tokens = %v, want %v", r.Chunks, c.want)
				}
				sum += ch.Tokens
			}
			if c.has && c.usage > len(c.bytes) && int(sum) != c.usage {
				t.Fatalf("sum %d != usage %d", sum, c.usage)
			}
		})
	}
}

func TestWindowsAttributeRequestsByStartAndTokensByArrival(t *testing.T) {
	t.Parallel()
	// Requests every second for 60 s, each 10 chunks 100 ms apart.
	var recs []*record.Record
	for i := 0; i < 60; i++ {
		recs = append(recs, stream(i, time.Duration(i)*time.Second, 100*ms, 100*ms, 10, 1))
	}
	spec := WindowSpec{Warmup: 10 * time.Second, Burst: 5 * time.Second, SteadyStart: 0, SteadyEnd: 0}
	m := finish(t, spec, SLO{}, recs...)
	b := m.Windows[WindowBurst]
	if b.StartS != 0 || b.EndS != 5 || b.Requests != 5 {
		t.Errorf("burst = [%v, %v) with %d requests, want [0, 5) with 5", b.StartS, b.EndS, b.Requests)
	}
	s := m.Windows[WindowSteady]
	// Steady runs from the warmup end to the last scheduled arrival (59 s).
	if s.StartS != 10 || s.EndS != 59 || s.Requests != 49 {
		t.Errorf("steady = [%v, %v) with %d requests, want [10, 59) with 49", s.StartS, s.EndS, s.Requests)
	}
	// 10 tokens a second arrive: the aggregate is 10 tok/s, and ~1 stream
	// is in flight on average (each lasts 1.0 s of every second).
	near(t, "steady aggregate", s.AggregateOutputTokS, 10, 0.01)
	near(t, "steady mean in flight", s.MeanInFlight, 1.0, 0.02)
	// Burst [0, 5): the chunk at exactly 5.0 s belongs to the next second.
	near(t, "burst aggregate", b.AggregateOutputTokS, 49.0/5, 0.01)
	if all := m.Windows[WindowAll]; all.Requests != 60 || all.OutputTokens != 600 {
		t.Errorf("all = %d requests, %d tokens; want 60, 600", all.Requests, all.OutputTokens)
	}
}

func TestMSER5TrimsTransient(t *testing.T) {
	t.Parallel()
	// 30 s ramping up from 0, then 120 s flat with noise.
	x := make([]float64, 150)
	for i := range x {
		if i < 30 {
			x[i] = float64(i) * 10
		} else {
			x[i] = 300 + float64(i%3) - 1
		}
	}
	trim, ok := mser5(x)
	if !ok || trim < 25 || trim > 35 {
		t.Fatalf("mser5 trim = %d (ok %v), want about 30", trim, ok)
	}
	flat := make([]float64, 100)
	for i := range flat {
		flat[i] = 100 + float64(i%2)
	}
	if trim, _ := mser5(flat); trim > 10 {
		t.Errorf("flat series trimmed by %d, want ≈ 0", trim)
	}
	if _, ok := mser5(make([]float64, 19)); ok {
		t.Error("19 samples: want ok = false (fewer than 4 batches)")
	}
}

func TestCutWindowsAuto(t *testing.T) {
	t.Parallel()
	series := make([]float64, 100)
	for i := range series {
		series[i] = 500
		if i < 20 {
			series[i] = float64(i) * 25
		}
	}
	c := cutWindows(WindowSpec{Warmup: 5 * time.Second, Burst: 10 * time.Second, SteadyAuto: true}, series, 95*time.Second, 100*time.Second, 0, 0)
	st := c.spans[WindowSteady]
	if st.Start < 15*time.Second || st.Start > 30*time.Second || st.End != 95*time.Second {
		t.Errorf("steady = %v, want start in [15 s, 30 s], end 95 s", st)
	}
	if c.mserTrim != st.Start-5*time.Second {
		t.Errorf("mserTrim %v inconsistent with steady start %v", c.mserTrim, st.Start)
	}
	// A run shorter than its warmup has an empty steady window, with a note.
	c = cutWindows(WindowSpec{Warmup: time.Minute, SteadyAuto: true}, series[:30], 30*time.Second, 31*time.Second, 0, 0)
	if c.spans[WindowSteady].Len() != 0 || c.notes[WindowSteady] == "" {
		t.Errorf("short run: steady %v note %q; want empty with a note", c.spans[WindowSteady], c.notes[WindowSteady])
	}
}

func TestInFlight(t *testing.T) {
	t.Parallel()
	ev := func(pairs ...[2]time.Duration) []int64 {
		var e []int64
		for _, p := range pairs {
			e = append(e, us(p[0])<<1|1, us(p[1])<<1)
		}
		return sortInts(e)
	}
	// Two overlapping requests: [0, 4) and [2, 6).
	e := ev([2]time.Duration{0, 4 * time.Second}, [2]time.Duration{2 * time.Second, 6 * time.Second})
	mean, peak := inFlight(e, Span{0, 6 * time.Second})
	near(t, "mean in flight", mean, 8.0/6, 1e-9)
	if peak != 2 {
		t.Errorf("peak = %d, want 2", peak)
	}
	mean, peak = inFlight(e, Span{4 * time.Second, 6 * time.Second})
	near(t, "mean in flight [4,6)", mean, 1, 1e-9)
	if peak != 1 {
		t.Errorf("peak [4,6) = %d, want 1", peak)
	}
	// A window inside both requests: 2 in flight throughout, peak 2 even
	// though no event falls inside it.
	mean, peak = inFlight(e, Span{2500 * time.Millisecond, 3500 * time.Millisecond})
	if mean != 2 || peak != 2 {
		t.Errorf("[2.5,3.5): mean %v peak %d, want 2 and 2", mean, peak)
	}
	// Back-to-back requests (one ends as the next starts) never overlap.
	e = ev([2]time.Duration{0, time.Second}, [2]time.Duration{time.Second, 2 * time.Second})
	if _, peak := inFlight(e, Span{0, 2 * time.Second}); peak != 1 {
		t.Errorf("back-to-back peak = %d, want 1", peak)
	}
}

func sortInts(e []int64) []int64 {
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j] < e[j-1]; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
	return e
}

func TestGoodputAndErrors(t *testing.T) {
	t.Parallel()
	fast := stream(0, 0, 100*ms, 10*ms, 10, 1)
	slowTTFT := stream(1, 0, 3*time.Second, 10*ms, 10, 1)
	slowTPOT := stream(2, 0, 100*ms, 80*ms, 10, 1)
	failed := &record.Record{Index: 3, Scheduled: time.Second, Sent: time.Second, End: time.Second + ms,
		Err: record.ErrHTTP5xx, HTTPStatus: 503, ErrMsg: "overloaded"}
	cut := &record.Record{Index: 4, Scheduled: time.Second, Sent: time.Second, End: 2 * time.Second, Err: record.ErrInterrupted}
	m := finish(t, WindowSpec{}, SLO{TTFT: 2 * time.Second, TPOT: 50 * ms}, fast, slowTTFT, slowTPOT, failed, cut)
	w := m.Windows[WindowAll]
	if w.Goodput == nil || w.Goodput.Requests != 1 {
		t.Fatalf("goodput = %+v, want 1 request meeting the SLO", w.Goodput)
	}
	near(t, "goodput fraction", w.Goodput.Fraction, 1.0/5, 1e-9)
	if m.Errors.Failed != 2 || m.Errors.ByClass["http_5xx"] != 1 || m.Errors.ByClass["interrupted"] != 1 {
		t.Errorf("errors = %+v", m.Errors)
	}
	// The interrupted request is not the endpoint's failure: 1 of 4.
	near(t, "error rate", m.Errors.Rate, 0.25, 1e-9)
	if got := m.Errors.Examples["http_5xx"]; len(got) != 1 || got[0] != "overloaded" {
		t.Errorf("examples = %v", got)
	}
}

func TestSpillRoundTrip(t *testing.T) {
	t.Parallel()
	s, err := newSpill(filepath.Join(t.TempDir(), "r.spill"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close(true)
	in := []*record.Record{
		stream(0, 1234567*time.Microsecond, 321*ms, 17*ms, 40, 2),
		{Index: 7, Class: "chat", Scheduled: 5 * time.Second, Sent: 5*time.Second + 3*ms, End: 6 * time.Second,
			Err: record.ErrHTTP429, HTTPStatus: 429, RequestedPromptTokens: 8000, RequestedOutputTokens: 400,
			RateLimitBucket: record.BucketTokens, Session: 3, Turn: 12, Attempt: 2, SessionEnd: record.SessionEndRateLimited},
	}
	in[0].Class = "agent"
	in[0].Chunks[3].Reasoning = true
	in[0].Chunks[5].ClientLagUS = 250
	in[0].ToolCalls, in[0].FinishReason = true, "tool_calls"
	in[1].Reconnects = 2
	in[0].Usage.CachedTokens, in[0].Usage.CacheWriteTokens = 16, 8 // Anthropic's cache read and write
	// The server's timings on the same record as a cache write: each has
	// its own flag bit (both once took bit 4).
	in[0].Server = record.ServerTimings{Has: true, QueueKnown: true, Queue: 2 * ms, Prefill: 30 * ms, Decode: 90 * ms, PromptTokens: 40, CachedTokens: 16, PredictedTokens: 2}
	in[1].Server = record.ServerTimings{Has: true, Prefill: 4 * ms}
	// llama.cpp's draft counts, after the answer's score: their own bit.
	in[0].Server.DraftTokens, in[0].Server.DraftAccepted = 84, 41
	// The token reads beside a backoff and withheld arrivals: each has its
	// own flag bit (both once took bit 32).
	in[0].TokenReads, in[0].Backoff, in[0].Withheld = 17, 2*time.Second, 3
	in[1].Backoff = 500 * ms
	// The request's id and the failure's message, for the per-request
	// export of a kept spill: each has its own flag bit.
	in[0].RequestID = "sixpin-0a1b2c3d-1"
	in[1].RequestID, in[1].ErrMsg = "sixpin-0a1b2c3d-2", "HTTP 429: Tokens per minute limit exceeded"
	// A sampled answer's score, after the failure's message: its own bit.
	in[1].Output = &record.OutputScore{Words: 300, RepeatShare: 0.912345, Distinct2: 0.04, Compression: 17.25}
	// The prompt's content class, last: its own bit (prose's "" none).
	in[0].Content = "code"
	for _, r := range in {
		assignChunkTokens(r)
		s.put(r)
	}
	i := 0
	err = s.each(func(r *record.Record) {
		want := in[i]
		if r.Index != want.Index || r.Class != want.Class || r.Session != want.Session || r.Turn != want.Turn ||
			r.Attempt != want.Attempt || r.SessionEnd != want.SessionEnd || r.RateLimitBucket != want.RateLimitBucket ||
			r.HTTPStatus != want.HTTPStatus || r.Scheduled != want.Scheduled || r.Sent != want.Sent ||
			r.End != want.End || r.Err != want.Err || r.Usage != want.Usage || r.HasUsage != want.HasUsage ||
			r.RequestedPromptTokens != want.RequestedPromptTokens || len(r.Chunks) != len(want.Chunks) ||
			r.ToolCalls != want.ToolCalls || r.Reconnects != want.Reconnects || r.Server != want.Server ||
			r.TokenReads != want.TokenReads || r.Backoff != want.Backoff || r.Withheld != want.Withheld ||
			r.RequestID != want.RequestID || r.ErrMsg != want.ErrMsg || r.Content != want.Content ||
			(r.Output == nil) != (want.Output == nil) || (r.Output != nil && *r.Output != *want.Output) {
			t.Fatalf("record %d: got %+v, want %+v", i, r, want)
		}
		for j := range r.Chunks {
			g, w := r.Chunks[j], want.Chunks[j]
			if g.At != w.At.Truncate(time.Microsecond) || g.Tokens != w.Tokens || g.Reasoning != w.Reasoning || g.ClientLagUS != w.ClientLagUS {
				t.Fatalf("record %d chunk %d: got %+v, want %+v", i, j, g, w)
			}
		}
		i++
	})
	if err != nil || i != len(in) {
		t.Fatalf("each: %v after %d records", err, i)
	}
}

func TestHistogramsAreLosslessAndMergeable(t *testing.T) {
	t.Parallel()
	m := finish(t, WindowSpec{}, SLO{}, stream(0, 0, 250*ms, 20*ms, 30, 1), stream(1, 0, 750*ms, 20*ms, 30, 1))
	e := m.Histograms[WindowAll][HistTTFT.Name]
	h, err := e.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 2 {
		t.Fatalf("decoded TTFT count = %d, want 2", h.TotalCount())
	}
	h2, _ := e.Decode()
	h.Merge(h2)
	if h.TotalCount() != 4 || math.Abs(float64(h.ValueAtQuantile(100))/1e3-750) > 1 {
		t.Fatalf("merged: count %d max %d", h.TotalCount(), h.ValueAtQuantile(100))
	}
}

func TestWriteFileIsAtomicAndReadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	run := &Run{Schema: Schema, Valid: true, Scenario: ScenarioInfo{Name: "x"}, Headline: WindowSteady, Windows: map[string]*Window{}}
	for _, w := range WindowNames {
		run.Windows[w] = &Window{}
	}
	if err := WriteFile(path, run); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %d entries, want only the results file", len(entries))
	}
	got, err := ReadFile(path)
	if err != nil || got.Scenario.Name != "x" {
		t.Fatalf("ReadFile: %+v, %v", got, err)
	}
	raw, _ := os.ReadFile(path)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema", "sixpin_version", "scenario", "target", "pins", "windows", "errors", "cost", "rate_limits", "histograms"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("results file lacks %q", k)
		}
	}
	if err := WriteFile(filepath.Join(dir, "missing", "r.json"), run); err == nil ||
		!strings.Contains(err.Error(), "r.json") {
		t.Errorf("write into a missing directory: %v", err)
	}
}

// A damaged results file is refused with its path, line, column and field.
func TestReadFileNamesWhereItIsBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ body, want string }{
		{"{\n  \"schema\": \"sixpin/run/v1\",\n  \"windows\": [1]\n}\n", "b.json:3:14: windows: want a JSON object"},
		{"{\n  \"schema\": \"sixpin/run/v1\",\n  \"windows\": {,}\n}\n", "b.json:3:15: invalid JSON: invalid character ','"},
	} {
		path := filepath.Join(dir, "b.json")
		if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadFile(%q): %v, want it to contain %q", tc.body, err, tc.want)
		}
	}
}

func TestPeakRate(t *testing.T) {
	t.Parallel()
	r, at := peakRate([]float64{1, 2, 9, 9, 1, 1}, 2*time.Second)
	if r != 9 || at != 2 {
		t.Errorf("peakRate = %v at %v, want 9 at 2", r, at)
	}
}

func TestDriftAgainstTolerances(t *testing.T) {
	t.Parallel()
	ok := stream(0, 0, 10*ms, 10*ms, 10, 1)   // prompt 100 → 100, output 10 → 10
	near := stream(1, 0, 10*ms, 10*ms, 10, 1) // prompt off by 2 of 100: 2% is within
	near.Usage.PromptTokens = 102
	far := stream(2, 0, 10*ms, 10*ms, 10, 1) // prompt off by 3 of 100: outside
	far.Usage.PromptTokens = 97
	short := stream(3, 0, 10*ms, 10*ms, 8, 1) // output cut short: 8 of 10
	short.RequestedOutputTokens = 10
	m := finish(t, WindowSpec{}, SLO{}, ok, near, far, short)
	p, o := m.PromptDrift, m.OutputDrift
	if p.Requests != 4 || p.Exact != 2 || p.Outside != 1 || p.TolerancePct != 2 {
		t.Errorf("prompt drift %+v", p)
	}
	if o.Requests != 4 || o.Exact != 3 || o.Outside != 1 || o.MeanRequested != 10 || o.MeanObserved != 9.5 {
		t.Errorf("output drift %+v", o)
	}
	// One token of slack for tiny prompts: 1 of 10 is 10% yet allowed.
	tiny := stream(4, 0, 10*ms, 10*ms, 5, 1)
	tiny.RequestedPromptTokens, tiny.Usage.PromptTokens = 10, 11
	if d := finish(t, WindowSpec{}, SLO{}, tiny).PromptDrift; d.Outside != 0 {
		t.Errorf("a one-token drift on a 10-token prompt counted as outside: %+v", d)
	}
}

func TestReasoningCountedApart(t *testing.T) {
	t.Parallel()
	r := stream(0, 0, 100*ms, 10*ms, 20, 1)
	r.Usage.ReasoningTokens = 8
	for i := 0; i < 8; i++ {
		r.Chunks[i].Reasoning = true
	}
	m := finish(t, WindowSpec{}, SLO{}, r)
	w := m.Windows[WindowAll]
	if w.ReasoningTokens != 8 || w.OutputTokens != 20 {
		t.Errorf("reasoning %d of %d output tokens, want 8 of 20", w.ReasoningTokens, w.OutputTokens)
	}
	// TTFT of any kind is the first reasoning chunk; the answer's is the
	// ninth chunk, 80 ms later.
	near(t, "TTFT", w.TTFTMs.P50, 100, 0.2)
	near(t, "TTFT answer", w.TTFTAnswerMs.P50, 180, 0.2)
}

func TestDriftDistributionKeepsZero(t *testing.T) {
	t.Parallel()
	a, b := stream(0, 0, ms, ms, 4, 1), stream(1, 0, ms, ms, 4, 1)
	b.Usage.PromptTokens = 110 // +10%
	d := finish(t, WindowSpec{}, SLO{}, a, b).PromptDrift.AbsPct
	if d == nil || d.Min != 0 || math.Abs(d.Max-10) > 0.01 || d.Count != 2 {
		t.Errorf("|drift| distribution %+v, want min 0, max 10, 2 requests", d)
	}
}

// Unplanned cache hits: prompts served almost whole from the cache are a
// warm cache (sent before, the same salt), warned of; a few tokens per
// request (llama.cpp reuses a slot's first tokens, the chat template's
// opening, for every prompt) are the prompts' common start, said so, not
// blamed on the salt.
func TestUnplannedCacheCommonStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cached     int
		wantCommon bool
		want       string
	}{
		{3, true, "the prompts' common start"},
		{90, false, "the same --prompt-salt?"},
	} {
		var recs []*record.Record
		for i := range 20 {
			r := stream(i, time.Duration(i)*ms, 50*ms, 10*ms, 10, 1)
			r.Usage.CachedTokens = c.cached
			recs = append(recs, r)
		}
		m := finish(t, WindowSpec{}, SLO{}, recs...)
		p := BuildPins(Declared{}, m, record.Discovery{}, nil, WindowAll, nil)
		u := p.Prompt.Observed.UnplannedCache
		if u == nil || u.CommonStart != c.wantCommon || !strings.Contains(u.String(), c.want) || !strings.Contains(p.Prompt.Reason, c.want) {
			t.Errorf("%d of 100 cached: %+v, %q", c.cached, u, p.Prompt.Reason)
		}
	}
}

// Counts in reasons are grouped like every count a person reads.
func TestDriftReasonsGroupCounts(t *testing.T) {
	t.Parallel()
	_, why := verifyPromptDrift(&Drift{Requests: 10696, Outside: 10696, TolerancePct: 2, MaxAbsPct: 18.87})
	_, whyOut := verifyOutputDrift(&Drift{Requests: 10696, Exact: 10579, MaxAbsPct: 62.5, MeanObserved: 60, MeanRequested: 64}, true)
	for _, s := range []string{why, whyOut} {
		if strings.Contains(s, "10696") || strings.Contains(s, "10579") {
			t.Errorf("ungrouped count in %q", s)
		}
	}
}

// Under a stationary start the steady window starts once each session
// that joined mid-life has had its cold turn answered — here the second
// at 7.98 s, after the 1 s warmup — and says so; those sessions' turns and
// lifetimes stay out of the whole-session distributions.
func TestSteadyWaitsForJoinedSessions(t *testing.T) {
	t.Parallel()
	turn := func(session, k int, start, ttft time.Duration) *record.Record {
		r := stream(0, start, ttft, 20*ms, 10, 1)
		r.Session, r.Turn = session, k
		return r
	}
	recs := []*record.Record{turn(0, 3, 0, 5*time.Second-200*ms), turn(1, 2, 0, 8*time.Second-200*ms)}
	for i := range 20 {
		recs = append(recs, turn(i%2, 4+i, 8*time.Second+time.Duration(i)*time.Second, 100*ms))
	}
	fresh := turn(2, 0, 10*time.Second, 100*ms)
	fresh.SessionEnd = record.SessionEndTurns
	recs = append(recs, fresh)
	m := finish(t, WindowSpec{Warmup: time.Second, WarmSessions: 2}, SLO{}, recs...)
	st := m.Windows[WindowSteady]
	if st.StartS != recs[1].End.Seconds() || !strings.Contains(st.Note, "2 sessions that joined mid-life") {
		t.Errorf("steady window from %v s: %q", st.StartS, st.Note)
	}
	if ss := m.Sessions; len(ss.All) != 3 || ss.Whole() != 1 || ss.Turns.Count != 1 {
		t.Errorf("sessions %d, whole %d, turns over %d", len(ss.All), ss.Whole(), ss.Turns.Count)
	}
	if m := finish(t, WindowSpec{Warmup: time.Second}, SLO{}, recs...); m.Windows[WindowSteady].StartS != 1 {
		t.Errorf("without joined sessions the steady window starts at %v s", m.Windows[WindowSteady].StartS)
	}
}

// A session still waiting for its cold turn while half of them have had
// three more turns answered is starved: the run is warm then, the steady
// window starts there and says how many waited; every session answered
// before that is warm as before.
func TestSteadyStartsWhenJoinedSessionsStarve(t *testing.T) {
	t.Parallel()
	turn := func(session int, start, ttft time.Duration) *record.Record {
		r := stream(0, start, ttft, 20*ms, 10, 1)
		r.Session = session
		return r
	}
	// Sessions 0 and 1 of 4 answer at about 2 s and 3 s, then a turn
	// every 2 s; sessions 2 and 3 are never answered.
	var recs []*record.Record
	for k := range 8 {
		for s := range 2 {
			recs = append(recs, turn(s, time.Duration(2*k+s)*time.Second, 1800*ms))
		}
	}
	var w Warmth
	w.N = 4
	warmAt := -1
	for i, r := range recs {
		if w.Observe(r) {
			warmAt = i
			break
		}
	}
	// Records alternate sessions 0 and 1: session 0 has its fourth answer
	// at record 6, session 1 at record 7 — half of the four are ahead.
	if warmAt != 7 || w.Starved() != 2 || w.At() != recs[7].End {
		t.Fatalf("warm at record %d, at %v, starved %d", warmAt, w.At(), w.Starved())
	}
	m := finish(t, WindowSpec{Warmup: time.Second, WarmSessions: 4}, SLO{}, recs...)
	st := m.Windows[WindowSteady]
	if st.StartS != recs[7].End.Seconds() || !strings.Contains(st.Note, "2 still waited for their cold turn") {
		t.Errorf("steady window from %v s: %q", st.StartS, st.Note)
	}
	// No record marked the two sessions' end: the run ended them.
	if n := m.Sessions.EndReasons[record.SessionEndRunEnded]; n != 2 {
		t.Errorf("end reasons %v, want 2 run_ended", m.Sessions.EndReasons)
	}
	// Three of four answered, one starved: half have had three more.
	w = Warmth{N: 4}
	for _, r := range append([]*record.Record{turn(2, 0, 9*time.Second)}, recs...) {
		if w.Observe(r) {
			break
		}
	}
	if w.Starved() != 1 {
		t.Errorf("starved %d, want 1", w.Starved())
	}
}
