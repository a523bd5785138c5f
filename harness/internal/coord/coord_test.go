package coord

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

var facts = []Fact{{Name: "scenario sha256", Value: "abc"}, {Name: "tiers", Value: "t: ttft_ms.p90 <= 100"}}

// serve serves a leader of n shards over real HTTP.
func serve(t *testing.T, o LeaderOptions) (*Leader, string) {
	t.Helper()
	if o.RunID == "" {
		o.RunID = "r1"
	}
	if o.Facts == nil {
		o.Facts = facts
	}
	l := NewLeader(o)
	srv := httptest.NewServer(l)
	t.Cleanup(func() { l.Close(); srv.Close() })
	return l, srv.URL
}

func dial(t *testing.T, url string, j Join) (*Worker, error) {
	t.Helper()
	if j.RunID == "" {
		j.RunID = "r1"
	}
	if j.Facts == nil {
		j.Facts = facts
	}
	if j.Count == 0 {
		j.Count = 2
	}
	w, err := Dial(context.Background(), WorkerOptions{URL: url, Join: j, Beat: 20 * time.Millisecond, Silence: 5 * time.Second, JoinWait: 5 * time.Second})
	if w != nil {
		t.Cleanup(func() { w.Close("the test ended") })
	}
	return w, err
}

// A worker that is not of the search is refused as it joins, with the
// reason, and the leader says so.
func TestJoinRefused(t *testing.T) {
	t.Parallel()
	l, url := serve(t, LeaderOptions{Count: 3})
	if _, err := dial(t, url, Join{Shard: 1, Count: 3, Host: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		j    Join
		want string
	}{
		{Join{Shard: 2, Count: 4}, "the search is split 3 ways, the worker says 4"},
		{Join{Shard: 0, Count: 3}, "shard 0: the workers are shards 1 to 2 (shard 0 is the leader)"},
		{Join{Shard: 2, Count: 3, RunID: "r2"}, `run id "r2", the leader's is "r1": a worker of another search`},
		{Join{Shard: 2, Count: 3, Facts: []Fact{facts[0], {Name: "tiers", Value: "t: ttft_ms.p90 <= 200"}}},
			`tiers differs: the leader's is "t: ttft_ms.p90 <= 100", the worker's "t: ttft_ms.p90 <= 200"`},
		{Join{Shard: 2, Count: 3, Facts: facts[:1]}, "tiers: the leader's is"},
		{Join{Shard: 1, Count: 3, Host: "b"}, "shard 1/3 has already joined, from a"},
	} {
		_, err := dial(t, url, c.j)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.j, err, c.want)
		}
	}
	said := strings.Join(l.Said(), "\n")
	if !strings.Contains(said, "shard 1/3 (a) joined") || !strings.Contains(said, "refused shard 1/3 (b): shard 1/3 has already joined, from a") {
		t.Errorf("said:\n%s", said)
	}
}

