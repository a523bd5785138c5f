package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sixpin/sixpin/capacity"
	"github.com/sixpin/sixpin/profiles"
	"github.com/sixpin/sixpin/scenario"
)

// shardedSearch is a closed-loop scenario of two streams for 20 s: the
// shortest a sharded search starts at with two shards.
const shardedSearch = `name: capacity-sharded
seed: 5
pins:
  model: {name: m}
  prompt: {tokens: 40}
  output: {tokens: 8, exact: true}
  concurrency: {mode: closed, streams: 2}
duration: 20s
windows: {warmup: 1s, burst: 1s}
`

// twoSlotServer serves, over real HTTP and in real time, a simulator
// that runs at most two sequences, each decode step about 22 ms (an
// answer of 8 tokens holds its slot about 180 ms): a third request waits
// for a slot. It returns a client profile of it, for every shard alike.
func twoSlotServer(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	simPath := filepath.Join(dir, "two-slot-sim.yaml")
	src := "name: two-slot-sim\n" + twoSeqSim(500, "20ms")
	if err := os.WriteFile(simPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profiles.Resolve(simPath)
	if err != nil {
		t.Fatal(err)
	}
	c, err := SimConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	url := simServer(t, c, nil)
	client := filepath.Join(dir, "two-slot.yaml")
	src = "name: two-slot\nkind: openai-compatible\ntokenizer: words\noutput_control: ignore_eos\nbase_url: " + url + "\n"
	if err := os.WriteFile(client, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return client
}

// shardConfig is shard I of N of a search of the sharded scenario at
// profile, with tiers; the leader listens on ln, the workers reach it
// there.
func shardConfig(t *testing.T, i, n int, ln net.Listener, scenarioPath, profile string, tiers ...string) CapacityConfig {
	t.Helper()
	cc := CapacityConfig{Config: Config{ScenarioPath: scenarioPath, Profile: profile, Grace: time.Second,
		Output:      filepath.Join(t.TempDir(), "c.json"),
		Distributed: Distributed{Shard: scenario.Shard{I: i, N: n}, RunID: "t1"}},
		Tiers: tiers, Max: 4, MinSteady: time.Second}
	cc.Config = quiet(t, cc.Config)
	cc.ShardTimeout, cc.JoinTimeout = 5*time.Second, time.Minute
	if i == 0 {
		cc.Coordinate, cc.listener = ln.Addr().String(), ln
	} else {
		cc.Coordinator = "http://" + ln.Addr().String()
	}
	return cc
}

// tripAt is a buffer that calls on, once, when what was written holds
// marker n times.
type tripAt struct {
	bytes.Buffer
	marker string
	n      int
	on     func()
}

func (w *tripAt) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	if w.on != nil && strings.Count(w.String(), w.marker) >= w.n {
		w.on()
		w.on = nil
	}
	return n, err
}

// listenLoopback is a loopback listener for a leader.
func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// A search in two shards — the leader and a worker, each its own
// process's part, over real HTTP against one server in real time —
// finds the N* the same search finds in one process, within one stream;
// every point's run is the two shards' results merged (each shard's
// requests in it), judged on both shards' records and stopped once
// decided, long before its 20 s; the file says how it was sharded and
// reads back.
func TestCapacitySharded(t *testing.T) {
	t.Parallel()
	profile := twoSlotServer(t)
	path := scenarioFile(t, shardedSearch)
	tier := "tight: ttft_ms.p90 <= 120"

	one, _, _, err := runCapacity(t, CapacityConfig{Config: Config{ScenarioPath: path, Profile: profile, TimeScale: 1},
		Tiers: []string{tier}, Max: 4, MinSteady: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := one.File.Answers[0]
	if want.Kind != capacity.Found {
		t.Fatalf("unsharded: %+v", want)
	}

	ln := listenLoopback(t)
	lead := shardConfig(t, 0, 2, ln, path, profile, tier)
	work := shardConfig(t, 1, 2, ln, path, profile, tier)
	var (
		wg      sync.WaitGroup
		werr    error
		outcome *CapacityOutcome
	)
	wg.Go(func() { _, werr = Capacity(context.Background(), context.Background(), work) })
	outcome, err = Capacity(context.Background(), context.Background(), lead)
	wg.Wait()
	logs := func() {
		t.Logf("leader:\n%s\n%s\nworker:\n%s\n%s", lead.Out, lead.ErrOut, work.Out, work.ErrOut)
	}
	if err != nil || werr != nil {
		logs()
		t.Fatalf("leader: %v; worker: %v", err, werr)
	}
	f := outcome.File
	got := f.Answers[0]
	if got.Kind != capacity.Found || got.Lo < want.Lo-1 || got.Lo > want.Lo+1 {
		logs()
		t.Fatalf("sharded: %+v, unsharded: %+v", got, want)
	}
	if s := f.Sharded; s == nil || s.Count != 2 || s.RunID != "t1" || f.Plan.Axis.Min != 2 {
		t.Errorf("sharded %+v, axis %+v", s, f.Plan.Axis)
	}
	early := 0
	for i, p := range f.Points {
		m := p.Run.Merged
		if m == nil || m.Count != 2 || len(m.Shards) != 2 || m.RunID != fmt.Sprintf("t1-p%d", i+1) {
			t.Fatalf("point %d is not two shards merged: %+v", i+1, m)
		}
		var sum int64
		for _, s := range m.Shards {
			if s.ScheduleLagMs == nil || s.ScheduleLagMs.Count == 0 {
				t.Errorf("point %d: shard %d/%d sent nothing", i+1, s.Index, s.Count)
				continue
			}
			sum += s.ScheduleLagMs.Count
		}
		if all := p.Run.Windows["all"]; all.ScheduleLagMs == nil || all.ScheduleLagMs.Count != sum {
			t.Errorf("point %d: the merged run holds %v requests, its shards %d", i+1, all.ScheduleLagMs, sum)
		}
		if d := p.Run.Pins.Concurrency.Declared.Streams; d != int(p.Value) {
			t.Errorf("point %d at %v declares %d streams", i+1, p.Value, d)
		}
		if !p.Valid {
			t.Errorf("point %d at %v invalid: %v", i+1, p.Value, p.Invalid)
		}
		if e := p.Run.StoppedEarly; e != nil && e.AtS < 15 && strings.Contains(e.Reason, "decided at 95%") {
			early++
		}
	}
	if early == 0 {
		logs()
		t.Errorf("no point was stopped once decided")
	}
	if !strings.Contains(work.Out.(*bytes.Buffer).String(), "the leader has ended the search (the search is done)") {
		logs()
		t.Errorf("the worker did not hear the end")
	}
	if _, err := capacity.ReadFile(outcome.Path); err != nil {
		t.Fatal(err)
	}
}

// cutter forwards connections to a leader until cut, then refuses and
// drops them all: a worker's machine gone from the network.
type cutter struct {
	ln    net.Listener
	to    string
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func newCutter(t *testing.T, to string) *cutter {
	c := &cutter{ln: listenLoopback(t), to: to}
	go func() {
		for {
			in, err := c.ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.to)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			if c.cut {
				in.Close()
				out.Close()
			}
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	c.ln.Close()
	for _, n := range c.conns {
		n.Close()
	}
}

// A worker cut off in the middle of a point: the leader counts it gone
// once it has not been heard from for the shard timeout, stops the
// point, and ends the search with an error naming the shard, the file
// written with the points before and marked incomplete; the worker, no
// longer hearing its leader, ends with an error too. Neither hangs.
func TestCapacityShardLost(t *testing.T) {
	t.Parallel()
	profile := twoSlotServer(t)
	path := scenarioFile(t, shardedSearch)
	tier := "loose: ttft_ms.p90 <= 100000"
	ln := listenLoopback(t)
	lead := shardConfig(t, 0, 2, ln, path, profile, tier)
	cut := newCutter(t, ln.Addr().String())
	work := shardConfig(t, 1, 2, ln, path, profile, tier)
	work.Coordinator = "http://" + cut.ln.Addr().String()
	// The second point's load has begun on the worker: cut it off.
	errOut := &tripAt{marker: "sixpin: recording to", n: 2, on: cut.Cut}
	work.ErrOut = errOut

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		wg   sync.WaitGroup
		werr error
	)
	wg.Go(func() { _, werr = Capacity(ctx, context.Background(), work) })
	o, err := Capacity(ctx, context.Background(), lead)
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("the search hung")
	}
	if err == nil || !strings.Contains(err.Error(), "capacity point 2 (") || !strings.Contains(err.Error(), "shard 1/2") || !strings.Contains(err.Error(), "not heard from for 5s") {
		t.Fatalf("leader: %v\n%s", err, lead.ErrOut)
	}
	if o == nil || !o.File.Incomplete || o.File.Stop != capacity.StopError || len(o.File.Points) != 1 {
		t.Fatalf("outcome %+v", o)
	}
	f, err := capacity.ReadFile(o.Path)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Incomplete || !strings.Contains(f.IncompleteReason, "shard 1/2") {
		t.Errorf("file: incomplete %v (%s)", f.Incomplete, f.IncompleteReason)
	}
	if werr == nil || !strings.Contains(werr.Error(), "the leader stopped answering") {
		t.Errorf("worker: %v\n%s", werr, errOut)
	}
}

// A worker whose scenario or tiers differ from the leader's is refused
// as it joins, with the reason, and ends as bad input; the leader says
// so and, no worker of its own joining, gives up naming the shard.
func TestCapacityShardRefused(t *testing.T) {
	t.Parallel()
	profile := twoSlotServer(t)
	path := scenarioFile(t, shardedSearch)
	other := scenarioFile(t, strings.Replace(shardedSearch, "seed: 5", "seed: 6", 1))
	tier := "tight: ttft_ms.p90 <= 120"
	for _, c := range []struct {
		name           string
		scenario, tier string
		want           string
	}{
		{"scenario", other, tier, "scenario sha256 differs"},
		{"tiers", path, "tight: ttft_ms.p90 <= 60", `tiers differs: the leader's is "tight: ttft_ms.p90 <= 120", the worker's "tight: ttft_ms.p90 <= 60"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ln := listenLoopback(t)
			lead := shardConfig(t, 0, 2, ln, path, profile, tier)
			lead.JoinTimeout = 3 * time.Second
			work := shardConfig(t, 1, 2, ln, c.scenario, profile, c.tier)
			var (
				wg   sync.WaitGroup
				lerr error
			)
			wg.Go(func() { _, lerr = Capacity(context.Background(), context.Background(), lead) })
			_, err := Capacity(context.Background(), context.Background(), work)
			wg.Wait()
			if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "refused by the leader") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("worker: %v", err)
			}
			if lerr == nil || !strings.Contains(lerr.Error(), "not joined: 1/2") || !strings.Contains(lead.ErrOut.(*bytes.Buffer).String(), "refused shard 1/2") {
				t.Errorf("leader: %v\n%s", lerr, lead.ErrOut)
			}
		})
	}
}

// What a sharded search cannot be is refused before any load, each with
// the flag to change.
func TestCapacityShardingRefused(t *testing.T) {
	t.Parallel()
	profile := twoSlotServer(t)
	path := scenarioFile(t, shardedSearch)
	untimed := scenarioFile(t, strings.Replace(shardedSearch, "duration: 20s", "requests: 100", 1))
	tier := []string{"tight: ttft_ms.p90 <= 120"}
	sharded := func(i int, edit func(*CapacityConfig)) CapacityConfig {
		cc := CapacityConfig{Config: Config{ScenarioPath: path, Profile: profile, Distributed: Distributed{Shard: scenario.Shard{I: i, N: 2}, RunID: "r"}}, Tiers: tier, MinSteady: time.Second}
		if i == 0 {
			cc.Coordinate = "127.0.0.1:0"
		} else {
			cc.Coordinator = "http://127.0.0.1:1"
		}
		edit(&cc)
		return cc
	}
	for _, c := range []struct {
		cc   CapacityConfig
		want string
	}{
		{sharded(0, func(cc *CapacityConfig) { cc.Distributed.RunID = "" }), "--shard needs --run-id"},
		{sharded(1, func(cc *CapacityConfig) { cc.Coordinator, cc.Coordinate = "", ":7070" }), "--coordinate on shard 1/2: only shard 0 serves the coordination"},
		{sharded(0, func(cc *CapacityConfig) { cc.Coordinate, cc.Coordinator = "", "http://leader:7070" }), "--coordinator on shard 0/2: shard 0 leads the search"},
		{sharded(0, func(cc *CapacityConfig) { cc.Coordinate = "" }), "shard 0/2 leads the search: give --coordinate ADDR"},
		{sharded(1, func(cc *CapacityConfig) { cc.Coordinator = "" }), "shard 1/2 is a worker: give --coordinator"},
		{sharded(0, func(cc *CapacityConfig) { cc.Distributed.StartAt = time.Now() }), "--start-at: a sharded capacity search starts each point"},
		{sharded(0, func(cc *CapacityConfig) { cc.Distributed.Shard = scenario.Shard{} }), "--coordinate and --coordinator shard a capacity search"},
		{sharded(0, func(cc *CapacityConfig) { cc.Distributed.Shard, cc.Coordinate = scenario.Shard{}, "" }), "--run-id names a sharded search"},
		{sharded(0, func(cc *CapacityConfig) { cc.Profile = "sim-local-27b" }), "the built-in simulator (profile sim-local-27b) would run inside each process"},
		{sharded(0, func(cc *CapacityConfig) { cc.ScenarioPath = untimed }), "a sharded search needs a duration"},
		{sharded(0, func(cc *CapacityConfig) { cc.Min = 1 }), "--min 1: every shard needs at least one of the streams, and there are 2 shards"},
		{sharded(0, func(cc *CapacityConfig) { cc.Max = 1 }), "--max 1: every shard needs at least one"},
	} {
		cc := c.cc
		cc.Config = quiet(t, cc.Config)
		o, err := Capacity(context.Background(), context.Background(), cc)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) || o != nil {
			t.Errorf("%v, want bad input %q", err, c.want)
		}
	}
}
