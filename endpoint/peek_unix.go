//go:build unix

package endpoint

import "syscall"

// peerClosed reports whether the socket has an end of stream or a reset
// queued, by a non-blocking peek that consumes nothing.
func peerClosed(raw syscall.RawConn) bool {
	closed := false
	_ = raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == syscall.ECONNRESET
	})
	return closed
}