// A point in lockstep: the worker takes the point the leader opens, both
// get the same start, the worker's records reach the leader before its
// result, the leader's stop reaches the worker, and the end of the
// search too.
func TestPointInLockstep(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got bytes.Buffer
	l, url := serve(t, LeaderOptions{Count: 2, Records: func(shard, k int, batch []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if shard != 1 || k != 1 {
			t.Errorf("records of shard %d, point %d", shard, k)
		}
		got.Write(batch)
		return nil
	}})
	w, err := dial(t, url, Join{Shard: 1, Host: "w"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Joined(ctx, 5*time.Second, func(string) {}); err != nil {
		t.Fatal(err)
	}
	p := Point{K: 1, Value: 4, Seed: 5, Role: "start", RunID: "r1-p1", Duration: time.Minute}
	l.Open(p)
	next, err := w.Next(ctx, 0)
	if err != nil || next.Point == nil || *next.Point != p {
		t.Fatalf("next %+v, %v", next, err)
	}
	var theirs time.Time
	var werr error
	var wg sync.WaitGroup
	wg.Go(func() { theirs, werr = w.Ready(ctx, 1) })
	ours, err := l.Ready(ctx, 1, 100*time.Millisecond)
	wg.Wait()
	if err != nil || werr != nil || !ours.Equal(theirs) || ours.IsZero() {
		t.Fatalf("starts %v (%v) and %v (%v)", ours, err, theirs, werr)
	}
	signal := w.Begin(1)
	w.Send(1, []byte("{\"a\":1}\n"))
	w.Send(2, []byte("not this point's\n"))
	stop := Stop{At: time.Now().Add(time.Second).UTC().Round(0), Why: "decided", AtS: 3}
	l.Stop(1, stop)
	select {
	case <-signal:
	case <-time.After(30 * time.Second):
		t.Fatal("the stop did not reach the worker")
	}
	if s, abort := w.Signal(1); s == nil || !s.At.Equal(stop.At) || s.Why != "decided" || abort != "" {
		t.Errorf("signal %+v %q", s, abort)
	}
	w.Send(1, []byte("{\"b\":2}\n"))
	if err := w.Result(ctx, 1, Result{Run: []byte(`{"shard":1}`)}); err != nil {
		t.Fatal(err)
	}
	rs, err := l.Results(ctx, 1)
	if err != nil || len(rs) != 2 || rs[0] != nil || string(rs[1]) != `{"shard":1}` {
		t.Fatalf("results %q, %v", rs, err)
	}
	mu.Lock()
	if got.String() != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("records %q", got.String())
	}
	mu.Unlock()
	go l.Finish(ctx, "the search is done", 5*time.Second)
	next, err = w.Next(ctx, 1)
	if err != nil || !next.Done || next.Reason != "the search is done" {
		t.Errorf("next %+v, %v", next, err)
	}
}

// beatTwice posts the same numbered batch twice, as a worker does when
// the answer to the first was lost.
func TestBeatAppliedOnce(t *testing.T) {
	t.Parallel()
	var n int
	var mu sync.Mutex
	l, url := serve(t, LeaderOptions{Count: 2, Records: func(_, _ int, batch []byte) error {
		mu.Lock()
		n++
		mu.Unlock()
		return nil
	}})
	body, _ := json.Marshal(Join{Shard: 1, Count: 2, RunID: "r1", Facts: facts})
	resp, err := http.Post(url+Prefix+"join", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var wl welcome
	json.NewDecoder(resp.Body).Decode(&wl)
	resp.Body.Close()
	l.Open(Point{K: 1})
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("{}\n"))
	zw.Close()
	for _, seq := range []string{"1", "1", "2"} {
		req, _ := http.NewRequest(http.MethodPost, url+Prefix+"beat?point=1&seq="+seq, bytes.NewReader(z.Bytes()))
		req.Header.Set(TokenHeader, wl.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("beat %s: %v %v", seq, resp, err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 2 {
		t.Errorf("records applied %d times, want 2 (the batch sent again once)", n)
	}
}

// A worker not heard from for the silence fails the point it is in,
// named; one that leaves says why; a worker refused by name hears it.
func TestSilenceAndLeave(t *testing.T) {
	t.Parallel()
	l, url := serve(t, LeaderOptions{Count: 3, Silence: 300 * time.Millisecond})
	body, _ := json.Marshal(Join{Shard: 2, Count: 3, RunID: "r1", Host: "mute", Facts: facts})
	resp, err := http.Post(url+Prefix+"join", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	w, err := dial(t, url, Join{Shard: 1, Count: 3, Host: "talks"})
	if err != nil {
		t.Fatal(err)
	}
	l.Open(Point{K: 1})
	select {
	case <-l.Failed(1):
	case <-time.After(30 * time.Second):
		t.Fatal("a silent worker did not fail the point")
	}
	if err := l.Err(1); err == nil || !strings.Contains(err.Error(), "shard 2/3 (mute): not heard from for 300ms") {
		t.Errorf("%v", err)
	}
	if _, err := l.Results(context.Background(), 1); err == nil || !strings.Contains(err.Error(), "shard 2/3 (mute)") {
		t.Errorf("results: %v", err)
	}
	w.Close("interrupted")
	l.Open(Point{K: 2})
	if _, err := l.Ready(context.Background(), 2, 0); err == nil || !strings.Contains(err.Error(), "shard") {
		t.Errorf("ready with workers gone: %v", err)
	}
	said := strings.Join(l.Said(), "\n")
	if !strings.Contains(said, "shard 1/3 (talks) is gone: it left: interrupted") {
		t.Errorf("said:\n%s", said)
	}
}
