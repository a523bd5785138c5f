//go:build linux

package evloop

import (
	"bytes"
	"net"
	"syscall"
	"testing"
	"time"
)

// reader reads its socket until the peer closes it, keeping what came.
type reader struct {
	fd       int
	got      bytes.Buffer
	eof      bool
	detached chan struct{}
	readies  int
}

func (r *reader) Ready() bool {
	r.readies++
	var buf [64]byte
	n, err := syscall.Read(r.fd, buf[:])
	switch {
	case err == syscall.EAGAIN:
		return false
	case n <= 0:
		r.eof = true
		return true
	}
	r.got.Write(buf[:n])
	return false
}

func (r *reader) Detached() { close(r.detached) }

// pair is a connected pair of sockets: the loop's end, non-blocking, and
// the peer's.
func pair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return fds[0], fds[1]
}

func wait(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("not detached within 10 s")
	}
}

// Many sockets at once, each written in pieces, the bytes queued before
// it was added included: every byte reaches its own handler, in order,
// and a handler done (the peer closed) is detached once.
func TestLoopReadsEverySocket(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 200
	rs := make([]*reader, n)
	peers := make([]int, n)
	for i := range rs {
		fd, peer := pair(t)
		rs[i], peers[i] = &reader{fd: fd, detached: make(chan struct{})}, peer
		syscall.Write(peer, []byte("before;"))
		if err := l.Add(fd, rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		for i, p := range peers {
			if _, err := syscall.Write(p, []byte{byte('a' + round), byte('0' + i%10)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range peers {
		syscall.Shutdown(p, syscall.SHUT_WR)
	}
	for i, r := range rs {
		wait(t, r.detached)
		want := "before;" + string([]byte{'a', byte('0' + i%10), 'b', byte('0' + i%10), 'c', byte('0' + i%10)})
		if !r.eof || r.got.String() != want {
			t.Fatalf("socket %d: eof %v, got %q, want %q", i, r.eof, r.got.String(), want)
		}
	}
}

// Remove detaches a handler the loop still watches, and is harmless for
// one already detached; Close detaches the rest, and Add after it fails.
func TestLoopRemoveAndClose(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	fd1, _ := pair(t)
	fd2, _ := pair(t)
	a := &reader{fd: fd1, detached: make(chan struct{})}
	b := &reader{fd: fd2, detached: make(chan struct{})}
	if l.Add(fd1, a) != nil || l.Add(fd2, b) != nil {
		t.Fatal("add failed")
	}
	l.Remove(a)
	wait(t, a.detached)
	l.Remove(a) // detached already: nothing happens (a second close would panic)
	l.Close()
	wait(t, b.detached)
	if a.eof || b.eof {
		t.Error("a handler was read to an end that never came")
	}
	if err := l.Add(fd1, &reader{fd: fd1, detached: make(chan struct{})}); err != ErrClosed {
		t.Errorf("Add after Close: %v", err)
	}
}

// A socket that cannot be watched (closed before the loop added it) is
// detached at once, not done.
func TestLoopDetachesAnUnwatchableSocket(t *testing.T) {
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	r := &reader{fd: fds[0], detached: make(chan struct{})}
	if err := l.Add(fds[0], r); err != nil {
		t.Fatal(err)
	}
	wait(t, r.detached)
	if r.readies != 0 || r.eof {
		t.Errorf("Ready called %d times", r.readies)
	}
}

// A TCP connection's socket, taken from a net.Conn by dup, is read on the
// loop once the net.Conn is closed (Go's poller has let go of it).
func TestLoopTakesATCPSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("hello, "))
		time.Sleep(20 * time.Millisecond)
		c.Write([]byte("loop"))
		c.Close()
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := nc.(*net.TCPConn).SyscallConn()
	fd := -1
	raw.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) })
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	defer syscall.Close(fd)
	l, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	r := &reader{fd: fd, detached: make(chan struct{})}
	if err := l.Add(fd, r); err != nil {
		t.Fatal(err)
	}
	wait(t, r.detached)
	if !r.eof || r.got.String() != "hello, loop" {
		t.Errorf("eof %v, got %q", r.eof, r.got.String())
	}
}
