//go:build linux

package h1

import (
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
)

// Detached is a response body's connection taken out of the transport
// (Detach) for an event loop to read: its socket, non-blocking, and the
// body's framing, which finds the body's data and its end in what is
// read from the socket. It is used by one goroutine at a time.
type Detached struct {
	// FD is the socket: a duplicate of the connection's, which Go's
	// poller no longer watches.
	FD int
	b  *body
	// The connection's addresses, for the errors of reads on FD.
	local, remote net.Addr
}

// Detach takes body, a response body of this transport, off its
// connection: the connection leaves Go's poller (its socket duplicated,
// the net.Conn closed) and the request's cancellation hook, and the body
// is closed. The body may have been read from, as long as its
// connection's reader holds none of it: what Decode is given then
// follows what Read returned. It reports false, and changes nothing, for
// any other body: another transport's, one over TLS, one ended or
// failed, one whose request was cut off, or one with bytes read ahead
// with its head still buffered. The caller reads FD (Decode), and gives
// the socket back once done (Finish).
func Detach(rb io.ReadCloser) (*Detached, bool) {
	b, ok := rb.(*body)
	if !ok || b.done || b.err != nil || b.closed || b.c.buffered() > 0 {
		return nil, false
	}
	tc, ok := b.nc.(*net.TCPConn)
	if !ok {
		return nil, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, false
	}
	fd := -1
	if raw.Control(func(s uintptr) { fd, err = dupCloseOnExec(int(s)) }) != nil || err != nil {
		return nil, false
	}
	if !b.stop() { // the hook ran: the connection is closed already
		syscall.Close(fd)
		return nil, false
	}
	b.c.unread()
	b.closed, b.err = true, http.ErrBodyReadAfterClose
	tc.Close() // Go's poller lets go of the socket; FD keeps it open
	return &Detached{FD: fd, b: b, local: tc.LocalAddr(), remote: tc.RemoteAddr()}, true
}

// Ended reports whether the body has ended, as its framing says.
func (d *Detached) Ended() bool { return d.b.done }

// Decode squeezes the framing out of p's raw bytes, read from FD, in
// place (the body's own framing, as its Read applies it). It returns how
// many data bytes are now at p's start, whether the body has ended, and
// a framing error.
func (d *Detached) Decode(p []byte) (data int, end bool, err error) {
	data, err = d.b.squeeze(p)
	return data, d.b.done, err
}

// EOF is the error of the end of FD's stream: io.EOF where the body has
// ended or lasts until the server closes (it ends there), else an
// unexpected end.
func (d *Detached) EOF() error { return d.b.atEOF() }

// ReadError is a failed read of FD as a net.Conn's Read reports it.
func (d *Detached) ReadError(errno error) error {
	return &net.OpError{Op: "read", Net: "tcp", Source: d.local, Addr: d.remote, Err: os.NewSyscallError("read", errno)}
}

// Finish gives FD back: to the transport's pool, as a connection of its
// own, when reuse is asked and the body ended as framed on a connection
// that may be kept; else it is closed. Call it once, when nothing reads
// FD any more.
func (d *Detached) Finish(reuse bool) {
	b, t := d.b, d.b.t
	if reuse && b.done && b.keep {
		f := os.NewFile(uintptr(d.FD), "")
		nc, err := net.FileConn(f)
		f.Close()
		if err == nil {
			c := t.newConn(nc)
			c.slot = b.c.slot // the slot passes to the new connection
			t.put(c)
			return
		}
	} else {
		syscall.Close(d.FD)
	}
	if c := b.c; c.slot && c.released.CompareAndSwap(false, true) {
		<-t.room()
	}
}

// dupCloseOnExec duplicates fd, close-on-exec.
func dupCloseOnExec(fd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
