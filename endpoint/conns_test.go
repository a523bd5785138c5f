package endpoint

import (
	"strings"
	"testing"
	"time"

	"github.com/sixpin/sixpin/record"
)

// TestResetIsNotAHangUp: a server that resets a few connections, after
// reading the request on them, fails those requests — class connect when
// no answer had begun, stream_cut when one had — and nothing else: none
// is sent again (the server read it), and connections stay kept alive
// for the rest of the run (the server does not hang up after answers).
func TestResetIsNotAHangUp(t *testing.T) {
	want := map[string]record.ErrorClass{"req-45": record.ErrConnect, "req-95": record.ErrConnect, "req-145": record.ErrStreamCut}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := newRawServer(t, func(id string, _ int64) fault {
				switch want[id] {
				case record.ErrConnect:
					return resetUnread
				case record.ErrStreamCut:
					return resetMid
				}
				return answer
			})
			const streams, n = 4, 200
			c := rawClient(t, s, streams, tr.netHTTP)
			if _, ok, msg := rawProbe(c); !ok {
				t.Fatalf("probe: %s", msg)
			}
			recs := load(c, n, streams)
			checkReadOnce(t, s, recs)
			for _, rec := range recs {
				switch class, ok := want[rec.RequestID]; {
				case ok && (rec.Err != class || rec.Reconnects != 0):
					t.Errorf("request %d (%s, reset by the server): %s, %d reconnects (%s); want %s, never sent again",
						rec.Index, rec.RequestID, rec.Err, rec.Reconnects, rec.ErrMsg, class)
				case !ok && rec.Failed():
					t.Errorf("request %d (%s) failed: %s: %s", rec.Index, rec.RequestID, rec.Err, rec.ErrMsg)
				}
			}
			if off, _, why := c.KeepAliveOff(); off {
				t.Errorf("keep-alive turned off (%s) by %d resets", why, len(want))
			}
			// The streams' connections, one for each reset, and a few
			// more a loaded machine makes (a dial under way when another
			// request returns its connection: net/http's pool made 13 of
			// at most 11 under -race beside a full test run) — far from
			// the 200 of a client that does not keep connections alive.
			if got, most := c.Connections(), int64(streams+len(want)+2*streams); got > most {
				t.Errorf("%d connections for %d requests on %d streams with %d resets; want at most %d", got, n, streams, len(want), most)
			}
		})
	}
}

// TestHangUpAfterAnswersLosesNothing serves as llama-server does: a
// streamed answer without "Connection: close", then the connection
// closed 5 ms later, whatever was sent on it meanwhile; and as a server
// whose hang-up runs on a timer of its own, answering on meanwhile, 5 and
// 50 ms (a loaded machine delays a hang-up) after each answer. A request
// written in that moment is lost, so the probe must learn it, every time,
// before load: no request fails, none is sent twice.
func TestHangUpAfterAnswersLosesNothing(t *testing.T) {
	cases := []struct {
		name  string
		f     fault
		delay time.Duration
	}{
		{"5 ms", hangUpAfter, 5 * time.Millisecond},
		{"timer 5 ms", hangUpTimer, 5 * time.Millisecond},
		{"timer 50 ms", hangUpTimer, 50 * time.Millisecond},
	}
	for _, tr := range transports {
		for _, tc := range cases {
			t.Run(tr.name+"/"+tc.name, func(t *testing.T) {
				s := newRawServer(t, func(string, int64) fault { return tc.f })
				s.hangUpDelay = tc.delay
				const streams, n = 8, 20
				c := rawClient(t, s, streams, tr.netHTTP)
				if _, ok, msg := rawProbe(c); !ok {
					t.Fatalf("probe: %s", msg)
				}
				start := time.Now()
				recs := load(c, n, streams)
				checkReadOnce(t, s, recs)
				if f := failures(recs); f != "" {
					t.Errorf("requests lost:%s", f)
				}
				switch off, at, why := c.KeepAliveOff(); {
				case !off:
					t.Error("keep-alive still on")
				case !at.Before(start) || !strings.Contains(why, "probe"):
					t.Errorf("keep-alive turned off %v after the load began (%s); want the probe to learn it", at.Sub(start), why)
				}
			})
		}
	}
}

// TestHangUpLearntDuringLoad: when no probe looked, a server that hangs
// up after its answers is learnt from the kept-alive connections it
// closes during load: a few requests written as it hung up are lost
// (class connect, never sent again), and the rest go out on connections
// of their own.
func TestHangUpLearntDuringLoad(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			s := newRawServer(t, func(string, int64) fault { return hangUpAfter })
			const streams, n = 2, 40
			c := rawClient(t, s, streams, tr.netHTTP)
			recs := load(c, n, streams)
			checkReadOnce(t, s, recs)
			lost := 0
			for _, rec := range recs {
				if !rec.Failed() {
					continue
				}
				lost++
				if rec.Err != record.ErrConnect || rec.Reconnects != 0 || !strings.Contains(rec.ErrMsg, "kept-alive") {
					t.Errorf("request %d: %s, %d reconnects: %s; want class connect on a kept-alive connection, not sent again",
						rec.Index, rec.Err, rec.Reconnects, rec.ErrMsg)
				}
			}
			// Two hang-ups teach it; each stream may have one more
			// request on a kept-alive connection by then.
			if most := 2 * streams; lost > most {
				t.Errorf("%d of %d requests lost; want at most %d:%s", lost, n, most, failures(recs))
			}
			if off, _, why := c.KeepAliveOff(); !off || !strings.Contains(why, "kept-alive") {
				t.Errorf("KeepAliveOff: %v, %q; want off, and why", off, why)
			}
		})
	}
}

// TestHangUpWatch: the probe's watch for a hang-up lasts hangUpWatch of
// looks, leaving out a stall of the process (in which the server's
// hang-up may have been held up too), and hangUpWatchMax at most.
func TestHangUpWatch(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	// looks runs a watch whose i-th look comes gap(i) after the last one,
	// and returns when it ended.
	looks := func(gap func(i int) time.Duration) time.Duration {
		w, at := newWatch(t0), t0
		for i := 1; ; i++ {
			at = at.Add(gap(i))
			if w.look(at) {
				return at.Sub(t0)
			}
		}
	}
	steady := func(int) time.Duration { return hangUpLook }
	if got := looks(steady); got != hangUpWatch {
		t.Errorf("steady looks: the watch ended after %v, want %v", got, hangUpWatch)
	}
	stall := 300 * time.Millisecond
	stalled := func(i int) time.Duration {
		if i == 25 {
			return stall
		}
		return hangUpLook
	}
	if got, want := looks(stalled), hangUpWatch+stall; got != want {
		t.Errorf("a stall at the 25th look: the watch ended after %v, want %v (the stall left out)", got, want)
	}
	if got := looks(func(int) time.Duration { return 2 * hangUpStall }); got != hangUpWatchMax {
		t.Errorf("nothing but stalls: the watch ended after %v, want %v", got, hangUpWatchMax)
	}
}
