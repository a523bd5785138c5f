//go:build !linux

package endpoint

import (
	"io"

	"github.com/sixpin/sixpin/record"
)

// loopAfterReads: see loop_linux.go; there is no event loop here.
const loopAfterReads = 0

// loopable is false: this platform has no event loop (evloop), and every
// answer is read on its own goroutine (call.read).
func (r *call) loopable(*record.Record) bool { return false }

// onLoop takes nothing: there is no event loop.
func onLoop(*reading, io.ReadCloser) bool { return false }
