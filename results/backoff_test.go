package results

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/internal/fielderr"
	"github.com/sixpin/sixpin/record"
)

// backoffRecords are a run's answers that asked sixpin to slow down
// (429, 503, 529), a connect failure, a 500 and a success, with the waits
// the runner recorded on them and open-loop arrivals withheld.
func backoffRecords() []*record.Record {
	at := func(i int) time.Duration { return time.Duration(i) * 100 * ms }
	fail := func(i int, class record.ErrorClass, status int, backoff time.Duration, withheld int) *record.Record {
		return &record.Record{Index: i, Session: -1, Scheduled: at(i), Sent: at(i), End: at(i) + ms, Err: class, HTTPStatus: status,
			ErrMsg: "no", Backoff: backoff, Withheld: withheld}
	}
	return []*record.Record{
		fail(0, record.ErrHTTP429, 429, 2*time.Second, 0),
		fail(1, record.ErrHTTP429, 429, 2*time.Second, 5),
		fail(2, record.ErrHTTP5xx, 503, 750*ms, 0),
		fail(3, record.ErrHTTP5xx, 529, 250*ms, 2),
		fail(4, record.ErrConnect, 0, 50*ms, 0),
		fail(5, record.ErrHTTP5xx, 500, 0, 0),
		stream(6, at(6), 10*ms, 5*ms, 4, 1),
	}
}

// checkBackoffTallies fails unless e tallies backoffRecords.
func checkBackoffTallies(t *testing.T, what string, e Errors) {
	t.Helper()
	want := map[string]float64{"http_429": 4, "http_5xx": 1, "connect": 0.05}
	if len(e.BackoffS) != len(want) {
		t.Errorf("%s: backoff_s %v, want %v", what, e.BackoffS, want)
	}
	for k, v := range want {
		near(t, what+": backoff_s."+k, e.BackoffS[k], v, 1e-9)
	}
	if e.SlowDowns["429"] != 2 || e.SlowDowns["503"] != 1 || e.SlowDowns["529"] != 1 || len(e.SlowDowns) != 3 {
		t.Errorf("%s: slow_downs %v, want 2 × 429, 1 × 503, 1 × 529", what, e.SlowDowns)
	}
	if e.WithheldArrivals != 7 {
		t.Errorf("%s: withheld_arrivals %d, want 7", what, e.WithheldArrivals)
	}
}

// TestBackoffTallies: the waits after answers that asked to slow down are
// summed by the class of the answer (errors.backoff_s), the answers
// counted by status (errors.slow_downs) and the open-loop arrivals
// withheld counted (errors.withheld_arrivals); none is a latency. They go
// through the spill, so `sixpin recover` keeps them, merge sums them over
// shards, and a file that holds a negative one is refused.
func TestBackoffTallies(t *testing.T) {
	t.Parallel()
	m := finish(t, WindowSpec{}, SLO{}, backoffRecords()...)
	checkBackoffTallies(t, "finished", m.Errors)
	if d := m.Windows[WindowAll].E2EMs; d == nil || d.Max > 100 {
		t.Errorf("E2E %+v: a wait counted as latency", d)
	}

	t.Run("recover", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "r.spill")
		c, err := NewCollector(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Begin(&Header{Scenario: ScenarioInfo{Name: "s"}}); err != nil {
			t.Fatal(err)
		}
		for _, r := range backoffRecords() {
			c.Add(r)
		}
		if err := c.Release(); err != nil {
			t.Fatal(err)
		}
		rec, err := Recover(path, "killed")
		if err != nil {
			t.Fatal(err)
		}
		checkBackoffTallies(t, "recovered", rec.Run.Errors)
	})

	t.Run("merge", func(t *testing.T) {
		t.Parallel()
		a, b := shardRun(t, 0, 2, 3, 0), shardRun(t, 1, 2, 3, 0)
		a.Errors.BackoffS = map[string]float64{"http_429": 3, "connect": 0.05}
		a.Errors.SlowDowns = map[string]int{"429": 1, "503": 1}
		a.Errors.WithheldArrivals = 4
		b.Errors.BackoffS = map[string]float64{"http_429": 1, "http_5xx": 1}
		b.Errors.SlowDowns = map[string]int{"429": 1, "529": 1}
		b.Errors.WithheldArrivals = 3
		m, err := Merge(shards(a, b), MergeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkBackoffTallies(t, "merged", m.Errors)
	})

	t.Run("read check", func(t *testing.T) {
		t.Parallel()
		run := shardRun(t, 0, 1, 3, 0)
		run.Shard = nil
		for _, c := range []struct {
			name   string
			change func(e *Errors)
			want   string
		}{
			{"negative wait", func(e *Errors) { e.BackoffS = map[string]float64{"http_429": -2} }, "errors.backoff_s.http_429: must be ≥ 0 (got -2)"},
			{"negative count", func(e *Errors) { e.SlowDowns = map[string]int{"503": -1} }, "errors.slow_downs[503]: must be ≥ 0 (got -1)"},
			{"negative withheld", func(e *Errors) { e.WithheldArrivals = -4 }, "errors.withheld_arrivals: must be ≥ 0 (got -4)"},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				r := *run
				c.change(&r.Errors)
				data, err := json.MarshalIndent(&r, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				_, err = Read("r.json", data)
				var list fielderr.List
				if !errors.As(err, &list) || !strings.Contains(list[0].Error(), c.want) {
					t.Errorf("Read = %v, want %q", err, c.want)
				}
			})
		}
		good, _ := json.Marshal(run)
		if _, err := Read("r.json", good); err != nil {
			t.Errorf("the undamaged run does not read: %v", err)
		}
	})
}
