package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/scenario"
)

// ErrMergeRefused marks shards that cannot be merged: a missing or
// duplicate shard, shards of different scenarios, seeds, targets or run
// ids, or windows that do not line up (exit code 2).
var ErrMergeRefused = errors.New("merge refused")

// DefaultStartTolerance is how much later than the common start (or the
// earliest shard) a shard may start before a merged run is invalid.
const DefaultStartTolerance = time.Second

// windowTolerance is how far apart, once aligned on wall-clock time, the
// shards' warmup, burst and steady windows may be: one series step.
const windowTolerance = time.Second

// MergeOptions tune Merge.
type MergeOptions struct {
	// StartTolerance overrides DefaultStartTolerance when > 0.
	StartTolerance time.Duration
}

// Shard is one shard's results and the name (its file) refusals use.
type Shard struct {
	Name string
	Run  *Run
}

// Merge combines the results of every shard of one distributed run into
// the results of the whole, losslessly: histograms add bucket by bucket
// and every percentile is read from the sum (none is averaged); per-second
// series align on wall-clock time; counts, error classes, tokens, costs
// and rate-limit meters sum; the pins are judged again for the whole
// (concurrency is the whole plan's: the sum of the shards'). The merged
// run lists each shard's identity, start offset and schedule lag under
// "merged", and is invalid if a shard fell behind its schedule or started
// later than the tolerance. A refusal wraps ErrMergeRefused. MergeFiles
// does the same from files, holding one shard at a time.
func Merge(shards []Shard, opts MergeOptions) (*Run, error) {
	heads := make([]shardHead, len(shards))
	for i, s := range shards {
		heads[i] = shardHead{name: s.Name, StartedAt: s.Run.StartedAt, Scenario: s.Run.Scenario, Target: s.Run.Target, Shard: s.Run.Shard}
	}
	return merge(heads, func(i int) (*Run, error) { return shards[i].Run, nil }, opts)
}

// MergeFiles is Merge of the shards' results files, bounded in memory:
// a first pass reads only each file's identity (which shard, of what, and
// when it started), then each file is read whole, checked as ReadFile
// checks it, added into the sums and let go, so that what is held is one
// shard and the whole, however many shards there are. A file that does
// not read is refused as ReadFile refuses it.
func MergeFiles(paths []string, opts MergeOptions) (*Run, error) {
	heads := make([]shardHead, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read results: %w", err)
		}
		if err := json.Unmarshal(data, &heads[i]); err != nil || SchemaOf(data) == SetSchema {
			// Read says what is wrong, at its line and column.
			if _, rerr := Read(p, data); rerr != nil {
				return nil, rerr
			}
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		heads[i].name = p
	}
	return merge(heads, func(i int) (*Run, error) { return ReadFile(paths[i]) }, opts)
}

// shardHead is what refusals and offsets need of a shard before its
// results are read: its identity, and when it started.
type shardHead struct {
	name      string
	StartedAt time.Time    `json:"started_at"`
	Scenario  ScenarioInfo `json:"scenario"`
	Target    TargetInfo   `json:"target"`
	Shard     *ShardInfo   `json:"shard"`
}

// merge checks the shards' identities, then adds the shards, loaded one
// at a time in index order, into the whole.
func merge(heads []shardHead, load func(int) (*Run, error), opts MergeOptions) (*Run, error) {
	tol := opts.StartTolerance
	if tol <= 0 {
		tol = DefaultStartTolerance
	}
	if err := checkShards(heads); err != nil {
		return nil, err
	}
	order := make([]int, len(heads))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return heads[a].Shard.Index - heads[b].Shard.Index })
	base := heads[0].StartedAt
	for _, h := range heads {
		if h.StartedAt.Before(base) {
			base = h.StartedAt
		}
	}
	mg := newMerger(base, tol)
	for _, i := range order {
		r, err := load(i)
		if err != nil {
			return nil, err
		}
		if h := heads[i]; r.Shard == nil || r.Shard.Index != h.Shard.Index || r.Shard.RunID != h.Shard.RunID || !r.StartedAt.Equal(h.StartedAt) {
			return nil, refuse("%s changed while it was merged", heads[i].name)
		}
		if err := mg.add(heads[i].name, r, heads[i].StartedAt.Sub(base)); err != nil {
			return nil, err
		}
	}
	return mg.run()
}

