//go:build !unix

package h1

import "syscall"

// canPeek: peekFD looks at a socket without reading it.
const canPeek = false

// PeerClosed cannot look without reading here: it never finds a
// connection closed, and a request sent on one the server has just closed
// fails as it would without the check.
func PeerClosed(syscall.RawConn) bool { return false }

// peekFD cannot look without reading here: it finds nothing queued.
func peekFD(uintptr) peekState { return peekNothing }
