package endpoint

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A request's watchdog cuts it off with the cause of the end that came
// first — its deadline, a stall, a drain that outlasts drainTimeout — and
// never while the stream moves on or after its drain ended.
func TestWatchdogEnds(t *testing.T) {
	// run starts a watchdog with timeout, lets during act on it, and
	// returns the cause it cancelled with (nil: none within wait).
	run := func(timeout, wait time.Duration, during func(wd *watchdog, clk Clock)) error {
		causes := make(chan error, 1)
		clk := Clock{Start: time.Now()}
		var wd watchdog
		wd.start(clk, timeout, func(err error) { causes <- err })
		defer wd.stop()
		during(&wd, clk)
		select { // what came during it first
		case err := <-causes:
			return err
		default:
		}
		select {
		case err := <-causes:
			return err
		case <-time.After(wait):
			return nil
		}
	}
	idle := func(*watchdog, Clock) {}
	if err := run(50*time.Millisecond, 5*time.Second, idle); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: cut off with %v, want the request timeout", err)
	}
	// Chunks every 10 ms against a stall timeout of 250 ms for two of
	// them (room for a loaded machine's late wake-ups): never a stall;
	// then none: a stall.
	moving := func(wd *watchdog, clk Clock) {
		stall := 250 * time.Millisecond
		wd.watchStall(stall, clk.Since())
		for range 50 {
			time.Sleep(10 * time.Millisecond)
			wd.last.Store(int64(clk.Since()))
		}
	}
	if err := run(time.Minute, 0, moving); err != nil {
		t.Errorf("a stream that moves on was cut off: %v", err)
	}
	stalled := func(wd *watchdog, clk Clock) {
		moving(wd, clk)
		// and then nothing
	}
	if err := run(time.Minute, 5*time.Second, stalled); !errors.Is(err, errStalled) {
		t.Errorf("stall: cut off with %v, want a stall", err)
	}
	// A stall watch ended (the stream is over) cuts nothing off.
	ended := func(wd *watchdog, clk Clock) {
		wd.watchStall(50*time.Millisecond, clk.Since())
		wd.endStall()
	}
	if err := run(time.Minute, 300*time.Millisecond, ended); err != nil {
		t.Errorf("an ended stall watch cut off with %v", err)
	}
	if err := run(time.Minute, 5*drainTimeout, func(wd *watchdog, _ Clock) { wd.drain() }); !errors.Is(err, errDrained) {
		t.Errorf("drain: cut off with %v, want the drain's bound", err)
	}
	finished := func(wd *watchdog, _ Clock) {
		wd.drain()
		wd.endDrain()
	}
	if err := run(time.Minute, 2*drainTimeout, finished); err != nil {
		t.Errorf("a finished drain cut off with %v", err)
	}
}
