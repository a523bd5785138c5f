package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/endpoint"
	"github.com/sixpin/sixpin/harness/internal/coord"
	"github.com/sixpin/sixpin/internal/listen"
	"github.com/sixpin/sixpin/internal/redact"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/record"
	"github.com/sixpin/sixpin/results"
	"github.com/sixpin/sixpin/scenario"
)

// A capacity search sharded across processes or machines.
//
// The search is adaptive — each point's value follows from the verdicts
// so far — so its shards go in lockstep, led by shard 0: it runs the
// search as one process would and serves the coordination
// (harness/internal/coord) the workers, shards 1 to N−1, join. For each
// point the leader opens it (value, seed, duration, the point's run id),
// every shard prepares its share of the scenario at that value
// (scenario.Plan.Shard, as `sixpin run --shard` splits a run), and once
// all are ready they start together. While the point runs the workers
// stream their records to the leader with their beats, and the leader
// judges every shard's records with the point's tiers (verdict.Judge, the
// sequential test of an unsharded point); once the tiers are decided it
// names a common stop, stopAfter from now, and every shard stops issuing
// then. The steady window of every shard runs from the warmup's end to
// that stop (or the point's planned end), so that their windows line up
// and their histograms add. The workers hand in their results, the
// leader merges the shards (results.Merge, as `sixpin merge` does) into
// the point's run, judges it and goes on. A worker that fails, leaves or
// goes unheard for the shard timeout fails the point, naming the shard;
// the search then stops with what it had, marked incomplete.

// Sharding is how a capacity search is split across processes: with
// Config.Distributed's Shard (I/N) and RunID, shard 0 leads it and serves
// the coordination at Coordinate (HOST:PORT; a bare :PORT listens on
// every interface), and shards 1 to N−1 are workers of the leader at
// Coordinator (http://HOST:PORT). Both may be given to every shard alike,
// as the pods of an Indexed Job have them: each uses its own.
type Sharding struct {
	Coordinate, Coordinator string
	// ShardTimeout is how long a shard may go unheard before it counts
	// as gone (0: coord.DefaultSilence); JoinTimeout how long the leader
	// waits for every worker to join, and a worker tries to reach a
	// leader not up yet (0: coord.DefaultJoinWait). Wall time.
	ShardTimeout, JoinTimeout time.Duration
	// listener, when set, is where the leader serves (tests).
	listener net.Listener
}

// Defaults of a sharded search's waits, in wall time.
const (
	// DefaultShardTimeout is how long a shard may go unheard before it
	// counts as gone.
	DefaultShardTimeout = coord.DefaultSilence
	// DefaultJoinTimeout is how long the leader waits for its workers to
	// join, and a worker for its leader to answer.
	DefaultJoinTimeout = coord.DefaultJoinWait
)

// Times of a sharded point, in wall time.
const (
	// startMargin is how long after the last shard is ready a point
	// starts: time for the start to reach every worker.
	startMargin = 500 * time.Millisecond
	// stopAfter is how long after the leader decides a point every shard
	// stops: five beats, time for the stop to reach every worker.
	stopAfter = 5 * coord.DefaultBeat
)

// checkSharding refuses what a sharded search cannot be.
func checkSharding(cc CapacityConfig) error {
	d, s := cc.Distributed, cc.Sharding
	sh := d.Shard
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadInput}, args...)...)
	}
	switch {
	case !d.StartAt.IsZero():
		return bad("--start-at: a sharded capacity search starts each point when every shard is ready for it; drop --start-at")
	case s.ShardTimeout < 0 || s.JoinTimeout < 0:
		return bad("--shard-timeout and --join-timeout must not be negative")
	case sh.Whole() && (s.Coordinate != "" || s.Coordinator != ""):
		return bad("--coordinate and --coordinator shard a capacity search: give --shard I/N and --run-id too")
	case sh.Whole() && d.RunID != "":
		return bad("--run-id names a sharded search: give --shard I/N too (an unsharded search salts each point's prompts afresh)")
	case sh.Whole():
		return nil
	case d.RunID == "":
		return bad("--shard needs --run-id: the id every shard of the search shares (the leader checks it, and each point's prompts are salted by it)")
	case sh.I == 0 && s.Coordinate == "" && s.Coordinator != "":
		return bad("--coordinator on shard 0/%d: shard 0 leads the search and serves the coordination: give it --coordinate ADDR (e.g. :7070), and the workers, shards 1 to %d, --coordinator http://ITS-HOST:PORT", sh.N, sh.N-1)
	case sh.I == 0 && s.Coordinate == "":
		return bad("shard 0/%d leads the search: give --coordinate ADDR (e.g. :7070), where the workers reach it", sh.N)
	case sh.I > 0 && s.Coordinator == "" && s.Coordinate != "":
		return bad("--coordinate on shard %s: only shard 0 serves the coordination; give this worker --coordinator http://LEADER-HOST:PORT", sh)
	case sh.I > 0 && s.Coordinator == "":
		return bad("shard %s is a worker: give --coordinator http://LEADER-HOST:PORT, where shard 0 serves the coordination", sh)
	}
	return nil
}

