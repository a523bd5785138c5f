//go:build !unix

package h1

import "syscall"

// PeerClosed cannot look without reading here: it never finds a
// connection closed, and a request sent on one the server has just closed
// fails as it would without the check.
func PeerClosed(syscall.RawConn) bool { return false }

type peekState uint8

const (
	peekNothing peekState = iota
	peekClosed
	peekData
)

func peek(syscall.RawConn) peekState { return peekNothing }

func peekFD(uintptr) peekState { return peekNothing }
