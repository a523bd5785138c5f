package endpoint

import (
	"net"
	"syscall"
)

// cork holds a TCP connection's writes until it is closed, so that the
// last bytes of a response and the hang-up leave in one segment (TCP_CORK).
// It reports whether it could.
func cork(c net.Conn) bool {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, 1)
	}); err != nil || serr != nil {
		return false
	}
	return true
}