// planShards fits f's plan to a sharded search (none: nothing to do):
// one server every shard loads, a duration every shard stops at, and at
// least one stream or session per shard.
func planShards(cc CapacityConfig, sc *scenario.Scenario, p *profiles.Profile, f *capacity.File) error {
	sh := cc.Distributed.Shard
	if sh.Whole() {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadInput}, args...)...)
	}
	a := &f.Plan.Axis
	switch {
	case p.Simulated():
		return bad("a sharded search loads one server from every shard, and the built-in simulator (profile %s) would run inside each process: serve one with `sixpin sim --addr HOST:PORT` and give every shard --endpoint http://HOST:PORT/v1", p.Name)
	case sc.Duration.D() <= 0:
		return bad("%s: a sharded search needs a duration (the scenario's, or --duration): its shards stop together, a request count each would end on its own", sc.Path)
	case a.Integer() && a.Max < float64(sh.N):
		return bad("--max %s: every shard needs at least one of the %s, and there are %d shards", strconv.FormatFloat(a.Max, 'f', -1, 64), a.Kind, sh.N)
	case a.Integer() && a.Min < float64(sh.N) && cc.Min > 0:
		return bad("--min %s: every shard needs at least one of the %s, and there are %d shards: give --min %d or more, or fewer shards", strconv.FormatFloat(cc.Min, 'f', -1, 64), a.Kind, sh.N, sh.N)
	case a.Integer() && a.Min < float64(sh.N):
		a.Min = float64(sh.N)
		f.Plan.Start = max(f.Plan.Start, a.Min)
		f.Notes = append(f.Notes, fmt.Sprintf("sharded %d ways, the search starts at %d %s: every shard needs at least one (a tier that fails there has N* below the shard count: search it with fewer shards)", sh.N, sh.N, a.Kind))
	}
	f.Sharded = &capacity.Sharding{Count: sh.N, RunID: cc.Distributed.RunID}
	note := fmt.Sprintf("sharded across %d processes (run id %s): each point ran as %d shards started together and merged losslessly; the leader judged every shard's records as they arrived and stopped all shards together once the point was decided", sh.N, f.Sharded.RunID, sh.N)
	if sc.Windows.Steady.Auto {
		note += "; each point's steady window runs from the warmup's end to that common stop (steady: auto would trim each shard differently, and windows of different spans cannot be added)"
	}
	f.Notes = append(f.Notes, note)
	return nil
}

// shardFacts are what every shard of the search must agree on: the
// leader refuses a worker that differs in one.
func shardFacts(cc CapacityConfig, sc *scenario.Scenario, f *capacity.File) []coord.Fact {
	var tiers []string
	for _, t := range f.Plan.Tiers {
		tiers = append(tiers, t.String())
	}
	a := f.Plan.Axis
	target := "unresolved"
	if p, base, err := targetProfile(sc, cc.Config); err == nil {
		target = fmt.Sprintf("profile %s, endpoint %s, model %q", p.Name, redact.URL(cmp.Or(base, p.BaseURL)), cc.Model)
	}
	return []coord.Fact{
		{Name: "sixpin version", Value: Version},
		{Name: "scenario sha256", Value: sc.SHA256},
		{Name: "tiers", Value: strings.Join(tiers, "; ")},
		{Name: "axis", Value: fmt.Sprintf("%s (%s) from %v to %v, resolution %v", a.Kind, a.Pin, a.Min, a.Max, a.Resolution)},
		{Name: "min steady", Value: strconv.FormatFloat(f.Plan.MinSteadyS, 'f', -1, 64) + " s"},
		{Name: "target", Value: target},
		{Name: "tokenizer", Value: cmp.Or(cc.Tokenizer, "the profile's")},
		{Name: "calibrate", Value: strconv.FormatBool(cc.Calibrate)},
	}
}