// run is the whole's results, once every shard is added.
func (mg *merger) run() (*Run, error) {
	m, err := mg.measurement()
	if err != nil {
		return nil, err
	}
	first := mg.first
	d := Declared{Declared: first.Pins.Declared()}
	d.Concurrency = first.Shard.Whole
	d.OverContext = mg.overContext
	run := &Run{
		Schema:        Schema,
		SixpinVersion: first.SixpinVersion,
		StartedAt:     mg.base.UTC(),
		StartUnixNS:   mg.base.UnixNano(),
		Scenario:      first.Scenario,
		Target:        first.Target,
		Windows:       m.Windows,
		Headline:      WindowSteady,
		Errors:        m.Errors,
		Series:        m.Series,
		Histograms:    m.Histograms,
		Tokens:        m.Tokens,
		ByContext:     m.ByContext,
		Discovery:     first.Discovery,
		Client:        mg.client,

		ClientAddedLatencyMs: m.ClientAddedLatency,
	}
	run.Parity = &Parity{Planned: mg.planned, Served: served(m.Tokens)}
	if run.Peers, err = mg.peers.result(); err != nil {
		return nil, err
	}
	if d.Concurrency.Mode == scenario.ModeOpen {
		run.Schedule = mg.scheduled(m)
	}
	disc := record.Discovery{}
	if first.Discovery != nil {
		disc = *first.Discovery
	}
	// Every shard watched the same server: its metrics are the first
	// shard's scrapes (summing them would count the server N times).
	run.Server = mg.server
	run.Pins = BuildPins(d, m, disc, run.Server, run.Headline, run.Schedule)
	if mg.unverifiable != "" && run.Pins.Prompt.Verified != Unverifiable {
		// A shard that could not measure the chat template's overhead
		// built its prompts without it: the whole's prompt pin can't be
		// verified either.
		run.Pins.Prompt.Verified, run.Pins.Prompt.Reason = Unverifiable, mg.unverifiable
	}
	if len(m.Sessions.All) > 0 {
		run.Sessions = &m.Sessions
	}
	run.AllowPinMismatch = first.AllowPinMismatch
	run.Valid, run.Invalid = Validity(run.Pins, run.AllowPinMismatch)
	if reason := overBudget(first.Scenario.SLO.MaxErrorRate, m.Errors); reason != "" {
		run.Valid = false
		run.Invalid = append(run.Invalid, reason)
	}
	if reason := degenerateReason(first.Scenario.SLO.MaxDegenerateShare, run.Headline, run.Windows[run.Headline]); reason != "" {
		run.Valid = false
		run.Invalid = append(run.Invalid, reason)
	}
	run.Merged = mg.attest
	if len(mg.late) > 0 {
		run.Valid = false
		run.Invalid = append(run.Invalid, mg.late...)
	}
	if len(mg.partial) > 0 {
		run.Incomplete = true
		run.IncompleteReason = "incomplete shards: " + strings.Join(mg.partial, "; ")
	}
	wall := time.Duration(m.Windows[WindowAll].DurationS * float64(time.Second))
	if c := first.Cost; c != nil {
		run.Cost = BuildCost(c.Pricing, c.Energy, m, wall)
	}
	var limits *RateLimits
	if r := first.RateLimits; r != nil {
		limits = &r.Limits
	}
	run.RateLimits = BuildRateLimits(limits, m)
	run.Notes = append(mg.notes, fmt.Sprintf("merged from %d shards (run id %q): histograms added, series aligned on wall-clock time; max_in_flight is the sum of the shards' maxima (an upper bound)",
		mg.attest.Count, mg.attest.RunID))
	if mg.serverFrom != "" {
		run.Notes = append(run.Notes, "server metrics: shard "+mg.serverFrom+"'s scrapes of the server every shard loaded (its windows are that shard's)")
	}
	return run, nil
}

