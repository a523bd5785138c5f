//go:build linux

package endpoint

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/sixpin/sixpin/internal/evloop"
	"github.com/sixpin/sixpin/internal/h1"
	"github.com/sixpin/sixpin/record"
)

// loopAfterReads is how many arrivals of a stream its goroutine reads
// before the event loop takes it: a stream that comes in that many reads
// is one the server paces, and the loop's per-arrival saving (about a
// system call and a goroutine's park and wake) soon earns back the
// handover's dozen system calls (a duplicate socket, Go's poller letting
// go of it, and taking it again at the end); an answer sent at once,
// however long, never goes. A variable for the tests, which take every
// stream they can to the loop.
var loopAfterReads uint32 = 8

// eventLoop is the process's event loop, started by the first stream
// that may use it; nil where there is none (evloop.Supported).
var eventLoop struct {
	once sync.Once
	l    *evloop.Loop
}

func sharedLoop() *evloop.Loop {
	eventLoop.once.Do(func() { eventLoop.l, _ = evloop.New() })
	return eventLoop.l
}

// errNotWatched is a stream the event loop could not watch.
var errNotWatched = errors.New("the event loop could not watch the connection")

// loopable reports whether the event loop may take rec's stream (if its
// body is one h1.Detach takes: plain HTTP/1.1 over sixpin's transport,
// not content-encoded): unless the client says no (Options.NoEventLoop),
// any request of the run. A probe's request watches its connection for
// the server's hang-up afterwards, and a connection back from the loop
// is a net.Conn of its own.
func (r *call) loopable(rec *record.Record) bool {
	return !r.noLoop && rec.Index >= 0 && sharedLoop() != nil
}

// onLoop reads the rest of a stream on the event loop, from where its
// goroutine's reading (st) is; lb is its body. The goroutine waits
// meanwhile, for the stream's end or the request's; the stream's
// connection is drained after [DONE], and given back, on the loop. It
// reports false, having changed nothing, when the body cannot be taken
// (h1.Detach): the goroutine reads on.
func onLoop(st *reading, lb io.ReadCloser) bool {
	d, ok := h1.Detach(lb)
	if !ok {
		return false
	}
	st.r.loopStreams.Add(1)
	s := &loopStream{st: *st, sr: st.sr, d: d, detached: make(chan struct{})}
	// The events that came with the last read, behind the one just
	// taken, first: the socket may have nothing more to say for a while.
	if s.events(time.Since(s.st.start)) {
		close(s.detached)
	} else if l := sharedLoop(); l.Add(d.FD, s) != nil {
		close(s.detached)
	} else {
		select {
		case <-s.detached:
		case <-st.ctx.Done():
			l.Remove(s)
			<-s.detached
		}
	}
	if s.draining {
		s.st.wd.endDrain()
	}
	if !s.end {
		// Cut off before its end: by the request's context (an
		// interrupt, the timeout, the stall watch), as a read on the
		// stream's goroutine would have been.
		err := context.Cause(st.ctx)
		if err == nil {
			err = errNotWatched
		}
		s.st.stop(err, time.Since(s.st.start))
	}
	*st = s.st
	d.Finish(s.done)
	return true
}

// loopStream is one answer's event stream read on the event loop: its
// socket's evloop.Handler. Between evloop.Loop.Add and Detached it is the
// loop's, then its stream goroutine's again.
type loopStream struct {
	st       reading
	sr       *sseReader
	d        *h1.Detached
	detached chan struct{}
	// end: the events ended ([DONE], the stream's end, or a failure
	// recorded); done: with [DONE].
	end, done bool
	// draining: after [DONE], the rest of the body is read to find its
	// end (so that the connection is reused), within maxDrain bytes and
	// drainTimeout (the request's watchdog).
	draining bool
	drained  int
}

// Ready reads what arrived on the socket: one read, stamped.
func (s *loopStream) Ready() bool {
	p := s.sr.buf // draining: what is read is only decoded, never parsed
	if !s.draining {
		p = s.sr.space()
	}
	n, err := syscall.Read(s.d.FD, p)
	elapsed := time.Since(s.st.start)
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return false
	}
	if n < 0 {
		n = 0
	}
	return s.took(p, n, err, elapsed)
}

// Detached hands the stream back to its goroutine.
func (s *loopStream) Detached() { close(s.detached) }

// took takes a read of n raw bytes into p, elapsed (wall time) after the
// run's start: err, the read's failure; n = 0 without one, the stream's
// end. It hands the events complete to the reading and reports whether
// the stream is done with its socket.
func (s *loopStream) took(p []byte, n int, err error, elapsed time.Duration) bool {
	if s.draining {
		_, end, derr := s.d.Decode(p[:n])
		s.drained += n
		return end || derr != nil || err != nil || n == 0 || s.drained > maxDrain
	}
	switch {
	case err != nil:
		s.sr.end(s.d.ReadError(err))
	case n == 0:
		s.sr.end(s.d.EOF())
	default:
		s.sr.arrival(n < len(p))
		data, end, derr := s.d.Decode(p[:n])
		s.sr.commit(data)
		switch {
		case derr != nil:
			s.sr.end(derr)
		case end:
			s.sr.end(io.EOF)
		}
	}
	return s.events(elapsed)
}

// events hands the events complete in the reader to the reading, as they
// came elapsed (wall time) after the run's start, and reports whether
// the stream is done with its socket (draining after [DONE] is not).
func (s *loopStream) events(elapsed time.Duration) bool {
	for {
		data, more, perr := s.sr.parse()
		switch {
		case more:
			return false
		case perr != nil:
			s.st.stop(perr, elapsed)
			s.end = true
			return true
		}
		if end, done := s.st.event(data, elapsed, s.sr.reads()); end {
			s.end, s.done = true, done
			if !done || s.d.Ended() {
				return true
			}
			s.draining = true
			s.st.wd.drain()
			return false
		}
	}
}