// pointRunID is the run id of point k of search id: every shard of the
// point salts its prompts by it.
func pointRunID(id string, k int) string { return id + "-p" + strconv.Itoa(k) }

// pinSteady fits a sharded point's windows: no steady: auto (MSER-5 over
// each shard's own series would trim each differently); the end is
// pinned when the point ends (shardLink.pin).
func pinSteady(psc *scenario.Scenario) { psc.Windows.Steady.Auto = false }

// pointID names a point of the search.
type pointID struct {
	k     int
	v     float64
	role  string
	label string
}

// execute runs one point: in this process, or as the shards of a
// sharded search, merged.
func (c *capacityRun) execute(ctx, hard context.Context, one Config, psc *scenario.Scenario, id pointID, spill string) (*results.Run, *spillFile, error) {
	if c.lead == nil {
		return execute(ctx, hard, one, psc, "", spill, 0)
	}
	return c.lead.point(ctx, hard, one, psc, id, spill)
}

// leading is shard 0 of a sharded search: the coordination it serves,
// and the point open now, whose link takes the workers' records.
type leading struct {
	c       *coord.Leader
	srv     *http.Server
	n       int
	runID   string
	silence time.Duration
	errOut  func(format string, args ...any)

	mu   sync.Mutex
	link *shardLink
}

// lead starts the coordination of cc's search and waits for every
// worker to join.
func lead(ctx context.Context, cc CapacityConfig, sc *scenario.Scenario, f *capacity.File) (*leading, error) {
	cfg := cc.Config
	l := &leading{n: cfg.Distributed.Shard.N, runID: cfg.Distributed.RunID, silence: cmp.Or(cc.ShardTimeout, coord.DefaultSilence),
		errOut: func(format string, args ...any) { fmt.Fprintf(cfg.ErrOut, "sixpin: "+format+"\n", args...) }}
	l.c = coord.NewLeader(coord.LeaderOptions{Count: l.n, RunID: l.runID, Facts: shardFacts(cc, sc, f), Silence: l.silence, Records: l.records})
	ln, err := cc.listener, error(nil)
	if ln == nil {
		if ln, err = listen.Listen(listen.Server{Flag: "--coordinate"}, cc.Coordinate, true); err != nil {
			l.c.Close()
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
	}
	l.srv = &http.Server{Handler: l.c, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = l.srv.Serve(ln) }()
	url, reach := listen.Where(ln, "")
	wait := cmp.Or(cc.JoinTimeout, coord.DefaultJoinWait)
	l.errOut("leading a search in %d shards (run id %s); the coordination is at %s (%s). Waiting up to %s for the workers, each started with\n"+
		"  sixpin capacity %s --shard I/%d --run-id %s --coordinator http://THIS-HOST:%s [the same tiers, target and flags]",
		l.n, l.runID, strings.TrimSuffix(url, "/"), reach, wait, sc.Path, l.n, l.runID, portOf(ln))
	if err := l.c.Joined(ctx, wait, func(s string) { l.errOut("%s", s) }); err != nil {
		l.close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ErrInterrupted, err)
		}
		return nil, err
	}
	l.errOut("every worker has joined: the search begins")
	return l, nil
}

// portOf is ln's port.
func portOf(ln net.Listener) string {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return strconv.Itoa(a.Port)
	}
	return "PORT"
}

// records hands a worker's records of point k to the point's link.
func (l *leading) records(shard, k int, batch []byte) error {
	l.mu.Lock()
	s := l.link
	l.mu.Unlock()
	if s == nil || s.k != k {
		return nil
	}
	return s.remote(batch)
}

