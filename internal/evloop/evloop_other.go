//go:build !linux

// Package evloop watches many non-blocking sockets from one goroutine
// (Linux only: elsewhere New fails, and callers read on goroutines).
package evloop

import "errors"

// Supported reports whether this platform has the loop (Linux).
const Supported = false

// Handler is a socket's owner while it is added to a Loop.
type Handler interface {
	Ready() (done bool)
	Detached()
}

// Loop is one event loop; there is none on this platform.
type Loop struct{}

// ErrClosed is Add's error on a closed loop.
var ErrClosed = errors.New("evloop: the loop is closed")

// New fails: this platform has no loop.
func New() (*Loop, error) { return nil, errors.New("evloop: not supported on this platform") }

// Add fails: there is no loop.
func (l *Loop) Add(fd int, h Handler) error { return ErrClosed }

// Remove does nothing: there is no loop.
func (l *Loop) Remove(h Handler) {}

// Close does nothing.
func (l *Loop) Close() {}
