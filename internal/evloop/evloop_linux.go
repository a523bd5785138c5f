//go:build linux

// Package evloop watches many non-blocking sockets from one goroutine,
// locked to its thread, over one level-triggered epoll set, and calls a
// socket's Handler there when it is readable: one system call per
// arrival, the read, where a goroutine per socket parked on Go's poller
// pays a read that finds the socket empty before each park, then the
// park and the wake (docs/speed.md, "Below the floor: an event loop").
// It is what wrk does; sixpin reads its long plain-HTTP streams on it.
//
// Concurrency: Add and Remove may be called from any goroutine; a
// Handler's methods are called on the loop's goroutine only, one at a
// time, so that what a Handler keeps needs no lock while it is added.
// Adds and removes go to the loop as commands (under a mutex, with an
// eventfd to wake it) and take effect between two batches of readiness:
// the per-arrival path takes no lock.
package evloop

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// Supported reports whether this platform has the loop (Linux).
const Supported = true

// Handler is a socket's owner while it is added to a Loop.
type Handler interface {
	// Ready is called when the socket is readable, hung up or failed. It
	// reads it (without blocking: the socket is non-blocking) and
	// reports whether it is done with it; the loop then stops watching
	// the socket and calls Detached.
	Ready() (done bool)
	// Detached is called once, after the loop stopped watching the
	// socket: Ready said done, Remove was called, or the loop closed.
	// The loop does not touch the handler or its socket afterwards; the
	// socket is the handler's to close.
	Detached()
}

// Loop is one event loop. Its goroutine runs from New until Close.
type Loop struct {
	ep   int // the epoll set
	wake int // an eventfd the commands wake the loop with

	mu     sync.Mutex
	cmds   []command // pending, in order
	woken  bool      // the eventfd holds a wake the loop has not taken
	closed bool

	// Owned by the loop's goroutine.
	slots []slot            // by the index in each epoll event
	free  []int32           // slots to reuse
	index map[Handler]int32 // a handler's slot
	done  chan struct{}     // closed when the loop's goroutine has ended
}

type slot struct {
	fd int
	h  Handler
}

type command struct {
	remove bool
	fd     int
	h      Handler
}

// wakeIndex marks the eventfd's events.
const wakeIndex = -1

// New starts a loop.
func New() (*Loop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("evloop: epoll_create1: %w", err)
	}
	r, _, errno := syscall.RawSyscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		syscall.Close(ep)
		return nil, fmt.Errorf("evloop: eventfd2: %w", errno)
	}
	l := &Loop{ep: ep, wake: int(r), index: map[Handler]int32{}, done: make(chan struct{})}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, l.wake, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: wakeIndex}); err != nil {
		syscall.Close(l.wake)
		syscall.Close(ep)
		return nil, fmt.Errorf("evloop: epoll_ctl: %w", err)
	}
	go l.run()
	return l, nil
}

// ErrClosed is Add's error on a closed loop.
var ErrClosed = errors.New("evloop: the loop is closed")

// Add has the loop watch fd, a non-blocking socket, for h. Bytes already
// queued on it are reported at once (level-triggered). h must not be
// added twice at a time. On ErrClosed h is not called.
func (l *Loop) Add(fd int, h Handler) error {
	return l.send(command{fd: fd, h: h})
}

// Remove has the loop stop watching h's socket, if it still does, and
// call h.Detached (which it has called already if h was done). It does
// not wait: h.Detached says when the loop is through with h.
func (l *Loop) Remove(h Handler) {
	_ = l.send(command{remove: true, h: h})
}

func (l *Loop) send(c command) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.cmds = append(l.cmds, c)
	wake := !l.woken
	l.woken = true
	l.mu.Unlock()
	if wake {
		one := uint64(1)
		syscall.Write(l.wake, (*[8]byte)(unsafe.Pointer(&one))[:])
	}
	return nil
}

// Close stops the loop: every handler still added is detached, and the
// loop's goroutine ends before Close returns.
func (l *Loop) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return
	}
	l.closed, l.woken = true, true
	l.mu.Unlock()
	one := uint64(1)
	syscall.Write(l.wake, (*[8]byte)(unsafe.Pointer(&one))[:])
	<-l.done
}

// run is the loop: one epoll_wait per batch of readiness, a Ready per
// ready socket, then the commands that came meanwhile.
func (l *Loop) run() {
	// The loop holds its thread: the blocking epoll_wait gives the
	// runtime's P back while it waits, and no other goroutine's stack
	// evicts the loop's from the cache.
	runtime.LockOSThread()
	defer close(l.done)
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(l.ep, events, -1)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			panic(fmt.Sprintf("evloop: epoll_wait: %v", err)) // EBADF, EFAULT, EINVAL: a bug
		}
		commands := false
		for _, e := range events[:n] {
			if e.Fd == wakeIndex {
				commands = true
				continue
			}
			s := &l.slots[e.Fd]
			if s.h != nil && s.h.Ready() {
				l.detach(e.Fd)
			}
		}
		// Commands last: a slot freed in this batch is not reused before
		// the batch's later events for it are passed over.
		if commands && l.apply() {
			return
		}
	}
}

// apply runs the pending commands; it reports whether the loop closed
// (every handler detached, the fds closed).
func (l *Loop) apply() bool {
	var buf [8]byte
	syscall.Read(l.wake, buf[:])
	l.mu.Lock()
	cmds, closed := l.cmds, l.closed
	l.cmds, l.woken = nil, false
	l.mu.Unlock()
	for _, c := range cmds {
		switch {
		case c.remove:
			if i, ok := l.index[c.h]; ok {
				l.detach(i)
			}
		case closed:
			c.h.Detached()
		default:
			l.add(c.fd, c.h)
		}
	}
	if !closed {
		return false
	}
	for i := range l.slots {
		if l.slots[i].h != nil {
			l.detach(int32(i))
		}
	}
	syscall.Close(l.wake)
	syscall.Close(l.ep)
	return true
}

func (l *Loop) add(fd int, h Handler) {
	var i int32
	if n := len(l.free); n > 0 {
		i, l.free = l.free[n-1], l.free[:n-1]
	} else {
		i = int32(len(l.slots))
		l.slots = append(l.slots, slot{})
	}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: i}); err != nil {
		// Not watchable (a socket closed under it: EBADF): detached at
		// once, not done, its owner takes it back.
		l.free = append(l.free, i)
		h.Detached()
		return
	}
	l.slots[i] = slot{fd: fd, h: h}
	l.index[h] = i
}

func (l *Loop) detach(i int32) {
	s := l.slots[i]
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, s.fd, nil)
	l.slots[i] = slot{}
	l.free = append(l.free, i)
	delete(l.index, s.h)
	s.h.Detached()
}