// point runs point id as every shard's share, started together, and
// returns the shards' results merged, and the leader's own spill.
func (l *leading) point(ctx, hard context.Context, one Config, psc *scenario.Scenario, id pointID, spill string) (*results.Run, *spillFile, error) {
	pinSteady(psc)
	k := id.k
	runID := pointRunID(l.runID, k)
	s := &shardLink{k: k, lead: l.c, judge: one.judge, duration: psc.Duration.D(), armed: make(chan struct{})}
	one.judge.link = s
	l.mu.Lock()
	l.link = s
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.link = nil
		l.mu.Unlock()
		s.close()
	}()
	l.c.Open(coord.Point{K: k, Value: id.v, Seed: psc.Seed, Role: id.role, Label: id.label, RunID: runID, Duration: psc.Duration.D()})
	one.Distributed = Distributed{Shard: scenario.Shard{I: 0, N: l.n}, RunID: runID,
		barrier: func(ctx context.Context) (time.Time, error) { return l.c.Ready(ctx, k, startMargin) }}
	run, sp, err := execute(ctx, hard, one, psc, "", spill, 0)
	l.say()
	if err != nil {
		l.c.Abort(k, "the leader's shard could not run: "+err.Error())
		return nil, nil, err
	}
	if ctx.Err() != nil {
		// Interrupted: the point counts for nothing; the workers stop.
		l.c.Abort(k, "the leader was interrupted")
		return run, sp, nil
	}
	raws, err := l.c.Results(ctx, k)
	l.say()
	if err != nil {
		sp.keep(one.ErrOut)
		return nil, nil, err
	}
	shards := []results.Shard{{Name: fmt.Sprintf("shard 0/%d (the leader)", l.n), Run: run}}
	for i, raw := range raws[1:] {
		name := fmt.Sprintf("shard %d/%d's results", i+1, l.n)
		r, err := results.Read(name, raw)
		if err != nil {
			sp.keep(one.ErrOut)
			return nil, nil, err
		}
		shards = append(shards, results.Shard{Name: name, Run: r})
	}
	merged, err := results.Merge(shards, results.MergeOptions{})
	if err != nil {
		sp.keep(one.ErrOut)
		return nil, nil, fmt.Errorf("merge its %d shards: %w", l.n, err)
	}
	// Every shard stopped at the stop the leader named when it decided.
	merged.StoppedEarly = run.StoppedEarly
	return merged, sp, nil
}

// say writes the coordination's words since the last (workers gone or
// back) to the search's log.
func (l *leading) say() {
	for _, s := range l.c.Said() {
		l.errOut("%s", s)
	}
}

// finish tells the workers the search has ended, and why, then stops
// serving them.
func (l *leading) finish(f *capacity.File, err error) {
	reason := "the search is done"
	switch {
	case err != nil:
		reason = "the search stopped on an error: " + err.Error()
	case f.IncompleteReason != "":
		reason = f.IncompleteReason
	case f.Stop != capacity.StopDone:
		reason = "the search stopped: " + f.Stop
	}
	l.c.Finish(context.Background(), reason, l.silence)
	l.close()
}

func (l *leading) close() {
	l.c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.srv.Shutdown(ctx)
}

