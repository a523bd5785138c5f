//go:build !linux

package endpoint

import "net"

// cork cannot hold writes here: the hang-up may leave a moment after the
// response's last bytes.
func cork(net.Conn) bool { return false }
