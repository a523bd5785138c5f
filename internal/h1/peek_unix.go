//go:build unix

package h1

import "syscall"

// PeerClosed reports whether the socket has an end of stream or a reset
// queued, by a non-blocking peek that consumes nothing, or is closed
// already.
func PeerClosed(raw syscall.RawConn) bool {
	return peek(raw) == peekClosed
}

// peekState is what a non-blocking peek at an idle socket found.
type peekState uint8

const (
	peekNothing peekState = iota // nothing queued: the connection is idle
	peekClosed                   // an end of stream or a reset
	peekData                     // bytes no request asked for
)

func peek(raw syscall.RawConn) peekState {
	st := peekNothing
	err := raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case n == 0 && err == nil || err == syscall.ECONNRESET:
			st = peekClosed
		case n > 0:
			st = peekData
		}
	})
	if err != nil { // closed here already
		return peekClosed
	}
	return st
}
