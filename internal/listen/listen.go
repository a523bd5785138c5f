// Package listen opens the listeners of sixpin's own servers by one rule.
//
// The servers are the live page (--live), the figures for Prometheus
// (--metrics-addr) and `sixpin sim` (--addr); the rule is this machine only
// (a loopback address) unless the user says remote, and a word on where
// each listens.
package listen

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// ErrNotLoopback refuses a non-loopback address that was not allowed.
var ErrNotLoopback = errors.New("not a loopback address")

// Server names a server's flags and what it shows, for errors.
type Server struct {
	// Flag is the address flag ("--live"); RemoteFlag the one that lets
	// it listen beyond this machine ("--live-remote").
	Flag, RemoteFlag string
	// Shows is what anyone who reaches it sees ("the run's target and
	// figures").
	Shows string
}

// Listen listens on addr, HOST:PORT, for s. Without remote the host must
// be a loopback address (127.0.0.0/8, ::1, localhost), and a bare ":PORT"
// listens on 127.0.0.1; with remote any host is taken and a bare ":PORT"
// listens on every interface, as Go's net.Listen has it. Errors name
// s.Flag and, for a refused host, s.RemoteFlag, and wrap ErrNotLoopback.
func Listen(s Server, addr string, remote bool) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%s %s: want HOST:PORT: %w", s.Flag, addr, err)
	}
	if host == "" && !remote {
		host = "127.0.0.1"
	}
	if !remote && !Loopback(host) {
		return nil, fmt.Errorf("%s %s: %w (anyone who reaches it sees %s): use 127.0.0.1:PORT, or allow it with %s", s.Flag, addr, ErrNotLoopback, s.Shows, s.RemoteFlag)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", s.Flag, addr, err)
	}
	return ln, nil
}

// Loopback reports whether host names this machine only.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Where describes where ln listens, for the line a command prints on
// stderr: its URL (scheme "http", path appended: "/", "/metrics") and who
// can reach it. A listener on every interface is given a loopback URL,
// one this machine can open.
func Where(ln net.Listener, path string) (url, reach string) {
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return "http://" + ln.Addr().String() + path, "reachable as its address allows"
	}
	switch {
	case a.IP.IsLoopback():
		return "http://" + a.String() + path, "this machine only"
	case a.IP.IsUnspecified():
		return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port)) + path, "every interface: other machines reach it too"
	}
	return "http://" + a.String() + path, "other machines reach it at that address"
}