// capacityWorker is shard I > 0 of a sharded search: it joins the leader
// and runs its share of every point the leader opens until the leader
// ends the search.
func capacityWorker(ctx, hard context.Context, cc CapacityConfig) (*CapacityOutcome, error) {
	cfg := cc.Config
	sc, f, err := capacityPlan(cc)
	if err != nil {
		return nil, err
	}
	sh, id := cfg.Distributed.Shard, cfg.Distributed.RunID
	host, _ := os.Hostname()
	w, err := coord.Dial(ctx, coord.WorkerOptions{URL: cc.Coordinator, Silence: cc.ShardTimeout, JoinWait: cc.JoinTimeout,
		Join: coord.Join{Shard: sh.I, Count: sh.N, RunID: id, Host: host, Facts: shardFacts(cc, sc, f)}})
	switch {
	case errors.Is(err, coord.ErrRefused):
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %w", ErrInterrupted, err)
	case err != nil:
		return nil, err
	}
	why := "its search is over"
	defer func() { w.Close(why) }()
	fmt.Fprintf(cfg.Out, "sixpin: capacity shard %s of run %s: joined the leader at %s, which runs the search; this process runs shard %s of each point\n", sh, id, cc.Coordinator, sh)
	dir := os.TempDir()
	if cfg.Output != "" {
		dir = filepath.Dir(cfg.Output)
	}
	ran := 0
	for k := 0; ; {
		next, err := w.Next(ctx, k)
		switch {
		case err != nil && ctx.Err() != nil:
			why = "interrupted"
			return nil, fmt.Errorf("%w: waiting for the leader's next point", ErrInterrupted)
		case err != nil:
			return nil, fmt.Errorf("shard %s: %w", sh, err)
		case next.Done:
			fmt.Fprintf(cfg.Out, "sixpin: the leader has ended the search (%s); this shard ran %d points\n", next.Reason, ran)
			return nil, nil
		}
		pt := *next.Point
		k = pt.K
		psc := pointScenario(sc, f.Plan.Axis.Pin, pt.Value, pt.Seed)
		psc.Duration = scenario.Duration(pt.Duration)
		pinSteady(psc)
		one := cfg
		one.Out = cfg.ErrOut
		one.step = fmt.Sprintf("point %d: %s (shard %s)", k, pt.Label, sh)
		s := &shardLink{k: k, work: w, duration: pt.Duration, signal: w.Begin(k)}
		one.judge = &judging{link: s}
		one.Distributed = Distributed{Shard: sh, RunID: pt.RunID, barrier: func(ctx context.Context) (time.Time, error) { return w.Ready(ctx, k) }}
		fmt.Fprintf(cfg.ErrOut, "sixpin: capacity point %d (%s): %s, seed %d — shard %s\n", k, pt.Role, pt.Label, pt.Seed, sh)
		spill := spillBeside(filepath.Join(dir, fmt.Sprintf("sixpin-capacity-%s-shard%d", id, sh.I)), "."+strconv.Itoa(k))
		run, sp, err := execute(ctx, hard, one, psc, "", spill, 0)
		stop, abort := w.Signal(k)
		switch {
		case w.Lost() != nil:
			if sp != nil {
				sp.keep(cfg.ErrOut)
			}
			why = "the leader is lost"
			return nil, fmt.Errorf("shard %s, point %d: %w", sh, k, w.Lost())
		case errors.Is(err, coord.ErrAbandoned) || err == nil && stop == nil && abort != "":
			fmt.Fprintf(cfg.ErrOut, "sixpin: the leader abandoned point %d: %s\n", k, cmp.Or(abort, fmt.Sprint(err)))
			if sp != nil {
				sp.remove()
			}
			continue
		case err == nil && ctx.Err() != nil:
			sp.remove()
			err = errors.New("interrupted")
		}
		if err != nil {
			why = "it could not run point " + strconv.Itoa(k) + ": " + err.Error()
			rctx, cancel := context.WithTimeout(context.Background(), cmp.Or(cc.ShardTimeout, coord.DefaultSilence))
			_ = w.Result(rctx, k, coord.Result{Error: err.Error()})
			cancel()
			if ctx.Err() != nil {
				why = "interrupted"
				return nil, fmt.Errorf("%w: shard %s, point %d", ErrInterrupted, sh, k)
			}
			return nil, fmt.Errorf("capacity point %d (%s), shard %s: %w", k, pt.Label, sh, err)
		}
		data, err := json.Marshal(run)
		if err == nil {
			err = w.Result(ctx, k, coord.Result{Run: data})
		}
		if err != nil {
			sp.keep(cfg.ErrOut)
			return nil, fmt.Errorf("shard %s, point %d: hand in its results: %w", sh, k, err)
		}
		sp.remove()
		ran++
	}
}

// shardLink ties one shard's run of a sharded point to the others. On
// the leader it judges every shard's records — its own as they arrive,
// the workers' as their beats bring them — and, once the point is
// decided, names the common stop; on a worker it forwards the records
// and stops at the common stop it hears of. On both it stops the run
// when the point fails or is abandoned, and pins the steady window's end
// to the common stop. It is used from the run's consume goroutine, its
// own watch goroutine and, on the leader, the beats' goroutines: mu
// guards its state.
type shardLink struct {
	k    int
	lead *coord.Leader
	work *coord.Worker
	// judge is the leader's point's (nil on a worker).
	judge *judging
	// duration is the point's planned length, in run time.
	duration time.Duration
	// armed is closed on the leader once the stop is named; signal on a
	// worker once the leader's word on the point has come.
	armed  chan struct{}
	signal <-chan struct{}

	mu      sync.Mutex
	clock   endpoint.Clock
	stop    *coord.Stop
	early   *earlyStop
	decided bool
	closed  bool
	quit    chan struct{}
	wg      sync.WaitGroup
}

