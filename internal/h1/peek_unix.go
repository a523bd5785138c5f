//go:build unix

package h1

import "syscall"

// canPeek: peekFD looks at a socket without reading it.
const canPeek = true

// PeerClosed reports whether the socket has an end of stream or a reset
// queued, by a non-blocking peek that consumes nothing, or is closed
// already.
func PeerClosed(raw syscall.RawConn) bool {
	return newPeeker(raw).peek() == peekClosed
}

// peekFD peeks at the socket fd without blocking and without consuming.
func peekFD(fd uintptr) peekState {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case n == 0 && err == nil || err == syscall.ECONNRESET:
		return peekClosed
	case n > 0:
		return peekData
	}
	return peekNothing
}