// shardName is "I/N".
func shardName(s *ShardInfo) string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMergeRefused}, args...)...)
}

// checkShards refuses a set of shards that is not one whole distributed
// run.
func checkShards(shards []shardHead) error {
	if len(shards) == 0 {
		return refuse("no shard given")
	}
	for _, s := range shards {
		if s.Shard == nil {
			return refuse("%s: not a shard's results (no \"shard\": run it with --shard I/N --run-id ID)", s.name)
		}
	}
	a := shards[0]
	ai := a.Shard
	seen := map[int]string{}
	for _, s := range shards {
		si := s.Shard
		differ := func(what string, x, y any) error {
			return refuse("%s and %s are shards of different %s (%v and %v)", a.name, s.name, what, x, y)
		}
		switch {
		case si.Count != ai.Count:
			return differ("splits (N)", ai.Count, si.Count)
		case si.ScenarioSHA256 != ai.ScenarioSHA256:
			return differ("scenarios (sha256)", ai.ScenarioSHA256, si.ScenarioSHA256)
		case si.Seed != ai.Seed:
			return differ("seeds", ai.Seed, si.Seed)
		case si.RunID != ai.RunID:
			return differ("run ids", ai.RunID, si.RunID)
		case s.Target.Endpoint != a.Target.Endpoint || s.Target.Model != a.Target.Model || s.Target.Profile != a.Target.Profile:
			return differ("targets", a.Target.Endpoint+" "+a.Target.Model, s.Target.Endpoint+" "+s.Target.Model)
		case s.Scenario.PromptSalt != a.Scenario.PromptSalt:
			return differ("prompt salts", a.Scenario.PromptSalt, s.Scenario.PromptSalt)
		case s.Scenario.Windows != a.Scenario.Windows:
			return refuse("incompatible windows: %s and %s declare different windows", a.name, s.name)
		}
		if other, dup := seen[si.Index]; dup {
			return refuse("shard %d/%d given twice (%s and %s)", si.Index, si.Count, other, s.name)
		}
		seen[si.Index] = s.name
	}
	var missing []string
	for i := range ai.Count {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return refuse("shard %s of %d missing (run id %q): a merged run needs every shard", strings.Join(missing, ", "), ai.Count, ai.RunID)
	}
	return nil
}

// addHist adds e (of histogram m) into *dst, creating it.
func addHist(dst **hdrhistogram.Histogram, m HistSpec, e EncodedHistogram, where string) error {
	// Decoded sparse (only the populated buckets) and added bucket to
	// bucket: a dense decode cleared a full counts array per shard and
	// histogram, most of a hundred shards' merge.
	h, err := decodePacked(e)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if *dst == nil {
		*dst = m.new()
	}
	if dropped := h.MergeInto(*dst); dropped > 0 {
		return fmt.Errorf("%s: %d values out of range", where, dropped)
	}
	return nil
}

// histByName is every histogram a window's or the run's histograms hold.
var histByName = func() map[string]HistSpec {
	m := map[string]HistSpec{HistClientLag.Name: HistClientLag}
	for _, mt := range windowHists {
		m[mt.Name] = mt
	}
	return m
}()

// rateLimited is a run's 429s.
func rateLimited(r *Run) []Rejection {
	if r.RateLimits == nil {
		return nil
	}
	return r.RateLimits.Rejections
}

// addServed adds a shard's issued workload, as its pins record it.
func (s *Issued) addServed(prompt, output *Served) {
	if prompt == nil || output == nil {
		return
	}
	n, ok := float64(prompt.Issued), float64(prompt.Issued-prompt.Failed)
	s.Requests += prompt.Issued
	s.Failed += prompt.Failed
	s.PromptAll += int64(math.Round(prompt.MeanAll * n))
	s.PromptOK += int64(math.Round(prompt.MeanOK * ok))
	s.OutputAll += int64(math.Round(output.MeanAll * n))
	s.OutputOK += int64(math.Round(output.MeanOK * ok))
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