// observe takes one of the shard's own records.
func (s *shardLink) observe(rec *record.Record) {
	if s.work != nil {
		data, err := json.Marshal(rec)
		if err == nil {
			s.work.Send(s.k, append(data, '\n'))
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.judgeRecord(rec)
}

// remote judges a worker's batch of records (JSON, one a line).
func (s *shardLink) remote(batch []byte) error {
	dec := json.NewDecoder(bytes.NewReader(batch))
	var recs []*record.Record
	for dec.More() {
		r := &record.Record{}
		if err := dec.Decode(r); err != nil {
			return fmt.Errorf("record %d of the batch: %w", len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		s.judgeRecord(r)
	}
	return nil
}

// judgeRecord judges rec and names the common stop once the point's
// tiers are decided; s.mu is held.
func (s *shardLink) judgeRecord(rec *record.Record) {
	j := s.judge
	if s.closed || s.decided || !j.judge.Observe(rec) || !j.judge.Decided(j.only) {
		return
	}
	s.decided = true
	st := coord.Stop{At: time.Now().Add(stopAfter), Why: "decided at 95% confidence: " + strings.Join(j.only, ", "), AtS: rec.End.Seconds()}
	s.stop = &st
	s.lead.Stop(s.k, st)
	close(s.armed)
}

// begin watches the run that has just started (on clock), stopping its
// issuing at the common stop, or when the point fails or is abandoned.
func (s *shardLink) begin(clock endpoint.Clock, stopIssuing context.CancelCauseFunc) {
	s.mu.Lock()
	s.clock, s.quit = clock, make(chan struct{})
	s.mu.Unlock()
	armed, signal := s.armed, s.signal
	if s.lead != nil {
		signal = s.lead.Failed(s.k)
	}
	s.wg.Go(func() {
		var at <-chan time.Time
		for {
			select {
			case <-s.quit:
				return
			case <-armed:
				armed = nil
				at = time.After(time.Until(s.stopAt()))
			case <-at:
				s.mu.Lock()
				s.early = &earlyStop{atS: s.stop.AtS, why: s.stop.Why}
				if s.work != nil {
					s.early.why = "stopped with the other shards, " + s.early.why
				}
				e := s.early
				s.mu.Unlock()
				stopIssuing(e)
				return
			case <-signal:
				signal = nil
				if s.lead != nil {
					stopIssuing(s.lead.Err(s.k))
					return
				}
				stop, abort := s.work.Signal(s.k)
				if stop == nil {
					stopIssuing(fmt.Errorf("%w: %s", coord.ErrAbandoned, abort))
					return
				}
				s.mu.Lock()
				s.stop = stop
				s.mu.Unlock()
				at = time.After(time.Until(stop.At))
			}
		}
	})
}

func (s *shardLink) stopAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop.At
}

// end stops the watch (the run has ended).
func (s *shardLink) end() {
	s.mu.Lock()
	q := s.quit
	s.mu.Unlock()
	if q != nil {
		close(q)
		s.wg.Wait()
	}
}

// pin ends the steady window at the common stop, or at the point's
// planned end: the same run time in every shard.
func (s *shardLink) pin(w *results.WindowSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	end := s.duration
	if s.stop != nil {
		if e := s.clock.Run(s.stop.At.Sub(s.clock.Start)); end <= 0 || e < end {
			end = e
		}
	}
	if end > 0 && (w.SteadyEnd <= 0 || end < w.SteadyEnd) {
		w.SteadyEnd = end
	}
}

// stoppedBy is the early stop cause made, nil when it is not the common
// stop.
func (s *shardLink) stoppedBy(cause error) *results.StoppedEarly {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.early != nil && cause == error(s.early) {
		return s.early.ending()
	}
	return nil
}

// close ends the judging of the workers' records (their results are in).
func (s *shardLink) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// begin, end, pin and ending are the run's hooks for a sharded point's
// link; without one (or without judging) they do nothing.
func (j *judging) begin(clock endpoint.Clock, stop context.CancelCauseFunc) {
	if j != nil && j.link != nil {
		j.link.begin(clock, stop)
	}
}

func (j *judging) end() {
	if j != nil && j.link != nil {
		j.link.end()
	}
}

func (j *judging) pin(w *results.WindowSpec) {
	if j != nil && j.link != nil {
		j.link.pin(w)
	}
}

// ending is how the run stopped early by the judging ended, given the
// cause its issuing stopped with (nil: it was not).
func (j *judging) ending(cause error) *results.StoppedEarly {
	switch {
	case j == nil:
		return nil
	case j.link != nil:
		return j.link.stoppedBy(cause)
	case j.stopped != nil && cause == error(j.stopped):
		return j.stopped.ending()
	}
	return nil
}
